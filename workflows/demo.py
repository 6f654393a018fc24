"""Demo data of the workflows app: the shipped plans and the demo users."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from . import roles
from .engine.plan_files import plan_path, read_plan
from .services.plans import PlanInvalid, plan_upload

PLANS_DIR = Path(__file__).resolve().parent / "plans"
SHIPPED_WORKFLOWS = ("parking_help_desk", "rv_diagnostic", "manager_assistant", "permit_form", "project_intake")

# (username, password, role) — demo only; the run command prints them.
DEMO_USERS = (
    ("alice", "alice-demo-2026", roles.PERSON),
    ("bob", "bob-demo-2026", roles.PERSON),
    ("olga", "olga-operator-2026", roles.OPERATOR),
    ("sam", "sam-supervisor-2026", roles.SUPERVISOR),
)


def load_shipped_plans() -> list[tuple[str, int, bool]]:
    """Upload every plan file; unchanged files change nothing."""
    loaded = []
    for workflow_id in SHIPPED_WORKFLOWS:
        path = plan_path(PLANS_DIR, workflow_id)
        try:
            row, created = plan_upload(document=read_plan(path))
        except PlanInvalid as error:
            problems = "; ".join(f"{p['path']}: {p['message']}" for p in error.details["problems"])
            raise CommandError(f"{path.name} is not a valid plan: {problems}") from error
        loaded.append((row.workflow_id, row.version, created))
    return loaded


def make_supervisor(user) -> None:  # noqa: ANN001
    roles.role_grant(user, roles.SUPERVISOR)


def make_operator(user) -> None:  # noqa: ANN001
    roles.role_grant(user, roles.OPERATOR)


def ensure_demo_users() -> list[tuple[str, str, str]]:
    """Create the demo users once, each in its role's group; later runs leave their passwords alone."""
    users = get_user_model().objects
    for username, password, role in DEMO_USERS:
        user, created = users.get_or_create(username=username, defaults={"email": f"{username}@example.com"})
        if created:
            user.set_password(password)
            user.save()
        roles.role_grant(user, role)
    return list(DEMO_USERS)


def seed(stdout) -> None:  # noqa: ANN001
    for workflow_id, version, created in load_shipped_plans():
        stdout.write(f"  plan {workflow_id} v{version} {'loaded' if created else 'unchanged'}")
    roles.ensure_role_groups()
    ensure_demo_users()
