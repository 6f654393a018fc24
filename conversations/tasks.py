"""Celery tasks of the conversations app (ids in, one service call, safe to repeat)."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings
from django.db import OperationalError


# The soft limit lets a model still writing give way to the rules reply (the model phase keeps it
# on any error); the hard one, 30 s later, frees the process. Both sit well inside the broker's
# visibility timeout, so Redis never hands a running turn to a second worker.
@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, autoretry_for=(OperationalError,),
             retry_backoff=True, retry_backoff_max=60, max_retries=5,
             soft_time_limit=settings.CONCIERGE_TURN_TIME_LIMIT, time_limit=settings.CONCIERGE_TURN_TIME_LIMIT + 30)
def process_turn(self, message_id: int) -> bool:  # noqa: ANN001
    """Run the turn a page queued (context engine, tools, the model call)."""
    from .services import conversation_turn_process

    return conversation_turn_process(message_id)


@shared_task(name="conversations.requeue_overdue_turns", acks_late=True, ignore_result=True)
def requeue_overdue_turns() -> dict[str, list[int]]:
    """Beat's sweep: queue again, once, the turns whose task was lost; fail those lost twice."""
    from .services import turn_overdue_sweep

    swept = turn_overdue_sweep()
    return {"requeued": list(swept.requeued), "failed": list(swept.failed)}
