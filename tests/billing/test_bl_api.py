"""Billing rules, versions and orders over REST, with every bad input answered clearly.

Supervisors change rules, operators create and read orders, anyone signed in simulates."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db

PAYLOAD = [{"name": "day", "type": "periodic", "time_window": {"start": "08:00", "end": "20:00"},
            "unit_minutes": 60, "unit_price": "5.00", "free_minutes": 15, "max_charge": "30.00"}]


def rule(code="BJ-TEST", effective_from="2026-01-01T00:00:00+08:00", effective_to=None, payload=None, lots=("BJ-001",)):  # noqa: ANN001, ANN201
    return {"rule_code": code, "name": "Beijing test", "scope": {"city_code": "110100", "lot_codes": list(lots)},
            "version": {"effective_from": effective_from, "effective_to": effective_to, "rule_payload": payload or PAYLOAD}}


def test_create_rule_append_versions_and_refuse_overlap(supervisor_api, api) -> None:  # noqa: ANN001
    first = supervisor_api.post("/api/v1/billing-rules", rule(effective_to="2026-06-01T00:00:00+08:00"), format="json")
    assert first.status_code == 201 and first.json()["created_version_no"] == 1
    second = supervisor_api.post("/api/v1/billing-rules", rule(effective_from="2026-06-01T00:00:00+08:00"), format="json")
    assert second.status_code == 201 and second.json()["created_version_no"] == 2
    overlap = supervisor_api.post("/api/v1/billing-rules", rule(effective_from="2026-05-01T00:00:00+08:00", effective_to="2026-05-02T00:00:00+08:00"), format="json")
    assert overlap.status_code == 409 and overlap.json()["error"]["code"] == "version_overlap"
    assert overlap.json()["error"]["details"]["version_no"] == 1
    body = api.get("/api/v1/billing-rules/BJ-TEST").json()  # prices are public: a person reads them
    assert [v["version_no"] for v in body["versions"]] == [1, 2]
    assert api.get("/api/v1/billing-rules?city_code=110100&lot_code=BJ-001").json()["count"] == 1
    assert api.get("/api/v1/billing-rules?city_code=110100&lot_code=BJ-999").json()["count"] == 0
    assert api.get("/api/v1/billing-rules/NOPE").status_code == 404


def test_invalid_payload_names_every_bad_field(supervisor_api) -> None:  # noqa: ANN001
    bad = [{"name": "day", "type": "hourly", "time_window": {"start": "25:00", "end": "20:00"}, "unit_minutes": 0}]
    response = supervisor_api.post("/api/v1/billing-rules", rule(payload=bad), format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid_rule_payload"
    paths = {p["path"] for p in error["details"]["problems"]}
    assert "version.rule_payload[0].type" in paths and "version.rule_payload[0].time_window.start" in paths
    assert supervisor_api.get("/api/v1/billing-rules/BJ-TEST").status_code == 404  # nothing stored


def test_missing_fields_and_bad_times_are_400(supervisor_api) -> None:  # noqa: ANN001
    response = supervisor_api.post("/api/v1/billing-rules", {"rule_code": "X"}, format="json")
    assert response.status_code == 400 and {"name", "scope", "version"} <= set(response.json()["error"]["details"])
    response = supervisor_api.post("/api/v1/billing-rules", rule(effective_from="yesterday"), format="json")
    assert response.status_code == 400 and "version.effective_from" in response.json()["error"]["details"]
    response = supervisor_api.post("/api/v1/billing-rules", rule(effective_to="2025-01-01T00:00:00+08:00"), format="json")
    assert response.status_code == 400


def test_simulate_inline_payload_and_errors(api) -> None:  # noqa: ANN001
    body = api.post("/api/v1/billing-rules/simulate", {"rule_payload": PAYLOAD, "entry_time": "2026-03-02T08:00:00+08:00",
                                                       "exit_time": "2026-03-02T10:10:00+08:00"}, format="json").json()
    assert body["duration_minutes"] == 130 and body["total_amount"] == "10.00"
    assert body["breakdown"][0]["free_minutes"] == 15 and "rule_code" not in body
    backwards = api.post("/api/v1/billing-rules/simulate", {"rule_payload": PAYLOAD, "entry_time": "2026-03-02T10:00:00+08:00",
                                                            "exit_time": "2026-03-02T08:00:00+08:00"}, format="json")
    assert backwards.status_code == 400
    nothing = api.post("/api/v1/billing-rules/simulate", {"entry_time": "2026-03-02T08:00:00+08:00", "exit_time": "2026-03-02T09:00:00+08:00"}, format="json")
    assert nothing.status_code == 400
    no_rule = api.post("/api/v1/billing-rules/simulate", {"city_code": "999999", "entry_time": "2026-03-02T08:00:00+08:00",
                                                          "exit_time": "2026-03-02T09:00:00+08:00"}, format="json")
    assert no_rule.status_code == 404 and no_rule.json()["error"]["code"] == "no_rule_in_force"


def test_order_total_is_computed_and_arrears_derived(supervisor_api, operator_api) -> None:  # noqa: ANN001
    supervisor_api.post("/api/v1/billing-rules", rule(), format="json")
    created = operator_api.post("/api/v1/parking-orders", {
        "order_no": "BJ-1", "plate_no": "京A12345", "city_code": "110100", "lot_code": "BJ-001",
        "entry_time": "2026-03-02T08:00:00+08:00", "exit_time": "2026-03-02T10:10:00+08:00", "paid_amount": "4.00",
        "arrears_amount": "999.00",
    }, format="json")
    assert created.status_code == 201
    body = created.json()
    assert (body["total_amount"], body["paid_amount"], body["arrears_amount"], body["status"]) == ("10.00", "4.00", "6.00", "partially_paid")
    assert (body["billing_rule_code"], body["billing_rule_version_no"]) == ("BJ-TEST", 1)
    duplicate = operator_api.post("/api/v1/parking-orders", {**body, "total_amount": "12.00"}, format="json")
    assert duplicate.status_code == 409 and duplicate.json()["error"]["code"] == "order_exists"
    negative = operator_api.post("/api/v1/parking-orders", {**body, "order_no": "BJ-2", "paid_amount": "-1"}, format="json")
    assert negative.status_code == 400
    assert operator_api.get("/api/v1/parking-orders/NOPE").status_code == 404
    assert operator_api.post("/api/v1/parking-orders/NOPE/verify").status_code == 404


def test_cap_period_over_rest_calendar_day_by_default_window_on_request(supervisor_api, api) -> None:  # noqa: ANN001
    night = {"name": "night", "type": "periodic", "time_window": {"start": "20:00", "end": "08:00"},
             "unit_minutes": 60, "unit_price": 1, "max_charge": 5}
    stay = {"entry_time": "2026-03-02T20:00:00+08:00", "exit_time": "2026-03-03T08:00:00+08:00"}
    by_day = api.post("/api/v1/billing-rules/simulate", {"rule_payload": [night], **stay}, format="json").json()
    assert by_day["total_amount"] == "9.00"  # 20:00-24:00 is 4.00, 00:00-08:00 is 8.00 capped at 5.00
    per_night = [{**night, "cap_period": "window"}]
    assert api.post("/api/v1/billing-rules/simulate", {"rule_payload": per_night, **stay},
                    format="json").json()["total_amount"] == "5.00"
    bad = supervisor_api.post("/api/v1/billing-rules", rule(payload=[{**night, "cap_period": "nightly"}]), format="json")
    assert bad.status_code == 400
    assert bad.json()["error"]["details"]["problems"] == [
        {"path": "version.rule_payload[0].cap_period", "message": "must be calendar_day or window"}]
    stored = supervisor_api.post("/api/v1/billing-rules", rule(payload=per_night), format="json")
    assert stored.status_code == 201
    assert api.get("/api/v1/billing-rules/BJ-TEST").json()["versions"][0]["rule_payload"][0]["cap_period"] == "window"
