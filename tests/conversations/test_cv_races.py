"""Races on one conversation, and the model never holding a lock: real threads, real database.

Runs on whatever database the suite runs on: SQLite (a file, IMMEDIATE transactions) by
default, PostgreSQL when DATABASE_URL points there (.ci/run does both).
"""

from __future__ import annotations

import io
import threading
import time

import pytest
from django.core.management import call_command
from django.db import connections

from conversations.models import Conversation, IdempotencyRecord, Message
from tests.support.fake_openai import FakeOpenAI, Scripted
from tests.support.helpers import client_for, run_together
from workflows.models import AuditEvent, ConsentRecord, Run, RunDocument

pytestmark = pytest.mark.django_db(transaction=True)

MANAGER_SCRIPT = ("My employee Sam didn't show up for two shifts", "Yes, I called him twice, no answer",
                  "No, first time, nothing documented yet")


def _race(fn, count: int) -> list:  # noqa: ANN001
    """Run fn(i) in `count` threads released together; each result is (status, body) or a crash."""
    return [("crash", repr(r)) if isinstance(r, Exception) else r for r in run_together(fn, count)]


def _post(user, path: str, body: dict, **headers) -> tuple[int, dict]:  # noqa: ANN001, ANN003
    response = client_for(user).post(path, body, format="json", **headers)
    return response.status_code, response.json()


@pytest.fixture
def manager_ready(person):  # noqa: ANN001, ANN201
    """A manager-assistant conversation where drafting the email is on offer."""
    call_command("seed_demo", stdout=io.StringIO())
    api = client_for(person)
    cid = api.post("/api/v1/conversations", {"workflow_id": "manager_assistant"}, format="json").json()["id"]
    for text in MANAGER_SCRIPT:
        last = api.post(f"/api/v1/conversations/{cid}/messages", {"text": text}, format="json").json()
    assert "draft_email" in [o["option_id"] for o in last["options"] if o["eligibility"] == "eligible"]
    return cid


def _one_effect(cid: int) -> None:
    conversation = Conversation.objects.select_related("run").get(pk=cid)
    run = conversation.run
    assert ConsentRecord.objects.filter(run=run, option_id="draft_email").count() == 1
    assert AuditEvent.objects.filter(run=run, event_type="decision", chosen_option_id="draft_email").count() == 1
    assert AuditEvent.objects.filter(run=run, event_type="consent_recorded").count() == 1
    assert RunDocument.objects.filter(run=run, key="email_draft").count() == 1
    assert Message.objects.filter(conversation=conversation, payload__kind="choice").count() == 1
    expected = {Run.Status.WAITING_REVIEW: "waiting_review", Run.Status.COMPLETED: "completed"}.get(run.status, "active")
    assert conversation.status == expected


@pytest.mark.parametrize("with_key", [True, False], ids=["one-idempotency-key", "no-key"])
def test_sixteen_simultaneous_choices_have_exactly_one_effect(person, manager_ready, with_key) -> None:  # noqa: ANN001
    cid = manager_ready
    headers = {"HTTP_IDEMPOTENCY_KEY": "choose-once"} if with_key else {}

    def choose(_: int) -> tuple[int, dict]:
        return _post(person, f"/api/v1/conversations/{cid}/choose", {"option_id": "draft_email", "consent": True}, **headers)

    results = _race(choose, 16)
    assert not [r for r in results if r[0] == "crash" or r[0] >= 500], results
    ok = [body for status, body in results if status == 200]
    if with_key:
        assert len(ok) == 16, results  # every retry replays the first response
        assert all(body == ok[0] for body in ok)
        assert IdempotencyRecord.objects.filter(key="choose-once", completed=True).count() == 1
    else:
        assert len(ok) == 1, results
        refused = [body for status, body in results if status != 200]
        assert {status for status, _ in results} == {200, 409}
        assert {body["error"]["code"] for body in refused} == {"option_not_available"}
    _one_effect(cid)


