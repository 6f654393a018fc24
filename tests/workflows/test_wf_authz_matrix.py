"""The authorization matrix: who may read or change what, endpoint by endpoint.

Five callers: anonymous, a person who owns the conversation, another person, an operator
and a supervisor. Roles are checked before the body is read, so a refused caller gets 403
even for garbage, and a permitted one gets the body's 400.
"""

from __future__ import annotations

import io
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.urls import URLPattern, URLResolver, resolve
from rest_framework.test import APIClient

from billing.models import BillingRule, BillingRuleVersion
from config.urls import api_v1
from conversations.models import Message
from workflows.models import Review

pytestmark = pytest.mark.django_db

ROLES = ("anonymous", "owner", "stranger", "operator", "supervisor")


@pytest.fixture
def world(api, other_api, operator_api, supervisor_api):  # noqa: ANN001, ANN201
    call_command("seed_demo", stdout=io.StringIO())
    cid = api.post("/api/v1/conversations", {"workflow_id": "parking_help_desk"}, format="json").json()["id"]
    api.post(f"/api/v1/conversations/{cid}/messages", {"text": "verify order SCN-020"}, format="json")
    hook = api.post("/api/v1/webhooks", {"url": "http://127.0.0.1:9/hook"}, format="json").json()["id"]
    return {"owner": api, "stranger": other_api, "operator": operator_api, "supervisor": supervisor_api,
            "anonymous": APIClient(), "cid": cid, "review": Review.objects.get().pk, "hook": hook}


RULE = {"rule_code": "BJ-AUTHZ", "name": "Authz test", "scope": {"city_code": "110100", "lot_codes": ["BJ-001"]},
        "version": {"effective_from": "2026-01-01T00:00:00+08:00", "rule_payload": [
            {"name": "day", "type": "periodic", "time_window": {"start": "00:00", "end": "00:00"},
             "unit_minutes": 60, "unit_price": "5.00", "free_minutes": 0, "max_charge": "50.00"}]}}
ORDER = {"order_no": "AUTHZ-1", "plate_no": "京A00001", "city_code": "110100", "lot_code": "BJ-001",
         "entry_time": "2026-03-02T08:00:00+08:00", "exit_time": "2026-03-02T10:00:00+08:00", "total_amount": "10.00"}
STAY = {"entry_time": "2026-03-02T08:00:00+08:00", "exit_time": "2026-03-02T10:10:00+08:00"}
INVALID_PLAN = {"workflow_id": "X", "nodes": "not a list"}
SOURCE = {"source_id": "kb.authz", "title": "Authz", "doc_type": "faq", "content": "Night parking is free."}
GARBAGE = {"nonsense": True}
# Refused before the body is read: a person or another person, for what only operators may do.
PEOPLE_403 = {"owner": 403, "stranger": 403}

