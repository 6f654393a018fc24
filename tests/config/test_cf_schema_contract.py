"""The OpenAPI schema states what validation enforces: ids are positive 64-bit integers
(in paths, query filters and bodies alike), and a retrieval needs `query` or `query_embedding`.

Each fact is checked twice: in the generated schema, and against the API itself.
"""

from __future__ import annotations

import re

import pytest
from rest_framework.test import APIClient

from tests.support.helpers import client_for

ID_MAX = 2**63 - 1
ID_SCHEMA = {"type": "integer", "format": "int64", "minimum": 1, "maximum": ID_MAX}


@pytest.fixture(scope="module")
def openapi() -> dict:
    from drf_spectacular.generators import SchemaGenerator

    return SchemaGenerator().get_schema(request=None, public=True)


def _parameters(openapi: dict, where: str):  # noqa: ANN202
    for path, item in openapi["paths"].items():
        for method, operation in item.items():
            for parameter in operation.get("parameters", []):
                if parameter["in"] == where:
                    yield f"{method} {path}", parameter


def _component(openapi: dict, name: str) -> dict:
    return openapi["components"]["schemas"][name]


def test_every_integer_path_parameter_is_a_positive_64_bit_id(openapi: dict) -> None:
    integers = [(where, p) for where, p in _parameters(openapi, "path") if p["schema"].get("type") == "integer"]
    assert {p["name"] for _, p in integers} == {"conversation_id", "review_id", "endpoint_id"}
    for where, parameter in integers:
        assert parameter["schema"] == ID_SCHEMA, (where, parameter)


def test_the_id_filters_in_query_strings_say_the_same(openapi: dict) -> None:
    filters = {(where, p["name"]): p["schema"] for where, p in _parameters(openapi, "query") if p["name"].endswith("_id")
               and p["schema"].get("type") == "integer"}
    assert ("get /api/v1/audit-events", "run_id") in filters
    for where, schema in filters.items():
        assert schema == ID_SCHEMA, (where, schema)


def test_a_path_id_beyond_64_bits_or_below_1_is_a_400_as_the_schema_says(person) -> None:  # noqa: ANN001
    api = client_for(person)
    for path in (f"/api/v1/conversations/{ID_MAX + 1}", "/api/v1/conversations/0", f"/api/v1/reviews/{10**30}/decision"):
        response = api.get(path) if "decision" not in path else api.post(path, {}, format="json")
        assert response.status_code == 400, (path, response.content)
        assert response.json()["error"]["code"] == "validation_error"
    assert client_for(person).get(f"/api/v1/conversations/{ID_MAX}").status_code == 404  # in range: just not there


def test_the_retrieval_request_states_query_or_query_embedding(openapi: dict) -> None:
    request = _component(openapi, "RetrieveInRequest")
    assert "query_embedding" in request["description"] and "query" in request["description"]
    branches = request["anyOf"]
    assert {tuple(branch["required"]) for branch in branches} == {("query",), ("query_embedding",)}
    by_field = {branch["required"][0]: branch["properties"] for branch in branches}
    assert by_field["query_embedding"]["query_embedding"] == {"type": "array", "minItems": 1}
    assert re.search(by_field["query"]["query"]["pattern"], "parking") and not re.search(by_field["query"]["query"]["pattern"], " \t\n")
    assert "query_embedding" in request["properties"]["query"]["description"]
    assert "query" in request["properties"]["query_embedding"]["description"]


@pytest.mark.parametrize(("body", "accepted"), [
    ({"query": "parking fees"}, True),
    ({"query_embedding": [0.1] * 8, "mode": "vector"}, True),
    ({"query": "parking", "query_embedding": [0.1] * 8}, True),
    ({}, False),
    ({"query": "   "}, False),
    ({"query": "", "query_embedding": []}, False),
    ({"query_embedding": None}, False),
])
def test_the_api_applies_the_rule_the_schema_states(person, openapi: dict, body: dict, accepted: bool) -> None:  # noqa: ANN001
    request = _component(openapi, "RetrieveInRequest")
    assert _fits_any_branch(request["anyOf"], body) is accepted
    response = client_for(person).post("/api/v1/retrieve", body, format="json")
    if accepted:
        assert response.status_code != 400 or "query" not in response.json()["error"]["details"], response.content
    else:
        assert response.status_code == 400 and "query" in response.json()["error"]["details"], response.content


def _fits_any_branch(branches: list[dict], body: dict) -> bool:
    """Just enough JSON Schema for the branches above: required names, a pattern, a non-empty array."""
    def fits(branch: dict) -> bool:
        for name in branch["required"]:
            value, rule = body.get(name), branch["properties"][name]
            if "pattern" in rule and not (isinstance(value, str) and re.search(rule["pattern"], value)):
                return False
            if rule.get("type") == "array" and not (isinstance(value, list) and len(value) >= rule["minItems"]):
                return False
        return True
    return any(fits(branch) for branch in branches)


def test_the_schema_is_served_with_those_facts() -> None:
    text = APIClient().get("/api/schema/").content.decode()
    assert "format: int64" in text and "maximum: 9223372036854775807" in text and "anyOf:" in text
