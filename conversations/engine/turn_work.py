"""The working memory of one turn: what each stage of the pipeline found, typed.

`advance_context` (in `turn`) creates a `TurnWork`, passes it through the stages
(`turn_understand` → `turn_diagnostic` / `turn_form` → `turn_clarify`) and assembles the
`TurnOutcome` from it. It is internal and mutable by design, and never leaves the engine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .catalog import marked
from .commands import Command
from .intents import IntentResult
from .loop_guard import ProposedAction
from .slots import ASK, CONTINUE
from .state import FinalizedAnswer
from .topics import SideQuestion

Lookups = Mapping[str, Callable[..., Any]]

# What a turn means (TurnOutcome.meaning).
ANSWER, SIDE_QUESTION, REQUEST, FOLLOW_UP = "answer", "side_question", "request", "follow_up"
EVIDENCE, DISPUTE_MEANING, CONFIRM, ESTIMATE, REPORT, UNCLEAR_MEANING = (
    "new_evidence",
    "dispute",
    "confirmation",
    "estimate",
    "report",
    "unclear",
)
# Repair: the person drops the request in progress, or asks for a human being.
CANCEL_MEANING, HANDOFF_MEANING = "cancel", "handoff"
NEXT_STEP_MEANING = "next_step"  # "what's the next step?": the check to do now, not an explanation
QUESTION_MEANING = "question_meaning"  # "what does this question mean?": the question waiting, said another way
# Meanings that never answer the pending question nor complete a step.
NOT_AN_ANSWER = (CANCEL_MEANING, HANDOFF_MEANING, QUESTION_MEANING)

FALLBACK_TEXT = marked("Could you tell me a bit more about what you see?")
# Diagnostic notices ({system}: the procedure's label); their translations are in the message catalog.
SWITCHED_TEXT = marked("OK, let's look at the {system} instead.")
# a second fault mentioned mid-diagnosis: noted, the first one is finished first
ALSO_TEXT = marked(
    "Noted: the {other} as well. Let's finish the {system} first; say “switch to the {other}” when you "
    "want to move on.")
# the system was said to be wrong, and no other one named
WHICH_SYSTEM_TEXT = marked("OK, not the {system}. What I found so far stays with it.")
# {systems}: the systems the message named
TWO_SYSTEMS_TEXT = marked(
    "You mentioned more than one system ({systems}). I'll take them one at a time: which should we start "
    "with?")
DEFERRED_TEXT = marked("No problem: this check stays open until you've had a look.")
NO_MORE_STEPS_TEXT = marked(
    "That's every check I have for the {system}, and they don't single out one cause yet. Tell me "
    "anything else you find, or say “talk to a person” and a member of staff will take over.")
# A check that expects a measurement, answered without one ({what}: the reading it needs).
NEED_READING_TEXT = marked("I didn't get a reading there: for this check I need {what}.")
# {value}: what was read; {got} / {expected}: its kind and the one needed
WRONG_READING_TEXT = marked("“{value}” is {got}, not {expected}: for this check I need {what}.")
# a check asked twice without an answer: not asked a third time in a row
LEFT_OPEN_TEXT = marked(
    "Let's leave that check open for now (you can still answer it later) and go on.")
NEXT_STEP_TEXT = marked("The next step is this check:")
BACK_TO_CHECK_TEXT = marked("Let's go back to a check we left open.")
STILL_SUSPECTED_TEXT = marked("What the evidence still points at: {causes}.")
# the causes the checks neither ruled out nor pointed at: left for the technician
NOT_RULED_OUT_TEXT = marked("Not ruled out by these checks, for you to look at: {causes}.")
NOTHING_LEFT_TEXT = marked(
    "There is nothing left to check: the cause is isolated. You can write the final report now, and "
    "confirm or skip the labor estimate.")
NEED_ANSWER_TEXT = marked("That doesn't answer the check yet: I need {what}.")
# kind -> (a reading of that kind, what a check of that kind needs)
READING_KINDS = {
    "answer": (marked("an answer"), marked("what you found at this check")),
    "yes_no": (marked("a yes or no"), marked("a yes or a no (or what you saw)")),
    "pressure": (marked("a pressure"), marked("the pressure you read (for example “11 in. WC” on a manometer, or “0.4 psi”)")),
    "temperature": (marked("a temperature"), marked("the temperature you read (for example “38 °F” or “4 °C”)")),
    "frequency": (marked("a frequency"), marked("the frequency you read, in Hz (for example “60 Hz”)")),
    "voltage": (marked("a voltage"), marked("the voltage you read, in volts (for example “118 V” or “12.4 V”; “0 V” if there is none)")),
    "current": (marked("a current"), marked("the current you read, in amps (for example “14 A”)")),
    "resistance": (marked("a resistance"), marked("the resistance you read, in ohms (for example “3.2 Ω”)")),
    "capacitance": (marked("a capacitance"), marked("the capacitance you read, in µF, and its rating (for example “35 µF, rated 45”)")),
}
READING_WAY_OUT_TEXT = marked(
    "If you can't measure it now, say “not sure” and we'll go on to the next check, or say “talk to a "
    "person” and a member of staff will take over.")
REPORT_NOT_YET_TEXT = marked(
    "Here is the report so far. The cause isn't isolated yet, so it lists what is still unknown: the "
    "suspected causes and the checks not done.")
ESTIMATE_CONFIRMED_TEXT = marked("Labor estimate confirmed: {hours} h; the report will show it as confirmed.")
REPORT_READY_TEXT = marked(
    "Here is the final report: complaint, cause and correction, with the labor estimate as it stands.")


@dataclass
class TurnWork:
    """One pipeline run: the message, its reading, and what each stage decided."""

    text: str
    turn: int
    routed: IntentResult
    language: str
    now: datetime | None = None  # the turn's clock: a date question's "next Friday" is read from it
    timezone: str | None = None
    commands: tuple[Command, ...] = ()  # validated commands from a generator (the model)
    # the model read the message: its reading is the reading; the rules add no intent, dialogue act or answer
    model_read: bool = False
    meaning: str = ANSWER
    decision: str = CONTINUE
    reply_action: str = "acknowledge"
    action: ProposedAction = field(default_factory=lambda: ProposedAction("statement"))
    trace: list[str] = field(default_factory=list)
    # said before the question (no procedure for a named system, a switch, no checks left)
    notice: str | None = None
    deferred: bool = False  # the person has not checked yet / is unsure: the step stays open
    non_answer: bool = False  # the message gave nothing toward the check or form question asked ("hmm", "not sure", "ok")
    # a check expecting a measurement got none of its kind: it stays open (and, with no other
    # evidence, is asked again saying what reading it needs)
    step_unanswered: bool = False
    evidence_seen: list | None = None  # this system's evidence in the message, when already read this turn
    evidence_from: int = 0  # where the words about the system diagnosed begin (after a switch, its own sentence on)
    reading_needed: str | None = None
    reading_got: Any = None  # the evidence.Reading of another kind, if any
    # the question the reply must ask
    question: str | None = None
    question_kind: str | None = None
    # understanding: the request and its slots
    cancelled: bool = False
    restarted: bool = False
    handoff_requested: bool = False
    resolved_intent: str | None = None
    intent_source: str | None = None
    intent_started: bool = False  # the resolved intent is a request this turn begins (not one going on)
    partial_request: str | None = None  # the one request what the message gives belongs to, not named: asked whether it is
    slots_changed: tuple[str, ...] = ()
    slots_corrected: tuple[str, ...] = ()
    slots_replaced: list[str] = field(default_factory=list)  # by words said in their place ("Tobias, not Tim")
    slots_mentioned: tuple[str, ...] = ()
    ambiguous_slots: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)  # slot -> (value, label)...
    pointed_at: str | None = None  # the slot of a listed item the message points at by its details ("the one at ...")
    # the request the router read in words that only name a side topic, set aside for the side question while a
    # question waits ("what is a daily cap?"); it is the request again when the message names one of its details
    request_set_aside: IntentResult | None = None
    missing_slots: tuple[str, ...] = ()
    invalid_slots: tuple[str, ...] = ()
    side_question: SideQuestion | None = None
    returned_to_step: str | None = None
    # diagnostic
    facts_added: tuple[str, ...] = ()
    facts_volunteered: tuple[str, ...] = ()  # of those, the ones that answer no check asked ("I hear clicking now")
    facts_superseded: tuple[str, ...] = ()
    contradictions_added: tuple[str, ...] = ()
    hypotheses_eliminated: tuple[str, ...] = ()
    hypotheses_confirmed: tuple[str, ...] = ()
    replan: bool = False
    replan_reason: str | None = None
    isolation_completed: bool = False
    completed_steps: tuple[str, ...] = ()
    next_step_id: str | None = None
    next_step_question: str | None = None
    loop_violations: tuple[str, ...] = ()
    estimate_drafted: bool = False
    estimate_changed: bool = False
    ready_for_report: bool = False
    report_blockers: tuple[str, ...] = ()
    # form
    form_question_id: str | None = None
    form_answer_finalized: FinalizedAnswer | None = None
    clarify_form_question_id: str | None = None
    form_complete: bool = False
    form_changed_question: str | None = None
    form_changed_from: str | None = None
    form_changed_to: str | None = None
    # what the message says about the actions: the one wanted, the ones refused
    action_requested: str | None = None
    actions_declined: tuple[str, ...] = ()
    form_note: str | None = None  # a word about the form to say before the rest ("nothing changed")
    # what was read without being sure (contract 10): said back (likely) or asked (guess), never stored silently
    unsure: list[Command] = field(default_factory=list)
    unrecorded_place: str | None = None  # a city named that the operator has no record of ("in Dali"): said, then asked
    system_chosen: str | None = None  # the diagnostic's system this message named (or switched to)
    form_also_changed: list[tuple[str, str]] = field(default_factory=list)  # more answers corrected: (question, value)
    form_volunteered: list[Command] = field(default_factory=list)  # answers given before their question was asked
    unread: list[str] = field(default_factory=list)  # parts of the message no command read, said back as such

    def command(self, *kinds: str) -> Command | None:
        """The first given command of one of these kinds."""
        return next((c for c in self.commands if c.kind in kinds), None)

    def add_notice(self, text: str) -> None:
        """A word said before the question, after any said already."""
        self.notice = f"{self.notice} {text}" if self.notice else text

    def add_form_note(self, text: str) -> None:
        """A word about the form said after what was noted, after any said already."""
        if text not in (self.form_note or ""):  # one word about three answers said unsure is said once
            self.form_note = f"{self.form_note} {text}" if self.form_note else text

    def ask(self, question: str | None, kind: str) -> None:
        self.decision = ASK
        self.question, self.question_kind = question, kind
