"""One open review per order, and a person's daily share of reviews: through conversations and REST (issue 34)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db.models import F

from billing.models import FeeVerification
from conversations.models import Handoff
from tests.conversations.conftest import Chat
from tests.support.helpers import client_for
from workflows.models import AuditEvent, Review

pytestmark = pytest.mark.django_db

JOINED = "a supervisor is already reviewing this order"
REFUSED = "a supervisor already has enough reviews from you today"
# A stay at SH-PD-001 that rule SH-PD-DAY v1 prices at 14.00 (as SCN-020); the orders below say 18.00.
STAY = {"city_code": "310100", "lot_code": "SH-PD-001", "entry_time": "2026-03-06T13:00:00+08:00",
        "exit_time": "2026-03-06T16:10:00+08:00", "total_amount": "18.00"}


def _people(count: int) -> list:
    return [get_user_model().objects.create_user(username=f"asker{i}", password="asker-pass-123") for i in range(count)]


def _verify_in_new_conversation(client, order_no: str) -> dict:  # noqa: ANN001
    return Chat(client, "parking_help_desk").say(f"verify order {order_no}")


def _mismatched_orders(operator_api, count: int) -> list[str]:  # noqa: ANN001
    numbers = [f"MISMATCH-{n:03d}" for n in range(1, count + 1)]
    for number in numbers:
        created = operator_api.post("/api/v1/parking-orders", {**STAY, "order_no": number, "plate_no": "沪A20001"}, format="json")
        assert created.status_code == 201, created.content
    return numbers


def _reviews_of(order_no: str) -> list[Review]:
    return list(Review.objects.filter(subject__order_no=order_no))


# --- one review per order --------------------------------------------------------------------


def test_the_same_mismatched_order_in_six_new_conversations_opens_one_review(demo, operator_api, supervisor_api) -> None:  # noqa: ANN001
    # given: three people, each asking twice, each time in a new conversation
    clients = [client_for(p) for p in _people(3)]
    # when
    replies = [_verify_in_new_conversation(clients[i % 3], "SCN-020") for i in range(6)]
    # then: the first opens the review, the five after it join it and are told so
    [review] = _reviews_of("SCN-020")
    assert review.is_pending and replies[0]["status"] == "waiting_review"
    for reply in replies[1:]:
        assert reply["status"] == "active", reply["reply"]["text"]
        assert JOINED in reply["reply"]["text"] and "18.00" in reply["reply"]["text"] and "14.00" in reply["reply"]["text"]
    joined = FeeVerification.objects.filter(order__order_no="SCN-020", review=review)
    assert FeeVerification.objects.filter(order__order_no="SCN-020").count() == 6 and joined.count() == 5
    audits = AuditEvent.objects.filter(event_type="fee_review_joined", review=review)
    assert audits.count() == 5 and {a.payload["review_id"] for a in audits} == {review.pk}
    assert {a.payload["verification_id"] for a in audits} == set(joined.values_list("pk", flat=True))
    # an operator's verification over REST joins the same review
    assert operator_api.post("/api/v1/parking-orders/SCN-020/verify").json()["review_id"] == review.pk
    assert len(_reviews_of("SCN-020")) == 1
    # once decided, the order is corrected once and a new verification matches
    decided = supervisor_api.post(f"/api/v1/reviews/{review.pk}/decision", {"outcome": "approve", "reason": "rule is right"}, format="json")
    assert decided.status_code == 200, decided.content
    assert operator_api.get("/api/v1/parking-orders/SCN-020").json()["total_amount"] == "14.00"
    assert AuditEvent.objects.filter(event_type="order_fee_decided", payload__order_no="SCN-020").count() == 1
    again = _verify_in_new_conversation(clients[0], "SCN-020")["reply"]["text"]
    assert "adjusted this order from 18.00 to 14.00" in again and "now matches the rule" in again  # the adjustment, said


def test_a_review_an_operator_opened_is_joined_by_a_conversation(demo, api, operator_api) -> None:  # noqa: ANN001
    review_id = operator_api.post("/api/v1/parking-orders/SCN-020/verify").json()["review_id"]
    reply = _verify_in_new_conversation(api, "SCN-020")
    assert reply["status"] == "active" and JOINED in reply["reply"]["text"]
    assert [r.pk for r in _reviews_of("SCN-020")] == [review_id]
    assert FeeVerification.objects.filter(order__order_no="SCN-020", review_id=review_id).count() == 2


def test_a_matching_order_opens_and_joins_nothing(demo, api) -> None:  # noqa: ANN001
    reply = _verify_in_new_conversation(api, "SCN-019")
    assert "The amounts match" in reply["reply"]["text"] and reply["status"] == "active"
    assert not _reviews_of("SCN-019") and not AuditEvent.objects.filter(event_type__in=("fee_review_joined", "fee_review_refused")).exists()


# --- a person's reviews per day ------------------------------------------------------------------


def test_a_person_opens_five_reviews_a_day_and_the_sixth_is_refused_with_a_handoff_offered(demo, api, other_api, operator_api) -> None:  # noqa: ANN001
    orders = _mismatched_orders(operator_api, 6)
    replies = [_verify_in_new_conversation(api, number) for number in orders[:5]]
    assert [r["status"] for r in replies] == ["waiting_review"] * 5
    # when: the sixth
    chat = Chat(api, "parking_help_desk")
    sixth = chat.say(f"verify order {orders[5]}")
    # then: no review, the person is told why and offered a member of staff
    text = sixth["reply"]["text"]
    assert sixth["status"] == "active" and REFUSED in text and "talk to a person" in text, text
    assert not _reviews_of(orders[5]) and sum(len(_reviews_of(n)) for n in orders) == 5
    refused = AuditEvent.objects.get(event_type="fee_review_refused")
    assert refused.payload["order_no"] == orders[5] and refused.payload["limit"] == 5
    assert refused.payload["conversation_id"] == chat.id
    # the offer is real: asking for a person hands the conversation over
    chat.say("talk to a person")
    assert Handoff.objects.filter(conversation_id=chat.id, status=Handoff.Status.OPEN).count() == 1
    # joining an order's open review costs nothing, and the limit is the person's: another person may still open one
    assert JOINED in _verify_in_new_conversation(api, orders[0])["reply"]["text"]
    assert _verify_in_new_conversation(other_api, orders[5])["status"] == "waiting_review"
    assert len(_reviews_of(orders[5])) == 1


@pytest.mark.parametrize("limit", [0, 2])
def test_the_daily_limit_follows_the_setting(demo, api, operator_api, settings, limit: int) -> None:  # noqa: ANN001
    settings.CONCIERGE_REVIEWS_PER_PERSON_PER_DAY = limit
    orders = _mismatched_orders(operator_api, limit + 1)
    replies = [_verify_in_new_conversation(api, number) for number in orders]
    assert [r["status"] for r in replies] == ["waiting_review"] * limit + ["active"]
    assert REFUSED in replies[-1]["reply"]["text"]
    assert Review.objects.filter(run__owner__username="pat").count() == limit


def test_reviews_opened_before_today_do_not_count(demo, api, operator_api, settings) -> None:  # noqa: ANN001
    settings.CONCIERGE_REVIEWS_PER_PERSON_PER_DAY = 1
    first, second = _mismatched_orders(operator_api, 2)
    _verify_in_new_conversation(api, first)
    Review.objects.filter(subject__order_no=first).update(created_at=F("created_at") - timedelta(days=1))
    assert _verify_in_new_conversation(api, second)["status"] == "waiting_review"


def test_an_operators_verifications_have_no_daily_limit(demo, operator_api, settings) -> None:  # noqa: ANN001
    settings.CONCIERGE_REVIEWS_PER_PERSON_PER_DAY = 0
    [number] = _mismatched_orders(operator_api, 1)
    assert operator_api.post(f"/api/v1/parking-orders/{number}/verify").json()["review_id"] is not None
