"""The conversation API: walks to the end, idempotency, privacy, errors, concurrent turns."""

from __future__ import annotations

import threading

import pytest
from django.db import connections

from conversations.models import Message
from workflows.models import AuditEvent, RunDocument

pytestmark = pytest.mark.django_db


def test_parking_walk_to_the_end(chat) -> None:  # noqa: ANN001
    c = chat("parking_help_desk")
    r = c.say("Does plate 沪B88888 have unpaid parking in Shanghai?")
    assert r["current_step"] == "answer" and "13.00" in r["reply"]["text"]
    assert r["execution_path"]["tools_called"] == ["billing.arrears_check"]
    done = c.choose("finish")
    assert done["status"] == "completed"


def test_rv_walk_with_confirmed_estimate(chat) -> None:  # noqa: ANN001
    c = chat("rv_diagnostic")
    for text in ("AC not cooling", "120 volts", "compressor hums, won't start", "cap is bulged and weak"):
        c.say(text)
    assert c.last["current_step"] == "authorization"
    c.choose("confirm_estimate", expect=409)
    done = c.choose("confirm_estimate", consent=True)
    assert done["status"] == "completed" and done["estimate"]["status"] == "confirmed"
    report = RunDocument.objects.filter(run__conversation__id=c.id, key="final_report").latest("version").content
    assert report["estimate_status"] == "confirmed" and report["complaint"]


def test_manager_walk(chat) -> None:  # noqa: ANN001
    c = chat("manager_assistant")
    for text in ("My employee Sam didn't show up for two shifts", "Yes, I called him twice, no answer", "No, first time, nothing documented yet"):
        c.say(text)
    c.choose("draft_email", consent=True)
    assert c.choose("finish")["status"] == "completed"


def test_permit_walk(chat) -> None:  # noqa: ANN001
    from tests.support.helpers import plan_document

    c = chat("permit_form")
    questions = plan_document("permit_form")["conversation"]["form"]["questions"]
    answers = {"choice": None, "number": "2", "yes_no": "yes", "text": "A two storey family home with a garage"}
    for _ in range(len(questions) * 2):
        if c.get()["current_step"] != "collect_answers":
            break
        qid = c.get()["procedure_step"]
        spec = next((q for q in questions if q["id"] == qid), questions[0])
        answer = answers[spec.get("answer_type", "text")] or spec["choices"][0]["value"]
        c.say(answer)
    assert c.get()["current_step"] == "review_form"
    done = c.choose("submit_form", consent=True)
    assert done["status"] == "completed"
    form = RunDocument.objects.get(run__conversation__id=c.id, key="completed_form").content
    assert len(form["answers"]) >= len([q for q in questions if q.get("required", True)])


def test_project_intake_walk(chat) -> None:  # noqa: ANN001
    c = chat("project_intake")
    for text in ("We want to build an online shop for our bakery", "The goal is to sell cakes online with delivery",
                 "Local customers in our city", "Budget is 20k and it should launch by June"):
        c.say(text)
    assert c.last["current_step"] == "review_plan"
    assert {"intake_document", "project_plan"} <= set(c.last["documents"])
    assert c.choose("accept_plan", consent=True)["status"] == "completed"
    decisions = AuditEvent.objects.filter(run__conversation__id=c.id, event_type="decision").values_list("chosen_option_id", flat=True)
    assert list(decisions) == ["submit_intake", "run_qa", "qa_passed", "qualify", "present_plan", "accept_plan", "complete"]


