"""/readyz names what is down to everyone, but why (hosts, ports, driver messages) only to staff.

The checks really fail: the broker points at a closed port, and the database check is given
a PostgreSQL connection to a closed port (the test database itself stays untouched).
"""

from __future__ import annotations

import json
import logging

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.backends.postgresql.base import DatabaseWrapper
from django.test import Client
from rest_framework.authtoken.models import Token

from config import health

pytestmark = pytest.mark.django_db

CLOSED = "127.0.0.1:1"  # nothing listens on port 1
# Text a failed connection's message carries and an anonymous body must not.
LEAKS = ("127.0.0.1", "port 1", ":1", "refused", "Error", "connect")


@pytest.fixture
def database_down(monkeypatch):  # noqa: ANN001, ANN201
    """The readiness check's database is a PostgreSQL server on a closed port."""
    settings_dict = {**connection.settings_dict, "ENGINE": "django.db.backends.postgresql", "NAME": "concierge",
                     "USER": "concierge", "PASSWORD": "secret", "HOST": "127.0.0.1", "PORT": "1",
                     "OPTIONS": {"connect_timeout": 2}, "TEST": {}}
    unreachable = DatabaseWrapper(settings_dict, alias="readyz-unreachable")
    monkeypatch.setattr(health, "connection", unreachable)
    yield unreachable
    unreachable.close()


@pytest.fixture
def broker_down(settings):  # noqa: ANN001, ANN201
    settings.CELERY_BROKER_URL = f"redis://{CLOSED}/0"


def _staff(username: str = "readyz-staff"):  # noqa: ANN202
    return get_user_model().objects.create_user(username, password="x", is_staff=True)


def _assert_no_detail(response) -> None:  # noqa: ANN001
    text = response.content.decode()
    assert not [leak for leak in LEAKS if leak in text], text


def test_an_anonymous_caller_learns_only_that_the_database_is_down(database_down) -> None:  # noqa: ANN001
    response = Client().get("/readyz")
    assert response.status_code == 503
    assert response.json() == {"status": "down", "checks": {"database": "down"}}
    _assert_no_detail(response)


def test_an_anonymous_caller_learns_only_that_the_broker_is_down(broker_down) -> None:  # noqa: ANN001
    response = Client().get("/readyz")
    assert response.status_code == 503
    assert response.json() == {"status": "down", "checks": {"database": "ok", "broker": "down"}}
    _assert_no_detail(response)


def test_a_signed_in_person_who_is_not_staff_gets_no_detail(database_down, broker_down) -> None:  # noqa: ANN001
    client = Client()
    client.force_login(get_user_model().objects.create_user("readyz-person", password="x"))
    response = client.get("/readyz")
    assert response.json() == {"status": "down", "checks": {"database": "down", "broker": "down"}}
    _assert_no_detail(response)


def test_staff_signed_in_see_why_each_check_failed(database_down, broker_down) -> None:  # noqa: ANN001
    client = Client()
    client.force_login(_staff())
    body = client.get("/readyz").json()
    assert body["checks"] == {"database": "down", "broker": "down"}
    assert "127.0.0.1" in body["errors"]["database"] and "OperationalError" in body["errors"]["database"]
    assert CLOSED in body["errors"]["broker"]


def test_staff_with_an_api_token_see_the_detail_too(broker_down) -> None:  # noqa: ANN001
    token = Token.objects.create(user=_staff())
    body = Client().get("/readyz", HTTP_AUTHORIZATION=f"Token {token.key}").json()
    assert CLOSED in body["errors"]["broker"]


def test_a_wrong_token_is_no_way_in(broker_down) -> None:  # noqa: ANN001
    response = Client().get("/readyz", HTTP_AUTHORIZATION="Token not-a-token")
    assert response.status_code == 503 and "errors" not in response.json()
    _assert_no_detail(response)


def test_the_detail_goes_to_the_log_whoever_asks(database_down, caplog) -> None:  # noqa: ANN001
    with caplog.at_level(logging.WARNING, logger="config.health"):
        Client().get("/readyz")
    logged = " ".join(record.getMessage() for record in caplog.records)
    assert "database" in logged and "127.0.0.1" in logged


def test_the_body_is_still_json_when_nothing_is_down(settings) -> None:  # noqa: ANN001
    settings.CELERY_BROKER_URL = ""
    client = Client()
    client.force_login(_staff())
    assert json.loads(client.get("/readyz").content) == {"status": "ok", "checks": {"database": "ok"}}
