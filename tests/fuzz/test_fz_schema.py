"""Fuzz every operation of the OpenAPI schema with schemathesis, as each role.

Every built-in check runs (schemathesis' default set: not_a_server_error,
status_code_conformance, content_type_conformance, response_schema_conformance,
response_headers_conformance, positive_data_acceptance, negative_data_rejection,
missing_required_header, ignored_auth, unsupported_method, ...), plus the SPEC's error
shape on every JSON error. Deterministic (derandomized) and bounded per operation;
tests/fuzz/conftest.py prints the figures per role at the end of the run.
"""

from __future__ import annotations

import os

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.config import SchemathesisConfig

from config.wsgi import application

CONFIG = SchemathesisConfig.from_dict({
    # NUL is refused up front (PostgreSQL text cannot hold it): a documented 400, not data to accept.
    "generation": {"allow-x00": False},
    "checks": {
        # Requests the schema allows may still break a domain rule no JSON Schema can state (a
        # plan's graph, a rule payload's segments, exit before entry): those are 400s too.
        "positive_data_acceptance": {"expected-statuses": ["2xx", "400", "401", "403", "404", "409", "429"]},
    },
})
schema = schemathesis.openapi.from_wsgi("/api/schema/", application, config=CONFIG)

# FUZZ_MAX_EXAMPLES=200 for a deeper (slower) run; the default keeps the suite at well under a minute.
MAX_EXAMPLES = int(os.environ.get("FUZZ_MAX_EXAMPLES", "15"))
FUZZ_SETTINGS = settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


def _token_for(username: str, *, supervisor: bool = False, operator: bool = False) -> str:
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from workflows.demo import make_operator, make_supervisor

    user, _ = get_user_model().objects.get_or_create(username=username)
    if supervisor:
        make_supervisor(user)
    if operator:
        make_operator(user)
    return Token.objects.get_or_create(user=user)[0].key


@pytest.fixture(scope="module")
def person_token(committed_db):  # noqa: ANN001, ANN201
    return _token_for("fuzz-person")


@pytest.fixture(scope="module")
def operator_token(committed_db):  # noqa: ANN001, ANN201
    return _token_for("fuzz-operator", operator=True)


@pytest.fixture(scope="module")
def supervisor_token(committed_db):  # noqa: ANN001, ANN201
    return _token_for("fuzz-supervisor", supervisor=True)


def _error_shape(response) -> None:  # noqa: ANN001
    if response.status_code < 400 or not response.headers.get("Content-Type", [""])[0].startswith("application/json"):
        return
    body = response.json()
    assert set(body) == {"error"} and {"code", "message", "details"} <= set(body["error"]), body


def _run(role: str, case, token: str, figures: dict) -> None:  # noqa: ANN001
    figures["operations"].add(case.operation.label)
    figures["cases"] += 1
    headers = {"Authorization": f"Token {token}"}
    try:
        response = case.call(headers=headers)
        figures["5xx"] += response.status_code >= 500
        case.validate_response(response, headers=headers)
        _error_shape(response)
    except BaseException:
        figures["failures"] += 1
        raise


@schema.parametrize()
@FUZZ_SETTINGS
def test_api_as_a_person(case, person_token, fuzz_figures) -> None:  # noqa: ANN001
    _run("person", case, person_token, fuzz_figures["person"])


@schema.parametrize()
@FUZZ_SETTINGS
def test_api_as_a_supervisor(case, supervisor_token, fuzz_figures) -> None:  # noqa: ANN001
    _run("supervisor", case, supervisor_token, fuzz_figures["supervisor"])


@schema.parametrize()
@FUZZ_SETTINGS
def test_api_as_an_operator(case, operator_token, fuzz_figures) -> None:  # noqa: ANN001
    _run("operator", case, operator_token, fuzz_figures["operator"])
