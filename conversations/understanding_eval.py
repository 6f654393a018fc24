"""How well a message is understood, measured on a message set written before the code that reads it.

A case file (JSON, under `tests/understanding/`, see its README) holds a list of cases: a workflow,
a language, the messages said before (not judged), the message judged and the reading a careful
person would make of it (commands with how sure each is), plus what a reading must never hold as
certain. `judge` sorts one reading into four verdicts:

- `right`: every expected command is there, as sure as expected (a `certain` one certain, a
  `likely` or `guess` one not certain), and nothing is confidently wrong;
- `wrong` (confidently wrong): a `certain` command that is wrong: it names a forbidden reading,
  gives an expected slot or question another value, or stores what should have been asked;
- `asked`: not right, not confidently wrong, and the reading asks back (a command that is not
  certain, a `clarify`, or `cannot_handle`);
- `missed`: the rest (a fact dropped, a request not read), wrong but not stated with confidence.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .engine.certainty import CERTAIN
from .engine.commands import Command

CASES_DIR = Path(__file__).resolve().parent.parent / "tests" / "understanding"
VERDICTS = ("right", "asked", "wrong", "missed")
KINDS = ("plain", "guess", "negation", "correction", "phantom", "dropped", "several", "early")
_TARGETS = ("slot", "question_id")  # a command that sets one of these holds a value for it
_ASKING = frozenset({"clarify", "cannot_handle"})


@dataclass(frozen=True)
class Judgement:
    verdict: str
    problems: tuple[str, ...] = ()


def load_cases(paths: Iterable[Path] | None = None) -> list[dict[str, Any]]:
    """Every case of the given files or folders (the shipped set by default)."""
    files: list[Path] = []
    for path in paths or [CASES_DIR]:
        files += sorted(path.glob("*.json")) if path.is_dir() else [path]
    return [{**case, "file": file.name} for file in files for case in json.loads(file.read_text(encoding="utf-8"))]


def _matches(command: Command, wanted: Mapping[str, Any]) -> bool:
    """Whether a command is the one described (every key given must match; `re:` values are patterns)."""
    for key, expected in wanted.items():
        if key == "certainty":
            continue
        actual = command.kind if key == "command" else getattr(command, key, None)
        if key == "candidates":
            if set(expected) - set(actual or ()):
                return False
            continue
        if isinstance(expected, str) and expected.startswith("re:"):
            if actual is None or re.search(expected[3:], str(actual), re.IGNORECASE) is None:
                return False
        elif actual is None or str(actual).casefold() != str(expected).casefold():
            return False
    return True


def _target(wanted: Mapping[str, Any]) -> tuple[str, str] | None:
    for key in _TARGETS:
        if wanted.get(key):
            return key, str(wanted[key])
    return None


def judge(expected: Sequence[Mapping[str, Any]], forbidden: Sequence[Mapping[str, Any]],
          produced: Sequence[Command]) -> Judgement:
    """The verdict on one reading, and what was wrong or missing in it."""
    wrong: list[str] = []
    missing: list[str] = []
    for command in produced:
        if not command.certain:
            continue
        if any(_matches(command, f) for f in forbidden):
            wrong.append(f"certain {command.describe()} is forbidden")
            continue
        for wanted in expected:
            target = _target(wanted)
            if target is None or getattr(command, target[0], None) != target[1]:
                continue
            if not _matches(command, {k: v for k, v in wanted.items() if k != "command"}):
                wrong.append(f"certain {command.describe()}, expected {_label(wanted)}")
            elif wanted.get("certainty", CERTAIN) != CERTAIN and _matches(command, wanted):
                wrong.append(f"certain {command.describe()}, expected a {wanted['certainty']} reading")
    for wanted in expected:
        sure = wanted.get("certainty", CERTAIN) == CERTAIN
        if not any(_matches(c, wanted) and c.certain == sure for c in produced):
            missing.append(f"no {_label(wanted)}")
    if wrong:
        return Judgement("wrong", tuple(wrong + missing))
    if not missing:
        return Judgement("right")
    asks = any(not c.certain or c.kind in _ASKING for c in produced)
    return Judgement("asked" if asks else "missed", tuple(missing))


def _label(wanted: Mapping[str, Any]) -> str:
    args = ", ".join(f"{k}={v}" for k, v in wanted.items() if k not in ("command", "certainty"))
    return f"{wanted.get('command', '?')}({args}) {wanted.get('certainty', CERTAIN)}"


@dataclass
class EvalReport:
    """Verdicts per workflow and language, and the cases that were not right."""

    counts: dict[tuple[str, str], Counter] = field(default_factory=lambda: defaultdict(Counter))
    by_kind: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    notes: list[str] = field(default_factory=list)

    def add(self, case: Mapping[str, Any], judgement: Judgement, produced: Sequence[Command]) -> None:
        self.counts[(case["workflow"], case.get("locale", "en"))][judgement.verdict] += 1
        self.by_kind[case.get("kind", "plain")][judgement.verdict] += 1
        if judgement.verdict != "right":
            reading = ", ".join(c.describe() for c in produced) or "(nothing)"  # an unsure one ends "~likely"
            self.notes.append(f"{judgement.verdict.upper()} {case['file']}:{case['id']}: {case['message']!r}\n"
                              f"    read: {reading}\n    " + "\n    ".join(judgement.problems))

    def total(self) -> Counter:
        return sum(self.counts.values(), Counter())

    def lines(self) -> list[str]:
        rows = [("workflow", "language", "cases", "right", "asked", "wrong", "missed")]
        for (workflow, lang), counter in sorted(self.counts.items()):
            rows.append((workflow, lang, *_shares(counter)))
        rows.append(("all", "", *_shares(self.total())))
        for kind, counter in sorted(self.by_kind.items()):
            rows.append((f"kind: {kind}", "", *_shares(counter)))
        widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
        return ["  ".join(str(v).ljust(w) for v, w in zip(row, widths, strict=True)) for row in rows]


def _shares(counter: Counter) -> tuple[str, ...]:
    n = sum(counter.values())
    return (str(n), *(f"{100 * counter[v] / n:.1f}%" if n else "-" for v in VERDICTS))


def run_case(case: Mapping[str, Any], user) -> tuple[Judgement, tuple[Command, ...]]:  # noqa: ANN001
    """Hold the case's conversation through the services and judge the reading of its last message."""
    from . import services
    from .dialogues import _setup
    from .engine.turn import commands_understood

    _setup(case.get("setup", {}))
    conversation = services.conversation_start(user=user, workflow_id=case["workflow"], locale=case.get("locale", "en"))
    result = None
    for text in (*case.get("before", ()), case["message"]):
        result = services.conversation_turn(user=user, conversation_id=conversation.pk, text=text)
    produced = _as_answers(commands_understood(result.outcome), _question_slots(conversation))
    return judge(case.get("reading", ()), case.get("not", ()), produced), produced


def _question_slots(conversation) -> dict[str, str]:  # noqa: ANN001
    """slot -> the form question it backs (a fact kept for a question not asked yet is its answer)."""
    from workflows.selectors import plan_by_id

    from .selectors import conversation_config

    form = conversation_config(plan_by_id(conversation.run.plan_id)).form
    return {q.slot: q.id for q in form.questions if q.slot} if form is not None else {}


def _as_answers(commands: Sequence[Command], questions: Mapping[str, str]) -> tuple[Command, ...]:
    """The reading with a slot that backs a form question also said as that question's answer."""
    extra = [replace(c, kind="answer", slot=None, question_id=questions[c.slot]) for c in commands
             if c.kind in ("set_slot", "correct_slot") and c.slot in questions
             and not any(a.kind == "answer" and a.question_id == questions[c.slot] for a in commands)]
    return (*commands, *extra)


def evaluate(cases: Sequence[Mapping[str, Any]], user) -> EvalReport:  # noqa: ANN001
    """Every case, each on its own clock (`now`); writes (use a rolled-back transaction)."""
    from .dialogues import _clock

    report = EvalReport()
    for case in cases:
        with _clock(case.get("now")):
            judgement, produced = run_case(case, user)
        report.add(case, judgement, produced)
    return report
