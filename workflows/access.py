"""Who may see and do what: the one way views get objects that belong to someone."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Permission

from config.errors import Forbidden, NotFound

from .authentication import holds_decide_review
from .models import Review, Run
from .roles import SUPERVISORS_GROUP  # noqa: F401  (its old home; workflows/roles.py defines the groups)


def is_supervisor(user: AbstractBaseUser | AnonymousUser | None) -> bool:
    """Supervisors hold the decide_review permission (directly or through the group).

    Answered with one query and remembered on the user object for the request (the same
    lifetime as Django's own permission cache); token authentication answers it for free.
    """
    if not (user and user.is_authenticated and user.is_active):
        return False
    known = getattr(user, "_is_supervisor", None)
    if known is None:
        known = user.is_superuser or Permission.objects.filter(holds_decide_review(user_ref=user.pk)).exists()
        user._is_supervisor = known
    return known


def role_of(user: AbstractBaseUser) -> str:
    return "supervisor" if is_supervisor(user) else "participant"


def access_run(user: AbstractBaseUser, run_id: int) -> Run:
    """The run if the user owns it or supervises; 404 otherwise (no existence leak)."""
    run = Run.objects.select_related("plan").filter(pk=run_id).first()
    if run is None or (run.owner_id != user.pk and not is_supervisor(user)):
        raise NotFound(f"Run {run_id} not found.")
    return run


def require_supervisor(user: AbstractBaseUser) -> None:
    if not is_supervisor(user):
        raise Forbidden("Only supervisors may do this.", code="supervisor_required")


def access_review(user: AbstractBaseUser, review_id: int) -> Review:
    require_supervisor(user)
    review = Review.objects.select_related("run", "decided_by").filter(pk=review_id).first()
    if review is None:
        raise NotFound(f"Review {review_id} not found.")
    return review
