"""Diagnostic procedure progress: which system, which steps are done, which step is next."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from ._text import compile_pattern, count_matches, first_match, iter_patterns
from .config import DiagnosticSpec, LoopGuardConfig, OtherSystemSpec, ProcedureSpec, StepSpec
from .state import ACTIVE, ContextState


def _in(patterns: Mapping[str, tuple[str, ...]], language: str | None) -> Mapping[str, tuple[str, ...]]:
    """A system's patterns in the message's language, plus English (brands and shop words) and any-language
    ones: a Russian message is never read with the Chinese words. All of them when the language is unknown."""
    if language is None or language == "en":
        return patterns if language is None else {k: v for k, v in patterns.items() if k in ("en", "any")}
    return {k: v for k, v in patterns.items() if k in (language, "en", "any")}


def detect_procedure(text: str, procedures: Iterable[ProcedureSpec], language: str | None = None) -> ProcedureSpec | None:
    """The procedure whose patterns match the message best (declaration order breaks ties)."""
    scored = [(count_matches(text, _in(p.patterns, language)), i, p) for i, p in enumerate(procedures)]
    scored = [s for s in scored if s[0] > 0]
    if not scored:
        return None
    return max(scored, key=lambda s: (s[0], -s[1]))[2]


def named_other_system(
    text: str, diag: DiagnosticSpec, procedure: ProcedureSpec | None, language: str | None = None
) -> OtherSystemSpec | None:
    """A system the plan has no procedure for, named at least as strongly as `procedure`.

    "the propane fridge isn't cooling" names the fridge; "cooling" alone must not pull it into
    the roof air conditioner's checks, so the named system wins a tie.
    """
    scored = [(count_matches(text, _in(o.patterns, language)), -i, o) for i, o in enumerate(diag.other_systems)]
    scored = [s for s in scored if s[0] > 0]
    if not scored:
        return None
    best = max(scored, key=lambda s: s[:2])
    rival = count_matches(text, _in(procedure.patterns, language)) if procedure is not None else 0
    return best[2] if best[0] >= rival else None


def _first_at(text: str, patterns) -> int | None:  # noqa: ANN001
    if not first_match(text, patterns):  # one combined scan rules out a system the message does not name
        return None
    starts = [m.start() for _, p in iter_patterns(patterns) if (m := compile_pattern(p).search(text))]
    return min(starts) if starts else None


def named_systems(text: str, diag: DiagnosticSpec, language: str | None = None) -> list[ProcedureSpec | OtherSystemSpec]:
    """Every system the message names (by name, not by a symptom such as "cooling"), in the order named."""
    found = [(at, i, s) for i, s in enumerate(diag.procedures)
             if (at := _first_at(text, _in(s.name_patterns, language))) is not None]
    found += [(at, len(diag.procedures) + i, o) for i, o in enumerate(diag.other_systems)
              if (at := _first_at(text, _in(o.patterns, language))) is not None]
    return [s for _, _, s in sorted(found, key=lambda f: f[:2])]


def steps_answered_by(procedure: ProcedureSpec, fact_keys: Iterable[str]) -> tuple[str, ...]:
    """Steps completed by the given evidence, wherever the conversation currently is."""
    keys = set(fact_keys)
    return tuple(step.id for step in procedure.steps if keys & set(step.answered_by))


def _branch_open(state: ContextState, step: StepSpec) -> bool:
    if step.branch is None:
        return True
    hypothesis = state.hypothesis(step.branch)
    # A branch check is worth asking only while its hypothesis is suspected and undecided.
    return (
        hypothesis is not None and hypothesis.status == ACTIVE and bool(hypothesis.supporting_facts)
    )


def step_available(state: ContextState, step: StepSpec, guard: LoopGuardConfig) -> bool:
    """Not completed, not left open (`skipped_steps`: the loop guard leaves a check put twice in a row without an
    answer there, see `loop_guard.asked_enough`), and its branch is open."""
    if step.id in state.completed_steps or step.id in state.skipped_steps:
        return False
    return _branch_open(state, step)


def next_step(
    state: ContextState, procedure: ProcedureSpec, guard: LoopGuardConfig, *, following: Iterable[str] = ()
) -> StepSpec | None:
    """The next check to ask: open branch checks first (they follow the evidence), those of the causes in
    `following` before the rest (a replan switches to the branch of the evidence that caused it), then the main
    line."""
    available = [s for s in procedure.steps if step_available(state, s, guard)]
    first = set(following)
    branches = sorted((s for s in available if s.branch is not None), key=lambda s: s.branch not in first)
    main = [s for s in available if s.branch is None]
    ordered = branches + main
    return ordered[0] if ordered else None


def remaining_steps(
    state: ContextState, procedure: ProcedureSpec, guard: LoopGuardConfig
) -> tuple[str, ...]:
    """Ids of the checks that could still be asked."""
    return tuple(s.id for s in procedure.steps if step_available(state, s, guard))


# Words that turn the diagnosis to another system named beside them ("switch to the fridge", "different problem now: …")
_SWITCH_WORDS = re.compile(r"\b(?:switch|back\s+to|forget\s+(?:that|it|about)|never\s*mind|move\s+on|go\s+to|let'?s\s+do|now\s+(?:the|let'?s)|instead|actually|it'?s\s+(?:the|my)"
                           r"|different\s+(?:problem|issue|thing)|(?:can|could)\s+(?:we|you)\s+(?:look\s+at|check)\s+(?:that|it|the))\b"
                           r"|换到|改成|转到|其实是|实际上是|算了|先不管|回到|再看|先看|另一个问题|换个问题|перейд|переключ|на\s+самом\s+деле|забуд|верн[её]мся|вернись|теперь|давай|другая\s+проблема"
                           r"|cambia|pasemos|en\s+realidad|olv[ií]da|volv|vamos\s+(?:a|con)|ahora\s+(?:el|la)|otro\s+problema",
                           re.IGNORECASE)


def asks_to_switch(text: str, diag: DiagnosticSpec, current: str | None, language: str | None = None) -> bool:
    """Whether a message turns to another system with a procedure ("OK, different problem now: our water heater
    won't light either. Can we look at that?"): it names one and says so."""
    return bool(_SWITCH_WORDS.search(text)) and any(
        isinstance(s, ProcedureSpec) and s.id != current for s in named_systems(text, diag, language))
