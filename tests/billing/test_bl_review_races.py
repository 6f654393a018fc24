"""Verifications of one order at once still leave one open review: real threads, real database.

Runs on whatever database the suite runs on: SQLite (a file, IMMEDIATE transactions, so the
turns queue) by default, PostgreSQL when DATABASE_URL points there, where the order's row lock
is what keeps the second verification from opening a review of its own.
"""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from billing.models import FeeVerification
from tests.support.helpers import client_for, run_together
from workflows.models import AuditEvent, Review

pytestmark = pytest.mark.django_db(transaction=True)

STAY = {"city_code": "310100", "lot_code": "SH-PD-001", "entry_time": "2026-03-06T13:00:00+08:00",
        "exit_time": "2026-03-06T16:10:00+08:00", "total_amount": "18.00", "plate_no": "沪A20001"}


def _people(count: int) -> list:
    return [get_user_model().objects.create_user(username=f"racer{i}", password="racer-pass-123") for i in range(count)]


def _conversation(user) -> int:  # noqa: ANN001
    response = client_for(user).post("/api/v1/conversations", {"workflow_id": "parking_help_desk"}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


def _say(user, cid: int, text: str) -> tuple[int, dict]:  # noqa: ANN001
    response = client_for(user).post(f"/api/v1/conversations/{cid}/messages", {"text": text}, format="json")
    return response.status_code, response.json()


def _settled(results: list) -> list[tuple[int, dict]]:
    crashed = [r for r in results if isinstance(r, Exception) or r[0] >= 500]
    assert not crashed, crashed
    return results


def test_verifications_of_one_order_at_once_open_one_review(operator) -> None:  # noqa: ANN001
    call_command("seed_demo", stdout=io.StringIO())
    people = _people(4)
    conversations = [(person, _conversation(person)) for person in people]

    def verify(i: int) -> tuple[int, dict]:
        if i == len(conversations):  # an operator's verification over REST joins the same race
            response = client_for(operator).post("/api/v1/parking-orders/SCN-020/verify")
            return response.status_code, response.json()
        person, cid = conversations[i]
        return _say(person, cid, "verify order SCN-020")

    results = _settled(run_together(verify, len(conversations) + 1))
    [review] = Review.objects.filter(subject__order_no="SCN-020")
    assert review.is_pending
    assert FeeVerification.objects.filter(order__order_no="SCN-020").count() == len(conversations) + 1
    # every verification but the one that opened the review joined it
    assert AuditEvent.objects.filter(event_type="fee_review_joined", review=review).count() == len(conversations)
    statuses = sorted(body.get("status", "rest") for _, body in results)
    assert statuses.count("waiting_review") <= 1, results


def test_one_persons_verifications_at_once_never_pass_the_daily_limit(operator, settings) -> None:  # noqa: ANN001
    call_command("seed_demo", stdout=io.StringIO())
    settings.CONCIERGE_REVIEWS_PER_PERSON_PER_DAY = 1
    [person] = _people(1)
    operator_api = client_for(operator)
    for n in range(4):
        created = operator_api.post("/api/v1/parking-orders", {**STAY, "order_no": f"RACE-{n}"}, format="json")
        assert created.status_code == 201, created.content
    conversations = [_conversation(person) for _ in range(4)]

    results = _settled(run_together(lambda i: _say(person, conversations[i], f"verify order RACE-{i}"), 4))
    assert Review.objects.filter(run__owner=person).count() == 1
    assert [body["status"] for _, body in results].count("waiting_review") == 1
    assert AuditEvent.objects.filter(event_type="fee_review_refused").count() == 3
