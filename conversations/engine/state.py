"""The conversation's context state: frozen dataclasses with a JSON round-trip.

`ContextState` is everything the context engine remembers between turns. It is never
mutated: every engine function returns a new state (`dataclasses.replace`). Persist it
with `state.to_dict()` and restore it with `ContextState.from_dict(data)`; unknown keys
are ignored and missing ones take their defaults, so older rows keep loading.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from ._serde import FrozenDict, Serializable, freeze

STATE_SCHEMA_VERSION = 1

# Slot status values.
UNVERIFIED, VALID, INVALID = "unverified", "valid", "invalid"
# Where a slot's value came from.
USER, TOOL = "user", "tool"
# Hypothesis status values.
ACTIVE, CONFIRMED, ELIMINATED = "active", "confirmed", "eliminated"
# Estimate status values ("none" before any draft).
EST_NONE, EST_DRAFT, EST_CONFIRMED, EST_SKIPPED = "none", "draft", "confirmed", "skipped"


@dataclass(frozen=True)
class SlotValue(Serializable):
    """One remembered slot value and where it came from."""

    name: str
    value: str
    source_turn: int
    raw: str = ""
    status: str = UNVERIFIED  # unverified | valid | invalid
    validated_by: str | None = None  # lookup | format | form
    validated_turn: int | None = None
    previous: tuple[str, ...] = ()  # the values it held before, newest first ("the other car park")
    # where the value came from: the person (in words or by pointing at a listed item), or a tool's
    # result (the plate, lot and city of the order just verified), with the tool and the record it read
    source: str = USER  # user | tool
    tool: str | None = None  # e.g. "billing.fee_verify"
    record: str | None = None  # the record the tool read, as "slot=value" (e.g. "order_no=88012345")

    @property
    def usable(self) -> bool:
        return self.status == VALID

    @property
    def learned(self) -> bool:
        """Known from a tool's result, not said by the person."""
        return self.source == TOOL


@dataclass(frozen=True)
class Fact(Serializable):
    """Something established in the conversation: a measurement, an observation or a finding."""

    id: str
    key: str  # the evidence rule id, "finding:<hypothesis>" or "note"
    type: str  # measurement | observation | finding
    source: str  # user | inference | tool
    value: str
    turn: int
    step_id: str | None = None
    superseded_by: str | None = None
    system: str | None = None  # the system being diagnosed when it was said: facts stay with their system

    @property
    def current(self) -> bool:
        return self.superseded_by is None


@dataclass(frozen=True)
class Hypothesis(Serializable):
    """A candidate cause with the facts for and against it."""

    id: str
    description: str
    status: str = ACTIVE  # active | confirmed | eliminated
    confidence: str = "low"  # high | medium | low
    supporting_facts: tuple[str, ...] = ()
    contradicting_facts: tuple[str, ...] = ()


@dataclass(frozen=True)
class Contradiction(Serializable):
    """Two facts that cannot both hold; the older one is superseded."""

    id: str
    fact_a: str
    fact_b: str
    resolution: str | None = None


@dataclass(frozen=True)
class TopicEntry(Serializable):
    """A side question pushed on the topic stack, and the step to return to."""

    topic: str
    submode: str
    return_step_id: str | None
    turn: int


@dataclass(frozen=True)
class AgentAction(Serializable):
    """What a reply did (question, fallback, side answer...), for the loop guard."""

    type: str  # question | clarification | fallback | side_answer | transition | statement | return
    turn: int
    step_id: str | None = None
    topic: str | None = None


@dataclass(frozen=True)
class EstimateLine(Serializable):
    """One labor line of the estimate."""

    label: str
    hours: float
    hypothesis_id: str | None = None


@dataclass(frozen=True)
class Estimate(Serializable):
    """Non-blocking labor estimate: drafted after isolation, confirmed or skipped at will."""

    status: str = EST_NONE  # none | draft | confirmed | skipped
    lines: tuple[EstimateLine, ...] = ()
    confirmed_hours: float | None = None
    drafted_turn: int | None = None
    decided_turn: int | None = None

    @property
    def total_hours(self) -> float:
        return round(sum(line.hours for line in self.lines), 2)


@dataclass(frozen=True)
class PendingClarification(Serializable):
    """An open clarification: the slots (or the intent, or the system) still asked for."""

    intent: str | None
    missing: tuple[str, ...] = ()
    rounds: int = 0
    last_question: str | None = None
    asked_turn: int = 0
    kind: str = "slot"  # slot | intent | system


@dataclass(frozen=True)
class ClarifyingQA(Serializable):
    """One clarifying question and its answer, tied to a form question."""

    question: str
    related_question_id: str
    answer: str | None = None
    asked_turn: int = 0
    answered_turn: int | None = None


@dataclass(frozen=True)
class ClarifyingThread(Serializable):
    """All clarifying Q&A about one form question."""

    question_id: str
    entries: tuple[ClarifyingQA, ...] = ()
    candidates: tuple[str, ...] = ()  # the values put back to the person ("6 or 7: which?"), awaiting their word

    @property
    def open_entry(self) -> ClarifyingQA | None:
        last = self.entries[-1] if self.entries else None
        return last if last is not None and last.answer is None else None


@dataclass(frozen=True)
class FinalizedAnswer(Serializable):
    """A form question's final answer."""

    question_id: str
    question: str
    answer: str
    turn: int
    section: str | None = None
    needs_review: bool = False


