"""/healthz says the process runs; /readyz says whether the database and the broker answer."""

from __future__ import annotations

import os
import time

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

BROKER = os.environ.get("CONCIERGE_TEST_BROKER_URL", "")


def test_ready_with_the_database_and_no_broker_configured(settings) -> None:  # noqa: ANN001
    settings.CELERY_BROKER_URL = ""
    response = Client().get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": "ok"}}
    assert "no-cache" in response["Cache-Control"]


def test_a_broker_that_does_not_answer_makes_it_not_ready(settings) -> None:  # noqa: ANN001
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    started = time.monotonic()
    response = Client().get("/readyz")
    assert time.monotonic() - started < 5
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "down" and body["checks"] == {"database": "ok", "broker": "down"}
    assert "errors" not in body  # why (hosts, ports) is for staff: tests/config/test_cf_readyz_detail.py
    assert Client().get("/healthz").status_code == 200  # liveness does not depend on it


@pytest.mark.skipif(not BROKER, reason="needs CONCIERGE_TEST_BROKER_URL (a Redis broker)")
def test_ready_with_the_broker_up(settings) -> None:  # noqa: ANN001
    settings.CELERY_BROKER_URL = BROKER
    response = Client().get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": "ok", "broker": "ok"}}
