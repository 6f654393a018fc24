"""Signed webhooks: domain events become deliveries, sent by a task with retries.

The body is JSON; the signature is HMAC-SHA256 over "<timestamp>.<body>" with the
endpoint's secret, sent as `X-Concierge-Signature: t=<timestamp>,v1=<hex>` (receivers
recompute it and reject old timestamps). Every attempt is logged on the delivery.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
import urllib.error
import urllib.request
import uuid
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from .access import is_supervisor
from .models import Review, Run, WebhookDelivery, WebhookEndpoint

MAX_ATTEMPTS = 6
TIMEOUT_SECONDS = 5.0


def new_secret() -> str:
    return secrets.token_urlsafe(32)


def sign(secret: str, timestamp: int, body: bytes) -> str:
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={mac}"


def verify(secret: str, header: str, body: bytes, *, tolerance: int = 300, now: int | None = None) -> bool:
    """What a receiver does: recompute the signature and check the timestamp is fresh."""
    try:
        parts = dict(item.split("=", 1) for item in header.split(","))
        timestamp = int(parts["t"])
    except (ValueError, KeyError):
        return False
    if abs((now or int(time.time())) - timestamp) > tolerance:
        return False
    return hmac.compare_digest(sign(secret, timestamp, body), header)


def backoff(attempt: int) -> int:
    """Seconds before the next attempt: 2, 4, 8 ... capped at ten minutes."""
    return min(2 ** attempt, 600)


def _owner_of(subject: Any) -> int | None:
    if isinstance(subject, Review):
        return subject.run.owner_id if subject.run_id else None
    if isinstance(subject, Run):
        return subject.owner_id
    if isinstance(subject, dict):
        return subject.get("owner_id")
    return getattr(subject, "owner_id", None)


def _payload(event: str, subject: Any) -> dict[str, Any]:
    if isinstance(subject, Review):
        conversation = getattr(subject.run, "conversation", None) if subject.run_id else None
        data = {"review_id": subject.pk, "kind": subject.kind, "status": subject.status, "workflow_id": subject.workflow_id,
                "step_id": subject.step_id, "recommended_option_id": subject.recommended_option_id,
                "decided_option_id": subject.decided_option_id or None, "reason": subject.reason or None,
                "subject": subject.subject, "conversation_id": conversation.pk if conversation else subject.subject.get("conversation_id")}
    elif isinstance(subject, Run):
        conversation = getattr(subject, "conversation", None)
        data = {"run_id": subject.pk, "workflow_id": subject.plan.workflow_id, "status": subject.status,
                "current_step": subject.current_step, "conversation_id": conversation.pk if conversation else None}
    else:
        data = {k: v for k, v in dict(subject).items() if k != "owner_id"}
    return {"event": event, "created_at": timezone.now().isoformat(), "data": data}


def webhook_emit(event: str, subject: Any) -> list[WebhookDelivery]:
    """Create one delivery per interested endpoint and queue them after commit."""
    from .tasks import deliver_webhook

    owner_id = _owner_of(subject)
    payload = _payload(event, subject)
    event_id = uuid.uuid4().hex
    deliveries = []
    for endpoint in WebhookEndpoint.objects.filter(active=True).select_related("owner"):
        if not endpoint.wants(event) or (endpoint.owner_id != owner_id and not is_supervisor(endpoint.owner)):
            continue
        deliveries.append(WebhookDelivery.objects.create(endpoint=endpoint, event=event, event_id=event_id, payload=payload))
    for delivery in deliveries:
        transaction.on_commit(lambda pk=delivery.pk: deliver_webhook.delay(pk))
    return deliveries


def _post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int | None, str]:
    """POST once; (status code, error text) where an empty error means delivered."""
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:  # noqa: S310 (integrator URLs)
            return response.status, ""
    except urllib.error.HTTPError as exc:
        return exc.code, f"HTTP {exc.code}: {exc.read(200).decode(errors='replace')}"
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        return None, f"{type(exc).__name__}: {exc}"[:500]


def webhook_attempt(delivery_id: int) -> WebhookDelivery:
    """Send a pending delivery once and record the outcome; a delivered one is never resent."""
    with transaction.atomic():
        delivery = WebhookDelivery.objects.select_for_update().select_related("endpoint").get(pk=delivery_id)
        if delivery.status != WebhookDelivery.Status.PENDING:
            return delivery
        delivery.attempts += 1
        attempt = delivery.attempts
        delivery.save(update_fields=["attempts"])
    body = json.dumps({**delivery.payload, "delivery_id": delivery.pk, "event_id": delivery.event_id}, ensure_ascii=False).encode()
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "Concierge-Webhooks/1",
        "X-Concierge-Event": delivery.event,
        "X-Concierge-Delivery": str(delivery.pk),
        "X-Concierge-Signature": sign(delivery.endpoint.secret, int(time.time()), body),
    }
    code, error = _post(delivery.endpoint.url, body, headers)
    with transaction.atomic():
        delivery = WebhookDelivery.objects.select_for_update().get(pk=delivery_id)
        delivery.last_status_code, delivery.last_error = code, error
        if not error:
            delivery.status, delivery.delivered_at, delivery.next_attempt_at = WebhookDelivery.Status.SUCCEEDED, timezone.now(), None
        elif attempt >= MAX_ATTEMPTS:
            delivery.status, delivery.next_attempt_at = WebhookDelivery.Status.FAILED, None
        else:
            delivery.next_attempt_at = timezone.now() + timedelta(seconds=backoff(attempt))
        delivery.save(update_fields=["status", "last_status_code", "last_error", "delivered_at", "next_attempt_at"])
    return delivery
