"""Celery tasks for knowledge: take ids, call one service (inline when no broker is set)."""

from __future__ import annotations

from typing import Any

from celery import Task, current_app, shared_task


@shared_task(name="knowledge.ingest_sources", acks_late=True, ignore_result=True)
def ingest_sources(source_pks: list[int]) -> dict[str, Any]:
    """Chunk and embed staged sources; idempotent: sources already done are skipped."""
    from .services import knowledge_sources_process

    return knowledge_sources_process(source_pks=[int(pk) for pk in source_pks])


@shared_task(name="knowledge.sync_rule_explanations", acks_late=True, ignore_result=True)
def sync_rule_explanations(rule_code: str) -> dict[str, Any]:
    """Regenerate the explanation sources of every version of one billing rule."""
    from .derived import knowledge_rule_explanations_sync

    report = knowledge_rule_explanations_sync(rule_codes=[rule_code])
    return {"changed": report.changed, "unchanged": report.unchanged}


def enqueue(task: Task, *args: Any) -> None:
    """Send a task to the workers, or run it here when tasks are eager (no broker configured)."""
    if current_app.conf.task_always_eager:
        # apply(), not delay(): eager delay() still builds a broker producer it never uses.
        task.apply(args=args, throw=True)
    else:
        task.delay(*args)
