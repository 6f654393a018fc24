"""The three roles: a person, an operator and a supervisor, held as Django groups.

A person is any signed-in user and needs no group: their own conversations, public prices.
Operators and supervisors are groups holding model permissions. The Supervisors group holds
every operator permission too, so a check names only the permission its act needs and
never a role. The data migration `workflows/0005_role_groups` made the groups with a frozen
copy of these lists; `seed_demo` and `create_api_token` bring them up to date.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth.models import AbstractBaseUser, Group, Permission
from django.db.models import Q

PERSON, OPERATOR, SUPERVISOR = "person", "operator", "supervisor"
ROLES = (PERSON, OPERATOR, SUPERVISOR)
OPERATORS_GROUP, SUPERVISORS_GROUP = "Operators", "Supervisors"

# An operator is the parking operator's systems or an integrator's service account: orders,
# arrears, fee verification, lots and cities, knowledge ingestion. No admin screens.
OPERATOR_PERMISSIONS = (
    "billing.view_billingrule", "billing.view_billingruleversion",
    "billing.add_parkingorder", "billing.view_parkingorder",
    "billing.add_feeverification", "billing.view_feeverification",
    "billing.add_city", "billing.change_city", "billing.view_city", "billing.add_lot", "billing.change_lot", "billing.view_lot",
    "conversations.add_knowledgesource", "conversations.change_knowledgesource", "conversations.view_knowledgesource",
    "conversations.add_knowledgechunk", "conversations.view_knowledgechunk",
    "workflows.view_workflowplan",
)

# A supervisor may do what an operator may, and changes billing rules and workflow plans,
# decides reviews and reads every conversation, in the API and in the admin screens.
SUPERVISOR_PERMISSIONS = (
    *OPERATOR_PERMISSIONS,
    "billing.add_billingrule", "billing.change_billingrule", "billing.add_billingruleversion",
    "workflows.decide_review", "workflows.view_review", "workflows.view_auditevent",
    "workflows.view_run", "workflows.view_rundocument", "workflows.view_consentrecord",
    "workflows.add_workflowplan", "workflows.view_webhookendpoint", "workflows.view_webhookdelivery",
    "conversations.view_conversation", "conversations.view_message",
    "conversations.view_handoff", "conversations.change_handoff",
)

GROUPS = {OPERATOR: OPERATORS_GROUP, SUPERVISOR: SUPERVISORS_GROUP}
GROUP_PERMISSIONS = {OPERATORS_GROUP: OPERATOR_PERMISSIONS, SUPERVISORS_GROUP: SUPERVISOR_PERMISSIONS}


def least_role_for(perms: Iterable[str]) -> str | None:
    """The first role (operator before supervisor) whose group holds every one of `perms`."""
    wanted = set(perms)
    return next((role for role, group in GROUPS.items() if wanted <= set(GROUP_PERMISSIONS[group])), None)


def permissions_named(names: Iterable[str]) -> Q:
    """A filter on Permission for "app_label.codename" names."""
    query = Q(pk__in=[])
    for name in names:
        app_label, codename = name.split(".", 1)
        query |= Q(content_type__app_label=app_label, codename=codename)
    return query


def role_group(role: str) -> Group:
    """The role's group with (at least) its permissions; made again if it was removed."""
    name = GROUPS[role]
    group, _ = Group.objects.get_or_create(name=name)
    group.permissions.add(*Permission.objects.filter(permissions_named(GROUP_PERMISSIONS[name])))
    return group


def ensure_role_groups() -> list[Group]:
    """Every role's group with its permissions; permissions added by hand stay."""
    return [role_group(role) for role in GROUPS]


def role_grant(user: AbstractBaseUser, role: str) -> None:
    """Put the user in the role's group; a supervisor also gets into Django admin."""
    if role == PERSON:
        return
    if role == SUPERVISOR and not user.is_staff:
        user.is_staff = True
        user.save(update_fields=["is_staff"])
    user.groups.add(role_group(role))
