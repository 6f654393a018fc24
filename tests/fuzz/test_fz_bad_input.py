"""Bad input is a JSON 4xx in the SPEC's error shape (issue 13), on real endpoints.

One test per class of input: JSON nested past the parser's limit, dates the engines do not
handle (year 9999), times without an offset, amounts beyond the column, integers beyond
64 bits in paths, query strings and bodies; unknown /api/ paths for every method; CSRF
failures; the audit export's filters.
"""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from config.parsers import MAX_DEPTH

pytestmark = pytest.mark.django_db

BEYOND_64_BITS = 2**64
SIMULATE = "/api/v1/billing-rules/simulate"
PAYLOAD = [{"name": "all_day", "type": "periodic", "time_window": {"start": "00:00", "end": "00:00"},
            "unit_minutes": 60, "unit_price": 5, "free_minutes": 0, "max_charge": 50}]


def error_of(response, status: int) -> dict:  # noqa: ANN001
    """The error object of a response that must be `status` in the SPEC's JSON shape."""
    assert response.status_code == status, (response.status_code, response.content[:300])
    assert response["Content-Type"].startswith("application/json"), response["Content-Type"]
    body = json.loads(response.content)
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}, body
    return body["error"]


def post_json(client: APIClient, path: str, body: object):  # noqa: ANN201
    return client.post(path, json.dumps(body) if not isinstance(body, str) else body, content_type="application/json")


def nested(depth: int) -> str:
    return '{"workflow_id": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"


def simulation(**times: str) -> dict:
    return {"rule_payload": PAYLOAD, "entry_time": "2026-03-02T08:00:00+08:00", "exit_time": "2026-03-02T10:00:00+08:00", **times}


def order(**fields: object) -> dict:
    return {"order_no": "BAD-1", "plate_no": "沪A12345", "city_code": "310100", "lot_code": "SH-PD-001",
            "entry_time": "2026-03-02T08:00:00+08:00", "exit_time": "2026-03-02T10:00:00+08:00", "total_amount": "5.00",
            **fields}


# --- JSON nested deeper than the parser's limit --------------------------------------


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 1_000, 100_000])
def test_json_nested_past_the_limit_is_a_400(api, depth: int) -> None:  # noqa: ANN001
    error = error_of(post_json(api, "/api/v1/conversations", nested(depth)), 400)
    assert error["code"] == "malformed_request" and f"deeper than {MAX_DEPTH}" in error["message"]


def test_json_within_the_limit_reaches_validation(api) -> None:  # noqa: ANN001
    error = error_of(post_json(api, "/api/v1/conversations", nested(MAX_DEPTH)), 400)
    assert error["code"] == "validation_error" and "workflow_id" in error["details"]


def test_deep_json_is_refused_on_every_json_endpoint(supervisor_api) -> None:  # noqa: ANN001
    deep = "[" * 5000 + "]" * 5000
    for path in ("/api/v1/workflow-plans", "/api/v1/billing-rules", SIMULATE, "/api/v1/parking-orders",
                 "/api/v1/knowledge/sources", "/api/v1/retrieve", "/api/v1/webhooks"):
        assert error_of(post_json(supervisor_api, path, deep), 400)["code"] == "malformed_request", path


# --- dates: outside the engines' years, and without an offset ---------------------------


@pytest.mark.parametrize("when", ["9999-12-31T23:59:00+08:00", "0001-01-01T00:00:00+00:00", "3000-01-01T00:00:00Z"])
def test_a_year_the_engines_do_not_handle_is_a_400(api, operator_api, when: str) -> None:  # noqa: ANN001
    assert "exit_time" in error_of(post_json(api, SIMULATE, simulation(exit_time=when)), 400)["details"]
    assert "entry_time" in error_of(post_json(operator_api, "/api/v1/parking-orders", order(entry_time=when)), 400)["details"]
    assert "at_time" in error_of(post_json(api, "/api/v1/retrieve", {"query": "fee", "at_time": when}), 400)["details"]