def test_a_replayed_refusal_is_the_stored_refusal(person, manager_ready) -> None:  # noqa: ANN001
    cid = manager_ready
    first = _post(person, f"/api/v1/conversations/{cid}/choose", {"option_id": "draft_email"}, HTTP_IDEMPOTENCY_KEY="k1")
    again = _post(person, f"/api/v1/conversations/{cid}/choose", {"option_id": "draft_email"}, HTTP_IDEMPOTENCY_KEY="k1")
    assert first[0] == again[0] == 409 and first[1] == again[1]
    assert first[1]["error"]["code"] == "consent_required"
    # the refusal was audited once, and the same key with another body is refused
    assert AuditEvent.objects.filter(run__conversation__id=cid, event_type="consent_missing").count() == 1
    other = _post(person, f"/api/v1/conversations/{cid}/choose", {"option_id": "draft_email", "consent": True}, HTTP_IDEMPOTENCY_KEY="k1")
    assert other[0] == 409 and other[1]["error"]["code"] == "idempotency_key_reused"


def test_an_action_is_never_eligible_before_the_person_said_anything(person) -> None:  # noqa: ANN001
    call_command("seed_demo", stdout=io.StringIO())
    api = client_for(person)
    for workflow_id in ("manager_assistant", "parking_help_desk", "rv_diagnostic", "permit_form", "project_intake"):
        started = api.post("/api/v1/conversations", {"workflow_id": workflow_id}, format="json").json()
        plan = api.get(f"/api/v1/workflow-plans/{workflow_id}").json()
        action_steps = {n["id"] for n in plan["definition"]["nodes"] if n["type"] == "action"}
        for option in started["options"]:
            if option["target_step_id"] in action_steps:
                assert option["eligibility"] == "blocked", (workflow_id, option)
                refused = api.post(f"/api/v1/conversations/{started['id']}/choose",
                                   {"option_id": option["option_id"], "consent": True}, format="json")
                assert refused.status_code == 409, refused.content
    assert not ConsentRecord.objects.exists()


@pytest.fixture
def hanging_model(model_server):  # noqa: ANN001, ANN201
    return model_server(timeout=8)


def _answer(reply: str) -> dict:
    return {"type": "reply", "reply": reply, "option_id": None, "asks_question": False, "confidence": 0.9, "citations": []}


