"""What a model may never do by itself (issue 34, SPEC contract 11): state an amount no tool computed, in any
notation, or end, submit or complete anything. Each case crosses real HTTP: the real `openai` client against
the fake OpenAI-compatible server, driven by a full turn over REST; a broken contract is refused, audited as a
contract violation (or a refused command, for the model's reading), and the rules reply stands."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from conversations.concierge import SYSTEM_PROMPT, unbacked_amounts
from conversations.engine.context_package import closing_option_ids
from tests.support.fake_openai import Scripted
from workflows.engine.plan import parse_plan
from workflows.engine.plan_files import plan_path, read_plan
from workflows.models import AuditEvent

ARREARS = "Does plate 沪B88888 have unpaid parking?"  # the tool finds 7.00 + 6.00 = 13.00 over two orders
PLANS = Path(__file__).resolve().parents[2] / "workflows" / "plans"


@pytest.fixture
def fake(model_server):  # noqa: ANN001, ANN201
    return model_server(timeout=5.0)  # room for both calls of a turn and their retries on a loaded machine


def ok(reply: str, option_id: str | None = None, asks: bool = False, **extra) -> dict:  # noqa: ANN003
    return {"type": "reply", "reply": reply, "option_id": option_id, "asks_question": asks, "confidence": 0.9,
            "citations": [], **extra}


def violations(conversation_id: int) -> list[list[str]]:
    return [e.payload["violations"] for e in AuditEvent.objects.filter(run__conversation__id=conversation_id,
                                                                       event_type="contract_violation")]


# -- 1. every amount a model states is a tool result or a cited figure ---------------------------------------

UNBACKED = {
    "digits_and_yuan": ("Plate 沪B88888 owes 999 yuan.", "999.00"),
    "digits_and_元": ("车牌沪B88888欠费999元。", "999.00"),
    "yen_sign": ("Plate 沪B88888 owes ¥999 in all.", "999.00"),
    "rmb_before": ("Plate 沪B88888 owes RMB 999.", "999.00"),
    "one_decimal_in_a_total": ("The total owed is 999.5.", "999.50"),
    "chinese_numerals": ("车牌沪B88888共欠九百九十九元。", "999.00"),
    "english_words": ("Plate 沪B88888 owes nine hundred and ninety-nine yuan.", "999.00"),
    "russian_roubles": ("Стоимость стоянки 999 рублей.", "999.00"),
    "russian_words": ("Вы должны девятьсот девяносто девять рублей.", "999.00"),
    "spanish_pesos": ("La estancia cuesta 999 pesos.", "999.00"),
    "spanish_euros_words": ("El importe es de novecientos noventa y nueve euros.", "999.00"),
    "bare_number_in_a_fee_sentence": ("The fee for the first order is 999.", "999.00"),
    "thousands_separator": ("Plate 沪B88888 owes 1,013.00 in all.", "1013.00"),
}


@pytest.mark.parametrize(("reply", "amount"), UNBACKED.values(), ids=UNBACKED.keys())
def test_an_amount_no_tool_computed_is_refused_in_any_notation(chat, fake, reply: str, amount: str) -> None:  # noqa: ANN001
    c = chat("parking_help_desk")
    fake.script(ok(reply))
    r = c.say(ARREARS)
    assert r["reply"]["backend"] == "rules" and "13.00" in r["reply"]["text"]  # the rules' answer stands
    assert violations(c.id) == [[f"unbacked_amount:{amount}"]]
    assert r["execution_path"]["contract_violations"] == [f"unbacked_amount:{amount}"]


BACKED = {
    "digits_and_yuan": "Plate 沪B88888 owes 13 yuan over two orders.",
    "chinese_numerals_and_a_count": "车牌沪B88888共有2笔欠费，合计十三元。",
    "yen_sign_and_bare_parts": "You owe ¥13: 7 yuan on the first order and 6 on the second.",
    "english_words": "Plate 沪B88888 owes thirteen yuan in all.",
    "russian": "Итого 13 юаней.",
    "spanish_decimal_comma": "En total debe 13,00 yuanes.",
    "counts_times_dates_and_ids_are_no_amounts": (
        "Order SCN-009-B: you parked 3 hours from 09:00 on 2026-03-04 on level 2, 2 floors up, and owe 7.00 for it."),
}


@pytest.mark.parametrize("reply", BACKED.values(), ids=BACKED.keys())
def test_amounts_the_tools_computed_are_worded_in_any_notation(chat, fake, reply: str) -> None:  # noqa: ANN001
    c = chat("parking_help_desk")
    fake.script(ok(reply))
    r = c.say(ARREARS)
    assert violations(c.id) == []
    assert r["reply"]["backend"] == "openai" and r["reply"]["text"].startswith(reply)


def test_backing_figures_are_read_as_numbers_not_strings() -> None:
    # "1,250.00" is one thousand two hundred and fifty, not 250.00
    assert unbacked_amounts("The stay comes to 1,250.00.", backing=["total 250.00"]) == (Decimal("1250.00"),)
    assert unbacked_amounts("That is 1250 yuan.", backing=["The total is 1,250.00."]) == ()
    tool_result = {"tool": "billing.fee_verify", "order": {"charged": "46.00", "minutes": 180}}
    for said in ("The fee is 46 yuan.", "收费四十六元。", "It costs ¥46.00.", "Стоимость 46 рублей."):
        assert unbacked_amounts(said, backing=[tool_result]) == (), said
    assert unbacked_amounts("The fee is 47 yuan.", backing=[tool_result]) == (Decimal("47.00"),)
    # counts, durations, clock times, dates and identifiers are no amounts, even beside a fee
    assert unbacked_amounts("Order 7734412: 3 hours from 15:00 on 2026-03-02, 2 floors, fee 46.00.",
                            backing=[tool_result]) == ()


# -- 2. a model never ends, submits or completes anything --------------------------------------------------

@pytest.mark.parametrize("asks", [False, True], ids=["stating", "asking"])
def test_a_models_wording_never_finishes_the_conversation(chat, fake, asks: bool) -> None:  # noqa: ANN001
    c = chat("parking_help_desk")
    fake.script(ok("Plate 沪B88888 owes 13.00 over two orders."))
    c.say(ARREARS)
    assert "finish" in c.option_ids()
    fake.script(ok("Anything else before I close this?" if asks else "Closing this conversation for you.",
                   option_id="finish", asks=asks))
    r = c.say("Thanks, that's all")
    assert r["status"] == "active" and r["reply"]["backend"] == "rules"
    assert "option_ends_or_submits:finish" in violations(c.id)[-1]
    if asks:
        assert "option_while_asking:finish" in violations(c.id)[-1]
    assert not AuditEvent.objects.filter(run__conversation__id=c.id, event_type="decision", chosen_option_id="finish").exists()
    assert c.choose("finish")["status"] == "completed"  # the person's own choice still ends it


def test_a_models_wording_never_writes_the_final_report(chat, fake) -> None:  # noqa: ANN001
    c = chat("rv_diagnostic")
    fake.default = Scripted({"nope": True})
    c.say("Roof AC is blowing warm air")
    assert "write_report" in c.option_ids()  # no consent asked: it writes the report and completes the run
    fake.script(ok("I'll write up the final report now.", option_id="write_report"))
    r = c.say("ok")
    assert r["status"] == "active" and r["current_step"] == "diagnose" and "final_report" not in r["documents"]
    assert "option_ends_or_submits:write_report" in violations(c.id)[-1]


def test_no_option_at_all_in_a_reply_that_asks(chat, fake) -> None:  # noqa: ANN001
    c = chat("parking_help_desk")
    fake.script(ok("Which lot did you park at?", option_id="ask_more_questions", asks=True, type="clarifying_question"))
    r = c.say("How does billing work here?")
    assert r["reply"]["backend"] == "rules"
    assert violations(c.id) == [["option_while_asking:ask_more_questions"]]


def test_a_models_reading_never_finishes_the_conversation(chat, fake) -> None:  # noqa: ANN001
    c = chat("parking_help_desk")
    fake.script(ok("Plate 沪B88888 owes 13.00 over two orders."))
    c.say(ARREARS)
    fake.script_commands({"commands": [{"command": "choose_option", "option_id": "finish", "certainty": "certain"}],
                          "reply": None})
    r = c.say("ok bye, close it")
    assert r["status"] == "active"
    refused = r["execution_path"]["commands"]["refused"]
    assert [x["reason"] for x in refused] == ["person_only_option:finish"]
    schema = str(fake.requests[-2]["body"]["response_format"]["json_schema"]["schema"])
    assert "'finish'" not in schema  # not even offered to the model's reading
    assert AuditEvent.objects.filter(run__conversation__id=c.id, event_type="command_refused").exists()


def test_the_prompts_say_only_the_person_ends_or_submits(chat, fake) -> None:  # noqa: ANN001
    c = chat("parking_help_desk")
    fake.script(ok("Plate 沪B88888 owes 13.00 over two orders."))
    c.say(ARREARS)
    system, package = (m["content"] for m in fake.replies()[-1]["body"]["messages"][:2])
    assert system == SYSTEM_PROMPT and "ends, submits or completes" in SYSTEM_PROMPT
    assert "- `finish` eligible [only the person may choose this]" in package
    assert "- `ask_more_questions` eligible:" in package
    assert "asks a question, set asks_question to true and leave option_id null" in package


def _plan(workflow_id: str):  # noqa: ANN202
    return parse_plan(read_plan(plan_path(PLANS, workflow_id)))


@pytest.mark.parametrize(("workflow_id", "step", "closing", "open_"), [
    ("parking_help_desk", "answer", {"finish"}, {"another_question", "ask_more_questions"}),
    ("parking_help_desk", "fee_review", {"adjust_to_simulated", "keep_order_amount", "waive_fee"}, {"accept_match"}),
    ("rv_diagnostic", "diagnose", {"write_report"}, {"isolation_complete", "ask_more_questions"}),
    ("rv_diagnostic", "authorization", {"confirm_estimate", "write_report", "skip_estimate"}, {"replan", "ask_more_questions"}),
    ("manager_assistant", "guidance", {"draft_email", "schedule_call", "finish"}, {"ask_more_questions"}),
    ("permit_form", "review_form", {"submit_form"}, {"edit_answers"}),
    ("project_intake", "intake_qa", {"escalate_to_supervisor"}, {"qa_passed", "rework_intake", "back_to_conversation"}),
    ("project_intake", "review_plan", {"accept_plan"}, {"regenerate_plan", "revise_intake", "ask_more_questions"}),
    ("project_intake", "intake_gate", {"reject_out_of_scope"}, {"qualify", "request_clarification"}),
    ("bike_repair", "review_booking", {"submit_booking"}, {"edit_answers"}),
])
def test_what_ends_or_submits_is_read_from_the_plan(workflow_id: str, step: str, closing: set, open_: set) -> None:
    plan = _plan(f"authored/{workflow_id}" if workflow_id == "bike_repair" else workflow_id)
    offered = [{"option_id": e.option_id} for e in plan.edges_from(step)]
    assert set(closing_option_ids(plan, step, offered)) == closing
    assert {o["option_id"] for o in offered} == closing | open_
