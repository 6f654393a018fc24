"""Scripted dialogues (anchor: Rasa's end-to-end tests): a person's turns and what must hold after each.

A dialogue file (JSON, under `tests/dialogues/`) holds a list of dialogues:

    {"id": "...", "workflow": "parking_help_desk", "locale": "zh-hans", "setup": {"orders": ["7734412"]},
     "turns": [{"user": "...", "expect": {...}}]}

What a turn may expect (every key optional):
- `commands`: labels the turn must have understood (`set_slot(slot=order_no, value=7734412)`);
  a label may stop at the arguments it cares about (`answer(question_id=3.1.2` matches any value);
- `not_commands`: labels it must not have understood;
- `slots`: slot values (`"re:..."` for a regular expression), `null` for a slot that must be absent;
- `form`: final answers by question id;
- `reply_contains` / `reply_not_contains`: texts of the reply;
- `decision`: continue | ask | abort; `tools`: tools that must have been called;
- `state`: values in the conversation's state (the API's shape) by dotted path
  (`"mode": "diagnostic"`, `"isolation.complete": true`, `"estimate.status": "confirmed"`);
- `options` / `not_options`: option ids that must be (must not be) offered as eligible;
- `documents`: documents the run must hold; `document_contains` / `document_not_contains`:
  `{document key: [texts]}` in the newest version, as the person downloads it.

What a dialogue's `setup` may create before it starts (each key optional; whatever already
exists is left as it is, so dialogues may share a setup; the run rolls everything back):
- `orders`: order numbers (a copy of the first demo order under that number: `"7734412"`) or whole
  orders (`{"order_no", "plate_no", "city_code", "lot_code", "entry_time", "exit_time",
  "total_amount", "paid_amount"}`, as `POST /api/v1/parking-orders` takes them; a missing total is
  computed with the rule in force);
- `cities`: `{"code", "names": {"en": ..., "zh": ...}, "aliases": [...]}` (another operator's city);
- `lots`: `{"city_code", "code", "names", "aliases"}` (a lot in a known city; one code may be in two cities);
- `rules`: `{"rule_code", "name", "scope": {"city_code", "lot_codes"}, "version": {"effective_from",
  "effective_to", "rule_payload"}}` (a billing rule and its version, as `POST /api/v1/billing-rules` takes them).
They are created in the order cities, lots, rules, orders.

A dialogue whose words depend on the day ("tomorrow morning" priced on a workday) names its clock:
`"now": "2026-03-04T10:00:00+08:00"`; the dialogue then runs at that moment (time-machine, moving on
from it), whatever day the corpus is run.

A turn is a message (`"user": "..."`), a choice of an offered option (`"choose": "option_id",
"consent": true`; its `expect` may hold `state`, `options`, `documents`, `reply_contains` (the
choice's note) and `error` (the refusal's code)), or a member of staff acting on the open
handoff (`"staff_reply": "..."` and/or `"hand_back": true`; its `expect` may hold `state`).

The model generator (`generator="model"`): each dialogue runs twice. First on the rules, which
records what each message was understood as; then with a model configured, against a fake
OpenAI-compatible server whose understanding answer for each message is that reading (the model
understood the same), plus a set of hostile commands (an unknown slot, intent, question, action and
command, an option not offered, an identifier that does not exist, every consent option on offer).
Every hostile command must be refused, every command of the reading accepted, and all the
expectations must still hold. The model only reads the messages: the replies keep the rules' words
(`CONCIERGE_LLM_WORDING` off), so that the expectations on them hold on both generators. A turn may script the model's answer itself (`"model": [commands]`, or
`{"fault": "timeout" | "http_error" | "not_json"}`) and expect refusals (`"refused": [reason prefixes]`);
a dialogue may name the generators it is for (`"generators": ["model"]`: what only a model understands).

Both generators at once (`run_dialogues_on_both`): the rules run that records the reading is the
checked rules run too, so each dialogue runs twice in all rather than three times.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

DIALOGUES_DIR = Path(__file__).resolve().parent.parent / "tests" / "dialogues"


@dataclass
class DialogueReport:
    """Pass counts per workflow and locale, and what failed."""

    passed: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))
    total: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))
    failures: list[str] = field(default_factory=list)

    def add(self, dialogue: dict[str, Any], problems: list[str]) -> None:
        """Count one dialogue's run: passed, or failed with its problems."""
        key = (dialogue["workflow"], dialogue.get("locale", "en"))
        self.total[key] += 1
        if problems:
            self.failures.append(f"{dialogue['file']}:{dialogue['id']}: " + "; ".join(problems))
        else:
            self.passed[key] += 1

    @property
    def all_passed(self) -> bool:
        return not self.failures

    def lines(self) -> list[str]:
        out = [f"{workflow} [{locale}]: {self.passed[(workflow, locale)]}/{count} passed"
               for (workflow, locale), count in sorted(self.total.items())]
        done, count = sum(self.passed.values()), sum(self.total.values())
        out.append(f"all: {done}/{count} passed ({(done / count if count else 1):.1%})")
        return out


