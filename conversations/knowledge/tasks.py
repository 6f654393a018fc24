"""Celery tasks for knowledge, and the only knowledge module that names Celery.

Services queue work through `queue_ingestion`; a task's body imports the service it calls
when it runs, so this module never imports the services back at load time.
"""

from __future__ import annotations

from typing import Any

from celery import Task, current_app, shared_task
from django.db import transaction


@shared_task(name="knowledge.ingest_sources", acks_late=True, ignore_result=True)
def ingest_sources(source_pks: list[int]) -> dict[str, Any]:
    """Chunk and embed staged sources; idempotent: sources already done are skipped."""
    from .services.ingestion import knowledge_sources_process

    return knowledge_sources_process(source_pks=[int(pk) for pk in source_pks])


def queue_ingestion(source_pks: list[int]) -> None:
    """After the current transaction commits, chunk and embed these staged sources in a worker."""
    pks = [int(pk) for pk in source_pks]
    transaction.on_commit(lambda: enqueue(ingest_sources, pks))


def enqueue(task: Task, *args: Any) -> None:
    """Send a task to the workers, or run it here when tasks are eager (no broker configured)."""
    if current_app.conf.task_always_eager:
        # apply(), not delay(): eager delay() still builds a broker producer it never uses.
        task.apply(args=args, throw=True)
    else:
        task.delay(*args)
