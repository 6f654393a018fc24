"""Celery tasks of the conversations app (ids in, one service call, safe to repeat)."""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, autoretry_for=(OperationalError,),
             retry_backoff=True, retry_backoff_max=60, max_retries=5)
def process_turn(self, message_id: int) -> bool:  # noqa: ANN001
    """Run the turn a page queued (context engine, tools, the model call)."""
    from .services import conversation_turn_process

    return conversation_turn_process(message_id)