@dataclass(frozen=True)
class ContextState(Serializable):
    """Everything the context engine carries from one turn to the next."""

    schema_version: int = STATE_SCHEMA_VERSION
    locale: str = "en"
    turn_index: int = 0  # user turns processed
    message_count: int = 0  # user and assistant messages so far
    mode: str = "conversation"
    submode: str = "main"
    current_step_id: str | None = None  # diagnostic check or form question being worked on
    primary_system: str | None = None
    complaint: str | None = None
    # each system's complaint in the person's words (system id -> words): the report's section of a system
    # diagnosed before a switch, and the words a switched-to system was first named with ("…the water heater as well")
    complaints: Mapping[str, str] = field(default_factory=FrozenDict)
    topic_stack: tuple[TopicEntry, ...] = ()
    facts: tuple[Fact, ...] = ()
    hypotheses: tuple[Hypothesis, ...] = ()
    contradictions: tuple[Contradiction, ...] = ()
    completed_steps: tuple[str, ...] = ()
    skipped_steps: tuple[str, ...] = ()
    step_repeat_counts: Mapping[str, int] = field(default_factory=FrozenDict)
    isolation_complete: bool = False
    isolation_finding: str | None = None
    isolation_invalidated: bool = False
    previous_findings: tuple[str, ...] = ()
    replan_count: int = 0
    last_reply_fallback: bool = False
    last_actions: tuple[AgentAction, ...] = ()
    cooldowns: Mapping[str, int] = field(default_factory=FrozenDict)  # topic -> turn last raised
    estimate: Estimate = field(default_factory=Estimate)
    slots: Mapping[str, SlotValue] = field(default_factory=FrozenDict)
    slot_candidates: Mapping[str, tuple[str, ...]] = field(default_factory=FrozenDict)
    # what a tool said of each listed candidate (an arrears list's orders: their lot, city and plate),
    # so "the one at Chengdu East" points at one: candidate value -> {slot: value}
    candidate_details: Mapping[str, Mapping[str, str]] = field(default_factory=FrozenDict)
    active_intent: str | None = None
    pending_clarification: PendingClarification | None = None
    clarify_rounds: int = 0
    last_question: str | None = None
    last_question_turn: int | None = None
    last_question_answered: bool = True
    same_question: str | None = None  # what the last turns asked for (slot, form question or check), unanswered
    same_question_asks: int = 0  # how many turns in a row it was asked
    handed_off: bool = False  # a member of staff has the conversation: the concierge stays quiet
    situation: str = "unknown"  # active | hypothetical | unknown: is the person's situation happening now
    open_action_flow: str | None = None
    executed_actions: tuple[str, ...] = ()
    preferred_action: str | None = None  # the action the person asked for (it goes first)
    declined_actions: tuple[str, ...] = ()  # actions the person refused (never offered)
    active_thread: ClarifyingThread | None = None
    archived_threads: tuple[ClarifyingThread, ...] = ()
    finalized_answers: tuple[FinalizedAnswer, ...] = ()
    latest_user_text: str | None = None
    # the words of a time asked back ("tomorrow afternoon": what time?), read with the answer ("5pm") next turn
    time_asked_about: str | None = None
    form_editing: str | None = None  # changing a final answer: "?" (asked which one) or its question id

    # -- small read helpers ------------------------------------------------------------
    def current_facts(self) -> tuple[Fact, ...]:
        """Facts not superseded by later evidence."""
        return tuple(f for f in self.facts if f.current)

    def fact(self, fact_id: str) -> Fact | None:
        """The fact with this id, if any."""
        return next((f for f in self.facts if f.id == fact_id), None)

    def hypothesis(self, hypothesis_id: str) -> Hypothesis | None:
        """The hypothesis with this id, if any."""
        return next((h for h in self.hypotheses if h.id == hypothesis_id), None)

    def usable_slots(self) -> dict[str, str]:
        """Validated slot values, the only ones tools may use."""
        return {name: slot.value for name, slot in self.slots.items() if slot.usable}

    def finalized(self, question_id: str) -> FinalizedAnswer | None:
        """The finalized answer for a form question, if any."""
        return next((a for a in self.finalized_answers if a.question_id == question_id), None)

    def evolve(self, **changes: Any) -> ContextState:
        """A copy with some fields changed.

        Like dataclasses.replace, but only the changed values are frozen: a turn evolves the
        state dozens of times, and re-running __init__ over every field each time showed up.
        """
        unknown = changes.keys() - _CONTEXT_FIELDS
        if unknown:
            raise TypeError(f"ContextState has no field(s) {sorted(unknown)}")
        copy = object.__new__(ContextState)
        copy.__dict__.update(self.__dict__)
        for name, value in changes.items():
            object.__setattr__(copy, name, freeze(value) if isinstance(value, list | dict) else value)
        return copy


def with_mapping(mapping: Mapping[str, Any], **changes: Any) -> FrozenDict:
    """A new frozen mapping with keys set (value None removes the key)."""
    data = dict(mapping)
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return FrozenDict(data)


def with_key(mapping: Mapping[str, Any], key: str, value: Any) -> FrozenDict:
    """A new frozen mapping with one (possibly non-identifier) key set or removed."""
    data = dict(mapping)
    if value is None:
        data.pop(key, None)
    else:
        data[key] = value
    return FrozenDict(data)


_CONTEXT_FIELDS = frozenset(f.name for f in fields(ContextState))
