"""API token authentication that also tells, in the same query, whether the user supervises.

Kept free of the project's other modules: DRF imports it while its settings load.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, Permission
from django.db.models import Exists, OuterRef, Q
from rest_framework import authentication, exceptions
from rest_framework.authtoken.models import Token

DECIDE_REVIEW_PERM = "workflows.decide_review"


def holds_decide_review(*, user_ref) -> Q:  # noqa: ANN001 - a primary key or an OuterRef
    app_label, codename = DECIDE_REVIEW_PERM.split(".")
    return Q(content_type__app_label=app_label, codename=codename) & (Q(user=user_ref) | Q(group__user=user_ref))


class TokenAuthentication(authentication.TokenAuthentication):
    """DRF's token authentication, which also learns in the same query whether the user supervises."""

    def authenticate_credentials(self, key: str) -> tuple[AbstractBaseUser, Token]:
        supervises = Exists(Permission.objects.filter(holds_decide_review(user_ref=OuterRef("user_id"))))
        try:
            token = Token.objects.select_related("user").annotate(user_supervises=supervises).get(key=key)
        except Token.DoesNotExist:
            raise exceptions.AuthenticationFailed("Invalid token.") from None
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        token.user._is_supervisor = token.user.is_superuser or token.user_supervises
        return token.user, token
