"""Who may see and do what: the one way views get objects that belong to someone."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from config.errors import Forbidden, NotFound

from .authentication import DECIDE_REVIEW_PERM
from .models import Review, Run
from .roles import SUPERVISORS_GROUP  # noqa: F401  (its old home; workflows/roles.py defines the groups)


def is_supervisor(user: AbstractBaseUser | AnonymousUser | None) -> bool:
    """Supervisors hold the decide_review permission (directly or through the group).

    Token authentication reads it with the user (the `holds_decide_review` annotation);
    otherwise Django's permission check answers, cached on the user for the request.
    """
    if not (user and user.is_authenticated and user.is_active):
        return False
    if user.is_superuser:
        return True
    annotated = getattr(user, "holds_decide_review", None)
    return bool(annotated) if annotated is not None else user.has_perm(DECIDE_REVIEW_PERM)


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
