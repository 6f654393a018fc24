"""Turns whose task the broker lost, on real Celery workers over a Redis of the test's own.

The Redis keeps nothing on disk (`--save ""`, no AOF), like the machine's: restarting it empties
the queue. The test restarts only its own server (a free port), never the shared one. Runs
with CONCIERGE_TEST_BROKER_URL set, as the other real-worker tests (the workers share the test
database, so these tests commit for real).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis

from conversations.models import Message
from tests.support import demo_data
from tests.support.fake_openai import NO_COMMANDS, FakeOpenAI, Scripted
from tests.support.workers import database_url, stop, wait_for
from workflows.models import AuditEvent

ROOT = Path(__file__).resolve().parents[2]
TEXT = "Does plate 沪B88888 have unpaid parking?"
pytestmark = [
    pytest.mark.skipif(not os.environ.get("CONCIERGE_TEST_BROKER_URL"),
                       reason="needs CONCIERGE_TEST_BROKER_URL (the real-worker tests)"),
    pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server to start a broker of its own"),
    pytest.mark.django_db(transaction=True),
]


class OwnRedis:
    """A redis-server on a free port that the test may kill and start again (empty)."""

    def __init__(self) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--daemonize", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis(port=self.port)
        assert wait_for(lambda: _answers(client), timeout=10), "the test's redis-server did not start"

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()  # SIGKILL: nothing is flushed, as when a machine loses power
            self.process.wait(timeout=10)

    def restart(self) -> None:
        self.kill()
        self.start()

    def queued(self) -> int:
        return redis.Redis(port=self.port).llen("celery")


def _answers(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.ConnectionError:
        return False


@pytest.fixture
def broker(settings) -> Iterator[OwnRedis]:  # noqa: ANN001
    """The test's own Redis as the broker of this process (the rest of the suite runs tasks inline)."""
    from config.celery import app

    own = OwnRedis()
    own.start()
    saved = (app.conf.broker_url, app.conf.task_always_eager)
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.CONCIERGE_ASYNC_TURNS = True
    app.conf.broker_url, app.conf.task_always_eager = own.url, False
    app._pool, app.amqp._producer_pool = None, None  # pools made earlier point at another broker
    try:
        yield own
    finally:
        app.conf.broker_url, app.conf.task_always_eager = saved
        app._pool, app.amqp._producer_pool = None, None
        own.kill()


@pytest.fixture
def workers(broker: OwnRedis, tmp_path: Path) -> Iterator[Callable[..., subprocess.Popen]]:
    """`workers(env, beat=False)` starts a Celery worker on the test's broker; all stopped at the end."""
    started: list[subprocess.Popen] = []

    def start(extra_env: dict[str, str] | None = None, *, beat: bool = False) -> subprocess.Popen:
        """Started and answering a ping (a worker takes seconds to start on a busy machine)."""
        env = {**os.environ, "DATABASE_URL": database_url(), "DJANGO_SETTINGS_MODULE": "config.settings.test",
               "CELERY_BROKER_URL": broker.url, **(extra_env or {})}
        env.pop("CELERY_VISIBILITY_TIMEOUT", None)  # the default: a lost turn must not wait for it
        name = f"lost-{time.time_ns()}"
        args = [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=solo", "--concurrency=1", "-l", "warning",
                "--without-gossip", "--without-mingle", "--without-heartbeat", "-n", f"{name}@%h"]
        if beat:
            args += ["--beat", "--schedule", str(tmp_path / f"{name}-beat-schedule")]
        worker = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                  stderr=open("/tmp/worker.log", "a"), start_new_session=True)  # noqa: SIM115
        started.append(worker)
        assert wait_for(lambda: _pings(f"{name}@{socket.gethostname()}"), timeout=90), "the worker did not start"
        return worker

    yield start
    for worker in started:
        stop(worker)


def _pings(node: str) -> bool:
    from config.celery import app

    return bool(app.control.ping(destination=[node], timeout=0.5))


@pytest.fixture
def page(client, transactional_db):  # noqa: ANN001, ANN201
    """alice on the chat page of a new parking conversation: (client, conversation id)."""
    from django.contrib.auth import get_user_model

    demo_data.ensure()
    client.force_login(get_user_model().objects.get(username="alice"))
    response = client.post("/c/start/parking_help_desk/", {"locale": "en"})
    return client, int(response["Location"].strip("/").split("/")[-1])


def _send(page) -> Message:  # noqa: ANN001
    """The person sends a message from the page: stored waiting, its task handed to the broker."""
    client, cid = page
    assert client.post(f"/c/{cid}/send", {"text": TEXT}).status_code == 302
    return Message.objects.select_related("conversation").get(conversation_id=cid, role="user")


def _poll(page, message: Message):  # noqa: ANN001, ANN202
    """The page's poll while it shows a waiting turn (app.js adds `waiting`), from a page that
    shows the conversation as it was when the message was sent."""
    client, cid = page
    version = message.conversation.version
    return client.get(f"/c/{cid}/updates", {"after": message.pk - 1, "v": version, "waiting": 1}, HTTP_HX_REQUEST="true")