def load_dialogues(paths: Iterable[Path] | None = None) -> list[dict[str, Any]]:
    """Every dialogue of the given files or folders (the shipped corpus by default)."""
    files: list[Path] = []
    for path in paths or [DIALOGUES_DIR]:
        files += sorted(path.glob("*.json")) if path.is_dir() else [path]
    dialogues = []
    for file in files:
        for dialogue in json.loads(file.read_text(encoding="utf-8")):
            for number, turn in enumerate(dialogue.get("turns", ()), 1):
                if unknown := set(turn.get("expect", {})) - EXPECTATIONS:
                    # an expectation spelled otherwise would check nothing and pass
                    raise ValueError(f"{file.name}: {dialogue.get('id')}, turn {number}: unknown expectation "
                                     f"{', '.join(sorted(unknown))} (known: {', '.join(sorted(EXPECTATIONS))})")
            dialogues.append({**dialogue, "file": file.name})
    return dialogues


# What a turn may expect (the module's docstring says what each checks)
EXPECTATIONS = frozenset({"commands", "not_commands", "slots", "form", "reply_contains", "reply_not_contains", "decision",
                          "tools", "state", "options", "not_options", "documents", "document_contains",
                          "document_not_contains", "error", "refused"})


def run_dialogues(dialogues: list[dict[str, Any]], user, model_server=None) -> DialogueReport:  # noqa: ANN001
    """Hold each conversation through the services, as a person would; writes (use a rolled-back transaction).

    With `model_server` (a fake OpenAI-compatible server), each dialogue runs on the model generator:
    see the module's docstring.
    """
    report = DialogueReport()
    generator = "rules" if model_server is None else "model"
    for dialogue in dialogues:
        if generator not in dialogue.get("generators", ("rules", "model")):
            continue  # e.g. what only a model understands
        if model_server is None:
            report.add(dialogue, _with_clock(dialogue, _run_one, user))
        else:
            report.add(dialogue, _with_clock(dialogue, _run_on_model, user, model_server)[1])
    return report


def run_dialogues_on_both(dialogues: list[dict[str, Any]], user, model_server) -> dict[str, DialogueReport]:  # noqa: ANN001
    """Each dialogue on the rules (checked, and its reading recorded), then on the model generator
    with that reading: the reports of both generators, as `run_dialogues` gives each."""
    reports = {"rules": DialogueReport(), "model": DialogueReport()}
    for dialogue in dialogues:
        wanted = dialogue.get("generators", ("rules", "model"))
        if "model" not in wanted:
            reports["rules"].add(dialogue, _with_clock(dialogue, _run_one, user))
            continue
        rules_problems, model_problems = _with_clock(dialogue, _run_on_model, user, model_server)
        if "rules" in wanted:
            reports["rules"].add(dialogue, rules_problems)
        reports["model"].add(dialogue, model_problems)
    return reports


def _with_clock(dialogue: dict[str, Any], run: Callable[..., Any], *args: Any) -> Any:
    """The dialogue at its own moment, its writes rolled back after it: each dialogue starts from the same records
    (a fee review an earlier one opened is not there for the next to join, nor counted in the person's day)."""
    from django.db import transaction

    with _clock(dialogue.get("now")), transaction.atomic():
        result = run(dialogue, *args)
        transaction.set_rollback(True)
    return result


def _clock(now: str | None):  # noqa: ANN202
    """The dialogue's own moment, or the real clock when it names none."""
    if now is None:
        return contextlib.nullcontext()
    import time_machine  # a test tool: only dialogues that name their day need it

    return time_machine.travel(datetime.fromisoformat(now), tick=True)


