"""Writing audit rows: every decision point, refusal, review and consent leaves one."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
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
    """Write one audit row (the arguments are `audit_row`'s): now, or inside an `audit_together` block
    with the block's rows."""
    event = audit_row(event_type, **fields)
    audit_write([event])
    return event


# The rows `audit_write` was given inside an `audit_together` block, not yet inserted.
_TOGETHER: ContextVar[list[AuditEvent] | None] = ContextVar("audit_together", default=None)


def audit_write(rows: list[AuditEvent]) -> None:
    """Write collected rows in one insert, in the order they were made, and empty the list (inside an
    `audit_together` block, they join that block's insert)."""
    if not rows:
        return
    together = _TOGETHER.get()
    if together is not None:
        together.extend(rows)
    else:
        AuditEvent.objects.bulk_create(rows)
    rows.clear()


@contextmanager
def audit_together() -> Iterator[None]:
    """Inside the caller's transaction: the rows every service in the block writes with `audit_write`
    go in one insert when the block ends (a turn's run changes and the turn itself: one statement, not
    one per service). On an error nothing is inserted, as the transaction rolls back anyway. A block
    inside another joins the outer one."""
    if _TOGETHER.get() is not None:
        yield
        return
    rows: list[AuditEvent] = []
    token = _TOGETHER.set(rows)
    try:
        yield
    finally:
        _TOGETHER.reset(token)
    if rows:
        AuditEvent.objects.bulk_create(rows)


def conversation_of(run):  # noqa: ANN001, ANN202
    """The run's conversation, or None (Django keeps the answer, found or not, on the run)."""
    from django.core.exceptions import ObjectDoesNotExist

    try:
        return run.conversation
    except ObjectDoesNotExist:
        return None
