"""Signed webhooks for integrators: registration, events, signatures, retries, the log."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from tests.support.receiver import Receiver
from workflows.models import WebhookDelivery
from workflows.webhooks import backoff, verify

pytestmark = pytest.mark.django_db


def test_register_list_and_validate(api, receiver) -> None:  # noqa: ANN001
    bad = api.post("/api/v1/webhooks", {"url": "not a url", "events": ["review.exploded"]}, format="json")
    assert bad.status_code == 400 and {"url", "events"} <= set(bad.json()["error"]["details"])
    made = api.post("/api/v1/webhooks", {"url": receiver.url, "events": ["review.pending"]}, format="json").json()
    assert len(made["secret"]) >= 32
    listed = api.get("/api/v1/webhooks").json()["results"]
    assert [e["id"] for e in listed] == [made["id"]] and "secret" not in listed[0]
    assert api.delete(f"/api/v1/webhooks/{made['id']}").status_code == 204


def test_events_are_signed_and_delivered(api, supervisor_api, demo, receiver, django_capture_on_commit_callbacks) -> None:  # noqa: ANN001
    secret = api.post("/api/v1/webhooks", {"url": receiver.url}, format="json").json()["secret"]
    cid = api.post("/api/v1/conversations", {"workflow_id": "parking_help_desk"}, format="json").json()["id"]
    with django_capture_on_commit_callbacks(execute=True):
        api.post(f"/api/v1/conversations/{cid}/messages", {"text": "verify order SCN-020"}, format="json")
    review_id = supervisor_api.get("/api/v1/reviews?status=pending").json()["results"][0]["id"]
    with django_capture_on_commit_callbacks(execute=True):
        supervisor_api.post(f"/api/v1/reviews/{review_id}/decision", {"outcome": "approve", "reason": "ok"}, format="json")
    with django_capture_on_commit_callbacks(execute=True):
        api.post(f"/api/v1/conversations/{cid}/choose", {"option_id": "finish"}, format="json")
    events = [r["headers"]["X-Concierge-Event"] for r in receiver.requests]
    assert events == ["review.pending", "review.decided", "conversation.completed"]
    for request in receiver.requests:
        assert verify(secret, request["headers"]["X-Concierge-Signature"], request["body"])
        assert not verify("wrong-secret", request["headers"]["X-Concierge-Signature"], request["body"])
    decided = json.loads(receiver.requests[1]["body"])
    assert decided["data"]["conversation_id"] == cid and decided["data"]["decided_option_id"] == "adjust_to_simulated"
    assert WebhookDelivery.objects.filter(status="succeeded").count() == 3


def test_action_executed_event_and_other_peoples_events_stay_private(api, other_api, demo, receiver, django_capture_on_commit_callbacks) -> None:  # noqa: ANN001
    other_api.post("/api/v1/webhooks", {"url": receiver.url}, format="json")
    mine = Receiver()
    try:
        api.post("/api/v1/webhooks", {"url": mine.url, "events": ["action.executed"]}, format="json")
        cid = api.post("/api/v1/conversations", {"workflow_id": "manager_assistant"}, format="json").json()["id"]
        for text in ("My employee Sam didn't show up for two shifts", "Yes, I called him twice, no answer", "No, first time, nothing documented yet"):
            api.post(f"/api/v1/conversations/{cid}/messages", {"text": text}, format="json")
        with django_capture_on_commit_callbacks(execute=True):
            api.post(f"/api/v1/conversations/{cid}/choose", {"option_id": "draft_email", "consent": True}, format="json")
        assert [json.loads(r["body"])["data"]["action"] for r in mine.requests] == ["draft_email"]
        assert receiver.requests == []  # someone else's endpoint hears nothing of my conversation
    finally:
        mine.close()


def test_failures_are_retried_with_backoff_and_logged(api, demo, receiver, django_capture_on_commit_callbacks) -> None:  # noqa: ANN001
    api.post("/api/v1/webhooks", {"url": receiver.url, "events": ["review.pending"]}, format="json")
    receiver.codes.extend([500])
    cid = api.post("/api/v1/conversations", {"workflow_id": "parking_help_desk"}, format="json").json()["id"]
    with django_capture_on_commit_callbacks(execute=True):
        api.post(f"/api/v1/conversations/{cid}/messages", {"text": "verify order SCN-020"}, format="json")
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("pending", 1, 500)
    assert delivery.next_attempt_at is not None
    WebhookDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=None)
    call_command("retry_webhooks", stdout=io.StringIO())
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("succeeded", 2)
    assert len({json.loads(r["body"])["event_id"] for r in receiver.requests}) == 1  # the same event, resent
    call_command("retry_webhooks", stdout=io.StringIO())
    assert len(receiver.requests) == 2  # a delivered event is never sent again
    assert [backoff(n) for n in (1, 2, 3, 20)] == [2, 4, 8, 600]
