"""Writing audit rows: every decision point, refusal, review and consent leaves one."""

from __future__ import annotations

from typing import Any

from .engine import DecisionPoint
from .models import AuditEvent

_SCALARS = frozenset({str, int, float, bool, type(None)})


def _jsonable(value: Any) -> Any:
    # Scalars, most values by far, are checked by exact type before any call is made for them.
    if type(value) in _SCALARS:
        return value
    if isinstance(value, dict):
        return {k if type(k) is str else str(k): v if type(v) in _SCALARS else _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [v if type(v) in _SCALARS else _jsonable(v) for v in value]
    if isinstance(value, str | int | float | bool):
        return value
    return str(value)


def audit_row(
    event_type: str,
    *,
    run=None,  # noqa: ANN001
    conversation=None,  # noqa: ANN001
    review=None,  # noqa: ANN001
    decision: DecisionPoint | None = None,
    chosen_option_id: str = "",
    selection_mode: str = "",
    outcome: str = "",
    actor=None,  # noqa: ANN001
    actor_label: str = "",
    payload: dict[str, Any] | None = None,
    step_id: str = "",
) -> AuditEvent:
    """One audit row, not yet saved; a decision point contributes its full snapshot and signals."""
    body = dict(payload or {})
    signals: dict[str, Any] = {}
    snapshot: list[dict[str, Any]] = []
    if decision is not None:
        snapshot = decision.snapshot()
        signals = dict(decision.used_signals)
        step_id = step_id or decision.step_id
        body.setdefault("selection", decision.selection.to_dict())
        if decision.gate:
            body.setdefault("gate", decision.gate.to_dict())
        if decision.breaker:
            body.setdefault("breaker", decision.breaker.to_dict())
        if decision.stale:
            body.setdefault("stale_documents", dict(decision.stale))
        body.setdefault("consent_required", [o.option_id for o in decision.options if o.requires_consent])
    if conversation is None and run is not None:
        conversation = conversation_of(run)
    return AuditEvent(
        event_type=event_type,
        run=run,
        conversation=conversation,
        review=review,
        step_id=step_id,
        options_snapshot=_jsonable(snapshot),
        chosen_option_id=chosen_option_id or "",
        selection_mode=selection_mode,
        outcome=outcome,
        signals=_jsonable(signals),
        actor=actor if getattr(actor, "is_authenticated", False) else None,
        actor_label=actor_label or (getattr(actor, "username", "") or "system"),
        payload=_jsonable(body),
    )


def audit_record(event_type: str, **fields: Any) -> AuditEvent:
    """Write one audit row now (the arguments are `audit_row`'s)."""
    event = audit_row(event_type, **fields)
    event.save()
    return event


def audit_write(rows: list[AuditEvent]) -> None:
    """Write collected rows in one insert, in the order they were made, and empty the list."""
    if rows:
        AuditEvent.objects.bulk_create(rows)
        rows.clear()


def conversation_of(run):  # noqa: ANN001, ANN202
    """The run's conversation, or None (Django keeps the answer, found or not, on the run)."""
    from django.core.exceptions import ObjectDoesNotExist

    try:
        return run.conversation
    except ObjectDoesNotExist:
        return None
