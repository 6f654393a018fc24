"""Demo data of the workflows app: the shipped plans and the demo users."""

from __future__ import annotations

import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import CommandError

from .access import SUPERVISORS_GROUP
from .services import PlanInvalid, plan_upload

PLANS_DIR = Path(__file__).resolve().parent / "plans"
SHIPPED_WORKFLOWS = ("parking_help_desk", "rv_diagnostic", "manager_assistant", "permit_form", "project_intake")

# (username, password, supervisor?) — demo only; the run command prints them.
DEMO_USERS = (
    ("alice", "alice-demo-2026", False),
    ("bob", "bob-demo-2026", False),
    ("sam", "sam-supervisor-2026", True),
)


def load_shipped_plans() -> list[tuple[str, int, bool]]:
    """Upload every plan file; unchanged files change nothing."""
    loaded = []
    for workflow_id in SHIPPED_WORKFLOWS:
        path = PLANS_DIR / f"{workflow_id}.json"
        try:
            row, created = plan_upload(document=json.loads(path.read_text(encoding="utf-8")))
        except PlanInvalid as error:
            problems = "; ".join(f"{p['path']}: {p['message']}" for p in error.details["problems"])
            raise CommandError(f"{path.name} is not a valid plan: {problems}") from error
        loaded.append((row.workflow_id, row.version, created))
    return loaded


SUPERVISOR_PERMISSIONS = (
    "decide_review", "view_review", "view_auditevent", "view_run", "view_workflowplan", "add_workflowplan",
    "view_webhookendpoint", "view_webhookdelivery", "view_conversation", "view_message",
    "view_knowledgesource", "view_knowledgechunk", "add_knowledgesource", "change_knowledgesource",
    "view_billingrule", "add_billingrule", "change_billingrule", "view_billingruleversion", "add_billingruleversion",
    "view_parkingorder", "view_feeverification",
)


def supervisors_group() -> Group:
    """The Supervisors group with its permissions (made by a migration; remade if it was removed)."""
    from django.contrib.auth.models import Permission

    group, _ = Group.objects.get_or_create(name=SUPERVISORS_GROUP)
    group.permissions.add(*Permission.objects.filter(codename__in=SUPERVISOR_PERMISSIONS))
    return group


def make_supervisor(user) -> None:  # noqa: ANN001
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    user.groups.add(supervisors_group())


def ensure_demo_users() -> list[tuple[str, str, bool]]:
    """Create the demo users once; later runs leave their passwords alone."""
    users = get_user_model().objects
    for username, password, supervisor in DEMO_USERS:
        user, created = users.get_or_create(username=username, defaults={"email": f"{username}@example.com"})
        if created:
            user.set_password(password)
            user.save()
        if supervisor:
            make_supervisor(user)
    return list(DEMO_USERS)


def seed(stdout) -> None:  # noqa: ANN001
    for workflow_id, version, created in load_shipped_plans():
        stdout.write(f"  plan {workflow_id} v{version} {'loaded' if created else 'unchanged'}")
    ensure_demo_users()
