"""An order paid beyond its total is refused unless it is marked as a credit (issue 34, item 7), over REST."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction

from billing.models import ParkingOrder
from workflows.models import AuditEvent

pytestmark = pytest.mark.django_db

# SH-PD-001 from 13:00 to 16:10: rule SH-PD-DAY v1 gives 14.00
ORDER = {"order_no": "CR-001", "plate_no": "沪A30001", "city_code": "310100", "lot_code": "SH-PD-001",
         "entry_time": "2026-03-06T13:00:00+08:00", "exit_time": "2026-03-06T16:10:00+08:00"}


def _create(operator_api, **fields):  # noqa: ANN001, ANN003, ANN202
    return operator_api.post("/api/v1/parking-orders", {**ORDER, **fields}, format="json")


def _nothing_written(order_no: str = "CR-001") -> bool:
    return (not ParkingOrder.objects.filter(order_no=order_no).exists()
            and not AuditEvent.objects.filter(event_type="parking_order_created", payload__order_no=order_no).exists())


@pytest.mark.parametrize("fields", [
    {"total_amount": "10.00", "paid_amount": "12.00"},
    {"paid_amount": "20.00"},  # more than the 14.00 the rule gives
    {"total_amount": "10.00", "paid_amount": "10.01", "is_credit": False},
], ids=["given-total", "computed-total", "marked-not-credit"])
def test_paid_beyond_the_total_is_refused_and_nothing_is_written(demo, operator_api, fields: dict) -> None:  # noqa: ANN001
    response = _create(operator_api, **fields)
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "paid_exceeds_total" and "is_credit" in error["message"]
    assert list(error["details"]) == ["paid_amount"]
    assert _nothing_written()


def test_a_credit_order_holds_the_overpayment_and_owes_nothing(demo, operator_api) -> None:  # noqa: ANN001
    response = _create(operator_api, total_amount="10.00", paid_amount="12.00", is_credit=True)
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["total_amount"], body["paid_amount"], body["arrears_amount"], body["status"], body["is_credit"]) == (
        "10.00", "12.00", "0.00", "paid", True)
    assert operator_api.get("/api/v1/parking-orders/CR-001").json()["is_credit"] is True
    # a credit is not arrears: the plate owes nothing
    assert operator_api.get("/api/v1/arrears-orders", {"plate_no": "沪A30001"}).json()["total_arrears"] == "0.00"


def test_paying_exactly_the_total_or_before_the_stay_ends_needs_no_credit(demo, operator_api) -> None:  # noqa: ANN001
    exact = _create(operator_api, total_amount="14.00", paid_amount="14.00")
    assert exact.status_code == 201 and exact.json()["is_credit"] is False
    # a stay in progress has no total yet: a prepayment is taken
    prepaid = _create(operator_api, order_no="CR-002", exit_time=None, paid_amount="5.00")
    assert prepaid.status_code == 201, prepaid.content
    assert (prepaid.json()["status"], prepaid.json()["arrears_amount"]) == ("in_progress", "0.00")


def test_a_fee_adjusted_below_what_was_paid_leaves_a_credit(demo, operator_api, supervisor_api) -> None:  # noqa: ANN001
    assert _create(operator_api, total_amount="18.00", paid_amount="18.00").status_code == 201
    review_id = operator_api.post("/api/v1/parking-orders/CR-001/verify").json()["review_id"]
    decided = supervisor_api.post(f"/api/v1/reviews/{review_id}/decision", {"outcome": "approve", "reason": "rule is right"}, format="json")
    assert decided.status_code == 200, decided.content
    order = operator_api.get("/api/v1/parking-orders/CR-001").json()
    assert (order["total_amount"], order["paid_amount"], order["arrears_amount"], order["status"], order["is_credit"]) == (
        "14.00", "18.00", "0.00", "paid", True)
    assert AuditEvent.objects.get(event_type="order_fee_decided", review_id=review_id).payload["is_credit"] is True


def test_the_database_refuses_an_overpaid_order_not_marked_as_credit(demo) -> None:  # noqa: ANN001
    stay = {"plate_no": "沪A30001", "city_code": "310100", "lot_code": "SH-PD-001",
            "entry_time": datetime(2026, 3, 6, 5, tzinfo=UTC), "exit_time": datetime(2026, 3, 6, 8, tzinfo=UTC),
            "total_amount": Decimal("10.00"), "paid_amount": Decimal("12.00")}
    with pytest.raises(IntegrityError), transaction.atomic():
        ParkingOrder.objects.create(order_no="CR-DB-1", **stay)
    assert ParkingOrder.objects.create(order_no="CR-DB-2", is_credit=True, **stay).pk