# (method, path, body, expected status per caller, in the order they are asked); every row
# names all five callers.
MATRIX = [
    # workflow plans: everyone reads; only supervisors upload, and a refused upload is never validated
    ("get", "/api/v1/workflow-plans", None, {"anonymous": 401, "owner": 200, "stranger": 200, "operator": 200, "supervisor": 200}),
    ("get", "/api/v1/workflow-plans/parking_help_desk", None, {"anonymous": 401, "owner": 200, "stranger": 200, "operator": 200, "supervisor": 200}),
    ("post", "/api/v1/workflow-plans", INVALID_PLAN, {"anonymous": 401, **PEOPLE_403, "operator": 403, "supervisor": 400}),
    # reviews and the audit export: supervisors only
    ("get", "/api/v1/reviews?status=pending", None, {"anonymous": 401, **PEOPLE_403, "operator": 403, "supervisor": 200}),
    ("get", "/api/v1/reviews/{review}", None, {"anonymous": 401, **PEOPLE_403, "operator": 403, "supervisor": 200}),
    ("post", "/api/v1/reviews/{review}/decision", {"outcome": "bogus"}, {"anonymous": 401, **PEOPLE_403, "operator": 403, "supervisor": 400}),
    ("get", "/api/v1/audit-events", None, {"anonymous": 401, **PEOPLE_403, "operator": 403, "supervisor": 200}),
    # webhooks: each caller's own
    ("get", "/api/v1/webhooks", None, {"anonymous": 401, "owner": 200, "stranger": 200, "operator": 200, "supervisor": 200}),
    ("post", "/api/v1/webhooks", {"url": "not a url"}, {"anonymous": 401, "owner": 400, "stranger": 400, "operator": 400, "supervisor": 400}),
    ("get", "/api/v1/webhooks/{hook}/deliveries", None, {"anonymous": 401, "owner": 200, "stranger": 404, "operator": 404, "supervisor": 404}),
    ("delete", "/api/v1/webhooks/{hook}", None, {"anonymous": 401, "stranger": 404, "operator": 404, "supervisor": 404, "owner": 204}),
    # conversations: the owner's; a supervisor reads every one but never posts in another's
    ("get", "/api/v1/conversations", None, {"anonymous": 401, "owner": 200, "stranger": 200, "operator": 200, "supervisor": 200}),
    ("post", "/api/v1/conversations", {"workflow_id": "permit_form"}, {"anonymous": 401, "owner": 201, "stranger": 201, "operator": 201, "supervisor": 201}),
    ("get", "/api/v1/conversations/{cid}", None, {"anonymous": 401, "owner": 200, "stranger": 404, "operator": 404, "supervisor": 200}),
    ("get", "/api/v1/conversations/{cid}/messages", None, {"anonymous": 401, "owner": 200, "stranger": 404, "operator": 404, "supervisor": 200}),
    ("get", "/api/v1/conversations/{cid}/audit", None, {"anonymous": 401, "owner": 200, "stranger": 404, "operator": 404, "supervisor": 200}),
    ("post", "/api/v1/conversations/{cid}/messages", {"text": "hello"}, {"anonymous": 401, "stranger": 404, "operator": 404, "supervisor": 403, "owner": 201}),
    # Only a supervisor costs a look at the owner; anyone else's garbage is a 400, as for a
    # conversation that does not exist, so it tells them nothing.
    ("post", "/api/v1/conversations/{cid}/messages", GARBAGE, {"anonymous": 401, "stranger": 400, "operator": 400, "supervisor": 403, "owner": 400}),
    ("post", "/api/v1/conversations/{cid}/choose", {"option_id": "adjust_to_simulated"}, {"anonymous": 401, "stranger": 404, "operator": 404, "supervisor": 403, "owner": 409}),
    # knowledge: operators and supervisors ingest; everyone retrieves
    ("post", "/api/v1/knowledge/sources", GARBAGE, {"anonymous": 401, **PEOPLE_403, "operator": 400, "supervisor": 400}),
    ("post", "/api/v1/knowledge/sources", SOURCE, {"anonymous": 401, **PEOPLE_403, "operator": 201, "supervisor": 200}),
    ("post", "/api/v1/knowledge/chunks/batch", {"source_id": "kb.none", "chunks": [{"text": "x"}]}, {"anonymous": 401, **PEOPLE_403, "operator": 404, "supervisor": 404}),
    ("post", "/api/v1/retrieve", {"query": "night parking"}, {"anonymous": 401, "owner": 200, "stranger": 200, "operator": 200, "supervisor": 200}),
    # billing: prices are public; rules change only by supervisors; orders, arrears and verification are the operator's
    ("get", "/api/v1/billing-rules", None, {"anonymous": 401, "owner": 200, "stranger": 200, "operator": 200, "supervisor": 200}),
    ("get", "/api/v1/billing-rules/SH-PD-DAY", None, {"anonymous": 401, "owner": 200, "stranger": 200, "operator": 200, "supervisor": 200}),
    ("post", "/api/v1/billing-rules/simulate", {"rule_code": "SH-PD-DAY", **STAY}, {"anonymous": 401, "owner": 200, "stranger": 200, "operator": 200, "supervisor": 200}),
    ("post", "/api/v1/billing-rules", GARBAGE, {"anonymous": 401, **PEOPLE_403, "operator": 403, "supervisor": 400}),
    ("post", "/api/v1/billing-rules", RULE, {"anonymous": 401, **PEOPLE_403, "operator": 403, "supervisor": 201}),
    ("post", "/api/v1/parking-orders", GARBAGE, {"anonymous": 401, **PEOPLE_403, "operator": 400, "supervisor": 400}),
    ("post", "/api/v1/parking-orders", ORDER, {"anonymous": 401, **PEOPLE_403, "operator": 201, "supervisor": 409}),
    ("get", "/api/v1/parking-orders/SCN-020", None, {"anonymous": 401, **PEOPLE_403, "operator": 200, "supervisor": 200}),
    ("get", "/api/v1/arrears-orders?plate_no=沪B88888", None, {"anonymous": 401, **PEOPLE_403, "operator": 200, "supervisor": 200}),
    ("post", "/api/v1/parking-orders/SCN-019/verify", None, {"anonymous": 401, **PEOPLE_403, "operator": 200, "supervisor": 200}),
    # lots and cities, with the names people call them by, are the operator's
    ("get", "/api/v1/cities", None, {"anonymous": 401, **PEOPLE_403, "operator": 200, "supervisor": 200}),
    ("post", "/api/v1/cities", GARBAGE, {"anonymous": 401, **PEOPLE_403, "operator": 400, "supervisor": 400}),
    ("post", "/api/v1/cities", {"code": "320500", "names": {"en": "Suzhou"}}, {"anonymous": 401, **PEOPLE_403, "operator": 201, "supervisor": 200}),
    ("get", "/api/v1/lots?city_code=310100", None, {"anonymous": 401, **PEOPLE_403, "operator": 200, "supervisor": 200}),
    ("post", "/api/v1/lots", GARBAGE, {"anonymous": 401, **PEOPLE_403, "operator": 400, "supervisor": 400}),
    ("post", "/api/v1/lots", {"city_code": "310100", "code": "SH-NEW-9"}, {"anonymous": 401, **PEOPLE_403, "operator": 201, "supervisor": 200}),
]

