"""The authorization matrix: who may read or change what, endpoint by endpoint."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from workflows.models import Review

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(api, other_api, supervisor_api):  # noqa: ANN001, ANN201
    call_command("seed_demo", stdout=io.StringIO())
    cid = api.post("/api/v1/conversations", {"workflow_id": "parking_help_desk"}, format="json").json()["id"]
    api.post(f"/api/v1/conversations/{cid}/messages", {"text": "verify order SCN-020"}, format="json")
    hook = api.post("/api/v1/webhooks", {"url": "http://127.0.0.1:9/hook"}, format="json").json()["id"]
    return {"owner": api, "stranger": other_api, "supervisor": supervisor_api, "anonymous": APIClient(),
            "cid": cid, "review": Review.objects.get().pk, "hook": hook}


# (method, path, body, expected status per role)
MATRIX = [
    ("get", "/api/v1/conversations/{cid}", None, {"owner": 200, "stranger": 404, "supervisor": 200, "anonymous": 401}),
    ("get", "/api/v1/conversations/{cid}/messages", None, {"owner": 200, "stranger": 404, "supervisor": 200, "anonymous": 401}),
    ("get", "/api/v1/conversations/{cid}/audit", None, {"owner": 200, "stranger": 404, "supervisor": 200, "anonymous": 401}),
    ("post", "/api/v1/conversations/{cid}/messages", {"text": "hello"}, {"stranger": 404, "anonymous": 401}),
    ("post", "/api/v1/conversations/{cid}/choose", {"option_id": "adjust_to_simulated"}, {"owner": 409, "stranger": 404, "anonymous": 401}),
    ("get", "/api/v1/reviews?status=pending", None, {"owner": 403, "stranger": 403, "supervisor": 200, "anonymous": 401}),
    ("post", "/api/v1/reviews/{review}/decision", {"outcome": "approve", "reason": "x"}, {"owner": 403, "stranger": 403, "anonymous": 401}),
    ("get", "/api/v1/audit-events", None, {"owner": 403, "stranger": 403, "supervisor": 200, "anonymous": 401}),
    ("get", "/api/v1/webhooks/{hook}/deliveries", None, {"owner": 200, "stranger": 404, "supervisor": 404, "anonymous": 401}),
    ("delete", "/api/v1/webhooks/{hook}", None, {"stranger": 404, "supervisor": 404, "anonymous": 401}),
    ("post", "/api/v1/knowledge/sources", {"source_id": "x", "title": "x", "doc_type": "faq", "content": "x"}, {"owner": 403, "anonymous": 401}),
    ("get", "/api/v1/workflow-plans", None, {"owner": 200, "anonymous": 401}),
]


@pytest.mark.parametrize(("method", "path", "body", "expected"), MATRIX, ids=[f"{m} {p}" for m, p, _, _ in MATRIX])
def test_authorization_matrix(world, method, path, body, expected) -> None:  # noqa: ANN001
    url = path.format(**world)
    for role, status in expected.items():
        client = world[role]
        response = getattr(client, method)(url, body, format="json") if body is not None else getattr(client, method)(url)
        assert response.status_code == status, (role, url, response.content[:200])
        if status >= 400:
            assert set(response.json()["error"]) == {"code", "message", "details"}


def test_lists_show_only_your_own(world) -> None:  # noqa: ANN001
    assert world["stranger"].get("/api/v1/conversations").json()["count"] == 0
    assert world["owner"].get("/api/v1/conversations").json()["count"] == 1
    assert world["supervisor"].get("/api/v1/conversations").json()["count"] == 1
    assert world["stranger"].get("/api/v1/webhooks").json()["count"] == 0
