"""Reads of plans and runs: the parsed plan of a stored version, the newest versions, a run's options."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from django.db.models import Max

from config.errors import NotFound

from . import engine
from .engine import DecisionPoint, Plan
from .models import Run, WorkflowPlan

_PLANS: dict[int, Plan] = {}


def plan_by_id(plan_id: int) -> Plan:
    """The parsed engine Plan of a stored version. Stored versions never change, so a
    process parses each one once; the row is read only on a miss."""
    plan = _PLANS.get(plan_id)
    if plan is None:
        row = WorkflowPlan.objects.get(pk=plan_id)
        plan = replace(engine.parse_plan(row.definition), fingerprint=row.checksum)
        if len(_PLANS) > 256:
            _PLANS.clear()
        _PLANS[plan_id] = plan
    return plan


def plans_cache_clear() -> None:
    """Forget the parsed plans (a test database reuses primary keys after a rollback)."""
    _PLANS.clear()


def plan_latest(workflow_id: str) -> WorkflowPlan:
    row = WorkflowPlan.objects.filter(workflow_id=workflow_id).order_by("-version").first()
    if row is None:
        raise NotFound(f"Workflow '{workflow_id}' not found.", code="workflow_not_found")
    return row


def plans_latest() -> list[WorkflowPlan]:
    """The newest version of every workflow, in a fixed number of queries."""
    latest = WorkflowPlan.objects.values("workflow_id").annotate(v=Max("version"))
    keys = {(row["workflow_id"], row["v"]) for row in latest}
    rows = WorkflowPlan.objects.filter(workflow_id__in=[k[0] for k in keys]).order_by("workflow_id", "-version")
    return [r for r in rows if (r.workflow_id, r.version) in keys]


def run_decision_point(run: Run, *, actor_role: str = "participant", locale: str = "en",
                       signals: Mapping[str, Any] | None = None) -> DecisionPoint:
    """The current options of a run, as the given role sees them (read-only)."""
    return engine.decision_point(plan_by_id(run.plan_id), run.engine_state, signals, actor=actor_role, locale=locale)