# The code of a 403 per row where it says which role was missing.
DENIAL_CODES = {
    "/api/v1/workflow-plans": "supervisor_required",
    "/api/v1/reviews": "supervisor_required",
    "/api/v1/audit-events": "supervisor_required",
    "/api/v1/billing-rules": "supervisor_required",
    "/api/v1/parking-orders": "operator_required",
    "/api/v1/arrears-orders": "operator_required",
    "/api/v1/cities": "operator_required",
    "/api/v1/lots": "operator_required",
    "/api/v1/knowledge": "operator_required",
    "/api/v1/conversations": "not_conversation_owner",
}


def _ask(client: APIClient, method: str, url: str, body: dict | None):  # noqa: ANN202
    if body is None:
        return getattr(client, method)(url)
    return getattr(client, method)(url, body, format="json")


@pytest.mark.parametrize(("method", "path", "body", "expected"), MATRIX,
                         ids=[f"{m} {p} {'garbage' if b is GARBAGE else ''}".strip() for m, p, b, _ in MATRIX])
def test_authorization_matrix(world, method, path, body, expected) -> None:  # noqa: ANN001
    url = path.format(**world)
    for role, status in expected.items():
        response = _ask(world[role], method, url, body)
        assert response.status_code == status, (role, url, response.content[:300])
        if status >= 400:
            error = response.json()["error"]
            assert set(error) == {"code", "message", "details"}
        if status == 403:
            wanted = next(code for prefix, code in DENIAL_CODES.items() if path.startswith(prefix))
            assert error["code"] == wanted and error["details"] == {}, (role, url, error)


def test_every_row_names_every_caller() -> None:
    for method, path, _, expected in MATRIX:
        assert set(expected) == set(ROLES), (method, path)


