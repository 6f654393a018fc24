"""API token authentication that also tells, in the same query, whether the user supervises.

Kept free of the project's apps: DRF imports it while its settings load.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Permission
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions
from rest_framework.authtoken.models import Token

DECIDE_REVIEW_PERM = "workflows.decide_review"


def holds_decide_review(*, user_ref) -> Q:  # noqa: ANN001 - a primary key or an OuterRef
    app_label, codename = DECIDE_REVIEW_PERM.split(".")
    return Q(content_type__app_label=app_label, codename=codename) & (Q(user=user_ref) | Q(group__user=user_ref))


def _user_by_token(key: str) -> QuerySet:
    """The user of a token, annotated with whether they hold decide_review (directly or through a
    group): `is_supervisor` reads the annotation instead of asking again."""
    holds = Exists(Permission.objects.filter(holds_decide_review(user_ref=OuterRef("pk"))))
    return get_user_model().objects.annotate(holds_decide_review=holds).filter(auth_token__key=key)


class TokenAuthentication(authentication.TokenAuthentication):
    """DRF's token authentication, answering "is this user a supervisor?" in the same query."""

    def authenticate_credentials(self, key: str) -> tuple[AbstractBaseUser, Token]:
        user = _user_by_token(str(key)).first()
        if user is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        return user, Token(key=key, user=user)