def _answered(message: Message) -> bool:
    return Message.objects.get(pk=message.pk).payload.get("kind") == "message"


def _replies(message: Message) -> list[Message]:
    rows = Message.objects.filter(conversation_id=message.conversation_id, role="assistant")
    return [m for m in rows if m.payload.get("kind") != "greeting"]


def _audits(message: Message, event_type: str) -> int:
    return AuditEvent.objects.filter(conversation_id=message.conversation_id, event_type=event_type).count()


def test_a_turn_queued_before_the_broker_restarted_is_answered_once(page, broker, workers, settings) -> None:  # noqa: ANN001
    settings.CONCIERGE_TURN_REQUEUE_AFTER = 2
    message = _send(page)
    assert broker.queued() == 1  # the task reached the broker...
    broker.restart()
    assert broker.queued() == 0  # ...and the restart lost it
    workers()
    time.sleep(2)  # the worker is up and has nothing to do: before the sweep the turn waited for good
    assert Message.objects.get(pk=message.pk).payload == {"kind": "pending"}

    # no beat: the page's poll finds the turn overdue and queues it again
    assert _poll(page, message).status_code == 204
    assert _audits(message, "turn_requeued") == 1
    assert wait_for(lambda: _answered(message), timeout=90), "the turn queued again was never answered"
    assert len(_replies(message)) == 1 and "13.00" in _replies(message)[0].text
    assert _audits(message, "broker_unavailable") == 0  # the worker answered it, not this process

    time.sleep(3)  # later polls and sweeps find nothing to do
    assert "13.00" in _poll(page, message).content.decode()
    from conversations.services import turn_overdue_sweep

    assert turn_overdue_sweep().requeued == ()
    assert len(_replies(message)) == 1 and _audits(message, "turn_requeued") == 1


def test_beat_queues_again_a_turn_the_broker_lost(page, broker, workers) -> None:  # noqa: ANN001
    message = _send(page)
    broker.restart()
    # The worker runs beat itself (-B): a sweep every 5 s, turns overdue after 10 s (and failed
    # 10 s after they were queued again: time enough for a worker on a busy machine).
    workers({"CONCIERGE_TURN_REQUEUE_AFTER": "10"}, beat=True)
    assert wait_for(lambda: _answered(message), timeout=60), "beat never queued the lost turn again"
    assert len(_replies(message)) == 1 and "13.00" in _replies(message)[0].text
    assert _audits(message, "turn_requeued") == 1 and _audits(message, "turn_failed") == 0


def test_a_worker_killed_before_the_turn_ran_is_replaced_within_the_sweep_not_the_visibility_timeout(  # noqa: ANN001
        page, broker, workers, settings) -> None:
    fake = FakeOpenAI()
    # The understanding call (before the turn is applied) hangs, and the worker is killed during it.
    fake.script_commands(Scripted(NO_COMMANDS, delay=30), NO_COMMANDS)
    model_env = {"CONCIERGE_TEST_OPENAI_API_KEY": "test", "OPENAI_BASE_URL": fake.base_url}
    settings.CONCIERGE_TURN_REQUEUE_AFTER = 2
    try:
        first = workers(model_env)
        message = _send(page)
        assert wait_for(lambda: any(r["kind"] == "commands" for r in fake.requests), timeout=90), "the worker never took the turn"
        stop(first, signal.SIGKILL)
        assert Message.objects.get(pk=message.pk).payload == {"kind": "pending"}
        workers(model_env)
        started = time.monotonic()
        # Redis would hand the task out again only after the visibility timeout (300 s); the sweep does now.
        from conversations.services import turn_overdue_sweep

        assert turn_overdue_sweep().requeued == (message.pk,)
        assert wait_for(lambda: _answered(message), timeout=90), "the turn queued again was never answered"
        assert time.monotonic() - started < 150  # half the visibility timeout, on a busy machine
        assert len(_replies(message)) == 1
        assert Message.objects.filter(conversation_id=message.conversation_id, role="user").count() == 1
    finally:
        fake.close()


def test_a_turn_swept_while_the_broker_is_down_is_answered_by_the_page_poll(page, broker, settings) -> None:  # noqa: ANN001
    from config.celery import app

    settings.CONCIERGE_TURN_REQUEUE_AFTER = 1
    message = _send(page)
    broker.kill()  # the queue is gone, and so is the broker
    time.sleep(1.2)
    saved = app.conf.broker_connection_timeout
    app.conf.broker_connection_timeout = 1
    try:
        body = _poll(page, message).content.decode()  # the sweep cannot queue it again: it answers it here
    finally:
        app.conf.broker_connection_timeout = saved
    assert "13.00" in body and _answered(message) and len(_replies(message)) == 1
    assert _audits(message, "turn_requeued") == 1 and _audits(message, "broker_unavailable") == 1
