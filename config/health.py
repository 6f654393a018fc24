"""Readiness: can this process serve? The database answers a trivial query, and the broker
(when one is configured) accepts a connection within READYZ_BROKER_TIMEOUT seconds.

Anyone may ask which check is down; why (a driver's message, naming hosts and ports) is
logged, and shown only to staff (signed in, or with a staff user's API token).

`/healthz` (conversations.views.health) stays a liveness check that touches nothing.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from rest_framework.authentication import get_authorization_header
from rest_framework.authtoken.models import Token

logger = logging.getLogger(__name__)


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


def _is_staff(request: HttpRequest) -> bool:
    """Whether the caller is staff, by session or by `Authorization: Token <key>`."""
    try:
        if request.user.is_active and request.user.is_staff:
            return True
        words = get_authorization_header(request).split()
        if len(words) != 2 or words[0].lower() != b"token":
            return False
        token = Token.objects.select_related("user").filter(key=words[1].decode("latin-1")).first()
    except DatabaseError:  # the session or token lives in the database this probe may find down
        return False
    return bool(token and token.user.is_active and token.user.is_staff)


@never_cache
@require_GET
def ready(request: HttpRequest) -> JsonResponse:
    """200 when every dependency answers, 503 naming each one that does not."""
    checks = {"database": _database()}
    if settings.CELERY_BROKER_URL:
        checks["broker"] = _broker()
    down = {name: error for name, error in checks.items() if error}
    body = {"status": "down" if down else "ok", "checks": {name: ("down" if error else "ok") for name, error in checks.items()}}
    for name, error in down.items():
        logger.warning("readyz: %s is down: %s", name, error)
    if down and _is_staff(request):
        body["errors"] = down
    return JsonResponse(body, status=503 if down else 200)
