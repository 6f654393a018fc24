"""Reviews: how a supervisor's decision takes effect, exactly once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import transaction
from django.utils import timezone

from config.errors import ApplicationError, Conflict
from workflows import engine
from workflows.access import access_review
from workflows.audit import audit_record
from workflows.models import Review

from .events import emit_on_commit
from .runs import (
    Actor,
    RunTransaction,
    choose_in,
    raise_for_refusal,
    run_for_update,
    run_lock_parents,
)

REVIEW_APPLIERS: dict[str, Callable[[Review, str, Any], None]] = {}


def review_applier(kind: str) -> Callable[[Callable[[Review, str, Any], None]], Callable[[Review, str, Any], None]]:
    """Register how a decided review of a kind takes effect (billing registers fee reviews)."""

    def register(fn: Callable[[Review, str, Any], None]) -> Callable[[Review, str, Any], None]:
        REVIEW_APPLIERS[kind] = fn
        return fn

    return register


_STATUS_FOR = {
    Review.Outcome.APPROVE: Review.Status.APPROVED,
    Review.Outcome.REJECT: Review.Status.REJECTED,
    Review.Outcome.OVERRIDE: Review.Status.OVERRIDDEN,
}


def _decided_option(review: Review, outcome: str, option_id: str | None) -> str:
    offered = {o["option_id"]: o for o in review.options}
    if outcome == Review.Outcome.APPROVE:
        chosen = review.recommended_option_id
    elif outcome == Review.Outcome.REJECT:
        chosen = review.reject_option_id
        if not chosen:
            raise ApplicationError("This review has no reject outcome; override with an option instead.", code="no_reject_option")
    else:
        if not option_id:
            raise ApplicationError("An override names the option to take (option_id).", code="option_required")
        chosen = option_id
    if chosen not in offered or offered[chosen].get("eligibility") != engine.ELIGIBLE:
        raise ApplicationError(
            f"Option '{chosen}' is not one of this review's legal outcomes.",
            code="option_not_available",
            details={"options": [k for k, o in offered.items() if o.get("eligibility") == engine.ELIGIBLE]},
        )
    return chosen


def review_decide(*, review_id: int, outcome: str, reason: str, user, option_id: str | None = None) -> Review:  # noqa: ANN001
    """Decide a pending review exactly once; the decision and its effect commit together."""
    if outcome not in Review.Outcome.values:
        raise ApplicationError(f"outcome must be one of {', '.join(Review.Outcome.values)}.", code="invalid_outcome")
    if not (reason or "").strip():
        raise ApplicationError("A decision needs a reason.", code="reason_required")
    review = access_review(user, review_id)
    if not review.is_pending:
        raise Conflict(f"Review {review_id} was already decided ({review.status}).", code="already_decided")
    chosen = _decided_option(review, outcome, option_id)
    now = timezone.now()
    with transaction.atomic():
        # The conversation before the run (and the run before its review), as everywhere; a gate's
        # decision moves the run, so its row is locked here too.
        run = run_for_update(review.run_id) if review.kind == Review.Kind.GATE else None
        if run is None and review.run_id is not None:
            run_lock_parents(review.run_id)
        # Compare-and-swap on the pending state: exactly one concurrent decision wins.
        won = Review.objects.filter(pk=review.pk, status=Review.Status.PENDING).update(
            status=_STATUS_FOR[outcome], decided_by=user, decided_at=now, reason=reason.strip(), decided_option_id=chosen
        )
        if won != 1:
            raise Conflict(f"Review {review_id} was already decided by someone else.", code="already_decided")
        review.refresh_from_db()
        mode = "recommended" if chosen == review.recommended_option_id else "supervisor_override"
        actor = Actor(user=user, role="supervisor", label=f"supervisor:{user.username}")
        if review.kind == Review.Kind.GATE:
            tx = RunTransaction(run)
            result = choose_in(tx, chosen, actor, True, mode, {}, "en", review)
            raise_for_refusal(result.choice)
        else:
            REVIEW_APPLIERS[review.kind](review, chosen, user)
        audit_record(
            "review_decided", run=review.run, review=review, step_id=review.step_id, chosen_option_id=chosen,
            selection_mode=mode, outcome=review.status, actor=user, actor_label=actor.label,
            payload={"reason": review.reason, "decision": outcome, "recommended_option_id": review.recommended_option_id},
        )
        emit_on_commit("review.decided", review)
    return review
