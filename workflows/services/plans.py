"""Plans: validating a plan document and storing it as a new version."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any

from django.db import transaction

from config.errors import ApplicationError
from workflows import engine
from workflows.audit import audit_record
from workflows.models import WorkflowPlan


class PlanInvalid(ApplicationError):
    code = "invalid_plan"


def _checksum(document: Mapping[str, Any]) -> str:
    body = {k: v for k, v in document.items() if k != "version"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


_SECTION_VALIDATORS: dict[str, Callable[[Any], list[tuple[str, str]]]] = {}


def register_plan_section(key: str, validator: Callable[[Any], list[tuple[str, str]]]) -> None:
    """Let another app validate its own section of a plan (the conversation config)."""
    _SECTION_VALIDATORS[key] = validator


def plan_problems(document: Any) -> list[engine.PlanProblem]:
    """Every problem of a plan document: the graph's and each registered section's."""
    problems = engine.validate_plan(document)
    if isinstance(document, Mapping):
        for key, validator in _SECTION_VALIDATORS.items():
            if key in document and isinstance(document[key], Mapping):
                problems += [engine.PlanProblem(f"$.{key}{path.removeprefix('$')}" if path.startswith("$") else f"$.{key}.{path}", message)
                             for path, message in validator(document[key])]
    return problems


def plan_check(document: Any) -> None:
    """Raise PlanInvalid listing every problem (with its JSON path) of a plan document."""
    problems = plan_problems(document)
    if problems:
        raise PlanInvalid(
            f"The plan has {len(problems)} problem(s).",
            details={"problems": [p.to_dict() for p in problems]},
        )


def plan_upload(*, document: Any, user=None) -> tuple[WorkflowPlan, bool]:  # noqa: ANN001
    """Validate and store a plan as a new version; the same content again changes nothing."""
    plan_check(document)
    checksum = _checksum(document)
    workflow_id = document["workflow_id"]
    with transaction.atomic():
        latest = WorkflowPlan.objects.filter(workflow_id=workflow_id).order_by("-version").first()
        if latest is not None and latest.checksum == checksum:
            return latest, False
        version = (latest.version + 1) if latest else 1
        stored = {**document, "version": version}
        row = WorkflowPlan.objects.create(
            workflow_id=workflow_id,
            version=version,
            name=engine.localize(document["name"], "en"),
            description=engine.localize(document["description"], "en"),
            definition=stored,
            checksum=checksum,
            created_by=user if getattr(user, "is_authenticated", False) else None,
        )
        audit_record("plan_uploaded", actor=user, payload={"workflow_id": workflow_id, "version": version})
    return row, True
