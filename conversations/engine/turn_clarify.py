"""The last stages of a turn: continue / ask / abort for the request's slots, and the mode to end in."""

from __future__ import annotations

from ._text import localize
from .catalog import say, say_in
from .config import ConversationConfig
from .loop_guard import ProposedAction
from .named_values import which_value_question
from .plain_words import details_shown
from .slots import ABORT, CONTINUE, decide_clarify, intent_question, slot_question
from .state import ContextState, PendingClarification, with_key
from .turn_diagnostic import diagnostic_mode
from .turn_work import SIDE_QUESTION, TurnWork


def clarify_slots(state: ContextState, work: TurnWork, config: ConversationConfig) -> ContextState:
    """Continue / ask / abort for the domain intent's required slots."""
    if work.decision == ABORT:
        return state
    if work.routed.kind == "domain" and work.routed.ambiguous and not work.resolved_intent:
        return _ask_intent(state, work, config)
    intent = config.intent(work.resolved_intent)
    if work.meaning == SIDE_QUESTION:
        pending = state.pending_clarification
        if pending is not None and pending.last_question:
            # the side answer comes back to the open question
            work.ask(pending.last_question, pending.kind)
        return state
    if intent is None:
        return _ask_to_start(state, work, config) if work.partial_request else state
    open_slots = [s for s in work.ambiguous_slots if s in intent.required_slots + intent.optional_slots]
    if open_slots:
        return _ask_which_value(state, work, intent.name, open_slots[0])
    if still_open := _open_which_value(state, intent.name):
        # "which P1: Wuxi or Suzhou?" stays open until answered: no tool runs on a guess
        work.ask(still_open.last_question, "slot")
        work.reply_action = "ask_slot"
        work.missing_slots = still_open.missing
        work.action = ProposedAction("clarification", topic=f"slot:{still_open.missing[0]}")
        return state
    verdict = decide_clarify(
        intent=intent.name,
        required=intent.required_slots,
        memory=state.slots,
        specs=config.slots,
        pending=state.pending_clarification
        if state.pending_clarification and state.pending_clarification.intent == intent.name
        else None,
        progressed=bool(work.slots_changed),
        locale=work.language,
        turn=work.turn,
        max_rounds=config.max_clarify_rounds,
    )
    work.missing_slots = verdict.missing
    work.invalid_slots = verdict.invalid
    unrecorded = (say(work.language, "I have nothing on record for {place}.", place=work.unrecorded_place)
                  + ("" if work.language.startswith("zh") else " ") if work.unrecorded_place else "")
    if verdict.decision == CONTINUE and unrecorded:  # never answered for the place kept before, as if it had not been said
        city = next((spec for spec in map(config.slot_spec, config.slots) if spec.extractor == "city_code"), None)
        work.ask(unrecorded + (slot_question(city, work.language) if city is not None else ""), "slot")
        work.reply_action = "ask_slot"
        return state
    if verdict.decision == CONTINUE:
        if work.reply_action == "acknowledge":
            work.reply_action = "present_results"
        return state.evolve(pending_clarification=None, clarify_rounds=0)
    if verdict.decision == ABORT:
        work.decision, work.reply_action = ABORT, "abort"
        work.trace.append(f"clarify aborted after {verdict.rounds} rounds")
        return state.evolve(pending_clarification=None, clarify_rounds=0)
    work.ask(unrecorded + verdict.question if verdict.question else verdict.question, "slot")
    work.reply_action = "ask_slot"
    work.action = ProposedAction("clarification", topic=f"slot:{verdict.slot}")
    return state.evolve(pending_clarification=verdict.pending, clarify_rounds=verdict.rounds)


def _open_which_value(state: ContextState, intent: str) -> PendingClarification | None:
    """The "which one do you mean" question of this request, when its slot is still unanswered."""
    pending = state.pending_clarification
    if pending is None or pending.intent != intent or pending.kind != "slot" or not pending.last_question:
        return None
    usable = state.usable_slots()
    return pending if any(s in state.slot_candidates and s not in usable for s in pending.missing) else None


