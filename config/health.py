"""Readiness: can this process serve? The database answers a trivial query, and the broker
(when one is configured) accepts a connection within READYZ_BROKER_TIMEOUT seconds.

`/healthz` (conversations.views.health) stays a liveness check that touches nothing.
"""

from __future__ import annotations

from django.conf import settings
from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET


def _database() -> str | None:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError as error:
        return f"{type(error).__name__}: {error}"[:300]
    return None


def _broker() -> str | None:
    from kombu import Connection

    try:
        with Connection(settings.CELERY_BROKER_URL, connect_timeout=settings.READYZ_BROKER_TIMEOUT) as broker:
            broker.ensure_connection(max_retries=0, timeout=settings.READYZ_BROKER_TIMEOUT)
    except Exception as error:  # noqa: BLE001 - any transport error means "down": kombu, redis, socket
        return f"{type(error).__name__}: {error}"[:300]
    return None


@never_cache
@require_GET
def ready(request: HttpRequest) -> JsonResponse:
    """200 when every dependency answers, 503 naming each one that does not."""
    checks = {"database": _database()}
    if settings.CELERY_BROKER_URL:
        checks["broker"] = _broker()
    down = {name: error for name, error in checks.items() if error}
    body = {"status": "down" if down else "ok", "checks": {name: ("down" if error else "ok") for name, error in checks.items()}}
    if down:
        body["errors"] = down
    return JsonResponse(body, status=503 if down else 200)