_setup_loaders: list[Callable[[dict[str, Any]], None]] = []


def register_setup_loader(loader: Callable[[dict[str, Any]], None]) -> None:
    """Let an app create what a dialogue's `setup` names (billing registers its data set loader)."""
    if loader not in _setup_loaders:
        _setup_loaders.append(loader)


def _setup(setup: dict[str, Any]) -> None:
    """Create what a dialogue's `setup` names, through the loaders apps registered."""
    if setup and not _setup_loaders:
        raise RuntimeError("A dialogue has a setup, but no app registered a loader for it.")
    for loader in _setup_loaders:
        loader(setup)


def _run_one(dialogue: dict[str, Any], user, model: ModelScript | None = None) -> list[str]:  # noqa: ANN001
    from . import selectors, services

    _setup(dialogue.get("setup", {}))
    conversation = services.conversation_start(user=user, workflow_id=dialogue["workflow"], locale=dialogue.get("locale", "en"))
    said = 0
    for index, turn in enumerate(dialogue["turns"], start=1):
        if "choose" in turn:
            problems = _choose(user, conversation.pk, turn)
            label = f"choose {turn['choose']}"
        elif "staff_reply" in turn or "hand_back" in turn:
            problems = _staff(conversation.pk, turn)
            label = "staff"
        else:
            if model is not None:
                model.before(said, turn, selectors.conversation_state(conversation))
            result = services.conversation_turn(user=user, conversation_id=conversation.pk, text=turn["user"])
            state = selectors.conversation_state(result.conversation, review=result.review, decision=result.decision)
            problems = check_turn(turn.get("expect", {}), result, state)
            if model is not None:
                problems += model.after(said, turn, result)
            said += 1
            label = repr(turn["user"])
        if problems:
            return [f"turn {index} ({label}): {p}" for p in problems]
    return []


# -- the model generator, scripted ------------------------------------------------------------------
HOSTILE_COMMANDS: tuple[dict[str, Any], ...] = (
    {"command": "set_slot", "slot": "card_number", "value": "4111 1111 1111 1111"},
    {"command": "start_intent", "intent": "refund_everything"},
    {"command": "answer", "question_id": "9.9.9", "value": "yes"},
    {"command": "choose_option", "option_id": "waive_all_fees"},
    {"command": "request_action", "action_id": "wire_transfer"},
    {"command": "drop_tables"},
)
MODEL_FAULTS = {"timeout": {"delay": 5.0}, "http_error": {"status": 500}, "not_json": {"body": "<html>oops</html>",
                                                                                           "content_type": "text/html"}}