def _wait_for_requests(fake: FakeOpenAI, count: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while len(fake.replies()) < count and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(fake.replies()) >= count, "the model was never called"


def _in_background(fn) -> tuple[threading.Thread, list]:  # noqa: ANN001
    out: list = []

    def run() -> None:
        try:
            out.append(fn())
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, out


def test_a_hung_model_call_holds_no_lock_for_anyone_else(person, other_person, hanging_model) -> None:  # noqa: ANN001
    call_command("seed_demo", stdout=io.StringIO())
    api = client_for(person)
    mine = api.post("/api/v1/conversations", {"workflow_id": "parking_help_desk"}, format="json").json()["id"]
    hanging_model.script(Scripted({"reply": "slow"}, delay=5.0), Scripted(_answer("Hello!")))
    slow, _ = _in_background(lambda: _post(person, f"/api/v1/conversations/{mine}/messages", {"text": "How does billing work?"}))
    _wait_for_requests(hanging_model, 1)  # the first turn is now waiting on the model
    started = time.monotonic()
    other = client_for(other_person)
    theirs = other.post("/api/v1/conversations", {"workflow_id": "parking_help_desk"}, format="json")
    answered = other.post(f"/api/v1/conversations/{theirs.json()['id']}/messages", {"text": "hi, what is this?"}, format="json")
    elapsed = time.monotonic() - started
    assert theirs.status_code == 201 and answered.status_code == 201, answered.content
    assert elapsed < 3.0, f"another user's turn waited {elapsed:.1f}s behind a hung model call"
    slow.join(timeout=30)


def test_a_retry_during_the_model_call_replays_the_final_response(person, hanging_model) -> None:  # noqa: ANN001
    call_command("seed_demo", stdout=io.StringIO())
    cid = client_for(person).post("/api/v1/conversations", {"workflow_id": "parking_help_desk"}, format="json").json()["id"]
    hanging_model.script(Scripted(_answer("Billing is by the hour here."), delay=1.5))
    path, body = f"/api/v1/conversations/{cid}/messages", {"text": "How does billing work?"}
    first, out = _in_background(lambda: _post(person, path, body, HTTP_IDEMPOTENCY_KEY="turn-1"))
    _wait_for_requests(hanging_model, 1)
    retry = _post(person, path, body, HTTP_IDEMPOTENCY_KEY="turn-1")
    first.join(timeout=30)
    assert out and out[0][0] == retry[0] == 201
    assert retry[1] == out[0][1] and retry[1]["reply"]["backend"] == "openai"
    assert len(hanging_model.requests) == 2  # one understanding and one wording call: the retry did no work
    assert Message.objects.filter(conversation_id=cid, role="user").count() == 1


def test_a_model_answer_for_a_conversation_that_moved_on_is_discarded(person, hanging_model) -> None:  # noqa: ANN001
    call_command("seed_demo", stdout=io.StringIO())
    cid = client_for(person).post("/api/v1/conversations", {"workflow_id": "parking_help_desk"}, format="json").json()["id"]
    hanging_model.script(Scripted(_answer("Late answer."), delay=2.0),
                         Scripted(_answer("Quick answer.")))
    path = f"/api/v1/conversations/{cid}/messages"
    first, out = _in_background(lambda: _post(person, path, {"text": "How does billing work?"}))
    _wait_for_requests(hanging_model, 1)
    second = _post(person, path, {"text": "And is there a daily cap?"})
    first.join(timeout=30)
    assert second[0] == 201 and second[1]["reply"]["text"].startswith("Quick answer.")
    assert out[0][0] == 201 and out[0][1]["reply"]["backend"] == "rules"  # the stale model answer did not count
    assert AuditEvent.objects.filter(run__conversation__id=cid, event_type="model_answer_discarded").count() == 1
    texts = list(Message.objects.filter(conversation_id=cid, role="assistant").order_by("id").values_list("text", flat=True))
    assert not any(t.startswith("Late answer.") for t in texts)


def test_a_retried_start_gives_the_same_conversation(person) -> None:  # noqa: ANN001
    call_command("seed_demo", stdout=io.StringIO())

    def start(_: int) -> tuple[int, dict]:
        return _post(person, "/api/v1/conversations", {"workflow_id": "permit_form"}, HTTP_IDEMPOTENCY_KEY="start-1")

    results = _race(start, 6)
    assert {status for status, _ in results} == {201}, results
    assert len({body["id"] for _, body in results}) == 1
    assert Conversation.objects.filter(owner=person).count() == 1


def test_a_review_decided_while_the_person_keeps_typing_never_deadlocks(person, supervisor) -> None:  # noqa: ANN001
    """The decision locks the conversation before the run, as a turn does: no lock cycle."""
    from workflows.models import Review

    call_command("seed_demo", stdout=io.StringIO())
    api = client_for(person)
    cid = api.post("/api/v1/conversations", {"workflow_id": "parking_help_desk"}, format="json").json()["id"]
    api.post(f"/api/v1/conversations/{cid}/messages", {"text": "verify order SCN-020"}, format="json")
    review = Review.objects.get(run__conversation__id=cid)

    def act(i: int) -> tuple[int, dict]:
        if i == 0:
            return _post(supervisor, f"/api/v1/reviews/{review.pk}/decision", {"outcome": "approve", "reason": "checked"})
        return _post(person, f"/api/v1/conversations/{cid}/messages", {"text": f"any news? ({i})"})

    results = _race(act, 6)
    assert not [r for r in results if r[0] == "crash" or r[0] >= 500], results
    assert results[0][0] == 200, results[0]
    conversation = Conversation.objects.select_related("run").get(pk=cid)
    assert conversation.run.status != Run.Status.WAITING_REVIEW
    assert Message.objects.filter(conversation=conversation, payload__kind="review_decided").count() == 1
