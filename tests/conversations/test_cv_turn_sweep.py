"""A queued turn whose task was lost (a broker restarted empty, a worker killed) is found by the
sweep: queued again once, answered once, and marked failed, with a retry on the page, if it is
lost again. No broker: "lost" is a dispatch that goes nowhere, and tasks are delivered by hand."""

from __future__ import annotations

import os
import re
from datetime import timedelta

import pytest
import time_machine

from conversations import services
from conversations.models import Conversation, Message
from tests.support.helpers import run_together
from workflows.models import AuditEvent

pytestmark = pytest.mark.django_db

TEXT = "Does plate 沪B88888 owe anything?"


@pytest.fixture
def lost(monkeypatch, settings) -> list[int]:  # noqa: ANN001
    """Turns go to workers (the page's path), and every task handed to the broker is lost."""
    settings.CONCIERGE_ASYNC_TURNS = True
    settings.CONCIERGE_TURN_REQUEUE_AFTER = 60
    dispatched: list[int] = []
    monkeypatch.setattr(services, "_dispatch_turn", dispatched.append)
    return dispatched


@pytest.fixture
def signed_in(client, person, demo):  # noqa: ANN001, ANN201
    client.force_login(person)
    return client


def _queued(client, django_capture_on_commit_callbacks) -> Message:  # noqa: ANN001
    """A turn sent from the chat page, as the page sends it."""
    cid = int(client.post("/c/start/parking_help_desk/", {"locale": "en"})["Location"].strip("/").split("/")[-1])
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(f"/c/{cid}/send", {"text": TEXT}).status_code == 302
    return Message.objects.get(conversation_id=cid, role="user")


def _replies(message: Message) -> list[Message]:
    rows = Message.objects.filter(conversation_id=message.conversation_id, role="assistant")
    return [m for m in rows if m.payload.get("kind") != "greeting"]


def _audits(message: Message, event_type: str) -> int:
    return AuditEvent.objects.filter(conversation_id=message.conversation_id, event_type=event_type).count()


def test_a_lost_turn_is_queued_again_once_and_answered_once(signed_in, lost, django_capture_on_commit_callbacks) -> None:  # noqa: ANN001
    message = _queued(signed_in, django_capture_on_commit_callbacks)
    assert lost == [message.pk] and message.payload == {"kind": "pending"}
    sent = message.created_at

    # a turn younger than the setting is left alone
    with django_capture_on_commit_callbacks(execute=True):
        assert services.turn_overdue_sweep(now=sent + timedelta(seconds=59)) == services.TurnSweep()
    assert lost == [message.pk] and _audits(message, "turn_requeued") == 0

    # older: queued again, once, and recorded on the message and in the audit trail
    with django_capture_on_commit_callbacks(execute=True):
        assert services.turn_overdue_sweep(now=sent + timedelta(seconds=61)).requeued == (message.pk,)
    assert lost == [message.pk, message.pk]
    assert "requeued_at" in Message.objects.get(pk=message.pk).payload
    assert _audits(message, "turn_requeued") == 1

    # a second sweep does nothing (the turn was queued again less than the setting ago)
    with django_capture_on_commit_callbacks(execute=True):
        assert services.turn_overdue_sweep(now=sent + timedelta(seconds=62)) == services.TurnSweep()
    assert lost == [message.pk, message.pk] and _audits(message, "turn_requeued") == 1

    # the original task turns up after all, and so does the copy: one answer
    assert [services.conversation_turn_process(pk) for pk in lost] == [True, False]
    assert Message.objects.get(pk=message.pk).payload == {"kind": "message"}
    assert len(_replies(message)) == 1 and "13.00" in _replies(message)[0].text
    with django_capture_on_commit_callbacks(execute=True):  # answered: no sweep touches it again
        assert services.turn_overdue_sweep(now=sent + timedelta(hours=1)) == services.TurnSweep()


