"""API throttles: per user, per anonymous address, and the stricter budget for expensive writes."""

from __future__ import annotations

import json

import pytest
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured
from rest_framework.test import APIClient

from config.settings.base import throttle_rate

pytestmark = pytest.mark.django_db


@pytest.fixture
def rates(settings):  # noqa: ANN001, ANN201
    """Set the throttle rates for one test, with fresh counters."""
    cache.clear()

    def set_rates(**rates: str | None) -> None:
        base = {"user": "10000/s", "anon": "10000/s", "expensive": "10000/s"}
        settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {**base, **rates}}

    yield set_rates
    cache.clear()


def assert_throttled(response) -> None:  # noqa: ANN001
    assert response.status_code == 429
    error = json.loads(response.content)["error"]  # the schema view answers in its own JSON type
    assert error["code"] == "throttled" and "throttled" in error["message"].lower()
    wait = error["details"]["retry_after"]
    assert isinstance(wait, int) and 0 < wait <= 60
    assert response["Retry-After"] == str(wait)


def test_a_user_over_the_rate_gets_429_in_the_error_shape_and_others_carry_on(api, other_api, rates) -> None:  # noqa: ANN001
    rates(user="3/min")
    for _ in range(3):
        assert api.get("/api/v1/conversations").status_code == 200
    assert_throttled(api.get("/api/v1/conversations"))
    assert_throttled(api.post("/api/v1/conversations", {"workflow_id": "x"}, format="json"))  # every method counts
    assert other_api.get("/api/v1/conversations").status_code == 200  # per user, not global


def test_anonymous_clients_are_counted_per_address(rates) -> None:  # noqa: ANN001
    rates(anon="2/min")
    client = APIClient()
    for _ in range(2):
        assert client.get("/api/schema/?format=json", REMOTE_ADDR="192.0.2.10").status_code == 200
    assert_throttled(client.get("/api/schema/?format=json", REMOTE_ADDR="192.0.2.10"))
    assert client.get("/api/schema/?format=json", REMOTE_ADDR="192.0.2.11").status_code == 200


def test_expensive_writes_have_their_own_stricter_budget(supervisor_api, rates) -> None:  # noqa: ANN001
    rates(expensive="2/min")
    for _ in range(2):  # invalid bodies still cost: the throttle runs before the view
        assert supervisor_api.post("/api/v1/knowledge/sources", {}, format="json").status_code == 400
    assert_throttled(supervisor_api.post("/api/v1/knowledge/sources", {}, format="json"))
    assert_throttled(supervisor_api.post("/api/v1/workflow-plans", {}, format="json"))  # one budget for all of them
    # Reads and ordinary writes are not expensive.
    assert supervisor_api.get("/api/v1/workflow-plans").status_code == 200
    assert supervisor_api.post("/api/v1/retrieve", {"query": "parking"}, format="json").status_code == 200


def test_rates_are_read_from_the_environment_and_a_bad_one_stops_the_start() -> None:
    assert throttle_rate(" 500/s ", "THROTTLE_RATE_USER") == "500/s"
    assert throttle_rate("60/min", "THROTTLE_RATE_ANON") == "60/min"
    assert throttle_rate("off", "THROTTLE_RATE_EXPENSIVE") is None
    for bad in ("500", "0/s", "fast", "10/week", "-1/s"):
        with pytest.raises(ImproperlyConfigured, match="THROTTLE_RATE_USER"):
            throttle_rate(bad, "THROTTLE_RATE_USER")


def test_a_rate_turned_off_never_throttles(api, rates) -> None:  # noqa: ANN001
    rates(user=None)
    for _ in range(5):
        assert api.get("/api/v1/conversations").status_code == 200
