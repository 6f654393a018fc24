"""Celery tasks for billing, and the only billing module that names Celery."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from conversations.knowledge.tasks import enqueue


@shared_task(name="billing.sync_rule_explanations", acks_late=True, ignore_result=True)
def sync_rule_explanations(rule_code: str) -> dict[str, Any]:
    """Regenerate the knowledge explanation of every version of one billing rule."""
    from .knowledge import knowledge_rule_explanations_sync

    report = knowledge_rule_explanations_sync(rule_codes=[rule_code])
    return {"changed": report.changed, "unchanged": report.unchanged}


def queue_rule_explanations(rule_code: str) -> None:
    """Regenerate a rule's explanations in a worker (here, when tasks run inline)."""
    enqueue(sync_rule_explanations, rule_code)
