"""The model as a command generator (interpret phase), through the real `openai` client.

The fake server answers understanding calls (Structured Outputs) from `command_answers`
and wording calls from `answers`. Every command is validated before the engine sees it;
refused ones are audited, and the rules fill in.
"""

from __future__ import annotations

import pytest

from billing.models import ParkingOrder
from tests.support.fake_openai import Scripted
from workflows.models import AuditEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def fake(model_server):  # noqa: ANN001, ANN201
    server = model_server(timeout=3)
    server.default = Scripted({"bad": "shape"})  # wording answers break the contract: the rules' words stand
    return server


def commands(*items: dict) -> dict:
    return {"commands": list(items), "reply": None}


def events(conversation_id: int, event_type: str) -> list[dict]:
    return [e.payload for e in AuditEvent.objects.filter(run__conversation__id=conversation_id, event_type=event_type)]


@pytest.fixture
def odd_order(demo):  # noqa: ANN001, ANN201
    """An order whose number has none of the demo's shape: digits only."""
    template = ParkingOrder.objects.order_by("pk").first()
    template.pk, template.order_no = None, "7734412"
    template.save()
    return template


def test_the_models_commands_fill_what_the_rules_missed(chat, fake, odd_order) -> None:  # noqa: ANN001
    c = chat("parking_help_desk")
    fake.script_commands(commands({"command": "start_intent", "intent": "fee_verify"},
                                  {"command": "set_slot", "slot": "order_no", "value": "7734412"}))
    r = c.say("was I charged right for 7734412?")
    assert r["slots"]["order_no"]["value"] == "7734412"
    assert "billing.fee_verify" in r["execution_path"]["tools_called"]
    understood = r["execution_path"]["commands"]
    assert understood["generator"] == "openai" and understood["refused"] == []
    schema = fake.requests[0]["body"]["response_format"]
    assert schema["type"] == "json_schema" and schema["json_schema"]["strict"] is True
    assert "fee_verify" in str(schema["json_schema"]["schema"])


def test_hostile_commands_are_refused_one_by_one_and_audited(chat, fake, demo) -> None:  # noqa: ANN001
    c = chat("parking_help_desk")
    before = c.get()
    fake.script_commands(commands(
        {"command": "set_slot", "slot": "password", "value": "x"},
        {"command": "set_slot", "slot": "order_no", "value": "NO-SUCH-ORDER-1"},
        {"command": "choose_option", "option_id": "waive_fee"},
        {"command": "start_intent", "intent": "transfer_money"},
        {"command": "rm", "path": "/"},
    ))
    r = c.say("How does billing work here?")
    assert r["current_step"] == before["current_step"]
    assert "order_no" not in r["slots"]
    refused = {x["reason"] for x in r["execution_path"]["commands"]["refused"]}
    assert refused == {"unknown_slot:password", "not_found:order_no:NO-SUCH-ORDER-1", "option_not_offered:waive_fee",
                       "unknown_intent:transfer_money", "unknown_command:rm"}
    assert len(events(c.id, "command_refused")) == 1


def test_a_form_answer_from_the_model_is_applied_when_valid(chat, fake, demo) -> None:  # noqa: ANN001
    c = chat("permit_form")
    fake.script_commands(commands({"command": "answer", "question_id": "3.1.1", "value": "residential"}))
    r = c.say("it's a duplex where two families will live")
    # the dwelling type is answered by the same words (issue 17: a duplex is a two-family dwelling)
    assert {a["question_id"]: a["answer"] for a in r["form"]["finalized_answers"]} == {
        "3.1.1": "residential", "3.1.4": "two-family dwelling"}
    # an answer to a question that is not the pending one, or of the wrong type, is refused
    fake.script_commands(commands({"command": "answer", "question_id": "3.1.3", "value": "1450"}))
    r = c.say("hmm, I need to check the drawings")
    assert [x["reason"] for x in r["execution_path"]["commands"]["refused"]] == ["not_the_pending_question:3.1.2"]
    fake.script_commands(commands({"command": "answer", "question_id": "3.1.2", "value": "1,450 sq ft"}))
    r = c.say("1,450 sq ft")
    assert [x["reason"] for x in r["execution_path"]["commands"]["refused"]] == ["invalid_answer:3.1.2:number"]


