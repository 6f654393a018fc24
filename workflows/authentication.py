"""API token authentication that also tells, in the same query, whether the user supervises.

Kept free of the project's other modules: DRF imports it while its settings load.
"""

from __future__ import annotations

from functools import cache

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions
from rest_framework.authtoken.models import Token

DECIDE_REVIEW_PERM = "workflows.decide_review"


def holds_decide_review(*, user_ref) -> Q:  # noqa: ANN001 - a primary key or an OuterRef
    app_label, codename = DECIDE_REVIEW_PERM.split(".")
    return Q(content_type__app_label=app_label, codename=codename) & (Q(user=user_ref) | Q(group__user=user_ref))


@cache
def _user_by_token_sql() -> str:
    """The user of a token and whether they hold decide_review (directly or through a group).

    Written out once: this runs on every API request, and composing the same query with the
    ORM (a join plus an EXISTS subquery) costs more than running it.
    """
    user = get_user_model()
    table = {
        "user": user._meta.db_table, "token": Token._meta.db_table, "perm": Permission._meta.db_table,
        "ct": ContentType._meta.db_table, "user_perm": user.user_permissions.through._meta.db_table,
        "user_group": user.groups.through._meta.db_table, "group_perm": Group.permissions.through._meta.db_table,
    }
    columns = ", ".join(f'u."{f.column}"' for f in user._meta.concrete_fields)
    # Columns named, not u.*: a prepared statement must not change shape when a migration adds one.
    return f"""
        SELECT {columns}, EXISTS (
            SELECT 1 FROM {table['perm']} p JOIN {table['ct']} ct ON ct.id = p.content_type_id
            WHERE ct.app_label = %s AND p.codename = %s AND (
                EXISTS (SELECT 1 FROM {table['user_perm']} up WHERE up.permission_id = p.id AND up.user_id = u.id)
                OR EXISTS (SELECT 1 FROM {table['user_group']} ug JOIN {table['group_perm']} gp ON gp.group_id = ug.group_id
                           WHERE gp.permission_id = p.id AND ug.user_id = u.id))
        ) AS holds_decide_review
        FROM {table['user']} u JOIN {table['token']} t ON t.user_id = u.id
        WHERE t.key = %s
    """  # noqa: S608 - table names from the models' metadata; values are parameters


class TokenAuthentication(authentication.TokenAuthentication):
    """DRF's token authentication, answering "is this user a supervisor?" in the same query."""

    def authenticate_credentials(self, key: str) -> tuple[AbstractBaseUser, Token]:
        app_label, codename = DECIDE_REVIEW_PERM.split(".")
        user = next(iter(get_user_model().objects.raw(_user_by_token_sql(), [app_label, codename, key])), None)
        if user is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        user._is_supervisor = user.is_superuser or bool(user.holds_decide_review)
        return user, Token(key=key, user=user)