@pytest.mark.parametrize("when", ["9999-12-31T23:59:59-05:00", "0001-01-01T00:00:00+05:00"])
def test_a_knowledge_source_in_a_year_out_of_range_is_a_400(supervisor_api, when: str) -> None:  # noqa: ANN001
    body = {"source_id": "kb.far", "title": "Far", "doc_type": "faq", "effective_to": when, "content": "text"}
    error = error_of(post_json(supervisor_api, "/api/v1/knowledge/sources", body), 400)
    assert [p["field"] for p in error["details"]["problems"]] == ["effective_to"]


def test_a_time_without_offset_is_a_400(api, operator_api, supervisor_api) -> None:  # noqa: ANN001
    naive = "2026-03-02T08:00:00"
    error = error_of(post_json(api, SIMULATE, simulation(entry_time=naive)), 400)
    assert error["code"] == "validation_error" and "offset" in error["details"]["entry_time"][0]
    assert "exit_time" in error_of(post_json(operator_api, "/api/v1/parking-orders", order(exit_time=naive)), 400)["details"]
    assert "at_time" in error_of(post_json(api, "/api/v1/retrieve", {"query": "fee", "at_time": naive}), 400)["details"]
    rule = {"rule_code": "NAIVE", "name": "n", "scope": {"city_code": "310100"},
            "version": {"effective_from": naive, "rule_payload": PAYLOAD}}
    assert "version.effective_from" in error_of(post_json(supervisor_api, "/api/v1/billing-rules", rule), 400)["details"]


# --- amounts beyond the column's precision ---------------------------------------------


@pytest.mark.parametrize("amount", [1e30, "1e30", "12345678901.00", "1.005", -1, "NaN", "Infinity"])
def test_an_amount_the_column_cannot_hold_is_a_400(api, operator_api, amount: object) -> None:  # noqa: ANN001
    assert "total_amount" in error_of(post_json(operator_api, "/api/v1/parking-orders", order(total_amount=amount)), 400)["details"]
    assert "paid_amount" in error_of(post_json(operator_api, "/api/v1/parking-orders", order(paid_amount=amount)), 400)["details"]


def test_an_amount_in_range_is_taken_as_a_string_or_a_number(api, operator_api) -> None:  # noqa: ANN001
    created = post_json(operator_api, "/api/v1/parking-orders", order(total_amount=9999999999.99, paid_amount="0.5"))
    assert created.status_code == 201, created.content
    assert (created.json()["total_amount"], created.json()["paid_amount"]) == ("9999999999.99", "0.50")


def test_a_computed_amount_the_column_cannot_hold_is_a_400(supervisor_api) -> None:  # noqa: ANN001
    # A legal rule (any price is) over a long stay can cost more than an order's columns hold.
    pricey = [{**PAYLOAD[0], "unit_price": 1e20, "max_charge": 1e30}]
    rule = {"rule_code": "PRICEY", "name": "Pricey", "scope": {"city_code": "310100", "lot_codes": ["SH-PRICEY"]},
            "version": {"effective_from": "2026-01-01T00:00:00+08:00", "rule_payload": pricey}}
    assert post_json(supervisor_api, "/api/v1/billing-rules", rule).status_code == 201
    stay = order(order_no="PRICEY-1", lot_code="SH-PRICEY", exit_time="2026-03-09T08:00:00+08:00")
    stay.pop("total_amount")
    error = error_of(post_json(supervisor_api, "/api/v1/parking-orders", stay), 400)
    assert error["code"] == "amount_out_of_range" and "total_amount" in error["details"]
    assert post_json(supervisor_api, "/api/v1/parking-orders", {**stay, "total_amount": "1.00"}).status_code == 201
    error = error_of(supervisor_api.post("/api/v1/parking-orders/PRICEY-1/verify"), 400)
    assert error["code"] == "amount_out_of_range" and "simulated_total_amount" in error["details"]


