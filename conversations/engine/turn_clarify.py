"""The last stages of a turn: continue / ask / abort for the request's slots, and the mode to end in."""

from __future__ import annotations

from ._text import localize
from .config import ConversationConfig
from .loop_guard import ProposedAction
from .named_values import which_value_question
from .slots import ABORT, CONTINUE, decide_clarify, intent_question
from .state import ContextState, PendingClarification, with_key
from .turn_diagnostic import diagnostic_mode
from .turn_work import SIDE_QUESTION, TurnWork


def clarify_slots(state: ContextState, t: TurnWork, config: ConversationConfig) -> ContextState:
    """Continue / ask / abort for the domain intent's required slots (RAG-010/011/012)."""
    if t.decision == ABORT:
        return state
    if t.routed.kind == "domain" and t.routed.ambiguous and not t.resolved_intent:
        return _ask_intent(state, t, config)
    intent = config.intent(t.resolved_intent)
    if t.meaning == SIDE_QUESTION:
        pending = state.pending_clarification
        if pending is not None and pending.last_question:
            # the side answer comes back to the open question
            t.ask(pending.last_question, pending.kind)
        return state
    if intent is None:
        return state
    open_slots = [s for s in t.ambiguous_slots if s in intent.required_slots + intent.optional_slots]
    if open_slots:
        return _ask_which_value(state, t, intent.name, open_slots[0])
    if still_open := _open_which_value(state, intent.name):
        # "which P1: Wuxi or Suzhou?" stays open until answered: no tool runs on a guess
        t.ask(still_open.last_question, "slot")
        t.reply_action = "ask_slot"
        t.missing_slots = still_open.missing
        t.action = ProposedAction("clarification", topic=f"slot:{still_open.missing[0]}")
        return state
    verdict = decide_clarify(
        intent=intent.name,
        required=intent.required_slots,
        memory=state.slots,
        specs=config.slots,
        pending=state.pending_clarification
        if state.pending_clarification and state.pending_clarification.intent == intent.name
        else None,
        progressed=bool(t.slots_changed),
        locale=t.language,
        turn=t.turn,
        max_rounds=config.max_clarify_rounds,
    )
    t.missing_slots = verdict.missing
    t.invalid_slots = verdict.invalid
    if verdict.decision == CONTINUE:
        if t.reply_action == "acknowledge":
            t.reply_action = "present_results"
        return state.evolve(pending_clarification=None, clarify_rounds=0)
    if verdict.decision == ABORT:
        t.decision, t.reply_action = ABORT, "abort"
        t.trace.append(f"clarify aborted after {verdict.rounds} rounds")
        return state.evolve(pending_clarification=None, clarify_rounds=0)
    t.ask(verdict.question, "slot")
    t.reply_action = "ask_slot"
    t.action = ProposedAction("clarification", topic=f"slot:{verdict.slot}")
    return state.evolve(pending_clarification=verdict.pending, clarify_rounds=verdict.rounds)


def _open_which_value(state: ContextState, intent: str) -> PendingClarification | None:
    """The "which one do you mean" question of this request, when its slot is still unanswered."""
    pending = state.pending_clarification
    if pending is None or pending.intent != intent or pending.kind != "slot" or not pending.last_question:
        return None
    usable = state.usable_slots()
    return pending if any(s in state.slot_candidates and s not in usable for s in pending.missing) else None


def _ask_which_value(state: ContextState, t: TurnWork, intent: str, slot: str) -> ContextState:
    """Two things fit the name the person gave (one lot code in two cities): ask which, never guess."""
    candidates = t.ambiguous_slots[slot]
    question = which_value_question([label for _, label in candidates], t.language)
    t.ask(question, "slot")
    t.reply_action = "ask_slot"
    t.missing_slots = (slot,)
    t.action = ProposedAction("clarification", topic=f"slot:{slot}")
    rounds = state.clarify_rounds + 1
    pending = PendingClarification(intent=intent, missing=(slot,), rounds=rounds, last_question=question,
                                   asked_turn=t.turn, kind="slot")
    # "the second one" / "第二个" picks among them next turn
    candidates_kept = with_key(state.slot_candidates, slot, tuple(value for value, _ in candidates))
    return state.evolve(pending_clarification=pending, clarify_rounds=rounds, slot_candidates=candidates_kept)


def _ask_intent(state: ContextState, t: TurnWork, config: ConversationConfig) -> ContextState:
    """Two workflow intents fit equally: ask which one, within the clarify round limit."""
    names = [n for n in t.routed.candidates if config.intent(n)]
    pending = state.pending_clarification
    rounds = pending.rounds + 1 if pending is not None and pending.kind == "intent" else 1
    if rounds > config.max_clarify_rounds:
        t.decision, t.reply_action = ABORT, "abort"
        return state.evolve(pending_clarification=None, clarify_rounds=0)
    labels = [
        localize(intent.label, t.language) or intent.name
        for intent in filter(None, map(config.intent, names))
    ]
    question = intent_question(labels, t.language)
    t.ask(question, "intent")
    t.reply_action = "ask_intent"
    t.action = ProposedAction("clarification", topic="intent")
    pending = PendingClarification(
        intent=None,
        missing=tuple(names),
        rounds=rounds,
        last_question=question,
        asked_turn=t.turn,
        kind="intent",
    )
    return state.evolve(pending_clarification=pending, clarify_rounds=rounds)


def finish_mode(state: ContextState, t: TurnWork, config: ConversationConfig) -> ContextState:
    """Submode for the turn: a side question's, replan, or back to main."""
    if t.meaning == SIDE_QUESTION:
        return state
    submode = "replan" if t.replan and "replan" in config.modes.submodes else "main"
    mode = state.mode
    if t.replan and mode == "final_report":
        mode = diagnostic_mode(config)  # new evidence reopens the diagnosis
    return state.evolve(submode=submode, mode=mode)