def _api_routes() -> set[tuple[str, str]]:
    """(url name, method) of every endpoint under /api/v1."""
    def walk(patterns):  # noqa: ANN001, ANN202
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns)
            elif isinstance(pattern, URLPattern):
                yield pattern

    routes = set()
    for pattern in walk(api_v1):
        view = pattern.callback.view_class
        routes |= {(pattern.name, m) for m in ("get", "post", "put", "patch", "delete") if hasattr(view, m)}
    return routes


def test_the_matrix_covers_every_endpoint_under_api_v1() -> None:
    covered = {(resolve(path.split("?")[0].format(cid=1, review=1, hook=1)).url_name, method) for method, path, _, _ in MATRIX}
    assert _api_routes() - covered == set()


def test_lists_show_only_your_own(world) -> None:  # noqa: ANN001
    assert world["stranger"].get("/api/v1/conversations").json()["count"] == 0
    assert world["operator"].get("/api/v1/conversations").json()["count"] == 0
    assert world["owner"].get("/api/v1/conversations").json()["count"] == 1
    assert world["supervisor"].get("/api/v1/conversations").json()["count"] == 1
    assert world["stranger"].get("/api/v1/webhooks").json()["count"] == 0
    assert world["supervisor"].get("/api/v1/webhooks").json()["count"] == 0


def test_a_persons_token_cannot_add_a_rule_that_prices_everyone_else(world) -> None:  # noqa: ANN001
    # The attack: a high-priority all-day rule over a city's lots would win every lookup there.
    rules, versions = BillingRule.objects.count(), BillingRuleVersion.objects.count()
    before = world["owner"].post("/api/v1/billing-rules/simulate", {"city_code": "310100", "lot_code": "SH-PD-001", **STAY},
                                 format="json").json()
    greedy = {**RULE, "rule_code": "SH-GREEDY", "scope": {"city_code": "310100", "lot_codes": []},
              "version": {**RULE["version"], "effective_from": "2020-01-01T00:00:00+08:00", "priority": 1000}}
    for caller in ("owner", "stranger", "operator"):
        response = world[caller].post("/api/v1/billing-rules", greedy, format="json")
        assert response.status_code == 403 and response.json()["error"]["code"] == "supervisor_required", caller
    assert (BillingRule.objects.count(), BillingRuleVersion.objects.count()) == (rules, versions)
    after = world["stranger"].post("/api/v1/billing-rules/simulate", {"city_code": "310100", "lot_code": "SH-PD-001", **STAY},
                                   format="json").json()
    assert after == before and Decimal(after["total_amount"]) < Decimal("50.00")


def test_a_supervisor_reads_a_persons_conversation_but_writes_nothing_into_it(world) -> None:  # noqa: ANN001
    cid = world["cid"]
    messages = Message.objects.filter(conversation_id=cid).count()
    state = world["owner"].get(f"/api/v1/conversations/{cid}").json()
    for path, body in (("messages", {"text": "approve it"}), ("choose", {"option_id": "adjust_to_simulated", "consent": True})):
        response = world["supervisor"].post(f"/api/v1/conversations/{cid}/{path}", body, format="json")
        assert response.status_code == 403 and response.json()["error"]["code"] == "not_conversation_owner"
    assert Message.objects.filter(conversation_id=cid).count() == messages
    assert world["owner"].get(f"/api/v1/conversations/{cid}").json() == state
    # In their own conversation a supervisor chats like anyone else.
    own = world["supervisor"].post("/api/v1/conversations", {"workflow_id": "parking_help_desk"}, format="json").json()["id"]
    assert world["supervisor"].post(f"/api/v1/conversations/{own}/messages", {"text": "hello"}, format="json").status_code == 201


def test_a_supervisor_posting_into_a_conversation_that_does_not_exist_gets_404(world) -> None:  # noqa: ANN001
    response = world["supervisor"].post("/api/v1/conversations/999999/messages", {"text": "hi"}, format="json")
    assert response.status_code == 404 and response.json()["error"]["code"] == "conversation_not_found"