def test_a_turn_lost_twice_fails_and_the_page_offers_to_try_again(signed_in, lost, monkeypatch,  # noqa: ANN001
                                                                   django_capture_on_commit_callbacks) -> None:
    message = _queued(signed_in, django_capture_on_commit_callbacks)
    sent = message.created_at
    with django_capture_on_commit_callbacks(execute=True):
        assert services.turn_overdue_sweep(now=sent + timedelta(seconds=61)).requeued == (message.pk,)
        # queued again less than the setting ago: not failed yet
        assert services.turn_overdue_sweep(now=sent + timedelta(seconds=100)) == services.TurnSweep()
    version = Conversation.objects.get(pk=message.conversation_id).version
    with django_capture_on_commit_callbacks(execute=True):
        assert services.turn_overdue_sweep(now=sent + timedelta(seconds=122)).failed == (message.pk,)
        assert services.turn_overdue_sweep(now=sent + timedelta(seconds=200)) == services.TurnSweep()  # failed once
    assert lost == [message.pk, message.pk]  # never queued a third time
    assert Message.objects.get(pk=message.pk).payload["kind"] == "failed"
    assert _audits(message, "turn_failed") == 1
    assert services.conversation_turn_process(message.pk) is False  # a late task answers nothing now
    assert _replies(message) == []

    # the page's poll sees a new version and shows the failure, with a retry
    cid = message.conversation_id
    update = signed_in.get(f"/c/{cid}/updates", {"after": 0, "v": version}, HTTP_HX_REQUEST="true")
    body = update.content.decode()
    assert update.status_code == 200 and "This message could not be answered." in body
    assert f'name="retry" value="{message.pk}"' in body and "banner-working" not in body

    # "Try again": the same message waits again; the page gets it back; this time a worker answers
    monkeypatch.setattr(services, "_dispatch_turn", services.conversation_turn_process)
    with django_capture_on_commit_callbacks(execute=True):
        retried = signed_in.post(f"/c/{cid}/send", {"retry": message.pk}, HTTP_HX_REQUEST="true")
    assert retried.status_code == 200 and f'data-id="{message.pk}"' in retried.content.decode()
    assert Message.objects.get(pk=message.pk).payload == {"kind": "message"}
    assert len(_replies(message)) == 1 and "13.00" in _replies(message)[0].text
    assert Message.objects.filter(conversation_id=cid, role="user").count() == 1  # the same message, not a copy
    assert _audits(message, "turn_retried") == 1
    # a second click finds nothing to retry
    with django_capture_on_commit_callbacks(execute=True):
        signed_in.post(f"/c/{cid}/send", {"retry": message.pk})
    assert _audits(message, "turn_retried") == 1 and len(_replies(message)) == 1


def test_a_retried_turn_counts_its_wait_from_the_retry(signed_in, lost, django_capture_on_commit_callbacks) -> None:  # noqa: ANN001
    message = _queued(signed_in, django_capture_on_commit_callbacks)
    sent = message.created_at
    with django_capture_on_commit_callbacks(execute=True):
        services.turn_overdue_sweep(now=sent + timedelta(seconds=61))
        services.turn_overdue_sweep(now=sent + timedelta(seconds=122))
    with time_machine.travel(sent + timedelta(seconds=300), tick=False), django_capture_on_commit_callbacks(execute=True):
        services.conversation_turn_retry(user=message.conversation.owner, conversation_id=message.conversation_id,
                                         message_id=message.pk)
    assert lost == [message.pk] * 3
    with django_capture_on_commit_callbacks(execute=True):
        assert services.turn_overdue_sweep(now=sent + timedelta(seconds=330)) == services.TurnSweep()
        assert services.turn_overdue_sweep(now=sent + timedelta(seconds=361)).requeued == (message.pk,)
    assert lost == [message.pk] * 4


def test_someone_else_cannot_retry_a_failed_turn(signed_in, lost, other_person, client, django_capture_on_commit_callbacks) -> None:  # noqa: ANN001
    from django.test import Client

    message = _queued(signed_in, django_capture_on_commit_callbacks)
    sent = message.created_at
    with django_capture_on_commit_callbacks(execute=True):
        services.turn_overdue_sweep(now=sent + timedelta(seconds=61))
        services.turn_overdue_sweep(now=sent + timedelta(seconds=122))
    other = Client()
    other.force_login(other_person)
    assert other.post(f"/c/{message.conversation_id}/send", {"retry": message.pk}).status_code == 404
    assert Message.objects.get(pk=message.pk).payload["kind"] == "failed"


def test_without_beat_the_page_polling_a_waiting_turn_runs_the_sweep(signed_in, lost, django_capture_on_commit_callbacks) -> None:  # noqa: ANN001
    message = _queued(signed_in, django_capture_on_commit_callbacks)
    cid, sent = message.conversation_id, message.created_at
    version = Conversation.objects.get(pk=cid).version
    with time_machine.travel(sent + timedelta(seconds=61), tick=False):
        # a poll that says nothing is waiting sweeps nothing (the cheap path)
        with django_capture_on_commit_callbacks(execute=True):
            assert signed_in.get(f"/c/{cid}/updates", {"after": 0, "v": version}).status_code == 204
        assert lost == [message.pk]
        # the page shows a waiting turn: the poll queues it again; nothing to show yet
        with django_capture_on_commit_callbacks(execute=True):
            assert signed_in.get(f"/c/{cid}/updates", {"after": 0, "v": version, "waiting": 1}).status_code == 204
        assert lost == [message.pk, message.pk]
    with time_machine.travel(sent + timedelta(seconds=122), tick=False), django_capture_on_commit_callbacks(execute=True):
        failed = signed_in.get(f"/c/{cid}/updates", {"after": 0, "v": version, "waiting": 1}, HTTP_HX_REQUEST="true")
    assert failed.status_code == 200 and "This message could not be answered." in failed.content.decode()


