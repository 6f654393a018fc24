"""API throttles: DRF's own classes, with rates read when a request comes (not at import).

DRF binds `THROTTLE_RATES` when its module is imported; reading the rate per request lets a
changed `REST_FRAMEWORK` setting (tests, a reload) take effect. Counters live in the default
cache, so several web processes share a limit only when `CACHE_URL` points at a shared cache.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rest_framework import throttling
from rest_framework.permissions import SAFE_METHODS
from rest_framework.settings import api_settings

if TYPE_CHECKING:  # rest_framework.views imports this module through DEFAULT_THROTTLE_CLASSES
    from rest_framework.request import Request
    from rest_framework.views import APIView

# Writes that cost far more than a turn: validating a whole plan, chunking and embedding
# knowledge. URL names (config/urls.py, conversations/knowledge/urls.py) keep the list here.
EXPENSIVE_WRITES = frozenset({"workflow-plans", "knowledge-sources", "knowledge-chunks-batch"})


class _CurrentRate:
    scope: str

    def get_rate(self) -> str | None:
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)


class AnonRateThrottle(_CurrentRate, throttling.AnonRateThrottle):
    """Requests without credentials, per client address (`anon`)."""


class UserRateThrottle(_CurrentRate, throttling.UserRateThrottle):
    """Requests of one signed-in user or token, per user (`user`)."""


class ExpensiveRateThrottle(_CurrentRate, throttling.UserRateThrottle):
    """A stricter per-user budget for the expensive writes (`expensive`)."""

    scope = "expensive"

    def allow_request(self, request: Request, view: APIView) -> bool:
        match = request.resolver_match
        if request.method in SAFE_METHODS or match is None or match.url_name not in EXPENSIVE_WRITES:
            return True
        return super().allow_request(request, view)
