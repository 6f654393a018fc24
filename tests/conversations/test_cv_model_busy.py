"""A hung provider cannot take the site down (issue 34, item 6): one process has at most
CONCIERGE_LLM_MAX_CONCURRENT model calls open; a turn beyond them gets the rules' reply at once,
audited `model_busy`, and the server's threads stay free for everyone else (/healthz included).

Real HTTP both ways: the real `openai` client against the fake OpenAI-compatible server, and the
turns themselves through a WSGI server with a fixed pool of threads, as gunicorn's gthread has."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.db import connections
from rest_framework.authtoken.models import Token

from conversations.llm import ModelSettings, ModelUnavailable, OpenAIChatModel
from tests.support.fake_openai import NO_COMMANDS, FakeOpenAI, Scripted
from workflows.models import AuditEvent

ANSWER = {"type": "reply", "reply": "ok", "option_id": None, "confidence": 0.5, "citations": []}
QUESTION = "Does plate 沪B88888 have unpaid parking?"


# -- The model client: slots per process ------------------------------------------------------


@pytest.fixture
def fake():  # noqa: ANN201
    server = FakeOpenAI()
    yield server
    server.close()


def model(base_url: str, *, slots: int, budget: float = 10.0) -> OpenAIChatModel:
    return OpenAIChatModel(ModelSettings(api_key="k", base_url=base_url, model="m", timeout=budget, max_concurrent=slots))


def _wait_for(condition, timeout: float = 10.0) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert condition(), "timed out waiting"


def test_a_call_beyond_the_open_slots_is_refused_at_once_and_a_freed_slot_is_used_again(fake: FakeOpenAI) -> None:
    fake.script(Scripted(ANSWER, hang=True), ANSWER, Scripted(status=401), ANSWER)
    hung = threading.Thread(target=lambda: model(fake.base_url, slots=1).complete_json("s", "u"))
    hung.start()
    _wait_for(lambda: len(fake.requests) == 1)

    started = time.monotonic()
    with pytest.raises(ModelUnavailable) as raised:
        model(fake.base_url, slots=1).complete_json("s", "u")
    assert time.monotonic() - started < 0.2 and len(fake.requests) == 1  # the endpoint was never asked
    busy = raised.value
    assert (busy.kind, busy.broken_contract, busy.fallback_event) == ("model_busy", False, "model_busy")
    assert model(fake.base_url, slots=2).complete_json("s", "u") == ANSWER  # another limit, its own slots

    fake.release()
    hung.join(timeout=10)
    with pytest.raises(ModelUnavailable):  # a failed call gives its slot back too
        model(fake.base_url, slots=1).complete_json("s", "u")
    assert model(fake.base_url, slots=1).complete_json("s", "u") == ANSWER


def test_the_other_faults_keep_their_audit_events() -> None:
    assert ModelUnavailable("timeout", "x").fallback_event == "model_fallback"
    assert ModelUnavailable("not_json", "x").broken_contract


# -- Whole turns on a server with a fixed pool of threads -------------------------------------


class _Quiet(WSGIRequestHandler):
    def log_message(self, *args) -> None:  # noqa: ANN002
        return


class PooledWSGIServer(WSGIServer):
    """Each connection handled on one of `threads` threads; the rest wait for a free one."""

    def __init__(self, threads: int):
        super().__init__(("127.0.0.1", 0), _Quiet)
        self.pool = ThreadPoolExecutor(threads)
        self.set_app(WSGIHandler())

    def process_request(self, request, client_address) -> None:  # noqa: ANN001
        self.pool.submit(self._handle, request, client_address)

    def _handle(self, request, client_address) -> None:  # noqa: ANN001
        try:
            self.finish_request(request, client_address)
        except Exception:  # noqa: BLE001 - as socketserver does: report and carry on
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)
            connections.close_all()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@pytest.fixture
def site():  # noqa: ANN201
    server = PooledWSGIServer(threads=4)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.pool.shutdown(wait=True, cancel_futures=True)
    server.server_close()


def _post(url: str, token: str, body: dict, timeout: float = 30) -> tuple[int, dict, float]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", "Authorization": f"Token {token}"})
    started = time.monotonic()
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.status, json.load(response), time.monotonic() - started


@pytest.mark.django_db(transaction=True)
def test_turns_beyond_the_slots_get_the_rules_reply_at_once_and_healthz_stays_fast(site, model_server, settings, person, demo) -> None:  # noqa: ANN001
    settings.CONCIERGE_LLM_MAX_CONCURRENT = 2
    hung = model_server(timeout=20.0)
    hung.command_default = Scripted(NO_COMMANDS, hang=True)  # every model call hangs until released
    hung.default = Scripted(ANSWER, hang=True)
    token = Token.objects.create(user=person).key
    ids = [_post(f"{site.url}/api/v1/conversations", token, {"workflow_id": "parking_help_desk"})[1]["id"] for _ in range(6)]

    turns = ThreadPoolExecutor(6)
    try:
        futures = {cid: turns.submit(_post, f"{site.url}/api/v1/conversations/{cid}/messages", token, {"text": QUESTION})
                   for cid in ids}
        _wait_for(lambda: sum(f.done() for f in futures.values()) == 4, timeout=15)
        answered = {cid: f.result() for cid, f in futures.items() if f.done()}
        assert len(hung.requests) == 2  # two calls hang; the other four turns never reached the endpoint
        for cid, (status, body, took) in answered.items():
            assert status == 201 and body["reply"]["backend"] == "rules" and "13.00" in body["reply"]["text"]
            assert took < 8.0 and body["execution_path"]["contract_violations"] == ["model_busy"]
            busy = AuditEvent.objects.get(run__conversation__id=cid, event_type="model_busy")
            assert busy.outcome == "fallback_to_rules" and busy.payload["kind"] == "model_busy"
            assert not AuditEvent.objects.filter(run__conversation__id=cid, event_type="model_fallback").exists()

        started = time.monotonic()  # two of the four threads are still held by the hung provider
        with urllib.request.urlopen(f"{site.url}/healthz", timeout=5) as health:
            assert health.status == 200
        assert time.monotonic() - started < 1.0
        assert sum(not f.done() for f in futures.values()) == 2
    finally:
        hung.release()
        turns.shutdown(wait=True)
    assert all(f.result()[0] == 201 for f in futures.values())
