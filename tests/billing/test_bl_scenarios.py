"""The 20 billing demo scenarios over REST: amounts, versions, arrears and verification."""

from __future__ import annotations

import pytest

from billing.demo import SCENARIOS, scenario_records
from workflows.models import AuditEvent, Review

pytestmark = pytest.mark.django_db

PRICED = [s for s in SCENARIOS if "amount" in s["expect"]]


@pytest.mark.parametrize("scenario", PRICED, ids=[s["id"] for s in PRICED])
def test_scenario_simulation_over_rest(api, demo, scenario) -> None:  # noqa: ANN001
    order = scenario["orders"][0]
    body = api.post("/api/v1/billing-rules/simulate", {
        "city_code": order["city_code"], "lot_code": order["lot_code"],
        "entry_time": order["entry_time"], "exit_time": order["exit_time"],
    }, format="json").json()
    assert body["total_amount"] == scenario["expect"]["amount"], body
    assert (body["rule_code"], body["version_no"]) == (scenario["expect"]["rule_code"], scenario["expect"]["version_no"])
    assert sum(float(row["amount"]) for row in body["breakdown"]) == pytest.approx(float(body["total_amount"]))


def test_demo_counts_and_export(demo, tmp_path) -> None:  # noqa: ANN001
    from billing.models import BillingRule, BillingRuleVersion, ParkingOrder

    assert (BillingRule.objects.count(), BillingRuleVersion.objects.count(), ParkingOrder.objects.count()) == (5, 6, 22)
    assert len(scenario_records()) == 20 and len({r["scenario_id"] for r in scenario_records()}) == 20


def test_arrears_scenario(operator_api, demo) -> None:  # noqa: ANN001
    body = operator_api.get("/api/v1/arrears-orders", {"plate_no": "沪B88888", "city_code": "310100"}).json()
    assert [o["order_no"] for o in body["results"]] == ["SCN-009-B", "SCN-009-C"]
    assert body["total_arrears"] == "13.00"
    assert [o["status"] for o in body["results"]] == ["partially_paid", "unpaid"]
    assert operator_api.get("/api/v1/arrears-orders", {"plate_no": "沪A10001"}).json()["count"] == 0
    assert operator_api.get("/api/v1/arrears-orders").status_code == 400


def test_verification_match_auto_passes(operator_api, demo) -> None:  # noqa: ANN001
    body = operator_api.post("/api/v1/parking-orders/SCN-019/verify").json()
    assert body["amount_check_result"] == "match" and body["amount_check_action"] == "auto_pass"
    assert body["review_id"] is None and body["simulated_total_amount"] == "12.00"


def test_verification_mismatch_opens_a_review_whose_decision_changes_the_order(operator_api, supervisor_api, demo) -> None:  # noqa: ANN001
    body = operator_api.post("/api/v1/parking-orders/SCN-020/verify").json()
    assert body["amount_check_result"] == "mismatch" and body["amount_check_action"] == "needs_review"
    assert (body["order_total_amount"], body["simulated_total_amount"]) == ("18.00", "14.00")
    assert (body["rule_code"], body["version_no"]) == ("SH-PD-DAY", 1)
    review_id = body["review_id"]
    again = operator_api.post("/api/v1/parking-orders/SCN-020/verify").json()
    assert again["review_id"] == review_id  # one pending review per order
    queue = supervisor_api.get("/api/v1/reviews?status=pending").json()
    assert [r["id"] for r in queue["results"]] == [review_id]
    decided = supervisor_api.post(f"/api/v1/reviews/{review_id}/decision", {"outcome": "approve", "reason": "engine is right"}, format="json")
    assert decided.status_code == 200 and decided.json()["decided_option_id"] == "adjust_to_simulated"
    order = operator_api.get("/api/v1/parking-orders/SCN-020").json()
    assert (order["total_amount"], order["arrears_amount"], order["status"]) == ("14.00", "14.00", "unpaid")
    assert AuditEvent.objects.filter(event_type="order_fee_decided", review_id=review_id).count() == 1
    assert Review.objects.get(pk=review_id).status == "approved"
    assert operator_api.post("/api/v1/parking-orders/SCN-020/verify").json()["amount_check_result"] == "match"


def test_waive_clears_what_is_owed(operator_api, supervisor_api, demo) -> None:  # noqa: ANN001
    review_id = operator_api.post("/api/v1/parking-orders/SCN-020/verify").json()["review_id"]
    supervisor_api.post(f"/api/v1/reviews/{review_id}/decision", {"outcome": "override", "option_id": "waive_fee", "reason": "goodwill"}, format="json")
    order = operator_api.get("/api/v1/parking-orders/SCN-020").json()
    assert (order["total_amount"], order["arrears_amount"], order["status"]) == ("0.00", "0.00", "paid")
