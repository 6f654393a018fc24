"""Conversation services: start, one turn, choosing an option, and the state a client sees.

A turn runs the deterministic context engine, publishes what it learned to the workflow
run as signals (the engine then takes any automatic steps and runs the tools), composes
the reply (rules backend, or the model checked against the contracts), and stores it
all in one transaction with the conversation row locked, so concurrent turns queue.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from config.errors import ApplicationError, Conflict
from workflows import engine as wf
from workflows.access import is_supervisor
from workflows.audit import audit_record, audit_row, audit_together, audit_write
from workflows.models import Review, Run
from workflows.selectors import plan_by_id, run_decision_point
from workflows.services import runs
from workflows.services.runs import Actor

from .documents import page_label
from .drafts import DraftWriter
from .engine import (
    ActionContext,
    ContextState,
    ConversationConfig,
    TurnOutcome,
    advance_context,
    evaluate_actions,
    learn_from_tool,
    record_reply,
    with_slot_candidates,
)
from .engine.action_prefs import consent_in_words, details_missing, may_consent, when_question
from .engine.catalog import say
from .engine.commands import Command
from .engine.config import ActionSpec
from .engine.forms import current_question
from .engine.named_values import Finder
from .engine.plain_words import ChoiceTaken, choice_note
from .engine.plan_documents import build_documents
from .engine.replies import ComposedReply, RunView, compose_reply, lang_of, opening_text
from .engine.timeparse import is_weekend
from .engine.turn import (
    commands_understood,
    final_report_for,
    held_outcome,
    initial_state,
    opening_question,
    record_opening,
)
from .engine.turn_form import edit_prompt
from .handoffs import handoff_open
from .models import Conversation, Message
from .packs import build_with, signals_from
from .selectors import UNKNOWN, access_conversation, conversation_config, latest_review, reply_lang
from .understanding import Understanding, understand

MAX_TEXT = 4000
logger = logging.getLogger(__name__)
LOOKUPS: dict[str, Callable[..., Any]] = {}


def register_lookup(slot: str, fn: Callable[..., Any]) -> None:
    """Let a domain validate a slot value before tools use it (billing: orders, lots)."""
    LOOKUPS[slot] = fn


FINDERS: list[Finder] = []


def register_finder(fn: Finder) -> None:
    """Let a domain find the things people name in words (billing: lots and cities by name or alias)."""
    if fn not in FINDERS:
        FINDERS.append(fn)


def lock_conversation_of_run(run_id: int) -> None:
    """Row-lock the conversation a run belongs to (registered as the run's parent lock)."""
    list(Conversation.objects.select_for_update().filter(run_id=run_id).values_list("pk", flat=True))


def _locale(value: str | None) -> str:
    value = (value or "en").lower()
    if value.startswith("zh"):
        return "zh-hans"
    if value[:2] in ("en", "ru", "es"):
        return value[:2]
    raise ApplicationError("locale must be en, zh-hans, ru or es.", code="invalid_locale", details={"locale": ["unsupported"]})


def _now() -> datetime:
    return timezone.now()


# --- starting ---------------------------------------------------------------------


def conversation_start(*, user, workflow_id: str, locale: str | None = None) -> Conversation:  # noqa: ANN001
    """Start a conversation on the newest plan of a workflow, with the concierge's greeting."""
    locale = _locale(locale)
    lang = reply_lang(locale)
    with transaction.atomic():
        started = runs.run_start(workflow_id=workflow_id, owner=user, locale=lang)
        plan = plan_by_id(started.run.plan_id)
        config = conversation_config(plan)
        state = initial_state(config, locale=lang)
        opening = opening_question(state, config)
        first_question = opening[0] if opening else None
        greeting = opening_text(config, wf.localize(plan.name, lang), wf.localize(plan.description, lang), lang, first_question)
        if opening:  # a greeting that asks the form's first question counts; a plain hello does not
            state = record_opening(state, text=greeting, action=opening[1])
        conversation = Conversation.objects.create(
            owner=user, run=started.run, workflow_id=workflow_id, locale=locale, context=state.to_dict(),
            title=wf.localize(plan.name, lang), status=started.run.status,
        )
        Message.objects.create(conversation=conversation, role=Message.Role.ASSISTANT, text=greeting, turn_index=0,
                               payload={"kind": "greeting"})
        audit_record("conversation_started", run=started.run, conversation=conversation, actor=user,
                     payload={"workflow_id": workflow_id, "locale": locale})
    return conversation


# --- signals: what the conversation tells the workflow ----------------------------


def _slot_values(state: ContextState) -> dict[str, str]:
    return {name: slot.value for name, slot in state.slots.items()}


def _prepared_documents(state: ContextState, config: ConversationConfig, lang: str, owner_name: str) -> dict[str, Any]:
    """Documents the run's task and action nodes produce from the conversation's state."""
    prepared: dict[str, Any] = {}
    slots = _slot_values(state)
    if config.diagnostic is not None and state.primary_system:
        report = final_report_for(state, config, locale=lang)
        if report is not None:
            prepared["final_report"] = report.to_dict()
        prepared["labor_estimate"] = _labor_estimate(state, lang)
        prepared["diagnosis"] = {"system": state.primary_system, "finding": state.isolation_finding,
                                 "facts": [f.value for f in state.facts if f.current]}
    prepared.update(build_documents(state, config, lang))  # the documents the plan declares
    for key, spec in config.documents.items():  # and those a workflow's pack builds, by the name the plan gives
        if spec.kind == "handler":
            prepared[key] = build_with(spec.handler, slots, lang=lang, owner=owner_name)
    return prepared


def _stay(state: ContextState) -> dict[str, str]:
    """A stay's entry and exit when the person gave one: a range in one message, or a length."""
    at, until, minutes = (state.slots.get(k) for k in ("at_time", "until_time", "duration_minutes"))
    if at is None:
        return {}
    start = datetime.fromisoformat(at.value)
    # An end given with the start, or later (a correction: "no, I left at 5pm"), never one older than the start.
    # A length said after the end ("and for a whole day?") is the newer stay.
    newer_length = minutes is not None and until is not None and minutes.source_turn > until.source_turn
    # "what about the weekend?": the stay on its Saturday and on its Sunday
    also = {"also_days": [1]} if is_weekend(at.raw) and start.isoweekday() == 6 else {}
    if until is not None and until.source_turn >= at.source_turn and not newer_length and datetime.fromisoformat(until.value) > start:
        return {"entry_time": at.value, "exit_time": until.value, **also}
    if minutes is not None and minutes.value.isdigit():
        return {"entry_time": at.value, "exit_time": (start + timedelta(minutes=int(minutes.value))).isoformat(), **also}
    return {}


# what `_signals_for` publishes to the run, by its top-level keys: the signals a plan's conditions may test
CONVERSATION_SIGNALS = ("intent", "slots", "validated", "learned_slots", "facts", "isolation_complete", "replan_required",
                        "form_complete", "new_question", "prepared", "action_blockers")


def _signals_for(outcome: TurnOutcome, state: ContextState, config: ConversationConfig, lang: str, owner_name: str) -> dict[str, Any]:
    """Everything a plan's conditions may test, recomputed every turn (nothing goes stale)."""
    domain = {i.name for i in config.intents}
    intent = outcome.resolved_intent if outcome.resolved_intent in domain else None
    if outcome.decision == "ask" and outcome.question_kind == "slot":
        intent = None  # a detail of the request is still being asked: no tool runs on a guess
    slots = _slot_values(state)
    signals: dict[str, Any] = {
        "intent": intent,
        "slots": slots,
        "validated": {**dict(outcome.usable_slots), **_stay(state)},
        "learned_slots": sorted(n for n, s in state.slots.items() if s.learned),  # known from a tool's result
        "facts": {"system": state.primary_system, "complaint": state.complaint, "situation": state.situation},
        "isolation_complete": bool(state.isolation_complete),
        # a replan re-opens the diagnosis once; re-isolated in the same turn, the run stays where it is
        "replan_required": bool(outcome.replan) and not state.isolation_complete,
        "form_complete": bool(outcome.form_complete),
        "new_question": bool(intent and outcome.decision == "continue"),
        "prepared": _prepared_documents(state, config, lang, owner_name),
    }
    if config.signals_from:
        finished = bool(outcome.form_complete) and (config.form is None or current_question(state, config.form) is None)
        signals.update(signals_from(config.signals_from, slots, form_finished=finished))
    if config.actions:
        reply_text = outcome.question or outcome.next_step_question or ""
        signals["action_blockers"] = action_blockers_for(state, config, reply_text)
    return signals


BLOCKER_TEXT = {
    "too_early": "the conversation has just started",
    "reply_asks_question": "the concierge is still asking a question",
    "awaiting_answer": "the last question has not been answered yet",
    "action_flow_open": "another action is in progress",
    "already_executed": "this was already done in this conversation",
    "hypothetical_situation": "the situation is hypothetical, not an active case",
    "situation_not_established": "it is not yet clear this is a real, current case",
    "not_recommended_in_reply": "it was not recommended in the guidance",
    "missing_slot": "a detail is missing",
    "step_not_completed": "a required step is not completed",
    "one_action_per_turn": "only one action is offered at a time",
    "declined": "you said you do not want this",
}


def _humanize(blocker: str) -> str:
    code, _, detail = blocker.partition(":")
    text = BLOCKER_TEXT.get(code)
    return f"{blocker}: {text}" if text else blocker


def action_blockers_for(state: ContextState, config: ConversationConfig, reply_text: str) -> dict[str, list[str]]:
    """Ask-then-act: why each action may not be offered now (empty list = it may)."""
    ctx = ActionContext.from_state(state, reply_text=reply_text, reply_asks_question=bool(reply_text) or None)
    return {d.action_id: [_humanize(b) for b in d.blockers] for d in evaluate_actions(config.actions, ctx)}


# --- the view of the run that replies and clients see -----------------------------


def _entered_tool(outcome: runs.RunOutcome, plan: wf.Plan) -> bool:
    return any(plan.node(c.state.current_step).type == "task" for c in outcome.auto_choices)


def _run_view(run: Run, plan: wf.Plan, lang: str, dp: wf.DecisionPoint, *, tool_ran: bool = False, review_opened: bool = False,
              previous_actions: set[str] | None = None, citations: tuple = (), entered: tuple[str, ...] = ()) -> RunView:  # noqa: ANN001
    state = run.engine_state
    options = tuple(o.to_dict() for o in dp.options)
    eligible_actions = _eligible_actions(dp, plan)
    return RunView(
        step_id=dp.step_id, step_label=wf.localize(plan.node(dp.step_id).label, lang), status=run.status, options=options,
        recommended_option_id=dp.selection.recommended_option_id, recommendation_reasons=tuple(dp.selection.reasons),
        tool_result=state.signals.get("tool_result") if tool_ran else None, review_opened=review_opened,
        review_pending=run.status == Run.Status.WAITING_REVIEW,
        new_actions=tuple(sorted(eligible_actions - (previous_actions or set()))), citations=citations,
        entered_steps=tuple(wf.localize(plan.node(step).label, lang) for step in entered),
        stale_documents=tuple(page_label(key, lang, conversation_config(plan)) for key in sorted(dp.stale)),
    )


def _eligible_actions(dp: wf.DecisionPoint, plan: wf.Plan) -> set[str]:
    """The eligible options that lead to an action step (what ask-then-act governs)."""
    return {o.option_id for o in dp.options if o.eligible and o.target_step_id and plan.node(o.target_step_id).type == "action"}


# --- one turn ----------------------------------------------------------------------


@dataclass
class ModelTurn:
    """What the model phase of a turn needs: the rules draft and the state it was made on."""

    run: Run
    plan: wf.Plan
    config: ConversationConfig
    state_before_reply: ContextState
    outcome: TurnOutcome
    view: RunView
    draft: ComposedReply
    lang: str
    text: str
    answer_id: int
    version: int  # the conversation's version after the rules phase (compare-and-swap)


@dataclass
class TurnResult:
    conversation: Conversation
    reply: ComposedReply
    outcome: TurnOutcome
    backend: str = "rules"
    execution_path: dict[str, Any] = field(default_factory=dict)
    model_violations: list[str] = field(default_factory=list)
    model_turn: ModelTurn | None = None
    review: Review | None | object = UNKNOWN  # the run's newest review after the turn, when the turn looked it up
    decision: wf.DecisionPoint | None = None  # the run's options after the turn, in the reply's language


def _clean_text(text: str | None) -> str:
    text = (text or "").replace("\x00", "").strip()  # NUL cannot be stored (PostgreSQL) and means nothing
    if not text:
        raise ApplicationError("text must not be empty.", code="validation_error", details={"text": ["required"]})
    if len(text) > MAX_TEXT:
        raise ApplicationError(f"text is at most {MAX_TEXT} characters.", code="validation_error", details={"text": ["too long"]})
    return text


@dataclass
class TurnRequest:
    """A message about to be answered: its clean text, the model (one deadline for all of this
    turn's model calls) and what the model understood, read before any lock is taken."""

    user: Any
    conversation_id: int
    text: str
    model: Any = None
    understood: Understanding | None = None


def turn_request(*, user, conversation_id: int, text: str, understand: bool = True) -> TurnRequest:  # noqa: ANN001
    """Check the message and, with a model configured, ask it for commands (no transaction open).
    `understand=False` skips the model (a retry whose answer is stored already)."""
    from .llm import model_from_settings

    request = TurnRequest(user=user, conversation_id=conversation_id, text=_clean_text(text), model=model_from_settings())
    if request.model is not None and settings.CONCIERGE_LLM_UNDERSTANDING and understand:
        request.understood = _understand(user, conversation_id, request.text, request.model)
    return request


def conversation_turn_apply(request: TurnRequest, *, pending_id: int | None = None) -> TurnResult | None:
    """The rules phase of a turn, inside the caller's transaction: lock the conversation, run the
    understood commands and the rules, the workflow's signals and tools, store the rules reply.
    A queued turn (`pending_id`, from the page) that is already done returns None."""
    with transaction.atomic(savepoint=False), audit_together():
        conversation = access_conversation(request.user, request.conversation_id, for_update=True)
        pending = _pending_message(conversation, pending_id)
        if pending_id is not None and pending is None:
            return None  # a redelivered task: the turn is already done
        if conversation.status == Conversation.Status.COMPLETED:
            raise Conflict("This conversation is complete; start a new one.", code="conversation_completed")
        understood = request.understood
        words_by_model = (request.model is not None and settings.CONCIERGE_LLM_WORDING
                          and not (understood is not None and understood.model_down))
        return _apply_turn(conversation, request.user, request.text, pending=pending, with_model=words_by_model,
                           understood=understood)


def conversation_turn_finish(result: TurnResult, request: TurnRequest, *, show_draft: bool = False) -> TurnResult:
    """The model phase of a turn (when it has one), after the rules phase committed: the model is
    asked with no transaction open, and its answer applied only if the conversation still has
    the version the rules phase left (compare-and-swap); else the rules reply stands.
    `show_draft`: the reply is kept where the page can show it as the model writes it."""
    if result.model_turn is None:
        return result
    if not show_draft:
        return _model_phase(result, user=request.user, model=request.model)
    draft = DraftWriter(result.conversation.pk, result.model_turn.answer_id, lifetime=model_wait_seconds())
    draft.start()
    try:
        return _model_phase(result, user=request.user, model=request.model, on_text=draft)
    finally:
        draft.finish()


def conversation_turn(*, user, conversation_id: int, text: str, pending_id: int | None = None,  # noqa: ANN001
                      show_draft: bool = False) -> TurnResult | None:
    """One user message: understanding, workflow signals and tools, reply; all or nothing.
    No transaction or row lock is held while the model is called. `show_draft`: a page waits
    for this turn and shows the model's reply as it is written."""
    request = turn_request(user=user, conversation_id=conversation_id, text=text)
    with transaction.atomic():
        result = conversation_turn_apply(request, pending_id=pending_id)
    return conversation_turn_finish(result, request, show_draft=show_draft) if result is not None else None


def model_wait_seconds() -> float:
    """How long a retry waits for a turn still talking to the model (its whole deadline, and a margin)."""
    return float(settings.CONCIERGE_LLM_TIMEOUT) + 5.0


def _understand(user, conversation_id: int, text: str, model) -> Understanding | None:  # noqa: ANN001
    """The interpret phase: the model's commands for this message, read from a snapshot (no lock).
    None while a member of staff has the conversation: the model is not asked."""
    conversation = access_conversation(user, conversation_id)
    state = conversation.context_state
    if state.handed_off:
        return None
    run = conversation.run
    plan = plan_by_id(run.plan_id)
    lang = "zh" if conversation.locale.startswith("zh") else (state.locale or "en")
    return understand(conversation=conversation, run=run, plan=plan, config=conversation_config(plan), state=state,
                      text=text, model=model, lookups=LOOKUPS, lang=lang)


def _pending_message(conversation: Conversation, pending_id: int | None) -> Message | None:
    """The queued message this turn answers, if it is still waiting (read under the conversation lock)."""
    if pending_id is None:
        return None
    message = Message.objects.filter(pk=pending_id, conversation=conversation).first()
    return message if message is not None and message.payload.get("kind") == "pending" else None


def _apply_turn(conversation: Conversation, user, text: str, pending: Message | None = None,  # noqa: ANN001
                with_model: bool = False, understood: Understanding | None = None) -> TurnResult:
    """The apply phase of a turn, inside the caller's transaction (conversation locked): the
    understood commands and the rules, the workflow's signals and tools, the rules reply."""
    run = conversation.run
    plan = plan_by_id(run.plan_id)
    config = conversation_config(plan)
    state = conversation.context_state
    turn_index = conversation.turn_count + 1
    if state.handed_off:
        return _held_turn(conversation, user, text, state, turn_index, pending)
    if (consented := _consent_said(run, plan, config, text, conversation.locale)) is not None:
        return _typed_consent_turn(conversation, user, text, consented, turn_index, pending, understood, config)
    commands = _commands_for(conversation, understood)
    # the model's reading is the reading, unless it failed or every command it gave was refused (then the rules')
    model_read = (understood is not None and understood.failure is None and understood.version == conversation.version
                  and not (understood.refused and not understood.accepted))
    outcome = advance_context(state, text, now=_now(), timezone=settings.CONCIERGE_TIMEZONE, config=config, lookups=LOOKUPS,
                              commands=commands, finders=FINDERS, model_read=model_read)
    lang = lang_of(outcome, conversation.locale)
    state = outcome.state
    if outcome.handoff_requested:
        handoff_open(conversation, user=user, reason=text)
        state = state.evolve(handed_off=True)
        with_model = False  # the concierge steps aside: nothing for the model to word
    actor = Actor.of(user, label=f"{'supervisor' if is_supervisor(user) else 'participant'}:{user.username}")
    if (outcome.isolation_completed or outcome.replan) and state.primary_system:
        diagnosis = {"system": state.primary_system, "finding": state.isolation_finding, "replan": outcome.replan}
        run = runs.run_document_add(run=run, key="diagnosis", content=diagnosis, actor=actor).run
        if outcome.replan and outcome.isolation_completed and config.estimate_enabled:  # the estimate of the new cause
            run = _estimate_document(run, state, lang, actor)
    elif outcome.reply_action in ("estimate_confirmed", "estimate_skipped") and state.primary_system:
        run = _estimate_document(run, state, lang, actor)  # confirmed or skipped in words
    before_actions = _eligible_actions(run_decision_point(run), plan) if config.actions else set()
    was_waiting = run.status == Run.Status.WAITING_REVIEW  # a review opened by an earlier turn
    signals = _signals_for(outcome, state, config, lang, user.get_username())
    progress = runs.run_signals_update(run=run, signals=signals, actor=actor, locale=lang)
    run = progress.run
    options = progress.options_now(lang)
    tool_ran = _entered_tool(progress, plan)
    review = progress.review
    tool_result = run.engine_state.signals.get("tool_result") if tool_ran else None
    state = _remember_tool_result(state, tool_result, config)
    offered = _offered_action(options, plan, config, before_actions)
    citations, hits = _knowledge_for(outcome, plan, state, tool_result, lang, offered)
    if offered is not None and citations and _cited_last_turn(conversation, citations):
        citations = ()  # the same guidance is not said again word for word on the next turn
    view = _run_view(run, plan, lang, options, tool_ran=tool_ran, review_opened=progress.review is not None and run.status == Run.Status.WAITING_REVIEW and not was_waiting,
                     previous_actions=before_actions, citations=citations,
                     entered=tuple(c.state.current_step for c in progress.auto_choices))
    reply = compose_reply(outcome, view, config, locale=lang)
    if review is None:
        review = latest_review(run, plan)
    # changing an answer at the review, in words: back to the questions, as the "Change an answer" option does
    # and starting over there, or any answer taken back: a submit never waits beside an incomplete form
    edit_in_words = _back_to_questions(view.options, plan) if config.form is not None and (
        state.form_editing is not None or outcome.restarted) else None
    state_before_reply = state
    state = record_reply(state, text=reply.text, action=outcome.proposed_action, asks_question=reply.asks_question,
                         clarifying_question_id=outcome.clarify_form_question_id)
    path = {
        "intent": outcome.intent, "resolved_intent": outcome.resolved_intent, "decision": outcome.decision,
        "submode": outcome.submode, "steps_taken": [c.option.option_id for c in progress.auto_choices],
        "tools_called": [plan.node(c.state.current_step).settings.get("task") for c in progress.auto_choices
                         if plan.node(c.state.current_step).type == "task" and plan.node(c.state.current_step).settings.get("task")],
        "retrieval_hits": hits, "backend": "rules",
        "contract_violations": [understood.failure.kind] if understood is not None and understood.failure else [],
        "commands": {**(understood.summary() if understood is not None else {"generator": "rules"}),
                     "understood": [c.describe() for c in commands_understood(outcome)]
                     + ([Command("choose_option", option_id=edit_in_words).describe()] if edit_in_words else [])},
        "trace": list(outcome.trace),
    }
    answer = Message(conversation=conversation, role=Message.Role.ASSISTANT, text=reply.text, turn_index=turn_index,
                     payload=_answer_payload(reply, outcome, path))
    if pending is not None:  # queued by the page: the person's message is already shown
        Message.objects.filter(pk=pending.pk).update(turn_index=turn_index, payload={"kind": "message"})
        Message.objects.bulk_create([answer])
    else:
        Message.objects.bulk_create([Message(conversation=conversation, role=Message.Role.USER, text=text, turn_index=turn_index), answer])
    _save_conversation(conversation, state, run, turn_index)
    audit_record("turn", run=run, conversation=conversation, actor=user, step_id=run.current_step,
                 outcome=outcome.decision, payload={"turn": turn_index, "execution_path": path, "reply_kind": reply.kind})
    chosen = next((c.option_id for c in commands if c.kind == "choose_option"), None) or edit_in_words
    if chosen is None and outcome.reply_action == "final_report":
        chosen = WRITE_REPORT  # "please just generate the final report": asked in words, written at once
    if chosen and any(o["option_id"] == chosen and o["eligibility"] == "eligible" and not o.get("requires_consent")
                      for o in view.options):
        # The person picked an offered option in words: it counts as their choice.
        picked = runs.run_option_choose(run=run, option_id=chosen, raise_refusal=False, locale=lang,
                                        actor=Actor.of(user, label=f"{actor.label} (in words)"), selection_mode="user_confirmed")
        run, options = picked.run, None
        review = picked.review or review
        _save_conversation(conversation, state, run)
    model_turn = None
    if with_model:
        model_turn = ModelTurn(run=run, plan=plan, config=config, state_before_reply=state_before_reply, outcome=outcome,
                               view=view, draft=reply, lang=lang, text=text, answer_id=answer.pk, version=conversation.version)
    return TurnResult(conversation, reply, outcome, "rules", path, list(path["contract_violations"]), model_turn,
                      review=review, decision=options if lang == reply_lang(conversation.locale) else None)


def _labor_estimate(state: ContextState, lang: str) -> dict[str, Any]:
    """The labor estimate as a person reads it: no hypothesis ids, no turn numbers."""
    estimate = state.estimate
    confirmed = estimate.status == "confirmed" and estimate.confirmed_hours
    lines = [] if estimate.status == "skipped" else estimate.lines  # skipped: no labour stays behind, not even a draft's
    return {"status": estimate.status, "lines": [{"label": line.label, "hours": line.hours} for line in lines],
            "total_hours": estimate.confirmed_hours if confirmed else estimate.total_hours, "language": lang}


def _estimate_document(run: Run, state: ContextState, lang: str, actor: Actor) -> Run:
    """A new version of the labor estimate document, as the estimate now stands."""
    return runs.run_document_add(run=run, key="labor_estimate", content=_labor_estimate(state, lang), actor=actor).run


def _remember_tool_result(state: ContextState, tool_result: dict[str, Any] | None, config: ConversationConfig) -> ContextState:
    """What a tool's result gives the turns after: the items it listed (to point at: "第一笔", "the one at
    Chengdu East") and the facts it established (the verified order's plate, lot and city) as slots whose
    source is that tool and record."""
    if not tool_result:
        return state
    names = set(config.slots) | {n for i in config.intents for n in (*i.required_slots, *i.optional_slots)}
    listed = tool_result.get("listed")
    if listed and listed.get("slot") in names:
        state = with_slot_candidates(state, listed["slot"], listed.get("values") or [], listed.get("details"))
    learned = tool_result.get("learned")
    if learned:
        values = {k: v for k, v in (learned.get("slots") or {}).items() if k in names}
        state = learn_from_tool(state, values, tool=learned.get("tool") or str(tool_result.get("tool")), record=learned.get("record"))
    return state


def _held_turn(conversation: Conversation, user, text: str, state: ContextState, turn_index: int,  # noqa: ANN001
               pending: Message | None) -> TurnResult:
    """A message while a member of staff has the conversation: stored and shown, nothing else runs."""
    outcome = held_outcome(state, text)
    lang = lang_of(outcome, conversation.locale)
    reply = ComposedReply(text=say(lang, "Your message is with the member of staff handling this conversation; they will answer here."),
                          asks_question=False, kind="handoff")
    _store_user_message(conversation, text, turn_index, pending)
    last = conversation.messages.filter(role=Message.Role.ASSISTANT).order_by("-id").values_list("payload", flat=True).first()
    if (last or {}).get("kind") not in ("handoff", "handoff_held"):  # said once, not after every message
        Message.objects.create(conversation=conversation, role=Message.Role.ASSISTANT, text=reply.text, turn_index=turn_index,
                               payload={"kind": "handoff_held"})
    path = {"intent": outcome.intent, "decision": outcome.decision, "backend": "human", "handed_off": True,
            "commands": {"generator": "none", "understood": []}, "tools_called": [], "trace": list(outcome.trace)}
    _save_conversation(conversation, outcome.state, conversation.run, turn_index)
    audit_record("turn_held", run=conversation.run, conversation=conversation, actor=user, step_id=conversation.run.current_step,
                 payload={"turn": turn_index})
    return TurnResult(conversation, reply, outcome, "human", path, [], None)


def _consent_said(run: Run, plan: wf.Plan, config: ConversationConfig, text: str, locale: str) -> str | None:
    """The offered option a message consents to in words ("yes go ahead and draft it"), or None. Consent is the
    person's: read from their words alone, never from a model's reading, and only of an option eligible now."""
    if not may_consent(text, locale):
        return None  # most messages: the options on offer are not looked up for them
    eligible = [o.option_id for o in run_decision_point(run).options if o.eligible and o.requires_consent
                and o.target_step_id and plan.node(o.target_step_id).type == "action"]
    if not eligible:
        return None
    # the plan's own consent options (accept the plan) are consented to by go-ahead words alone, as the offer says
    known = {a.id: a for a in config.actions}
    return consent_in_words(text, locale, [known.get(o) or ActionSpec(id=o) for o in eligible])


def _store_user_message(conversation: Conversation, text: str, turn_index: int, pending: Message | None) -> None:
    """The person's message of a turn that runs no reading: the page's queued copy takes its turn, else it is stored."""
    if pending is not None:
        Message.objects.filter(pk=pending.pk).update(turn_index=turn_index, payload={"kind": "message"})
    else:
        Message.objects.create(conversation=conversation, role=Message.Role.USER, text=text, turn_index=turn_index)


def _set_aside_path(outcome: TurnOutcome, decision: str, understood: Understanding | None, commands: list[str]) -> dict[str, Any]:
    """The execution path of a turn answered from the person's consent in words: a model's reading is kept, set aside."""
    return {"intent": outcome.intent, "decision": decision, "backend": "rules",
            "commands": {**(understood.summary() if understood is not None else {"generator": "rules"}), "set_aside": "consent in words",
                         "understood": commands},
            "tools_called": [], "trace": list(outcome.trace)}


def _typed_consent_turn(conversation: Conversation, user, text: str, option_id: str, turn_index: int,  # noqa: ANN001
                        pending: Message | None, understood: Understanding | None, config: ConversationConfig) -> TurnResult:
    """A message that consents in words to the action on offer: stored, then the option chosen with that consent
    (recorded as typed, with the words), as the option's own button would; an action whose details nobody said
    yet asks for them instead."""
    _store_user_message(conversation, text, turn_index, pending)
    action = next((a for a in config.actions if a.id == option_id), None)
    if action is not None and details_missing(action, conversation.context_state.slots):
        return _details_first_turn(conversation, text, action, turn_index, understood, config)
    audit_record("consent_in_words", run=conversation.run, conversation=conversation, actor=user, chosen_option_id=option_id,
                 step_id=conversation.run.current_step, payload={"turn": turn_index, "words": text})
    state_before = conversation.context_state.evolve(latest_user_text=text)
    refusal = _choose_locked(conversation, user, option_id, True, turn_index=turn_index, typed=True, state=state_before)
    if refusal is not None:
        raise refusal
    note = conversation.messages.filter(role=Message.Role.ASSISTANT).order_by("-id").values_list("text", flat=True).first()
    outcome = replace(held_outcome(conversation.context_state, text), reply_action="typed_consent", trace=(f"consent in words: {option_id}",))
    path = _set_aside_path(outcome, outcome.decision, understood, [Command("choose_option", option_id=option_id).describe()])
    path["consent"] = "typed"
    return TurnResult(conversation, ComposedReply(text=note or "", asks_question=False, kind="reply"), outcome, "rules", path, [], None)


def _details_first_turn(conversation: Conversation, text: str, action, turn_index: int,  # noqa: ANN001
                        understood: Understanding | None, config: ConversationConfig) -> TurnResult:
    """Consent in words to an action whose details nobody said yet: the details are asked for, nothing runs."""
    question = when_question(config, conversation.context_state.slots, reply_lang(conversation.locale))
    state = conversation.context_state.evolve(latest_user_text=text, preferred_action=action.id)
    state = record_reply(state, text=question, asks_question=True)
    Message.objects.create(conversation=conversation, role=Message.Role.ASSISTANT, text=question, turn_index=turn_index,
                           payload={"kind": "reply", "asks": "details", "option_id": action.id})
    _save_conversation(conversation, state, conversation.run, turn_index)
    outcome = replace(held_outcome(conversation.context_state, text), reply_action="details_first", decision="ask",
                      trace=(f"consent in words to {action.id}: its details first",))
    return TurnResult(conversation, ComposedReply(text=question, asks_question=True, kind="clarifying_question"), outcome, "rules",
                      _set_aside_path(outcome, "ask", understood, []), [], None)


def _commands_for(conversation: Conversation, understood: Understanding | None) -> tuple:
    """The understood commands, if they were read from the version now locked (else the rules alone).
    What the model did while understanding is audited here, in the turn's transaction."""
    if understood is None:
        return ()
    rows = list(understood.audit)
    if understood.version != conversation.version:
        rows.append(audit_row("commands_discarded", run=conversation.run, conversation=conversation, actor_label="concierge",
                              outcome="stale", payload={"read_at_version": understood.version, "now": conversation.version}))
        understood.accepted = ()
    audit_write(rows)
    return understood.accepted


def _answer_payload(reply: ComposedReply, outcome: TurnOutcome, path: dict[str, Any]) -> dict[str, Any]:
    return {"reply": reply.to_dict(), "intent": outcome.intent, "decision": outcome.decision,
            "submode": outcome.submode, "execution_path": path}


def _model_phase(result: TurnResult, *, user, model, on_text: Callable[[str], None] | None = None) -> TurnResult:  # noqa: ANN001
    """Ask the model with no transaction open, then apply its answer by compare-and-swap."""
    from .concierge import Decision, concierge_reply

    turn = result.model_turn
    conversation = result.conversation
    try:
        decided = concierge_reply(conversation=conversation, run=turn.run, plan=turn.plan, config=turn.config,
                                  state=turn.state_before_reply, outcome=turn.outcome, view=turn.view, draft=turn.draft,
                                  lang=turn.lang, user_text=turn.text, model=model, on_text=on_text)
    except Exception as error:  # noqa: BLE001 - the turn is stored already: any fault here keeps the rules reply
        logger.exception("model phase failed; the rules reply stands")
        row = audit_row("model_fallback", run=turn.run, conversation=conversation, actor_label="concierge",
                        outcome="fallback_to_rules", payload={"kind": "internal_error", "detail": f"{type(error).__name__}"[:200]})
        decided = Decision(turn.draft, backend="rules", violations=["internal_error"], audit=[row])
    audit_rows = decided.audit
    with transaction.atomic():
        current = access_conversation(user, conversation.pk, for_update=True)
        if current.version != turn.version:
            # Someone moved the conversation while the model was thinking: the rules reply stands.
            audit_rows.append(audit_row("model_answer_discarded", run=current.run, conversation=current,
                                        actor_label=f"concierge:{decided.backend}", outcome="stale",
                                        payload={"expected_version": turn.version, "found_version": current.version}))
            audit_write(audit_rows)
            return replace(result, model_turn=None, model_violations=decided.violations, review=UNKNOWN, decision=None,
                           conversation=current)
        path = {**result.execution_path, "backend": decided.backend, "contract_violations": decided.violations}
        run, review = current.run, result.review
        if decided.option_id:
            audit_write(audit_rows)  # the choice's own rows come after this phase's rows
            chosen = runs.run_option_choose(run=run, option_id=decided.option_id, raise_refusal=False,
                                            actor=Actor(user=None, role="engine", label=f"concierge:{decided.backend}"),
                                            selection_mode="recommended", locale=turn.lang)
            run, review = chosen.run, chosen.review or review
        state = record_reply(turn.state_before_reply, text=decided.reply.text, action=turn.outcome.proposed_action,
                             asks_question=decided.reply.asks_question,
                             # a plain reply is never stored as a clarifying question
                             clarifying_question_id=turn.outcome.clarify_form_question_id if decided.reply.kind != "reply" or decided.backend == "rules" else None)
        Message.objects.filter(pk=turn.answer_id).update(text=decided.reply.text,
                                                         payload=_answer_payload(decided.reply, turn.outcome, path))
        audit_write(audit_rows)
        _save_conversation(current, state, run)
    return TurnResult(current, decided.reply, turn.outcome, decided.backend, path, decided.violations, None,
                      review=review, decision=result.decision if not decided.option_id else None)


def _save_conversation(conversation: Conversation, state: ContextState, run: Run, turn_index: int | None = None) -> None:
    """Write the context back if the conversation still has the version it was read at."""
    status = {Run.Status.WAITING_REVIEW: Conversation.Status.WAITING_REVIEW, Run.Status.COMPLETED: Conversation.Status.COMPLETED}.get(
        run.status, Conversation.Status.ACTIVE)
    updates = {"context": state.to_dict(), "status": status, "version": conversation.version + 1, "updated_at": timezone.now()}
    if turn_index is not None:
        updates["turn_count"] = turn_index
    written = Conversation.objects.filter(pk=conversation.pk, version=conversation.version).update(**updates)
    if written != 1:
        raise Conflict("The conversation changed meanwhile; send the message again.", code="concurrent_update")
    for name, value in updates.items():
        setattr(conversation, name, value)
    conversation.context_state = state
    conversation.run = run


def _offered_action(options: wf.DecisionPoint, plan: wf.Plan, config: ConversationConfig, before: set[str]):  # noqa: ANN202
    """The action newly offered this turn (its guidance is cited), if any."""
    if not config.actions:
        return None
    offered = _eligible_actions(options, plan) - before
    return next((a for a in config.actions if a.id in offered), None)


def _cited_last_turn(conversation: Conversation, citations: tuple) -> bool:
    """Whether the concierge's last reply cited these same passages."""
    last = conversation.messages.filter(role=Message.Role.ASSISTANT).order_by("-id").values_list("payload", flat=True).first()
    before = ((last or {}).get("reply") or {}).get("citations") or []
    return [c.get("snippet") for c in before] == [c.get("snippet") for c in citations]


def _knowledge_for(outcome: TurnOutcome, plan: wf.Plan, state: ContextState, tool_result, lang: str,  # noqa: ANN001
                   offered_action=None) -> tuple[tuple, list]:  # noqa: ANN001
    """Citations for the reply: knowledge retrieval when the knowledge module is installed."""
    try:
        from .knowledge.answering import citations_for_turn
    except ImportError:
        return (), []
    return citations_for_turn(outcome=outcome, plan=plan, state=state, tool_result=tool_result, lang=lang,
                              offered_action=offered_action)


# --- turns on a worker ---------------------------------------------------------------


def conversation_turn_queue(*, user, conversation_id: int, text: str) -> Message:  # noqa: ANN001
    """Store the person's message and hand the turn to a worker after commit."""

    text = (text or "").replace("\x00", "").strip()
    if not text or len(text) > MAX_TEXT:
        raise ApplicationError("text must be 1 to 4000 characters.", code="validation_error", details={"text": ["invalid"]})
    with transaction.atomic():
        conversation = access_conversation(user, conversation_id, for_update=True)
        if conversation.status == Conversation.Status.COMPLETED:
            raise Conflict("This conversation is complete; start a new one.", code="conversation_completed")
        message = Message.objects.create(conversation=conversation, role=Message.Role.USER, text=text,
                                         turn_index=conversation.turn_count + 1, payload={"kind": "pending"})
        Conversation.objects.filter(pk=conversation.pk).update(version=conversation.version + 1, updated_at=timezone.now())
        transaction.on_commit(lambda: _dispatch_turn(message.pk))
    return message


def _dispatch_turn(message_id: int) -> None:
    """Hand the turn to a worker; if the broker is down, answer inline instead of losing it."""
    from .tasks import process_turn

    try:
        process_turn.apply_async((message_id,), retry=False)
    except Exception as error:  # noqa: BLE001 - any broker failure: kombu, redis, socket
        message = Message.objects.select_related("conversation").get(pk=message_id)
        audit_record("broker_unavailable", run=message.conversation.run, conversation=message.conversation,
                     actor_label="engine", payload={"error": f"{type(error).__name__}: {error}"[:300], "message_id": message_id})
        conversation_turn_process(message_id)


def conversation_turn_process(message_id: int) -> bool:
    """Run a queued turn once: a redelivered task finds it done and does nothing."""
    message = Message.objects.select_related("conversation__owner").filter(pk=message_id).first()
    if message is None or message.payload.get("kind") != "pending":
        return False
    result = conversation_turn(user=message.conversation.owner, conversation_id=message.conversation_id,
                               text=message.text, pending_id=message.pk, show_draft=True)  # queued by the page
    return result is not None


# --- queued turns whose task was lost ------------------------------------------------


@dataclass(frozen=True)
class TurnSweep:
    """What one sweep did: the waiting turns it queued again, and those it marked failed."""

    requeued: tuple[int, ...] = ()
    failed: tuple[int, ...] = ()


def turn_overdue_sweep(*, conversation_id: int | None = None, now: datetime | None = None, limit: int = 200) -> TurnSweep:
    """Queue again, once, each turn still waiting CONCIERGE_TURN_REQUEUE_AFTER seconds after it was
    queued (its task was lost: a broker restarted empty, a worker killed); mark failed one still
    waiting as long after that. Safe anywhere and in several processes at once: each change is a
    conditional update only one sweep wins, and processing a turn twice answers it once."""
    now = now or timezone.now()
    due = now - timedelta(seconds=settings.CONCIERGE_TURN_REQUEUE_AFTER)
    waiting = Message.objects.filter(payload__kind="pending", created_at__lt=due)  # index message_pending_since
    if conversation_id is not None:
        waiting = waiting.filter(conversation_id=conversation_id)
    requeued, failed = [], []
    for message in waiting.select_related("conversation__run").order_by("created_at")[:limit]:
        requeued_at = message.payload.get("requeued_at")
        if requeued_at is None and message.waiting_since < due and _turn_requeue(message, now):
            requeued.append(message.pk)
        elif requeued_at is not None and datetime.fromisoformat(requeued_at) < due and _turn_fail(message, now):
            failed.append(message.pk)
    return TurnSweep(tuple(requeued), tuple(failed))


def _turn_requeue(message: Message, now: datetime) -> bool:
    """Record the turn as queued again (of sweeps racing, one updates the row) and queue it after commit."""
    with transaction.atomic():
        won = Message.objects.filter(pk=message.pk, payload__kind="pending", payload__requeued_at__isnull=True).update(
            payload={**message.payload, "requeued_at": now.isoformat()})
        if won:
            waited = round((now - message.waiting_since).total_seconds())
            audit_record("turn_requeued", run=message.conversation.run, conversation=message.conversation,
                         actor_label="engine", outcome="requeued", payload={"message_id": message.pk, "waited_seconds": waited})
            # robust: a turn answered here (the broker down) that fails is logged, and the sweep goes on
            transaction.on_commit(lambda: _dispatch_turn(message.pk), robust=True)
    return won == 1


def _turn_fail(message: Message, now: datetime) -> bool:
    """Mark failed a turn queued twice and still waiting. Under the conversation's lock, so never
    while that turn is being applied; skipped, not waited for, when the lock is taken."""
    with transaction.atomic():
        if not Conversation.objects.select_for_update(skip_locked=True).filter(pk=message.conversation_id).exists():
            return False
        won = Message.objects.filter(pk=message.pk, payload__kind="pending",
                                     payload__requeued_at=message.payload["requeued_at"]).update(
            payload={"kind": "failed", "requeued_at": message.payload["requeued_at"], "failed_at": now.isoformat()})
        if won:
            # A new version: the page that polls for this turn shows it failed.
            Conversation.objects.filter(pk=message.conversation_id).update(version=F("version") + 1, updated_at=now)
            audit_record("turn_failed", run=message.conversation.run, conversation=message.conversation,
                         actor_label="engine", outcome="failed", payload={"message_id": message.pk})
    return won == 1


def conversation_turn_retry(*, user, conversation_id: int, message_id: int) -> Message | None:  # noqa: ANN001
    """The page's "Try again" on a failed turn: it waits for a worker again, as if just sent.
    A turn already waiting or answered (a second click) is left alone: None."""
    with transaction.atomic():
        conversation = access_conversation(user, conversation_id, for_update=True)
        if conversation.status == Conversation.Status.COMPLETED:
            raise Conflict("This conversation is complete; start a new one.", code="conversation_completed")
        message = conversation.messages.filter(pk=message_id, role=Message.Role.USER, payload__kind="failed").first()
        if message is None:
            return None
        Message.objects.filter(pk=message.pk).update(payload={"kind": "pending", "queued_at": timezone.now().isoformat()})
        Conversation.objects.filter(pk=conversation.pk).update(version=conversation.version + 1, updated_at=timezone.now())
        audit_record("turn_retried", run=conversation.run, conversation=conversation, actor=user,
                     payload={"message_id": message.pk})
        transaction.on_commit(lambda: _dispatch_turn(message.pk))
    return message


# --- choosing an option ------------------------------------------------------------


@dataclass
class ChoiceResult:
    """A choice taken, or refused: the refusal (option not available, consent missing) is
    audited and committed with the caller's transaction, and the caller raises it after."""

    conversation: Conversation
    refusal: ApplicationError | None = None

    def raise_refusal(self) -> None:
        if self.refusal is not None:
            raise self.refusal


def conversation_choose(*, user, conversation_id: int, option_id: str, consent: bool = False) -> ChoiceResult:  # noqa: ANN001
    """A person or integrator chooses an offered option (consent recorded when it needs it).

    One transaction (the caller's, when it has one), the conversation locked first and then its
    run, so simultaneous choices queue and exactly one of them takes effect.
    """
    with transaction.atomic(savepoint=False):
        conversation = access_conversation(user, conversation_id, for_update=True)
        refusal = _choose_locked(conversation, user, option_id, consent)
    return ChoiceResult(conversation, refusal)


def _choose_locked(conversation: Conversation, user, option_id: str, consent: bool, *, turn_index: int | None = None,  # noqa: ANN001
                   typed: bool = False, state: ContextState | None = None) -> ApplicationError | None:
    """The choice itself, inside the caller's transaction with the conversation (and its run) locked; `typed`:
    the consent was given in words, in the message of turn `turn_index`."""
    run = conversation.run
    plan = plan_by_id(run.plan_id)
    config = conversation_config(plan)
    lang = reply_lang(conversation.locale)
    if conversation.context_state.handed_off:
        return Conflict("A member of staff has this conversation; options wait until it is handed back.",
                        code="conversation_handed_off")
    action = next((a for a in config.actions if a.id == option_id), None)
    if action is not None and details_missing(action, (state or conversation.context_state).slots):
        # its document needs what nobody said yet (the call's day and time): asked for, never made up (contract 10)
        return Conflict(say(lang, "I need the day and time for this first: tell me them in a message."),
                        code="option_not_available", details={"option_id": option_id, "needs": list(action.asks_before)})
    stored = _context_before_option(state or conversation.context_state, option_id)
    actor = Actor.of(user)
    if typed:
        actor = Actor.of(user, label=f"{actor.label} (consent in words)")
    signals = {"prepared": _prepared_documents(stored, config, lang, user.get_username())}
    if stored.form_editing is not None:
        signals["form_complete"] = False  # the review waits while an answer is being changed
    run = runs.run_signals_update(run=run, signals=signals, actor=actor, locale=lang).run
    outcome = runs.run_option_choose(run=run, option_id=option_id, actor=actor, consent=consent, locale=lang,
                                     raise_refusal=False)
    refusal = runs.choice_refusal(outcome)
    if refusal is not None:
        return refusal
    state = _context_after_option(stored, option_id, config)
    note = _choice_note(outcome, plan, lang)
    if state.form_editing is not None and config.form is not None:
        note += "\n\n" + edit_prompt(state, config.form, lang)
    if outcome.choice.change_workflow:
        # A workflow change happens only through an engine option; it opens a new conversation.
        successor = conversation_start(user=user, workflow_id=outcome.choice.change_workflow, locale=conversation.locale)
        note += f" → /conversations/{successor.pk}"
        audit_record("workflow_changed", run=outcome.run, conversation=conversation, actor=user,
                     payload={"to_workflow": outcome.choice.change_workflow, "conversation_id": successor.pk})
    Message.objects.create(conversation=conversation, role=Message.Role.ASSISTANT, text=note,
                           turn_index=turn_index or conversation.turn_count,
                           payload={"kind": "choice", "option_id": option_id} | ({"consent": "typed"} if typed else {}))
    state = record_reply(state, text=note, asks_question=state.form_editing is not None)
    run = outcome.run
    if config.actions:  # an executed action is never offered again
        run = runs.run_signals_update(run=run, signals={"action_blockers": action_blockers_for(state, config, "")},
                                      actor=actor, locale=lang).run
    _save_conversation(conversation, state, run, turn_index)
    return None


WRITE_REPORT = "write_report"  # the diagnostic plan's option that writes the final report
EDIT_ANSWERS = "edit_answers"  # the form review's "Change an answer": back to the questions, asking which


def _back_to_questions(options: list[dict[str, Any]], plan: wf.Plan) -> str | None:
    """The eligible option that takes the run back to where the form's questions are asked (the plan's first step):
    the review's "Change an answer", whatever the plan calls it."""
    back = [o for o in options if o["eligibility"] == "eligible" and not o.get("requires_consent")
            and (o["option_id"] == EDIT_ANSWERS or o.get("target_step_id") == plan.start_step)]
    return back[0]["option_id"] if back else None


def _context_before_option(state: ContextState, option_id: str) -> ContextState:
    from .engine.estimate import confirm_estimate, skip_estimate

    if option_id == EDIT_ANSWERS and state.finalized_answers:
        return state.evolve(form_editing="?")  # which answer? (nothing changes until a new value is accepted)
    if option_id == "confirm_estimate" and state.estimate.status == "draft":
        return confirm_estimate(state, "confirmed", turn=state.turn_index)
    if option_id == "skip_estimate" and state.estimate.status in ("draft", "none"):
        return skip_estimate(state, turn=state.turn_index)
    return state


def _context_after_option(state: ContextState, option_id: str, config: ConversationConfig) -> ContextState:
    """An executed action can never be offered again (ask-then-act's state guard)."""
    from .engine.ask_then_act import close_action_flow

    action = next((a for a in config.actions if a.id == option_id), None)
    return close_action_flow(state, action, executed=True) if action is not None else state


def _choice_note(outcome: runs.RunOutcome, plan: wf.Plan, lang: str) -> str:
    """What the concierge says once an option is taken, in plain words (`choice_note`): the documents it
    produced, that it ended or waits for a supervisor, or the step it leads to; never its id or effects."""
    option = outcome.choice.option
    node = plan.node(outcome.run.current_step)
    return choice_note(ChoiceTaken(
        ended=outcome.run.status == Run.Status.COMPLETED,
        end_label=wf.localize(node.label, lang) if node.type == "end" else "",
        waiting_review=outcome.run.status == Run.Status.WAITING_REVIEW,
        step_label=wf.localize(node.label, lang),
        moved=not option.non_advancing,
        documents=_documents_produced(outcome, plan, lang),
        then_asks=option.option_id == EDIT_ANSWERS,  # "which answer?" follows (see _context_before_option)
    ), lang)


def _documents_produced(outcome: runs.RunOutcome, plan: wf.Plan, lang: str) -> list[str]:
    """The labels of the documents written by the steps this choice went through (the chosen one and the automatic ones)."""
    steps = [choice.option.target_step_id for choice in (outcome.choice, *outcome.auto_choices) if choice.option is not None]
    keys = [plan.node(step).produces for step in steps if step and step in plan.nodes]
    return [page_label(key, lang, conversation_config(plan)) for key in dict.fromkeys(keys) if key and key in outcome.state.documents]


# --- events: a decided review reaches the conversation that asked ------------------


def on_review_decided(sender: str, subject: Review, **kwargs: Any) -> None:
    """Post the supervisor's decision into the conversation, so the person sees it (a
    `review_decided` receiver)."""
    review = subject
    if review.run_id is None:
        return
    from .engine.replies import fee_decision_text, review_decided_text

    with transaction.atomic():
        conversation = Conversation.objects.select_for_update().select_related("run").filter(run_id=review.run_id).first()
        if conversation is None:
            return
        run = conversation.run
        lang = reply_lang(conversation.locale)
        signals = run.engine_state.signals
        decision = signals.get("fee_decision")
        option = next((o for o in review.options if o["option_id"] == review.decided_option_id), {})
        if decision and decision.get("outcome") == option.get("outcome"):
            text = fee_decision_text(decision, lang)
        else:
            text = review_decided_text(_decided_label(review, option, plan_by_id(run.plan_id), lang), review.reason, lang)
        Message.objects.create(conversation=conversation, role=Message.Role.ASSISTANT, text=text, turn_index=conversation.turn_count,
                               payload={"kind": "review_decided", "review_id": review.pk})
        _save_conversation(conversation, conversation.context_state, run)


def _decided_label(review: Review, option: dict[str, Any], plan: wf.Plan, lang: str) -> str:
    """The decided option as the person reads it: the plan's label in their language ("调整为模拟金额"), else the
    label the review stored when it is in that language; "" rather than the option's id."""
    edge = next((e for e in plan.edges if e.option_id == review.decided_option_id), None)
    if edge is not None:
        return wf.localize(edge.label, lang)
    label = str(option.get("label") or "")
    return label if lang == "en" or re.search(r"[\u4e00-\u9fff]", label) else ""