# --- integers beyond 64 bits: paths, query strings, bodies ---------------------------------


@pytest.mark.parametrize("path", [
    f"/api/v1/conversations/{BEYOND_64_BITS}",
    f"/api/v1/conversations/{BEYOND_64_BITS}/messages",
    f"/api/v1/conversations/{BEYOND_64_BITS}/audit",
    f"/api/v1/reviews/{BEYOND_64_BITS}",
    f"/api/v1/webhooks/{BEYOND_64_BITS}/deliveries",
    f"/api/v1/reviews/{10**40}",
])
def test_an_id_beyond_64_bits_in_the_path_is_a_400(supervisor_api, path: str) -> None:  # noqa: ANN001
    error = error_of(supervisor_api.get(path), 400)
    assert error["code"] == "validation_error" and len(error["details"]) == 1


def test_an_id_beyond_64_bits_in_the_path_of_a_write_is_a_400(api) -> None:  # noqa: ANN001
    assert error_of(post_json(api, f"/api/v1/conversations/{BEYOND_64_BITS}/messages", {"text": "hi"}), 400)["details"]
    assert error_of(post_json(api, f"/api/v1/conversations/{BEYOND_64_BITS}/choose", {"option_id": "x"}), 400)["details"]
    assert error_of(api.delete(f"/api/v1/webhooks/{BEYOND_64_BITS}"), 400)["details"] == {"endpoint_id": [f"must be at most {2**63 - 1}."]}


@pytest.mark.parametrize("query", [f"run_id={BEYOND_64_BITS}", f"review_id={BEYOND_64_BITS}", f"run_id=-{BEYOND_64_BITS}"])
def test_an_id_beyond_64_bits_in_a_query_string_is_a_400(supervisor_api, query: str) -> None:  # noqa: ANN001
    error = error_of(supervisor_api.get(f"/api/v1/audit-events?{query}"), 400)
    assert error["code"] == "invalid_filter" and set(error["details"]) == {query.split("=")[0]}


def test_other_query_integers_beyond_64_bits_are_a_400(api, plans) -> None:  # noqa: ANN001
    cid = post_json(api, "/api/v1/conversations", {"workflow_id": "parking_help_desk"}).json()["id"]
    assert "after" in error_of(api.get(f"/api/v1/conversations/{cid}/messages?after={BEYOND_64_BITS}"), 400)["details"]
    error = error_of(api.get(f"/api/v1/workflow-plans/parking_help_desk?version={BEYOND_64_BITS}"), 400)
    assert error["code"] == "invalid_version" and "version" in error["details"]


def test_an_integer_beyond_64_bits_in_a_body_is_a_400(api, operator_api, supervisor_api) -> None:  # noqa: ANN001
    # Anywhere in a JSON body, even where any JSON is taken (metadata, plans): the parser refuses it.
    for big in (BEYOND_64_BITS, -(2**63) - 1, 10**400):
        error = error_of(post_json(api, "/api/v1/conversations", f'{{"workflow_id": "parking_help_desk", "n": {big}}}'), 400)
        assert error["code"] == "malformed_request"
    metadata = f'{{"source_id": "kb.big", "metadata": {{"n": {BEYOND_64_BITS}}}}}'
    assert error_of(post_json(supervisor_api, "/api/v1/knowledge/sources", metadata), 400)["code"] == "malformed_request"
    # Within 64 bits, each field's own bounds apply.
    error = error_of(post_json(operator_api, "/api/v1/parking-orders", order(billing_rule_version_no=2**63 - 1)), 400)
    assert "billing_rule_version_no" in error["details"]
    chunks = {"source_id": "kb.x", "chunks": [{"text": "t", "ordinal": 2**40}]}
    assert error_of(post_json(supervisor_api, "/api/v1/knowledge/chunks/batch", chunks), 400)["details"]


