"""Signed webhooks: domain events become deliveries, sent by a task with retries.

The body is JSON; the signature is HMAC-SHA256 over "<timestamp>.<body>" with the
endpoint's secret, sent as `X-Concierge-Signature: t=<timestamp>,v1=<hex>` (receivers
recompute it and reject old timestamps). Every attempt is logged on the delivery.

Targets must be public addresses (unless WEBHOOK_ALLOW_PRIVATE): a URL is checked when it
is registered and again on every delivery, where its name is resolved, every address is
checked, and the connection goes to a checked address (so a name that re-resolves to an
internal address between the check and the connection gains nothing).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import secrets
import socket
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import urllib3
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from config.errors import ApplicationError

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


IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# 64:ff9b::/96 (NAT64) carries an IPv4 address in its last 32 bits, like ::ffff:0:0/96 does.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


class WebhookTargetRefused(ApplicationError):
    """A webhook URL whose scheme or addresses the policy refuses."""

    code = "webhook_target_refused"


@dataclass(frozen=True)
class WebhookTarget:
    """A checked URL: where to connect, and the name the request and TLS must carry."""

    scheme: str
    host: str
    port: int
    path: str
    host_header: str
    addresses: tuple[IPAddress, ...]


def address_refusal(address: IPAddress) -> str | None:
    """Why an address is not a public one (None when it is); embedded IPv4 addresses count too."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:  # ::ffff:a.b.c.d is a.b.c.d, whatever ::/8 is
            reason = address_refusal(address.ipv4_mapped)
            return f"{reason} (embedded in {address})" if reason else None
        embedded = address.sixtofour
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is None and address.teredo:
            embedded = address.teredo[1]
        if embedded is not None:
            reason = address_refusal(embedded)
            if reason:
                return f"{reason} (embedded in {address})"
    for reason, hit in (("unspecified", address.is_unspecified), ("loopback", address.is_loopback),
                        ("link-local", address.is_link_local), ("multicast", address.is_multicast),
                        ("reserved", address.is_reserved), ("private", address.is_private),
                        ("not globally routable", not address.is_global)):
        if hit:
            return reason
    return None


def _resolve(host: str, port: int) -> tuple[IPAddress, ...]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise WebhookTargetRefused(f"The webhook host {host} does not resolve.", code="webhook_target_unresolvable",
                                   details={"host": host, "reason": str(error)}) from error
    addresses: list[IPAddress] = []
    for info in infos:
        address = ipaddress.ip_address(info[4][0].split("%", 1)[0])  # drop an IPv6 zone
        if address not in addresses:
            addresses.append(address)
    return tuple(addresses)


def webhook_target_check(url: str) -> WebhookTarget:
    """Resolve a webhook URL and check every address it resolves to; refuse with the reason."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise WebhookTargetRefused("A webhook URL must be http or https with a host.", details={"url": url, "reason": "scheme"})
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as error:
        raise WebhookTargetRefused("The webhook URL's port is not valid.", details={"url": url, "reason": "port"}) from error
    addresses = _resolve(parts.hostname, port)
    if not settings.WEBHOOK_ALLOW_PRIVATE:
        refused = {str(a): reason for a in addresses if (reason := address_refusal(a))}
        if refused:
            listed = ", ".join(f"{a} ({r})" for a, r in refused.items())
            raise WebhookTargetRefused(
                f"Webhook targets must be public addresses; {parts.hostname} resolves to {listed}.",
                details={"url": url, "host": parts.hostname, "refused": refused},
            )
    host_header = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    if parts.port:
        host_header += f":{parts.port}"
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return WebhookTarget(parts.scheme, parts.hostname, port, path, host_header, addresses)


def _post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int | None, str, bool]:
    """POST once to a checked address; (status code, error text, refused by the address policy)."""
    try:
        target = webhook_target_check(url)
    except WebhookTargetRefused as refusal:  # the address policy is final; a name that does not resolve may yet
        policy = refusal.code == WebhookTargetRefused.code
        return None, (f"refused: {refusal.message}" if policy else refusal.message)[:500], policy
    timeout = urllib3.Timeout(total=TIMEOUT_SECONDS)
    error = ""
    for address in target.addresses:  # the checked addresses only, in the resolver's order
        if target.scheme == "https":  # TLS names and verifies the host, not the address
            pool = urllib3.HTTPSConnectionPool(str(address), target.port, timeout=timeout, retries=False,
                                               server_hostname=target.host, assert_hostname=target.host)
        else:
            pool = urllib3.HTTPConnectionPool(str(address), target.port, timeout=timeout, retries=False)
        try:
            with pool:
                response = pool.urlopen("POST", target.path, body=body, headers={**headers, "Host": target.host_header},
                                        redirect=False, preload_content=False)
                try:
                    if 200 <= response.status < 300:
                        return response.status, "", False
                    return response.status, f"HTTP {response.status}: {response.read(200).decode(errors='replace')}", False
                finally:
                    response.release_conn()
        except urllib3.exceptions.NewConnectionError as exc:
            error = f"{type(exc).__name__}: {exc}"[:500]  # try the next checked address
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            return None, f"{type(exc).__name__}: {exc}"[:500], False
    return None, error, False


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
    code, error, refused = _post(delivery.endpoint.url, body, headers)
    with transaction.atomic():
        delivery = WebhookDelivery.objects.select_for_update().get(pk=delivery_id)
        delivery.last_status_code, delivery.last_error = code, error
        if not error:
            delivery.status, delivery.delivered_at, delivery.next_attempt_at = WebhookDelivery.Status.SUCCEEDED, timezone.now(), None
        elif refused or attempt >= MAX_ATTEMPTS:  # a refused address is policy, not a passing fault
            delivery.status, delivery.next_attempt_at = WebhookDelivery.Status.FAILED, None
        else:
            delivery.next_attempt_at = timezone.now() + timedelta(seconds=backoff(attempt))
        delivery.save(update_fields=["status", "last_status_code", "last_error", "delivered_at", "next_attempt_at"])
    return delivery
