"""Turns on a real Celery worker over Redis, including a worker killed mid-task.

Runs when CELERY_BROKER_URL is set (`.ci/run` sets it for the PostgreSQL pass); the worker
is a separate process on the same test database, so these tests commit for real.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conversations.models import Message
from tests.support import demo_data
from tests.support.fake_openai import FakeOpenAI, Scripted
from tests.support.workers import database_url, stop, wait_for

ROOT = Path(__file__).resolve().parents[2]
BROKER = os.environ.get("CONCIERGE_TEST_BROKER_URL", "")
pytestmark = [
    pytest.mark.skipif(not BROKER, reason="needs CONCIERGE_TEST_BROKER_URL (a Redis broker) for a real worker"),
    pytest.mark.django_db(transaction=True),
]


def start_worker(extra_env: dict[str, str]) -> subprocess.Popen:
    env = {**os.environ, "DATABASE_URL": database_url(), "DJANGO_SETTINGS_MODULE": "config.settings.test",
           "CELERY_BROKER_URL": BROKER, "CELERY_VISIBILITY_TIMEOUT": "3", **extra_env}
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=solo", "--concurrency=1", "-l", "warning",
         "--without-gossip", "--without-mingle", "--without-heartbeat", "-n", f"test-{time.time_ns()}@%h"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=open("/tmp/worker.log", "a"), start_new_session=True,
    )


@pytest.fixture
def purge_queue(settings):  # noqa: ANN001, ANN201
    """Send tasks to the real broker for this test only (the rest of the suite runs them inline)."""
    from config.celery import app

    saved = (app.conf.broker_url, app.conf.task_always_eager)
    settings.CELERY_TASK_ALWAYS_EAGER = False
    app.conf.broker_url, app.conf.task_always_eager = BROKER, False
    app._pool, app.amqp._producer_pool = None, None  # pools made earlier point at another broker
    app.control.purge()
    yield
    app.control.purge()
    app.conf.broker_url, app.conf.task_always_eager = saved
    app._pool, app.amqp._producer_pool = None, None


@pytest.fixture
def demo_committed(transactional_db):  # noqa: ANN001, ANN201
    demo_data.ensure()


def _queue_turn(text: str) -> Message:
    from django.contrib.auth import get_user_model

    from conversations import services

    user = get_user_model().objects.get(username="alice")
    conversation = services.conversation_start(user=user, workflow_id="parking_help_desk")
    return services.conversation_turn_queue(user=user, conversation_id=conversation.pk, text=text)


def test_a_turn_runs_on_a_real_worker(demo_committed, purge_queue) -> None:  # noqa: ANN001
    worker = start_worker({})
    try:
        message = _queue_turn("Does plate 沪B88888 have unpaid parking?")
        assert wait_for(lambda: Message.objects.get(pk=message.pk).payload.get("kind") == "message", timeout=40)
        reply = Message.objects.filter(conversation_id=message.conversation_id, role="assistant").order_by("-id").first()
        assert "13.00" in reply.text
    finally:
        stop(worker)


def test_a_worker_killed_mid_turn_loses_nothing_and_repeats_nothing(demo_committed, purge_queue) -> None:  # noqa: ANN001
    fake = FakeOpenAI()
    # The wording call hangs and the worker is killed during it. The rules phase had committed
    # before the model was called (no lock across the model), so the turn and its rules reply
    # are stored; the redelivered task finds the turn done and repeats nothing.
    fake.script(Scripted({"reply": "slow"}, delay=20))
    model_env = {"CONCIERGE_TEST_OPENAI_API_KEY": "test", "OPENAI_BASE_URL": fake.base_url, "CONCIERGE_LLM_TIMEOUT": "30"}
    worker = start_worker(model_env)
    try:
        message = _queue_turn("Does plate 沪B88888 have unpaid parking?")
        assert wait_for(lambda: len(fake.replies()) >= 1, timeout=40), "the worker never asked the model to word the reply"
        stop(worker, signal.SIGKILL)  # killed while waiting for the model

        def answers() -> list[Message]:
            return [m for m in Message.objects.filter(conversation_id=message.conversation_id, role="assistant")
                    if m.payload.get("kind") != "greeting"]

        assert Message.objects.get(pk=message.pk).payload.get("kind") == "message"
        assert len(answers()) == 1 and "13.00" in answers()[0].text  # the rules reply was already stored
        time.sleep(4)  # past the visibility timeout: the broker hands the task out again
        worker = start_worker(model_env)
        time.sleep(6)  # the redelivered task runs and finds the turn done
        assert len(answers()) == 1  # exactly one reply
        assert len(fake.replies()) == 1  # the redelivered task asked the model nothing
        user_turns = Message.objects.filter(conversation_id=message.conversation_id, role="user").count()
        assert user_turns == 1
    finally:
        stop(worker)
        fake.close()