def test_a_waiting_turn_says_when_it_takes_longer_than_usual(signed_in, lost, settings, django_capture_on_commit_callbacks) -> None:  # noqa: ANN001
    settings.CONCIERGE_TURN_DELAYED_AFTER = 8
    message = _queued(signed_in, django_capture_on_commit_callbacks)
    cid, sent = message.conversation_id, message.created_at

    def note(at: timedelta) -> str:
        with time_machine.travel(sent + at, tick=False):
            page = signed_in.get(f"/c/{cid}/").content.decode()
        return re.search(r'<p class="msg-note msg-delayed"[^>]*>', page).group(0)

    young = note(timedelta(seconds=3))
    assert 'data-delayed-in="5"' in young and "hidden" in young  # app.js shows it in 5 s
    late = note(timedelta(seconds=9))
    assert 'data-delayed-in="0"' in late and "hidden" not in late
    page = signed_in.get(f"/c/{cid}/").content.decode()
    assert "Still working… this is taking longer than usual." in page


def test_the_sweep_is_on_beat_and_turns_have_time_limits_inside_the_visibility_timeout(settings) -> None:  # noqa: ANN001
    from config.celery import app
    from conversations.tasks import process_turn

    entry = app.conf.beat_schedule["requeue-overdue-turns"]
    assert entry["task"] == "conversations.requeue_overdue_turns" and entry["task"] in app.tasks
    assert entry["schedule"] <= settings.CONCIERGE_TURN_REQUEUE_AFTER
    assert settings.CONCIERGE_LLM_TIMEOUT < process_turn.soft_time_limit < process_turn.time_limit
    visibility = settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]
    if "CELERY_VISIBILITY_TIMEOUT" not in os.environ:
        assert visibility == 300
    assert visibility >= 2 * process_turn.time_limit


def test_the_beat_task_runs_the_sweep(lost, signed_in, django_capture_on_commit_callbacks) -> None:  # noqa: ANN001
    from conversations.tasks import requeue_overdue_turns

    message = _queued(signed_in, django_capture_on_commit_callbacks)
    with time_machine.travel(message.created_at + timedelta(seconds=61), tick=False), \
            django_capture_on_commit_callbacks(execute=True):
        assert requeue_overdue_turns.apply().get() == {"requeued": [message.pk], "failed": []}
    assert lost == [message.pk, message.pk]


def test_a_sweep_started_before_another_claimed_the_turn_queues_nothing(signed_in, lost, django_capture_on_commit_callbacks) -> None:  # noqa: ANN001
    # Two sweeps read the same waiting row; the conditional update lets one of them claim it.
    message = Message.objects.select_related("conversation__run").get(pk=_queued(signed_in, django_capture_on_commit_callbacks).pk)
    later = message.created_at + timedelta(seconds=61)
    with django_capture_on_commit_callbacks(execute=True):
        assert services._turn_requeue(message, later) is True
        assert services._turn_requeue(message, later) is False
    assert lost == [message.pk, message.pk]
    message.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=True):
        assert services._turn_fail(message, later + timedelta(seconds=61)) is True
        assert services._turn_fail(message, later + timedelta(seconds=61)) is False
    assert _audits(message, "turn_requeued") == 1 and _audits(message, "turn_failed") == 1


@pytest.mark.django_db(transaction=True)
def test_sweeps_racing_in_threads_queue_a_turn_once(person, monkeypatch, settings) -> None:  # noqa: ANN001
    import io

    from django.core.management import call_command

    call_command("seed_demo", stdout=io.StringIO())
    settings.CONCIERGE_ASYNC_TURNS = True
    dispatched: list[int] = []
    monkeypatch.setattr(services, "_dispatch_turn", dispatched.append)  # on_commit runs for real here
    conversation = services.conversation_start(user=person, workflow_id="parking_help_desk")
    message = services.conversation_turn_queue(user=person, conversation_id=conversation.pk, text=TEXT)
    later = message.created_at + timedelta(seconds=61)
    results = run_together(lambda _: services.turn_overdue_sweep(now=later), 6)
    assert not [r for r in results if isinstance(r, Exception)], results
    assert sum(len(r.requeued) for r in results) == 1
    assert dispatched == [message.pk, message.pk]
    assert AuditEvent.objects.filter(conversation=conversation, event_type="turn_requeued").count() == 1
    failing = run_together(lambda _: services.turn_overdue_sweep(now=later + timedelta(seconds=61)), 6)
    assert sum(len(r.failed) for r in failing if not isinstance(r, Exception)) == 1, failing
    assert AuditEvent.objects.filter(conversation=conversation, event_type="turn_failed").count() == 1
