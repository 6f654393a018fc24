"""One user turn through the deterministic context pipeline, and the reply bookkeeping.

`advance_context(state, text, now=..., timezone=..., config=..., lookups=...)` routes the
intent, extracts and merges slots, updates facts / hypotheses / contradictions, pushes or
pops the topic stack, checks for replan, applies the loop guard and decides continue /
ask / abort. It returns a `TurnOutcome` that says what the turn means; it never writes
the reply. After the reply is written, `record_reply(state, text=..., action=...)` tells
the engine what the reply did (asked a question, fell back, asked a step...), which the
loop guard and ask-then-act rely on.

Pipeline order, one module per seam, sharing the typed working memory `TurnWork`
(`turn_work`): the reading (`turn_understand`: start, cancel, meaning, slots, the request
served, the topic stack) -> the diagnostic stages (`turn_diagnostic`: procedure, evidence,
replan, isolation, estimate, report, next step under the loop guard) -> the form stages
(`turn_form`: clarifying thread, finalize, corrections, next question) -> the slot clarify
decision and the final mode (`turn_clarify`) -> the outcome (here).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import Any

from ._serde import FrozenDict, Serializable, to_jsonable
from ._text import asks_question as text_asks_question
from ._text import chitchat_kind, localize
from .action_prefs import apply_action_request, describe_when
from .catalog import say
from .certainty import GUESS
from .commands import Command
from .config import ConversationConfig
from .estimate import FinalReport, build_final_report, system_section
from .forms import add_clarifying_question, current_question
from .intents import route_intent
from .loop_guard import QUESTION, ProposedAction, record_action
from .named_values import Finder
from .procedure import remaining_steps
from .slots import ABORT, ASK, learn_slots
from .state import EST_NONE, INVALID, VALID, ContextState, FinalizedAnswer, with_key
from .topics import SideQuestion
from .turn_clarify import clarify_slots, finish_mode
from .turn_diagnostic import diagnose
from .turn_form import fill_form
from .turn_understand import (
    cancel_request,
    fill_slots,
    read_meaning,
    resolve_intent,
    routed_by_commands,
    side_topic_over_request,
    start_turn,
    track_topic,
)
from .turn_work import (
    ANSWER,
    CONFIRM,
    DISPUTE_MEANING,
    ESTIMATE,
    EVIDENCE,
    FOLLOW_UP,
    HANDOFF_MEANING,
    REPORT,
    REQUEST,
    SIDE_QUESTION,
    UNCLEAR_MEANING,
    Lookups,
    TurnWork,
)

__all__ = [
    "ANSWER",
    "CONFIRM",
    "DISPUTE_MEANING",
    "ESTIMATE",
    "EVIDENCE",
    "FOLLOW_UP",
    "REPORT",
    "REQUEST",
    "SIDE_QUESTION",
    "UNCLEAR_MEANING",
    "TurnOutcome",
    "advance_context",
    "commands_understood",
    "final_report_for",
    "held_outcome",
    "initial_state",
    "learn_from_tool",
    "opening_question",
    "record_opening",
    "record_reply",
    "set_slot_status",
    "with_slot_candidates",
]


@dataclass(frozen=True)
class TurnOutcome(Serializable):
    """What one user turn means, plus the new state. It does not contain the reply.

    `meaning`: answer | side_question | request | follow_up | new_evidence | dispute |
    confirmation | estimate | report | unclear.
    `reply_action` (what the reply should do): side_answer (brief answer, then back to
    `next_step_question` or the open `question`) | ask_slot | ask_intent | ask_system |
    ask_step | fallback | present_results (run the intent's tools / show the findings) |
    no_more_steps | estimate_confirmed | estimate_skipped | final_report | form_next |
    form_clarify | form_complete | abort | acknowledge.
    `proposed_action` is what to pass to `record_reply` once the reply is written.
    """

    state: ContextState
    turn_index: int
    language: str
    intent: str
    intent_confidence: float
    matched_pattern: str | None
    intent_kind: str
    meaning: str
    mode: str
    submode: str
    decision: str  # continue | ask | abort
    reply_action: str
    proposed_action: ProposedAction
    resolved_intent: str | None = None
    intent_source: str | None = None
    intent_started: bool = False  # the resolved intent begins with this message (explicit, or by what it names)
    question: str | None = None
    question_kind: str | None = None  # slot | intent | system | form_clarify | fallback
    missing_slots: tuple[str, ...] = ()
    invalid_slots: tuple[str, ...] = ()
    slots_changed: tuple[str, ...] = ()
    slots_corrected: tuple[str, ...] = ()  # of those, the ones that replaced an earlier value
    usable_slots: Mapping[str, str] = field(default_factory=FrozenDict)
    side_question: SideQuestion | None = None
    returned_to_step: str | None = None
    completed_steps: tuple[str, ...] = ()
    next_step_id: str | None = None
    next_step_question: str | None = None
    loop_violations: tuple[str, ...] = ()
    replan: bool = False
    replan_reason: str | None = None
    facts_added: tuple[str, ...] = ()
    facts_volunteered: tuple[str, ...] = ()
    facts_superseded: tuple[str, ...] = ()
    contradictions_added: tuple[str, ...] = ()
    hypotheses_eliminated: tuple[str, ...] = ()
    hypotheses_confirmed: tuple[str, ...] = ()
    isolation_completed: bool = False
    estimate_status: str = EST_NONE
    estimate_drafted: bool = False
    estimate_changed: bool = False
    ready_for_report: bool = False
    report_blockers: tuple[str, ...] = ()
    form_question_id: str | None = None
    form_answer_finalized: FinalizedAnswer | None = None
    clarify_form_question_id: str | None = None
    form_complete: bool = False
    form_changed_question: str | None = None  # a final answer corrected this turn: which, from, to
    form_changed_from: str | None = None
    form_changed_to: str | None = None
    form_note: str | None = None
    situation: str = "unknown"
    cancelled: bool = False  # the request in progress was dropped
    restarted: bool = False  # "start over" on a form: its answers were cleared, it begins again
    handoff_requested: bool = False  # the person asked for a human being
    question_repeats: int = 0  # how many times in a row the reply's question has now been asked
    notice: str | None = None  # said before the question (no procedure for that system, a switch, ...)
    action_requested: str | None = None  # the action the person asked for in this message
    actions_declined: tuple[str, ...] = ()  # the actions the person refused in this message
    unsure_commands: tuple[Command, ...] = ()  # read, but not certain: said back or asked
    system_chosen: str | None = None  # the diagnostic's system the message named
    form_also_changed: tuple[tuple[str, str], ...] = ()  # answers corrected besides form_changed_question
    form_volunteered: tuple[Command, ...] = ()  # answers given before their question was asked, kept for it
    unread: tuple[str, ...] = ()  # parts of the message no command read: said back as not understood
    trace: tuple[str, ...] = ()

    @property
    def facts_changed(self) -> bool:
        return bool(self.facts_added or self.facts_superseded)

    def summary(self) -> dict[str, Any]:
        """The outcome without the state (for the reply payload and the audit row)."""
        # field by field: writing the whole state out only to drop it cost more than the rest
        return {name: to_jsonable(getattr(self, name)) for name in _SUMMARY_FIELDS}


_SUMMARY_FIELDS = tuple(f.name for f in fields(TurnOutcome) if f.name != "state")


def initial_state(config: ConversationConfig, *, locale: str | None = None) -> ContextState:
    """A fresh state for a conversation on this plan."""
    return ContextState(locale=locale or config.locale, mode=config.modes.initial, submode="main")


def advance_context(
    state: ContextState,
    text: str,
    *,
    now: datetime,
    timezone: str,
    config: ConversationConfig,
    lookups: Lookups | None = None,
    commands: Sequence[Command] = (),
    finders: Sequence[Finder] = (),
    model_read: bool = False,
) -> TurnOutcome:
    """Run the deterministic pipeline for one user turn.

    `commands` are what a command generator (the model) understood, already validated
    (`commands.validate_commands`): they take precedence over the rules' own reading where
    they speak (the intent, a slot's value, the answer to the pending form question, a side
    question, evidence, cancelling). With `model_read` (the model answered), its reading is the
    reading: the rules add no cancel, handoff, action request or form answer it did not give.
    """
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    routed = route_intent(text, domain_intents=config.intents, default_language=state.locale)
    guessed = tuple(c for c in commands if c.certainty == GUESS)  # a generator's guess is asked, never applied
    work = TurnWork(text=text, turn=state.turn_index + 1, routed=routed, language=routed.language, now=now, timezone=timezone,
                    commands=tuple(c for c in commands if c.certainty != GUESS), model_read=model_read)
    work.unsure.extend(guessed)
    work.routed = routed_by_commands(work, config)
    work.routed = side_topic_over_request(state, work, config)
    work.trace.extend(f"command {c.describe()}" for c in work.commands)
    state = start_turn(state, work, config)
    state = cancel_request(state, work, config)
    work.meaning = read_meaning(state, work, config)
    state = fill_slots(state, work, config, lookups, now=now, timezone=timezone, finders=finders)
    state = apply_action_request(state, work, config, now=now, timezone=timezone)
    state = resolve_intent(state, work, config)
    state = track_topic(state, work, config)
    if config.diagnostic_enabled:
        system_before = state.primary_system
        state = diagnose(state, work, config)
        if system_before is None and state.primary_system is not None:  # (a switch is read by its own stage)
            work.system_chosen = state.primary_system
    if config.form is not None:
        state = fill_form(state, work, config)
    state = clarify_slots(state, work, config)
    state = finish_mode(state, work, config)
    _ask_about_guesses(work, guessed)
    state = _count_repeats(state, work)
    return _outcome(state, work, config)


def _ask_about_guesses(work: TurnWork, guessed: Sequence[Command]) -> None:
    """A value the generator only guessed is put to the person, when the turn asks nothing else: the values it
    hesitated between, or the one it gave (a date in words, "Thursday 5 March", not "2026-03-05")."""
    guess = next((c for c in guessed if c.kind in ("set_slot", "correct_slot", "answer") and c.value), None)
    if guess is None or work.decision == "ask":
        return
    shown = [_value_said(v, work.language) for v in (guess.candidates if len(guess.candidates) >= 2 else (guess.value,))]
    if len(shown) >= 2:
        work.ask(say(work.language, "{first} or {second}: which shall I put?", first=shown[0], second=shown[1]), "clarify")
    else:
        work.ask(say(work.language, "Just to be sure: did you mean {value}?", value=shown[0]), "clarify")


def _value_said(value: str, language: str) -> str:
    """A value as a person says it: a date in words, anything else as it is."""
    return describe_when(value, None, language) if _ISO_DATE.fullmatch(value) else value


_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _count_repeats(state: ContextState, work: TurnWork) -> ContextState:
    """How many turns in a row the same question is asked, whatever words come before it (the loop guard leaves
    a check or a form question open after `max_step_repeats`; a slot's reply offers a way out at the third)."""
    asked = _asked_about(work)
    if asked is None:
        return state.evolve(same_question=None, same_question_asks=0)
    # a check or a form question counts the asks its non-answers brought ("hmm", "not sure", "ok"): any message with
    # something toward it (an answer in part, another answer, a side question) starts the count afresh
    # a check put again right after facts that leave it open counts too ("no voltage ever shows up at the gas valve"
    # read as another check's finding): the seed's guard counts the step's asks, not what came between them
    still_open = (work.next_step_id == asked and work.form_question_id is None and work.side_question is None and not work.replan
                  and work.meaning in (ANSWER, EVIDENCE))
    again = asked == state.same_question and (work.non_answer or still_open or bool(work.missing_slots) and work.decision == ASK)
    repeats = state.same_question_asks + 1 if again else 1
    return state.evolve(same_question=asked, same_question_asks=repeats)


def _asked_about(work: TurnWork) -> str | None:
    """What the reply asks for, however it is worded: the slots, the form question or the check (a check's
    question is put after any lead-in: "No problem…", "That doesn't answer…", "Back to where we were…")."""
    if work.decision == ABORT:
        return None
    if work.decision == ASK and work.question:
        return ",".join(work.missing_slots) or work.form_question_id or work.next_step_id or work.question
    if work.next_step_question and work.reply_action != "present_results":
        return work.form_question_id or work.next_step_id or work.next_step_question
    return None


def held_outcome(state: ContextState, text: str) -> TurnOutcome:
    """A message while a member of staff has the conversation: stored, understood as nothing, state unchanged."""
    state = state.evolve(latest_user_text=text)
    return TurnOutcome(state=state, turn_index=state.turn_index, language=state.locale, intent="UNCLEAR",
                       intent_confidence=0.0, matched_pattern=None, intent_kind="none", meaning=HANDOFF_MEANING,
                       mode=state.mode, submode=state.submode, decision="continue", reply_action="handoff_held",
                       proposed_action=ProposedAction("statement"), situation=state.situation,
                       trace=("handed off: the concierge stays quiet",))


def record_reply(
    state: ContextState,
    *,
    text: str,
    action: ProposedAction | None = None,
    asks_question: bool | None = None,
    clarifying_question_id: str | None = None,
) -> ContextState:
    """Book-keep the assistant's reply: question asked, fallback, step repeat, cool-down."""
    asks = text_asks_question(text) if asks_question is None else asks_question
    state = state.evolve(message_count=state.message_count + 1)
    if asks:
        state = state.evolve(
            last_question=text.strip()[:500],
            last_question_turn=state.turn_index,
            last_question_answered=False,
        )
    state = record_action(state, action or ProposedAction("statement"))
    if action is not None and action.type == QUESTION and action.step_id:
        state = state.evolve(current_step_id=action.step_id)
    if clarifying_question_id:
        state = add_clarifying_question(
            state, text.strip(), turn=state.turn_index, question_id=clarifying_question_id
        )
    return state


def record_opening(state: ContextState, *, text: str, action: ProposedAction) -> ContextState:
    """Book-keep a greeting that asks the form's first question: the first time that question is put."""
    state = record_reply(state, text=text, action=action)
    return state.evolve(same_question=action.step_id, same_question_asks=1)


def opening_question(
    state: ContextState, config: ConversationConfig
) -> tuple[str, ProposedAction] | None:
    """For a form plan, the first question to greet with (record it with `record_reply`)."""
    if config.form is None or config.form.kind != "form":
        return None
    spec = current_question(state, config.form)
    if spec is None:
        return None
    return localize(spec.question, state.locale), ProposedAction(QUESTION, spec.id, spec.id)


def final_report_for(
    state: ContextState, config: ConversationConfig, *, locale: str | None = None
) -> FinalReport | None:
    """The final report of a diagnostic conversation (None before a system was identified)."""
    procedure = config.procedure(state.primary_system)
    if procedure is None:
        return None
    lang = locale or state.locale
    unchecked = tuple(localize(procedure.step(s).question, lang) for s in remaining_steps(state, procedure, config.loop_guard))
    others = [p for p in config.diagnostic.procedures if p.id != procedure.id] if config.diagnostic else []
    also = tuple(section for p in others
                 if (section := system_section(state, p.id, localize(p.label, lang), p.hypotheses, lang)) is not None)
    return build_final_report(state, procedure.hypotheses, locale=lang, system=localize(procedure.label, lang),
                              unchecked=unchecked, also=also)


def with_slot_candidates(
    state: ContextState, name: str, values: tuple[str, ...] | list[str],
    details: Mapping[str, Mapping[str, str]] | None = None,
) -> ContextState:
    """Remember values a tool listed (e.g. arrears orders) so 'this order' / '第一笔' can resolve, and what
    the tool said of each (`details`: value -> {slot: value}, e.g. its lot) so 'the one at Chengdu East' can."""
    values = tuple(values)
    kept = {k: v for k, v in state.candidate_details.items() if k not in values}
    kept.update({v: FrozenDict(details[v]) for v in values if details and details.get(v)})
    return state.evolve(
        slot_candidates=with_key(state.slot_candidates, name, values or None),
        candidate_details=FrozenDict(kept),
    )


def learn_from_tool(
    state: ContextState, values: Mapping[str, str | None], *, tool: str, record: str | None = None
) -> ContextState:
    """What a tool's result established (the plate, lot and city of the order just verified) becomes the
    slots' values for the turns after, with the tool and the record as their source (not the person)."""
    slots, changed = learn_slots(state.slots, values, turn=state.turn_index, tool=tool, record=record)
    return state.evolve(slots=slots) if changed else state


def set_slot_status(
    state: ContextState, name: str, *, valid: bool, value: str | None = None
) -> ContextState:
    """Mark a slot valid or invalid after a lookup made outside a turn (e.g. by a tool)."""
    slot = state.slots.get(name)
    if slot is None:
        return state
    updated = replace(
        slot,
        value=value or slot.value,
        status=VALID if valid else INVALID,
        validated_by="lookup",
        validated_turn=state.turn_index,
    )
    return state.evolve(slots=with_key(state.slots, name, updated))


def _outcome(state: ContextState, work: TurnWork, config: ConversationConfig) -> TurnOutcome:
    """Assemble the outcome from the working memory."""
    return TurnOutcome(
        state=state,
        turn_index=work.turn,
        language=work.language,
        intent=work.routed.intent,
        intent_confidence=work.routed.confidence,
        matched_pattern=work.routed.pattern,
        intent_kind=work.routed.kind,
        meaning=work.meaning,
        mode=state.mode,
        submode=state.submode,
        decision=work.decision,
        reply_action=work.reply_action,
        proposed_action=work.action,
        resolved_intent=work.resolved_intent,
        intent_source=work.intent_source,
        intent_started=work.intent_started,
        question=work.question,
        question_kind=work.question_kind,
        missing_slots=work.missing_slots,
        invalid_slots=work.invalid_slots,
        slots_changed=work.slots_changed,
        slots_corrected=work.slots_corrected,
        usable_slots=FrozenDict(state.usable_slots()),
        side_question=work.side_question,
        returned_to_step=work.returned_to_step,
        completed_steps=work.completed_steps,
        next_step_id=work.next_step_id,
        next_step_question=work.next_step_question,
        loop_violations=work.loop_violations,
        replan=work.replan,
        replan_reason=work.replan_reason,
        facts_added=work.facts_added,
        facts_volunteered=work.facts_volunteered,
        facts_superseded=work.facts_superseded,
        contradictions_added=work.contradictions_added,
        hypotheses_eliminated=work.hypotheses_eliminated,
        hypotheses_confirmed=work.hypotheses_confirmed,
        isolation_completed=work.isolation_completed,
        estimate_status=state.estimate.status,
        estimate_drafted=work.estimate_drafted,
        estimate_changed=work.estimate_changed,
        ready_for_report=work.ready_for_report,
        report_blockers=work.report_blockers,
        form_question_id=work.form_question_id,
        form_answer_finalized=work.form_answer_finalized,
        clarify_form_question_id=work.clarify_form_question_id,
        form_complete=work.form_complete,
        form_changed_question=work.form_changed_question,
        form_changed_from=work.form_changed_from,
        form_changed_to=work.form_changed_to,
        form_note=work.form_note,
        situation=state.situation,
        cancelled=work.cancelled,
        restarted=work.restarted,
        handoff_requested=work.handoff_requested,
        question_repeats=state.same_question_asks if work.question else 0,
        notice=work.notice,
        action_requested=work.action_requested,
        actions_declined=work.actions_declined,
        unsure_commands=tuple(work.unsure),
        system_chosen=work.system_chosen,
        form_also_changed=tuple(work.form_also_changed),
        form_volunteered=tuple(work.form_volunteered),
        unread=tuple(work.unread),
        trace=tuple(work.trace),
    )


def commands_understood(outcome: TurnOutcome) -> tuple[Command, ...]:
    """What the turn understood, as commands (the rules' reading, or the model's once applied).

    The same vocabulary the model generates: a dialogue test states its expectations in it.
    """
    state = outcome.state
    commands: list[Command] = []
    if outcome.resolved_intent and (outcome.intent_source == "explicit" or outcome.intent_started):
        commands.append(Command("start_intent", intent=outcome.resolved_intent))
    for name in outcome.slots_changed:
        slot = state.slots.get(name)
        if slot is not None:
            kind = "correct_slot" if name in outcome.slots_corrected else "set_slot"
            commands.append(Command(kind, slot=name, value=slot.value))
    if outcome.form_changed_question:  # a final answer given again, corrected
        commands.append(Command("answer", question_id=outcome.form_changed_question, value=outcome.form_changed_to))
    commands += [Command("answer", question_id=q, value=v) for q, v in outcome.form_also_changed]
    if outcome.form_answer_finalized is not None:
        answer = outcome.form_answer_finalized
        commands.append(Command("answer", question_id=answer.question_id, value=answer.answer))
    commands += [replace(c, words=None) for c in outcome.form_volunteered]
    if outcome.side_question is not None:
        kind = {"locate": "locate", "explain": "explain", "howto": "howto"}.get(outcome.side_question.submode, "knowledge")
        commands.append(Command("side_question", side_kind=kind, topic=outcome.side_question.topic))
    if outcome.system_chosen:
        commands.append(Command("answer", question_id="system", value=outcome.system_chosen))
    if outcome.facts_added or (outcome.meaning == EVIDENCE and outcome.reply_action != "no_procedure" and state.primary_system):
        added = set(outcome.facts_added)  # said by what they are (the plan's evidence ids), not by their numbers
        keys = [f.key for f in state.facts if f.id in added]
        commands.append(Command("report_evidence", text=", ".join(keys) or state.latest_user_text))
    if outcome.meaning == CONFIRM and not (outcome.reply_action == "acknowledge" and chitchat_kind(state.latest_user_text or "")):
        commands.append(Command("confirm"))  # "great, thanks!" with nothing waiting for a yes is small talk
    if outcome.action_requested:
        commands.append(Command("request_action", action_id=outcome.action_requested))
    commands += [Command("decline_action", action_id=a) for a in outcome.actions_declined]
    if outcome.meaning == DISPUTE_MEANING or (outcome.actions_declined and not outcome.action_requested):
        commands.append(Command("deny"))
    pending = state.pending_clarification
    if outcome.question_kind == "systems" and pending is not None and len(pending.missing) >= 2:
        commands.append(Command("clarify", candidates=pending.missing))  # two systems: which first
    pending = state.pending_clarification
    if outcome.reply_action == "ask_intent" and pending is not None and pending.kind == "intent" and len(pending.missing) >= 2:
        commands.append(Command("clarify", candidates=tuple(pending.missing)))  # two requests fit: which?
    if outcome.cancelled:
        commands.append(Command("cancel"))
    if outcome.handoff_requested:
        commands.append(Command("human_handoff"))
    commands = _with_unsure(commands, outcome.unsure_commands)
    if outcome.unread:  # the parts no command read, said back as not understood
        commands.append(Command("cannot_handle", words=" | ".join(outcome.unread)))
    said = (state.latest_user_text or "").strip()
    if not commands and chitchat_kind(said):
        commands.append(Command("chitchat"))
    elif not commands and said and outcome.meaning in (ANSWER, UNCLEAR_MEANING):
        # taken for an answer and nothing read from it: the reply puts its question again, nothing is kept
        commands.append(Command("cannot_handle", words=said))
    return tuple(commands)


def _with_unsure(commands: list[Command], unsure: Sequence[Command]) -> list[Command]:
    """The reading with how sure it is: a command read without certainty stands in for its certain form."""
    if not unsure:
        return commands
    kinds = {(c.slot, c.question_id): c.kind for c in commands if c.slot or c.question_id}
    return [c for c in commands if (c.slot, c.question_id) not in {(u.slot, u.question_id) for u in unsure}] + [
        replace(u, kind=kinds.get((u.slot, u.question_id), u.kind)) for u in unsure]
