"""Plans: validating a plan document and storing it as a new version."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any

from django.db import transaction

from config.errors import ApplicationError
from workflows import engine, handlers
from workflows.audit import audit_record
from workflows.models import WorkflowPlan


class PlanInvalid(ApplicationError):
    code = "invalid_plan"


def _checksum(document: Mapping[str, Any]) -> str:
    body = {k: v for k, v in document.items() if k != "version"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


_SECTION_VALIDATORS: dict[str, Callable[[Any], list[tuple[str, str]]]] = {}
_PLAN_CHECKS: list[Callable[[Mapping[str, Any]], list[tuple[str, str]]]] = []


def register_plan_section(key: str, validator: Callable[[Any], list[tuple[str, str]]]) -> None:
    """Let another app validate its own section of a plan (the conversation config)."""
    _SECTION_VALIDATORS[key] = validator


def register_plan_check(check: Callable[[Mapping[str, Any]], list[tuple[str, str]]]) -> None:
    """Let another app check what the graph says about its section (an action node for each action)."""
    _PLAN_CHECKS.append(check)


def plan_problems(document: Any) -> list[engine.PlanProblem]:
    """Every problem of a plan document: the graph's, each registered section's, and the names it gives
    handlers, effects and signals (checked against what is registered, so a typo never blocks a run for good)."""
    problems = engine.validate_plan(document)
    if not isinstance(document, Mapping):
        return problems
    for key, validator in _SECTION_VALIDATORS.items():
        if key in document and isinstance(document[key], Mapping):
            problems += [engine.PlanProblem(f"$.{key}{path.removeprefix('$')}" if path.startswith("$") else f"$.{key}.{path}", message)
                         for path, message in validator(document[key])]
    problems += [engine.PlanProblem(path, message) for path, message in _registry_problems(document)]
    for check in _PLAN_CHECKS:
        problems += [engine.PlanProblem(path, message) for path, message in check(document)]
    return problems


_NODE_FIELDS = frozenset(f.name for f in dataclasses.fields(engine.Node)) - {"settings"}


def _registry_problems(document: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Task handlers, node settings, edge effects and condition signals that nothing registered knows."""
    found: list[tuple[str, str]] = []
    tasks, effects, signals = handlers.task_names(), handlers.effect_names(), handlers.signal_roots()
    for i, node in enumerate(_objects(document.get("nodes"))):
        task = node.get("task")
        if task is not None and task not in tasks:
            found.append((f"$.nodes[{i}].task", f"unknown task handler {task!r}; known: {', '.join(sorted(tasks))}"))
            continue
        allowed = handlers.node_settings(str(node.get("type")), task)
        found += [(f"$.nodes[{i}].{key}", "unknown key") for key in node if key not in _NODE_FIELDS and key not in allowed]
    for i, edge in enumerate(_objects(document.get("edges"))):
        effect = edge.get("effect")
        if effect is not None and effect not in effects:
            found.append((f"$.edges[{i}].effect", f"unknown effect {effect!r}; known: {', '.join(sorted(effects)) or 'none'}"))
        for path, condition in engine.iter_conditions(edge.get("conditions"), f"$.edges[{i}].conditions"):
            key = condition.get("key")
            if isinstance(key, str) and key.split(".")[0] not in signals:
                found.append((f"{path}.key", f"unknown signal {key.split('.')[0]!r}; known: {', '.join(sorted(signals))}"))
    return found


def _objects(items: Any) -> list[Mapping[str, Any]]:
    return [item if isinstance(item, Mapping) else {} for item in items] if isinstance(items, list) else []



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