def test_idempotency_key_returns_the_first_result_and_adds_nothing(chat) -> None:  # noqa: ANN001
    c = chat("parking_help_desk")
    first = c.say("Does plate 沪B88888 have unpaid parking?", HTTP_IDEMPOTENCY_KEY="k-1")
    count = Message.objects.filter(conversation_id=c.id).count()
    again = c.say("Does plate 沪B88888 have unpaid parking?", HTTP_IDEMPOTENCY_KEY="k-1")
    assert again == first and Message.objects.filter(conversation_id=c.id).count() == count
    clash = c.client.post(f"/api/v1/conversations/{c.id}/messages", {"text": "something else"}, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert clash.status_code == 409 and clash.json()["error"]["code"] == "idempotency_key_reused"


def test_privacy_and_errors(chat, other_api, supervisor_api) -> None:  # noqa: ANN001
    c = chat("parking_help_desk")
    for path in ("", "/messages", "/audit"):
        assert other_api.get(f"/api/v1/conversations/{c.id}{path}").status_code == 404
    assert other_api.post(f"/api/v1/conversations/{c.id}/messages", {"text": "hi"}, format="json").status_code == 404
    assert other_api.post(f"/api/v1/conversations/{c.id}/choose", {"option_id": "finish"}, format="json").status_code == 404
    assert other_api.get("/api/v1/conversations").json()["count"] == 0
    assert supervisor_api.get(f"/api/v1/conversations/{c.id}").status_code == 200
    assert c.client.post("/api/v1/conversations", {"workflow_id": "nope"}, format="json").status_code == 404
    assert c.client.post("/api/v1/conversations", {"workflow_id": "permit_form", "locale": "xx"}, format="json").status_code == 400
    empty = c.client.post(f"/api/v1/conversations/{c.id}/messages", {"text": "   "}, format="json")
    assert empty.status_code == 400 and empty.json()["error"]["details"]
    refused = c.client.post(f"/api/v1/conversations/{c.id}/choose", {"option_id": "waive_fee"}, format="json")
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "option_not_available"
    assert AuditEvent.objects.filter(run__conversation__id=c.id, event_type="choice_refused", chosen_option_id="waive_fee").exists()


def test_state_resumes_exactly_from_storage(chat) -> None:  # noqa: ANN001
    c = chat("rv_diagnostic")
    c.say("Roof AC isn't cooling")
    before = c.get()
    from conversations.selectors import config_cache_clear
    from workflows.selectors import plans_cache_clear

    config_cache_clear()  # a restart: nothing but the database survives
    plans_cache_clear()
    after = c.get()
    assert before == after
    assert c.say("118 V at the supply")["procedure_step"] == "compressor_start"


@pytest.mark.django_db(transaction=True)
def test_concurrent_turns_are_serialised(api, demo) -> None:  # noqa: ANN001
    from tests.conversations.conftest import Chat

    c = Chat(api, "parking_help_desk")
    barrier = threading.Barrier(4)
    codes: list[int] = []

    def send(i: int) -> None:
        from rest_framework.test import APIClient

        client = APIClient()
        client.credentials(**api._credentials)
        barrier.wait()
        codes.append(client.post(f"/api/v1/conversations/{c.id}/messages", {"text": f"plate 沪A1000{i} arrears?"}, format="json").status_code)
        connections.close_all()

    threads = [threading.Thread(target=send, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert codes.count(201) + codes.count(409) == 4 and codes.count(201) >= 1
    state = c.get()
    messages = Message.objects.filter(conversation_id=c.id, role="user").count()
    assert state["turn_count"] == messages == codes.count(201)  # no lost update


def test_workflow_changes_only_through_an_offered_option(chat, api) -> None:  # noqa: ANN001
    from conversations.models import Conversation
    from tests.support.helpers import plan_document
    from workflows.services.plans import plan_upload

    doc = plan_document("manager_assistant")
    doc["edges"].append({"option_id": "switch_to_intake", "from": "guidance", "to": "done", "change_workflow": "project_intake",
                         "label": "Start a project intake instead", "effects_summary": "Closes this and opens a project intake."})
    plan_upload(document=doc)
    c = chat("manager_assistant")
    c.say("Actually I need help planning a project")
    assert c.get()["workflow_id"] == "manager_assistant"  # nothing changes by itself
    done = c.choose("switch_to_intake")
    assert done["status"] == "completed"
    successor = Conversation.objects.exclude(pk=c.id).get(owner__username="pat")
    assert successor.workflow_id == "project_intake"
