"""The model backend through the real `openai` client against a fake OpenAI-compatible server.

Adversarial answers must never move the workflow: each is refused, audited as a contract
violation, and the turn falls back to the rules reply.
"""

from __future__ import annotations

import pytest

from tests.support.fake_openai import Scripted
from workflows.models import AuditEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def fake(model_server):  # noqa: ANN001, ANN201
    return model_server(timeout=2.5)  # room for both calls of a turn and their retries on a loaded 2-core machine


def ok(reply: str, option_id=None, asks=False, **extra) -> dict:  # noqa: ANN001
    return {"type": "reply", "reply": reply, "option_id": option_id, "asks_question": asks, "confidence": 0.9, "citations": [], **extra}


def violations(conversation_id: int) -> list[dict]:
    return [e.payload for e in AuditEvent.objects.filter(run__conversation__id=conversation_id, event_type="contract_violation")]


def test_a_valid_answer_is_used_and_finishing_is_left_to_the_person(chat, fake) -> None:  # noqa: ANN001
    c = chat("parking_help_desk")
    fake.script(ok("Plate 沪B88888 owes 13.00 over two orders."))
    r = c.say("Does plate 沪B88888 have unpaid parking?")
    assert r["reply"]["backend"] == "openai" and r["reply"]["text"].startswith("Plate 沪B88888 owes 13.00")
    assert "Sources:" in r["reply"]["text"]  # the tool sources stay attached
    request = fake.replies()[-1]
    assert request["auth"] == "Bearer test-key" and request["body"]["model"] == "fake-model"
    assert request["body"]["response_format"] == {"type": "json_object"}
    assert "Context Package" in request["body"]["messages"][1]["content"]
    fake.script(ok("Closing this conversation for you.", option_id="finish"))
    kept = c.say("Thanks, that's all")  # a model never ends a conversation (contract 11): refused, audited
    assert kept["status"] == "active" and kept["reply"]["backend"] == "rules"
    assert "option_ends_or_submits:finish" in violations(c.id)[-1]["violations"]
    assert c.choose("finish")["status"] == "completed"  # the person's own choice does
    decision = AuditEvent.objects.get(run__conversation__id=c.id, event_type="decision", chosen_option_id="finish")
    assert decision.selection_mode == "user_confirmed" and decision.actor_label.startswith("participant:")


@pytest.mark.parametrize(
    ("answer", "violation"),
    [
        (ok("Waiving it.", option_id="waive_fee"), "option"),  # not offered here
        (ok("Moving on.", option_id="teleport_to_end"), "option"),  # invented
        (Scripted("this is not json {"), "json"),
        (Scripted({"reply": 42}), "reply"),
        (ok("That stay costs 99.00."), "unbacked_amount"),
    ],
)
def test_contract_breaking_answers_change_nothing(chat, fake, answer, violation) -> None:  # noqa: ANN001
    c = chat("parking_help_desk")
    fake.script(answer)
    before = c.get()
    r = c.say("How does billing work here?")
    assert r["reply"]["backend"] == "rules"
    after = c.get()
    assert after["current_step"] == before["current_step"] == "triage"
    found = violations(c.id)
    assert len(found) == 1 and any(violation in v for v in found[0]["violations"]), found
    assert r["execution_path"]["contract_violations"]


def test_asking_while_acting_and_consent_options_are_refused(chat, fake) -> None:  # noqa: ANN001
    c = chat("manager_assistant")
    fake.default = Scripted({"bad": "json shape"})
    said = {  # what the model read of each message: its reading is the reading (the rules add no answer)
        "My employee Sam didn't show up for two shifts": [{"command": "answer", "question_id": "situation",
                                                          "value": "My employee Sam didn't show up for two shifts"},
                                                         {"command": "set_slot", "slot": "employee_name", "value": "Sam"}],
        "Yes, I called him twice, no answer": [{"command": "answer", "question_id": "contacted", "value": "yes"}],
        "No, first time, nothing documented yet": [{"command": "answer", "question_id": "history",
                                                    "value": "No, first time, nothing documented yet"}],
    }
    for text, commands in said.items():
        fake.script_commands({"commands": commands, "reply": None})
        c.say(text)
    assert "draft_email" in c.option_ids()
    fake.script(ok("Shall I send it now?", option_id="draft_email", asks=True))
    r = c.say("What would you suggest?")
    assert r["current_step"] == "guidance" and "email_draft" not in r["documents"]
    last = violations(c.id)[-1]["violations"]
    assert any("consent" in v or "question" in v or "action" in v for v in last), last