@dataclass
class ModelScript:
    """The fake model's understanding answers for one dialogue, and the checks on what became of them."""

    server: Any  # tests.support.fake_openai.FakeOpenAI
    readings: list[list[dict[str, Any]]] = field(default_factory=list)  # the rules' reading of each message
    recording: bool = False
    sent: list[dict[str, Any]] = field(default_factory=list)

    def before(self, said: int, turn: dict[str, Any], state: dict[str, Any]) -> None:
        """Script the answer to this message's understanding call."""
        from tests.support.fake_openai import Scripted

        self.server.command_answers.clear()
        if self.recording:
            return
        scripted = turn.get("model")
        if isinstance(scripted, dict) and "fault" in scripted:
            self.sent = []
            self.server.script_commands(Scripted(**MODEL_FAULTS[scripted["fault"]]))
            return
        reading = scripted if scripted is not None else (self.readings[said] if said < len(self.readings) else [])
        self.sent = [*reading, *(() if scripted is not None else self.hostile(state))]
        self.server.script_commands({"commands": self.sent, "reply": None})

    @staticmethod
    def hostile(state: dict[str, Any]) -> list[dict[str, Any]]:
        """The hostile commands for this turn: the fixed set, a missing identifier, every consent option."""
        commands = list(HOSTILE_COMMANDS)
        commands += [{"command": "set_slot", "slot": "order_no", "value": "NX-0000-DOES-NOT-EXIST"}]
        commands += [{"command": "choose_option", "option_id": o["option_id"]} for o in state["options"]
                     if o.get("eligibility") == "eligible" and o.get("requires_consent")]
        return commands

    def after(self, said: int, turn: dict[str, Any], result) -> list[str]:  # noqa: ANN001
        """Record the rules' reading, or check that the model's commands fared as they must."""
        from .engine.commands import command_to_dict
        from .engine.state import INVALID
        from .engine.turn import commands_understood

        if self.recording:
            # less the identifiers the rules found unknown: a model naming them is refused by design
            # (the hostile set checks it), and the rules then say plainly they were not found; less a slot
            # the rules only ask about ("sometime Thursday afternoon": the call's time, no value to give)
            invalid = {n for n, s in result.outcome.state.slots.items() if s.status == INVALID}
            self.readings.append([command_to_dict(c) for c in commands_understood(result.outcome)
                                  if c.slot not in invalid and not (c.kind in ("set_slot", "correct_slot") and not c.value)])
            return []
        summary = result.execution_path.get("commands", {})
        refused = summary.get("refused", [])
        problems = [f"expected the refusal {r}, refused {refused}" for r in turn.get("expect", {}).get("refused", ())
                    if not any(x["reason"].startswith(r) for x in refused)]
        if "model" in turn or summary.get("generator") == "none":
            return problems
        hostile = len(self.sent) - len(self.readings[said] if said < len(self.readings) else [])
        expected_refusals = [c for c in self.sent[len(self.sent) - hostile:]]
        problems += [f"hostile {c} was not refused" for c in expected_refusals
                     if not any({k: v for k, v in x.items() if k != "reason"} == c for x in refused)]
        problems += [f"the model's {x} (the rules' reading) was refused: {x['reason']}" for x in refused
                     if {k: v for k, v in x.items() if k != "reason"} not in expected_refusals]
        return problems


def _run_on_model(dialogue: dict[str, Any], user, server) -> tuple[list[str], list[str]]:  # noqa: ANN001
    """Run the dialogue on the rules recording each message's reading (rolled back), then on the
    model: the problems of the rules run and of the model run."""
    from django.db import transaction
    from django.test import override_settings

    recorder = ModelScript(server, recording=True)
    with override_settings(OPENAI_API_KEY=""), transaction.atomic():
        rules_problems = _run_one(dialogue, user, recorder)
        transaction.set_rollback(True)
    with override_settings(OPENAI_API_KEY="dialogue-tests", OPENAI_BASE_URL=server.base_url,
                           CONCIERGE_LLM_MODEL="fake-model", CONCIERGE_LLM_TIMEOUT=3.0, CONCIERGE_LLM_UNDERSTANDING=True,
                           CONCIERGE_LLM_WORDING=False):  # the corpus checks the reading; the rules word the replies
        return rules_problems, _run_one(dialogue, user, ModelScript(server, readings=recorder.readings))


def _staff(conversation_id: int, turn: dict[str, Any]) -> list[str]:
    """A supervisor answers on the open handoff and/or hands the conversation back."""
    from django.contrib.auth import get_user_model

    from workflows.roles import SUPERVISOR, role_grant

    from . import selectors
    from .handoffs import handoff_close, handoff_reply, open_handoff_id
    from .models import Conversation

    staff, _ = get_user_model().objects.get_or_create(username="dialogue-staff")
    role_grant(staff, SUPERVISOR)
    handoff_id = open_handoff_id(Conversation.objects.get(pk=conversation_id))
    if handoff_id is None:
        return ["no open handoff to act on"]
    if turn.get("staff_reply"):
        handoff_reply(handoff_id=handoff_id, user=staff, text=turn["staff_reply"])
    if turn.get("hand_back"):
        handoff_close(handoff_id=handoff_id, user=staff)
    conversation = Conversation.objects.select_related("run").get(pk=conversation_id)
    return _check_state(turn.get("expect", {}), selectors.conversation_state(conversation))


def _choose(user, conversation_id: int, turn: dict[str, Any]) -> list[str]:  # noqa: ANN001
    from config.errors import ApplicationError

    from . import selectors, services
    from .models import Conversation

    expect = turn.get("expect", {})
    try:
        services.conversation_choose(user=user, conversation_id=conversation_id, option_id=turn["choose"],
                                     consent=bool(turn.get("consent"))).raise_refusal()
    except ApplicationError as refusal:
        if expect.get("error") == refusal.code:
            return []
        return [f"refused: {refusal.code} {refusal.message}"]
    if "error" in expect:
        return [f"expected the refusal {expect['error']}, the choice was taken"]
    conversation = Conversation.objects.select_related("run").get(pk=conversation_id)
    state = selectors.conversation_state(conversation)
    note = conversation.messages.order_by("-id").first()
    problems = _check_state(expect, state)
    text = note.text if note is not None else ""
    problems += [f"note lacks {t!r}: {text[:200]!r}" for t in expect.get("reply_contains", ()) if t not in text]
    return problems