def _ask_which_value(state: ContextState, work: TurnWork, intent: str, slot: str) -> ContextState:
    """Two things fit the name the person gave (one lot code in two cities): ask which, never guess."""
    candidates = work.ambiguous_slots[slot]
    question = which_value_question([label for _, label in candidates], work.language)
    work.ask(question, "slot")
    work.reply_action = "ask_slot"
    work.missing_slots = (slot,)
    work.action = ProposedAction("clarification", topic=f"slot:{slot}")
    rounds = state.clarify_rounds + 1
    pending = PendingClarification(intent=intent, missing=(slot,), rounds=rounds, last_question=question,
                                   asked_turn=work.turn, kind="slot")
    # "the second one" / "第二个" picks among them next turn
    candidates_kept = with_key(state.slot_candidates, slot, tuple(value for value, _ in candidates))
    return state.evolve(pending_clarification=pending, clarify_rounds=rounds, slot_candidates=candidates_kept)


def _ask_to_start(state: ContextState, work: TurnWork, config: ConversationConfig) -> ContextState:
    """The message gives what only one request needs but names no request ("my cat Luna needs her vaccination"
    with a booking desk's patterns not matching): the request is asked, with what was noted, never started on a
    guess; a yes starts it, and what was said is kept either way."""
    intent = config.intent(work.partial_request)
    assert intent is not None
    names = [n for n in work.slots_mentioned if n in state.slots and n in intent.required_slots]
    noted = [say(work.language, "{label}: {value}", label=label, value=value)
             for label, value in details_shown(names, state.slots, config, work.language)]
    label = localize(intent.label, work.language) or intent.name
    question = say(work.language, "Do you want to {request}? I've noted the {details}.", request=label,
                   details=say_in(work.language, "items", "; ").join(noted)) if noted else \
        say(work.language, "Do you want to {request}?", request=label)
    work.ask(question, "intent")
    work.reply_action = "ask_intent"
    work.action = ProposedAction("clarification", topic="intent")
    pending = PendingClarification(intent=None, missing=(intent.name,), rounds=1, last_question=question,
                                   asked_turn=work.turn, kind="intent")
    work.trace.append(f"what {intent.name} needs is given, the request is not named: asked")
    return state.evolve(pending_clarification=pending, clarify_rounds=1)


def _ask_intent(state: ContextState, work: TurnWork, config: ConversationConfig) -> ContextState:
    """Two workflow intents fit equally: ask which one, within the clarify round limit."""
    names = [n for n in work.routed.candidates if config.intent(n)]
    pending = state.pending_clarification
    rounds = pending.rounds + 1 if pending is not None and pending.kind == "intent" else 1
    if rounds > config.max_clarify_rounds:
        work.decision, work.reply_action = ABORT, "abort"
        return state.evolve(pending_clarification=None, clarify_rounds=0)
    labels = [
        localize(intent.label, work.language) or intent.name
        for intent in filter(None, map(config.intent, names))
    ]
    question = intent_question(labels, work.language)
    work.ask(question, "intent")
    work.reply_action = "ask_intent"
    work.action = ProposedAction("clarification", topic="intent")
    pending = PendingClarification(
        intent=None,
        missing=tuple(names),
        rounds=rounds,
        last_question=question,
        asked_turn=work.turn,
        kind="intent",
    )
    return state.evolve(pending_clarification=pending, clarify_rounds=rounds)


def finish_mode(state: ContextState, work: TurnWork, config: ConversationConfig) -> ContextState:
    """Submode for the turn: a side question's, replan, or back to main."""
    if work.meaning == SIDE_QUESTION:
        return state
    submode = "replan" if work.replan and "replan" in config.modes.submodes else "main"
    mode = state.mode
    if work.replan and mode == "final_report":
        mode = diagnostic_mode(config)  # new evidence reopens the diagnosis
    return state.evolve(submode=submode, mode=mode)