def test_a_server_without_structured_outputs_is_asked_for_a_json_object(chat, fake, odd_order) -> None:  # noqa: ANN001
    c = chat("parking_help_desk")
    fake.script_commands(Scripted(status=400, body={"error": {"message": "response_format json_schema is not supported"}}))
    fake.script(Scripted(commands({"command": "start_intent", "intent": "fee_verify"},
                                  {"command": "set_slot", "slot": "order_no", "value": "7734412"})))
    r = c.say("please check order 7734412")
    assert r["slots"]["order_no"]["value"] == "7734412"
    kinds = [(q["kind"], q["body"]["response_format"]["type"]) for q in fake.requests]
    assert kinds[:2] == [("commands", "json_schema"), ("reply", "json_object")]


def test_an_understanding_outage_leaves_the_turn_to_the_rules_alone(chat, fake, demo) -> None:  # noqa: ANN001
    c = chat("parking_help_desk")
    fake.script_commands(Scripted(status=503))
    fake.script_commands(Scripted(status=503))
    fake.script_commands(Scripted(status=503))
    r = c.say("Does plate 沪B88888 have unpaid parking?")
    assert r["reply"]["backend"] == "rules" and "13.00" in r["reply"]["text"]
    assert fake.replies() == []  # the model is down: the reply is not sent to it either
    assert [e["kind"] for e in events(c.id, "model_fallback")] == ["http_error"]


def test_understanding_can_be_turned_off(chat, fake, demo, settings) -> None:  # noqa: ANN001
    settings.CONCIERGE_LLM_UNDERSTANDING = False
    c = chat("parking_help_desk")
    c.say("Does plate 沪B88888 have unpaid parking?")
    assert [q["kind"] for q in fake.requests] == ["reply"]


def test_a_handed_off_conversation_is_not_read_by_the_model(chat, fake, demo) -> None:  # noqa: ANN001
    c = chat("parking_help_desk")
    fake.script_commands(commands({"command": "human_handoff"}))
    c.say("I'd rather sort this out with somebody from your team")
    assert c.get()["handoff"]["status"] == "open"
    asked = len(fake.requests)
    c.say("hello? is anyone there?")
    assert len(fake.requests) == asked  # a member of staff has it: no understanding call, no wording call


def test_a_model_may_correct_a_final_form_answer_but_never_answer_ahead(chat, fake, demo) -> None:  # noqa: ANN001
    c = chat("permit_form")
    fake.script_commands(commands({"command": "answer", "question_id": "3.1.1", "value": "residential"}))
    c.say("residential")
    # the model's reading is the reading: an answer it did not give is not the rules' to add (contract 10)
    r = c.say("2 storeys")
    assert "3.1.2" not in {a["question_id"] for a in r["form"]["finalized_answers"]}
    fake.script_commands(commands({"command": "answer", "question_id": "3.1.2", "value": "2 storeys"}))
    c.say("2 storeys")
    fake.script_commands(commands({"command": "answer", "question_id": "3.1.2", "value": "3 storeys"}))
    r = c.say("hmm wait, the loft makes it three")
    answers = {a["question_id"]: a["answer"] for a in r["form"]["finalized_answers"]}
    assert answers["3.1.2"] == "3 storeys" and r["execution_path"]["commands"]["refused"] == []
    assert "answer(question_id=3.1.2, value=3 storeys)" in r["execution_path"]["commands"]["understood"]


def test_the_model_classifies_the_system_of_a_complaint(chat, fake) -> None:  # noqa: ANN001
    """Issue 16: with a model configured, the system is classified from the complaint (a validated
    `answer` to the "system" question); a system the plan does not know is refused."""
    c = chat("rv_diagnostic")
    fake.script_commands(commands({"command": "answer", "question_id": "system", "value": "dishwasher"}))
    r = c.say("the thing in the bathroom ceiling quit on us")
    assert [x["reason"] for x in r["execution_path"]["commands"]["refused"]] == ["invalid_answer:system:choice"]
    fake.script_commands(commands({"command": "answer", "question_id": "system", "value": "roof_vent_fan"}))
    r = c.say("the thing in the bathroom ceiling that pulls the steam out quit on us")
    assert {"command": "answer", "question_id": "system", "value": "roof_vent_fan"} in r["execution_path"]["commands"]["accepted"]
    assert "fan" in r["reply"]["text"] and "compressor" not in r["reply"]["text"]  # the vent fan's checks, not the AC's
