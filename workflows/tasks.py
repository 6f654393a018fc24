"""Celery tasks of the workflows app: take ids, call one service, safe to run twice."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from .models import WebhookDelivery


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=None)
def deliver_webhook(self, delivery_id: int) -> str:  # noqa: ANN001
    """Send one webhook delivery; a failure is retried with exponential backoff."""
    from .webhooks import backoff, webhook_attempt

    delivery = webhook_attempt(delivery_id)
    if delivery.status == WebhookDelivery.Status.PENDING and not settings.CELERY_TASK_ALWAYS_EAGER:
        # Inline mode (no broker) does not block a request on retries; `retry_webhooks` resends later.
        raise self.retry(countdown=backoff(delivery.attempts))
    return delivery.status


@shared_task(acks_late=True, reject_on_worker_lost=True)
def propagate_staleness(run_id: int) -> list[str]:
    """Record which documents of a run became stale after an upstream document changed."""
    from .audit import audit_record
    from .engine import RunState, stale_documents
    from .models import Run

    run = Run.objects.filter(pk=run_id).first()
    if run is None:
        return []
    stale = stale_documents(RunState.from_dict(run.state).documents)
    if stale:
        audit_record("documents_stale", run=run, actor_label="engine", payload={"stale": stale})
    return sorted(stale)