def check_turn(expect: dict[str, Any], result, state: dict[str, Any]) -> list[str]:  # noqa: ANN001
    """What does not hold of one turn's expectations."""
    problems: list[str] = []
    understood = result.execution_path.get("commands", {}).get("understood", [])
    for label in expect.get("commands", ()):
        if not any(c.startswith(label) for c in understood):
            problems.append(f"expected {label}, understood {understood}")
    for label in expect.get("not_commands", ()):
        if any(c.startswith(label) for c in understood):
            problems.append(f"did not expect {label}, understood {understood}")
    for name, wanted in expect.get("slots", {}).items():
        value = state["slots"].get(name, {}).get("value")
        if not _matches(value, wanted):
            problems.append(f"slot {name} is {value!r}, expected {wanted!r}")
    answers = {a["question_id"]: a["answer"] for a in state["form"]["finalized_answers"]}
    for question_id, wanted in expect.get("form", {}).items():
        if not _matches(answers.get(question_id), wanted):
            problems.append(f"answer {question_id} is {answers.get(question_id)!r}, expected {wanted!r}")
    text = result.reply.text
    problems += [f"reply lacks {t!r}: {text[:1200]!r}" for t in expect.get("reply_contains", ()) if t not in text]
    problems += [f"reply has {t!r}" for t in expect.get("reply_not_contains", ()) if t in text]
    if "decision" in expect and result.outcome.decision != expect["decision"]:
        problems.append(f"decision {result.outcome.decision}, expected {expect['decision']}")
    tools = result.execution_path.get("tools_called", [])
    problems += [f"tool {t} not called ({tools})" for t in expect.get("tools", ()) if t not in tools]
    return problems + _check_state(expect, state)


def _check_state(expect: dict[str, Any], state: dict[str, Any]) -> list[str]:
    """The expectations on the conversation's state, options and documents."""
    problems: list[str] = []
    for path, wanted in expect.get("state", {}).items():
        value = _at_path(state, path)
        if not _matches(value, wanted):
            problems.append(f"state {path} is {value!r}, expected {wanted!r}")
    offered = [o["option_id"] for o in state["options"] if o.get("eligibility") == "eligible"]
    problems += [f"option {o} not offered ({offered})" for o in expect.get("options", ()) if o not in offered]
    problems += [f"option {o} offered" for o in expect.get("not_options", ()) if o in offered]
    problems += [f"document {d} missing ({state['documents']})" for d in expect.get("documents", ())
                 if d not in state["documents"]]
    for name, texts in expect.get("document_contains", {}).items():
        body = _document_text(state["id"], name)
        problems += [f"document {name} lacks {t!r}" for t in texts if t not in body]
    for name, texts in expect.get("document_not_contains", {}).items():
        body = _document_text(state["id"], name)
        problems += [f"document {name} has {t!r}" for t in texts if t in body]
    return problems


def _at_path(data: Any, path: str) -> Any:
    for part in path.split("."):
        if isinstance(data, dict):
            data = data.get(part)
        elif isinstance(data, list) and part.isdigit() and int(part) < len(data):
            data = data[int(part)]
        else:
            return None
    return data


def _document_text(conversation_id: int, name: str) -> str:
    """A document's text as the person downloads it: the newest version the run produced."""
    from workflows.models import RunDocument

    from .documents import render
    from .models import Conversation

    conversation = Conversation.objects.get(pk=conversation_id)
    doc = RunDocument.objects.filter(run_id=conversation.run_id, key=name).order_by("-version").first()
    return render(conversation, doc)[0] if doc is not None else ""


def _matches(value: Any, wanted: Any) -> bool:
    if wanted is None:
        return value is None
    if isinstance(wanted, str) and wanted.startswith("re:"):
        return value is not None and re.search(wanted[3:], str(value)) is not None
    return value == wanted
