"""Faults: the database refusing a write mid-turn, the broker down when a turn arrives.
Each time the person gets a clear answer and nothing is half-written."""

from __future__ import annotations

import pytest

from conversations.models import Conversation, Message
from workflows.models import AuditEvent, Run

pytestmark = pytest.mark.django_db


def test_a_write_refused_mid_turn_leaves_nothing_half_written(chat, monkeypatch) -> None:  # noqa: ANN001
    from django.db import DatabaseError

    from conversations import services

    c = chat("parking_help_desk")
    before = (Conversation.objects.get(pk=c.id).context, Run.objects.get(conversation__id=c.id).state,
              Message.objects.filter(conversation_id=c.id).count(), AuditEvent.objects.count())
    original = services._save_conversation

    def refuse(*args, **kwargs) -> None:  # noqa: ANN002, ANN003
        raise DatabaseError("disk I/O error")

    monkeypatch.setattr(services, "_save_conversation", refuse)
    response = c.client.post(f"/api/v1/conversations/{c.id}/messages", {"text": "Does plate 沪B88888 owe anything?"}, format="json")
    assert response.status_code == 500 and response.json()["error"]["code"] == "server_error"
    after = (Conversation.objects.get(pk=c.id).context, Run.objects.get(conversation__id=c.id).state,
             Message.objects.filter(conversation_id=c.id).count(), AuditEvent.objects.count())
    assert after == before  # the run's tool step, the messages and the audit rows all rolled back
    monkeypatch.setattr(services, "_save_conversation", original)
    assert "13.00" in c.say("Does plate 沪B88888 owe anything?")["reply"]["text"]  # and it works again


def test_broker_down_when_a_turn_arrives_answers_inline(client, person, demo, settings, django_capture_on_commit_callbacks) -> None:  # noqa: ANN001
    from config.celery import app

    settings.CONCIERGE_ASYNC_TURNS = True
    saved = (app.conf.broker_url, app.conf.task_always_eager, app.conf.broker_connection_timeout)
    app.conf.broker_url, app.conf.task_always_eager, app.conf.broker_connection_timeout = "redis://127.0.0.1:1/0", False, 1
    app._pool, app.amqp._producer_pool = None, None  # pools are per broker URL: publish to the dead one
    try:
        client.force_login(person)
        cid = int(client.post("/c/start/parking_help_desk/", {"locale": "en"})["Location"].strip("/").split("/")[-1])
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(f"/c/{cid}/send", {"text": "Does plate 沪B88888 owe anything?"})
        assert response.status_code == 302
    finally:
        app.conf.broker_url, app.conf.task_always_eager, app.conf.broker_connection_timeout = saved
        app._pool, app.amqp._producer_pool = None, None
    assert AuditEvent.objects.filter(event_type="broker_unavailable", conversation_id=cid).exists()
    texts = list(Message.objects.filter(conversation_id=cid).values_list("text", flat=True))
    assert any("13.00" in t for t in texts)
    assert Message.objects.filter(conversation_id=cid, payload__kind="pending").count() == 0


def test_queued_turns_run_once_even_if_the_task_is_delivered_twice(client, person, demo, settings, django_capture_on_commit_callbacks) -> None:  # noqa: ANN001
    from conversations.services import conversation_turn_process

    settings.CONCIERGE_ASYNC_TURNS = True
    client.force_login(person)
    cid = int(client.post("/c/start/parking_help_desk/", {"locale": "en"})["Location"].strip("/").split("/")[-1])
    with django_capture_on_commit_callbacks(execute=True):  # inline Celery runs the task on commit
        client.post(f"/c/{cid}/send", {"text": "Does plate 沪B88888 owe anything?"})
    message = Message.objects.get(conversation_id=cid, role="user")
    assert conversation_turn_process(message.pk) is False  # a redelivery does nothing
    assert Message.objects.filter(conversation_id=cid, role="assistant").count() == 2  # greeting + one reply