def test_json_values_keep_their_types(api) -> None:  # noqa: ANN001
    # DRF would coerce these (as it must for form data); in JSON they are the wrong type.
    assert "text" in error_of(post_json(api, "/api/v1/conversations/1/messages", {"text": 42}), 400)["details"]
    assert "top_k" in error_of(post_json(api, "/api/v1/retrieve", {"query": "fee", "top_k": "5"}), 400)["details"]
    assert "consent" in error_of(post_json(api, "/api/v1/conversations/1/choose", {"option_id": "x", "consent": "yes"}), 400)["details"]


# --- unknown paths under /api/: JSON 404 for every method, with and without a token -------------


@pytest.mark.parametrize("method", ["get", "post", "put", "patch", "delete", "options", "head"])
@pytest.mark.parametrize("path", ["/api/nope", "/api/v1/nope", "/api/v1/conversations/1/nope", "/api/v2/conversations"])
def test_an_unknown_api_path_is_a_json_404(person, method: str, path: str) -> None:  # noqa: ANN001
    from tests.support.helpers import client_for

    anonymous = APIClient(enforce_csrf_checks=True)  # as a browser would be checked
    with_token = client_for(person)
    with_token.handler.enforce_csrf_checks = True
    for client in (anonymous, with_token):
        body = {} if method in ("get", "head") else {"data": "{}", "content_type": "application/json"}
        response = getattr(client, method)(path, **body)
        if method == "head":
            assert response.status_code == 404 and response["Content-Type"].startswith("application/json")
            continue
        assert error_of(response, 404)["code"] == "not_found"


# --- CSRF failures answer in JSON under /api/ ------------------------------------------------


def test_a_csrf_failure_on_a_real_api_path_is_json(person) -> None:  # noqa: ANN001
    browser = APIClient(enforce_csrf_checks=True)
    browser.force_login(person)  # session authentication, no CSRF token
    error = error_of(post_json(browser, "/api/v1/conversations", {"workflow_id": "parking_help_desk"}), 403)
    assert "CSRF" in error["message"]


def test_the_csrf_failure_view_answers_json_under_api_and_a_page_elsewhere(rf) -> None:  # noqa: ANN001
    from config.errors import csrf_failure

    api_error = error_of(csrf_failure(rf.post("/api/v1/anything"), reason="CSRF cookie not set."), 403)
    assert api_error["code"] == "csrf_failed" and "CSRF cookie not set." in api_error["message"]
    page = csrf_failure(rf.post("/conversations/"), reason="CSRF cookie not set.")
    assert page.status_code == 403 and page["Content-Type"].startswith("text/html")


def test_csrf_failures_use_the_json_view(settings) -> None:  # noqa: ANN001
    assert settings.CSRF_FAILURE_VIEW == "config.errors.csrf_failure"


# --- the audit export never answers 500 ----------------------------------------------------------


@pytest.mark.parametrize("query", [
    "run_id=abc", "run_id=1.5", "run_id=-1", "run_id=", f"run_id={10**30}", "review_id=%F0%9F%98%80",
    "export=xml", "export=", "export=CSV", "event_type=" + "x" * 41, "event_type=",
])
def test_bad_audit_filters_are_a_400(supervisor_api, query: str) -> None:  # noqa: ANN001
    assert error_of(supervisor_api.get(f"/api/v1/audit-events?{query}"), 400)["code"] == "invalid_filter"


def test_good_audit_filters_still_work(supervisor_api, plans) -> None:  # noqa: ANN001
    assert supervisor_api.get("/api/v1/audit-events?run_id=1&review_id=2&event_type=decision").json() == {"count": 0, "results": []}
    everything = supervisor_api.get("/api/v1/audit-events?export=json&unknown=1").json()
    assert everything["count"] == len(everything["results"]) > 0
    csv = supervisor_api.get("/api/v1/audit-events?export=csv")
    assert csv.status_code == 200 and csv["Content-Type"].startswith("text/csv")
