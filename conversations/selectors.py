"""Reads of conversations: access, the parsed config, and the state a client sees."""

from __future__ import annotations

from typing import Any

from config.errors import NotFound
from workflows import engine as wf
from workflows.access import is_supervisor
from workflows.engine.gates import GATE_SIGNALS
from workflows.models import Review, Run
from workflows.selectors import plan_by_id, run_decision_point

from .access import MAX_KEY
from .engine import ConversationConfig
from .engine.replies import lang_of
from .engine.state import SlotValue
from .handoffs import open_handoff_id
from .models import Conversation, Message

UNKNOWN = object()  # "not looked up yet", as opposed to None ("there is none")

_CONFIGS: dict[tuple[str, int, str], ConversationConfig] = {}


def conversation_config(plan: wf.Plan) -> ConversationConfig:
    """The plan's conversation config, parsed once per stored plan version."""
    key = (plan.workflow_id, plan.version or 0, plan.fingerprint)
    config = _CONFIGS.get(key)
    if config is None:
        config = ConversationConfig.from_dict(plan.conversation)
        if len(_CONFIGS) > 256:
            _CONFIGS.clear()
        _CONFIGS[key] = config
    return config


def config_cache_clear() -> None:
    """Forget the parsed configs (a test database reuses primary keys after a rollback)."""
    _CONFIGS.clear()


def reply_lang(locale: str) -> str:
    """The language replies and plan texts are given in: zh, ru, es or en."""
    return lang_of(None, locale)


def access_conversation(user, conversation_id: int, *, for_update: bool = False) -> Conversation:  # noqa: ANN001
    """The conversation (with its run) if the user owns it or supervises; 404 otherwise (no
    existence leak). `for_update` locks both rows, inside the caller's transaction."""
    try:
        pk = int(conversation_id)
    except (TypeError, ValueError):
        pk = 0
    conversation = None
    if 0 < pk < MAX_KEY:
        rows = Conversation.objects.select_related("run").filter(pk=pk).order_by()  # one row: nothing to sort
        conversation = next(iter(rows.select_for_update() if for_update else rows), None)
    if conversation is None or (conversation.owner_id != user.pk and not is_supervisor(user)):
        raise NotFound(f"Conversation {conversation_id} not found.", code="conversation_not_found")
    return conversation


def latest_review(run: Run, plan: wf.Plan) -> Review | None:
    """The run's newest review; a run whose state counts none opened costs no query."""
    state = run.engine_state
    if state.reviews_opened == 0:
        return None
    if state.reviews_opened is None and not any(step in plan.nodes and plan.node(step).gate is not None for step in state.visits):
        return None  # stored before reviews were counted, and never at a gate
    return Review.objects.filter(run=run).order_by("-created_at", "-pk").first()


def conversation_state(conversation: Conversation, *, lang: str | None = None, review: Review | None | object = UNKNOWN,
                       decision: wf.DecisionPoint | None = None) -> dict[str, Any]:
    """The conversation's state in the SPEC's shape. A caller that has the run's newest review
    (None for none) or its current options in the conversation's language passes them."""
    state = conversation.context_state
    run = conversation.run
    plan = plan_by_id(run.plan_id)
    run_state = run.engine_state
    lang = lang or reply_lang(conversation.locale)
    dp = decision or run_decision_point(run, locale=lang)
    done = set(run_state.completed_steps)
    steps = [
        {"id": sid, "label": wf.localize(plan.node(sid).label, lang), "type": plan.node(sid).type,
         "status": "current" if sid == run.current_step and run.status != Run.Status.COMPLETED else ("done" if sid in done else "ahead")}
        for sid in plan.step_order()
    ]
    if review is UNKNOWN:
        review = latest_review(run, plan)
    estimate = state.estimate.to_dict() | {"total_hours": state.estimate.total_hours}
    return {
        "id": conversation.pk,
        "workflow_id": conversation.workflow_id,
        "plan_version": plan.version,
        "locale": conversation.locale,
        "status": conversation.status,
        "mode": state.mode,
        "submode": state.submode,
        "current_step": run.current_step,
        "current_step_label": wf.localize(plan.node(run.current_step).label, lang),
        "procedure_step": state.current_step_id,
        "slots": {name: _slot_view(s) for name, s in state.slots.items()},
        "facts": [f.to_dict() for f in state.facts],
        "hypotheses": [h.to_dict() for h in state.hypotheses],
        "contradictions": [c.to_dict() for c in state.contradictions],
        "topic_stack": [t.to_dict() for t in state.topic_stack],
        "completed_steps": list(dict.fromkeys([*run_state.completed_steps, *state.completed_steps])),
        "plan_steps": steps,
        "estimate": estimate,
        "options": [o.to_dict() for o in dp.options],
        "selection": dp.selection.to_dict(),
        "review": {"id": review.pk, "status": review.status, "title": review.title, "step_id": review.step_id or None,
                   "decided_option_id": review.decided_option_id or None,
                   "decided_label": next((o["label"] for o in review.options if o["option_id"] == review.decided_option_id), None),
                   "reason": review.reason or None} if review else None,
        "documents": sorted(run_state.documents),
        "stale_documents": dict(dp.stale),
        "gate_signals": {k: run_state.signals[k] for k in GATE_SIGNALS if k in run_state.signals},
        "form": {
            "finalized_answers": [a.to_dict() for a in state.finalized_answers],
            "active_thread": state.active_thread.to_dict() if state.active_thread else None,
            "archived_threads": [t.to_dict() for t in state.archived_threads],
        },
        "isolation": {"complete": state.isolation_complete, "finding": state.isolation_finding,
                      "invalidated": state.isolation_invalidated, "previous_findings": list(state.previous_findings)},
        "handoff": {"status": "open", "id": open_handoff_id(conversation)} if state.handed_off else None,
        "turn_count": conversation.turn_count,
        "updated_at": conversation.updated_at.isoformat(),
    }


def _slot_view(slot: SlotValue) -> dict[str, Any]:
    """A slot and where it came from: the turn, and the person's words or the tool and record it was read from."""
    view = {"value": slot.value, "source_turn": slot.source_turn, "status": slot.status, "raw": slot.raw, "source": slot.source}
    if slot.learned:
        view.update(tool=slot.tool, record=slot.record)
    return view


def conversation_messages(conversation: Conversation, after: int | None = None) -> list[Message]:
    rows = conversation.messages.order_by("id")
    if after:
        rows = rows.filter(pk__gt=after)
    return list(rows)