def test_repeating_a_completed_step_is_refused(chat, fake) -> None:  # noqa: ANN001
    c = chat("rv_diagnostic")
    fake.default = Scripted({"nope": True})
    c.say("Roof AC is blowing warm air")
    question = c.say("I read 121 volts at the unit")
    assert "check_power" in question["completed_steps"]
    power_q = "With the thermostat calling for cooling, what voltage do you read at the unit's power supply?"
    fake.script(ok(power_q, asks=True, type="clarifying_question"))
    r = c.say("ok")
    assert r["reply"]["backend"] == "rules"
    assert "asks_completed_step" in violations(c.id)[-1]["violations"]


@pytest.mark.parametrize(("failure", "kind"), [
    (Scripted({"reply": "late"}, delay=3.0), "timeout"),
    (Scripted(status=500), "http_error"),
    (Scripted(status=429), "rate_limited"),
])
def test_timeouts_and_errors_fall_back_to_rules(chat, fake, failure, kind) -> None:  # noqa: ANN001
    c = chat("parking_help_desk")
    fake.script(failure, failure, failure)  # the concierge may retry while the turn's budget lasts
    r = c.say("Does plate 沪B88888 have unpaid parking?")
    assert r["reply"]["backend"] == "rules" and "13.00" in r["reply"]["text"]
    event = AuditEvent.objects.get(run__conversation__id=c.id, event_type="model_fallback")
    assert event.payload["kind"] == kind


def test_a_form_answer_in_the_wording_is_only_what_the_engine_took(chat, fake) -> None:  # noqa: ANN001
    """Answers are understood as `answer` commands, validated and applied before the reply (issue 14):
    a reply that claims a form answer the engine did not take is refused, and a plain reply is never
    stored as a clarifying question."""
    c = chat("permit_form")
    fake.script(ok("Thanks, noted.", type="form_answer", answer="industrial", question_id="3.1.1"))
    r = c.say("hmm, hard to say")  # the engine asks to clarify: nothing was taken
    assert r["reply"]["backend"] == "rules" and r["form"]["finalized_answers"] == []
    assert "form_answer_not_taken:3.1.1" in violations(c.id)[-1]["violations"]
    fake.script(ok("Could you say whether it is homes, shops or a factory?", asks=True))
    r = c.say("it's a building")
    thread = r["form"]["active_thread"]
    assert r["reply"]["backend"] != "rules" and all("homes, shops" not in str(e) for e in (thread or {}).get("entries", []))


def test_with_wording_off_the_model_only_reads_and_the_rules_word_the_reply(chat, fake, settings) -> None:  # noqa: ANN001
    settings.CONCIERGE_LLM_WORDING = False
    fake.script(ok("Never asked for: the rules word this reply."))
    r = chat("parking_help_desk").say("Does plate 沪B88888 have unpaid parking?")
    assert r["reply"]["backend"] == "rules" and "13.00" in r["reply"]["text"]
    assert [request["kind"] for request in fake.requests] == ["commands"]  # understood by the model, not worded by it


def test_the_models_reading_is_the_reading_the_rules_add_no_command(chat, fake, settings) -> None:  # noqa: ANN001
    """Contract 7: with a model configured, the rules add no handoff, answer or action the model did not give."""
    settings.CONCIERGE_LLM_WORDING = False
    c = chat("permit_form")
    fake.script_commands({"commands": [], "reply": "Residential as in homes, or a mix?"})  # the model left it open
    r = c.say("residential")
    assert r["form"]["finalized_answers"] == [] and r["execution_path"]["commands"]["generator"] != "rules"
    fake.script_commands({"commands": [{"command": "answer", "question_id": "3.1.1", "value": "residential"}], "reply": None})
    r = c.say("residential, homes only")
    assert [a["question_id"] for a in r["form"]["finalized_answers"]] == ["3.1.1"]
    fake.script_commands({"commands": [], "reply": None})  # words the rules read as a wish for a person
    r = c.say("can I talk to a real person?")
    assert r["handoff"] is None or r["handoff"].get("status") != "open"
    m = chat("manager_assistant")
    fake.script_commands({"commands": [{"command": "decline_action", "action_id": "draft_email"},
                                       {"command": "request_action", "action_id": "schedule_call"}], "reply": None})
    m.say("My employee Sam didn't show up for two shifts; no email please, I'd rather call him")
    assert "human_handoff()" not in str(m.last["execution_path"]["commands"])


def test_when_the_model_is_down_the_rules_reading_is_used(chat, fake) -> None:  # noqa: ANN001
    c = chat("permit_form")
    fake.script_commands(Scripted(status=500), Scripted(status=500), Scripted(status=500))
    r = c.say("residential")
    assert [a["question_id"] for a in r["form"]["finalized_answers"]] == ["3.1.1"]
