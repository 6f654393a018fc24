"""API throttles: DRF's own classes, with rates read when a request comes (not at import).

DRF binds `THROTTLE_RATES` when its module is imported; reading the rate per request lets a
changed `REST_FRAMEWORK` setting (tests, a reload) take effect. Counters live in the default
cache, so several web processes share a limit only when that cache is shared (Redis).

The per-person budgets for turns and new conversations apply to the chat pages too (plain
Django views): `page_throttle_wait` asks the same throttle, so the page and the API share one
count per person.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rest_framework import throttling
from rest_framework.permissions import SAFE_METHODS
from rest_framework.settings import api_settings

if TYPE_CHECKING:  # rest_framework.views imports this module through DEFAULT_THROTTLE_CLASSES
    from django.http import HttpRequest
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


class _WritesOnly:
    """Counts only writes: reading a transcript or a list costs a person nothing."""

    def allow_request(self, request: Request | HttpRequest, view: APIView | None) -> bool:
        if request.method in SAFE_METHODS:
            return True
        return super().allow_request(request, view)  # type: ignore[misc]


class TurnRateThrottle(_WritesOnly, _CurrentRate, throttling.UserRateThrottle):
    """Messages one person sends, over the API and the chat page alike (`turns`)."""

    scope = "turns"


class ConversationRateThrottle(_WritesOnly, _CurrentRate, throttling.UserRateThrottle):
    """Conversations one person starts, over the API and the start page alike (`conversations`)."""

    scope = "conversations"


def page_throttle_wait(request: HttpRequest, throttle_class: type[throttling.SimpleRateThrottle]) -> float | None:
    """For a page (a plain Django view): None when the throttle lets the request through (and
    counts it), else the seconds until it would. DRF's throttles read only the user, the method
    and the address, which a Django request has as a DRF one does; no view is involved."""
    throttle = throttle_class()
    if throttle.allow_request(request, None):
        return None
    return throttle.wait() or 1.0
