"""Fuzz the OpenAPI schema with schemathesis: no 500s, and every error in the SPEC's shape."""

from __future__ import annotations

import io

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from config.wsgi import application

schema = schemathesis.openapi.from_wsgi("/api/schema/", application)


@pytest.fixture
def token(transactional_db):  # noqa: ANN001, ANN201
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from rest_framework.authtoken.models import Token

    call_command("seed_demo", stdout=io.StringIO())
    user = get_user_model().objects.get(username="alice")
    return Token.objects.get_or_create(user=user)[0].key


def _error_shape(response) -> None:  # noqa: ANN001
    if response.status_code < 400 or not response.headers.get("Content-Type", [""])[0].startswith("application/json"):
        return
    body = response.json()
    assert set(body) == {"error"} and {"code", "message", "details"} <= set(body["error"]), body


@pytest.mark.django_db(transaction=True)  # the WSGI app closes connections after each request
@schema.parametrize()
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_never_500s_and_errors_keep_their_shape(case, token) -> None:  # noqa: ANN001
    response = case.call(headers={"Authorization": f"Token {token}"})
    assert response.status_code < 500, (case.method, case.path, response.status_code, response.text[:300])
    _error_shape(response)
