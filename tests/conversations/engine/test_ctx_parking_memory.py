"""Parking help desk (seed 001 RAG-009..012): slot carry-over, clarify rounds, validation, follow-ups."""

from __future__ import annotations

from datetime import UTC, datetime

from conversations.engine import (
    ConversationConfig,
    load_example,
    set_slot_status,
    with_slot_candidates,
)
from conversations.engine.simulate import Dialogue

CONFIG = ConversationConfig.from_dict(load_example("parking_help_desk"))
NOW = datetime(2026, 2, 12, 2, tzinfo=UTC)
ORDERS = {"SCN-009", "SCN-020"}
# The shipped plan names cities by their codes (上海/Shanghai/SH is "310100", 北京/Beijing/BJ is "110100"); a lot is
# recorded with the city it is in, as the billing app's lots are.
SHANGHAI, BEIJING = "310100", "110100"
LOTS = {"SH-A01": SHANGHAI, "SH-B02": SHANGHAI, "BJ-C03": BEIJING}
LOOKUPS = {
    "order_no": lambda value: value.upper() if value.upper() in ORDERS else False,
    "lot_code": lambda value, known: (
        value in LOTS and (not known.get("city_code") or LOTS[value] == known["city_code"])
    ),
}


def dialogue(locale: str = "en") -> Dialogue:
    return Dialogue(CONFIG, NOW, lookups=LOOKUPS, locale=locale)


def test_arrears_check_then_verify_this_order_carries_slots() -> None:
    d = dialogue()
    out = d.say("Can you check arrears for 沪A12345 in SH?")
    assert (
        out.resolved_intent == "arrears_check"
        and out.decision == "continue"
        and out.reply_action == "present_results"
    )
    assert out.usable_slots == {"plate_no": "沪A12345", "city_code": SHANGHAI}
    # the arrears tool listed one unpaid order; the rules backend remembers it as a candidate
    d.state = with_slot_candidates(d.state, "order_no", ["SCN-009"])
    out = d.say("OK, verify this order")
    assert out.resolved_intent == "fee_verify" and out.decision == "continue"
    assert out.usable_slots == {"plate_no": "沪A12345", "city_code": SHANGHAI, "order_no": "SCN-009"}
    slots = d.state.slots
    assert slots["plate_no"].source_turn == 1 and slots["order_no"].source_turn == 2
    assert slots["order_no"].validated_by == "lookup"


def test_missing_order_number_is_asked_then_supplied_next_turn() -> None:
    d = dialogue()
    d.say("check arrears for 沪A12345")
    out = d.say("I want to verify the fee")
    assert (
        out.decision == "ask" and out.missing_slots == ("order_no",) and out.question_kind == "slot"
    )
    assert "order" in out.question.lower() and d.state.pending_clarification.intent == "fee_verify"
    out = d.say("scn-020")
    assert out.intent == "UNCLEAR" and out.intent_source == "pending_clarification"
    assert out.resolved_intent == "fee_verify" and out.decision == "continue"
    assert out.usable_slots["order_no"] == "SCN-020" and out.usable_slots["plate_no"] == "沪A12345"
    assert d.state.pending_clarification is None


def test_date_follow_up_keeps_city_and_lot() -> None:
    d = dialogue()
    out = d.say("How is parking charged at lot SH-A01 in SH on 2026-02-10 14:00?")
    assert out.resolved_intent == "rule_explain" and out.decision == "continue"
    assert out.usable_slots["at_time"] == "2026-02-10T14:00:00+08:00"
    out = d.say("What about tomorrow at 9am?")
    assert out.resolved_intent == "rule_explain" and out.intent_source == "follow_up"
    assert out.slots_changed == ("at_time",)
    assert out.usable_slots == {
        "city_code": SHANGHAI,
        "lot_code": "SH-A01",
        "at_time": "2026-02-13T09:00:00+08:00",
    }
    assert d.state.slots["lot_code"].source_turn == 1 and d.state.slots["at_time"].source_turn == 2


def test_chinese_follow_up_and_chinese_questions() -> None:
    d = dialogue("zh")
    out = d.say("上海SH-A01停车场怎么收费？")
    assert out.resolved_intent == "rule_explain" and out.usable_slots["city_code"] == SHANGHAI
    out = d.say("那明天上午9点呢？")
    assert out.intent_source == "follow_up" and out.usable_slots["lot_code"] == "SH-A01"
    assert out.usable_slots["at_time"] == "2026-02-13T09:00:00+08:00"
    out = d.say("帮我核验一下订单")
    assert out.decision == "ask" and "订单号" in out.question


def test_invalid_order_gets_targeted_question_and_only_validated_slots_are_usable() -> None:
    d = dialogue()
    out = d.say("please verify order SCN-777")
    assert (
        out.decision == "ask" and out.invalid_slots == ("order_no",) and "SCN-777" in out.question
    )
    assert "order_no" not in out.usable_slots
    out = d.say("sorry, it is SCN-020")
    assert out.decision == "continue" and out.usable_slots["order_no"] == "SCN-020"


def test_three_rounds_without_progress_abort() -> None:
    d = dialogue()
    decisions = [
        d.say(t).decision for t in ("verify my order", "I don't have it", "no idea", "nope, sorry")
    ]
    assert decisions == ["ask", "ask", "ask", "abort"]
    assert d.state.pending_clarification is None
    questions = [o.question for o in d.outcomes[:3]]
    assert questions[0] != questions[1]  # a repeated ask is phrased differently


def test_rule_explain_asks_for_missing_lot_then_validates_against_city() -> None:
    d = dialogue()
    out = d.say("What are the parking rules in BJ?")
    assert out.resolved_intent == "rule_explain" and out.missing_slots == ("lot_code",)
    out = d.say("lot SH-A01")  # exists, but not in BJ
    assert out.decision == "ask" and out.invalid_slots == ("lot_code",)
    out = d.say("BJ-C03")
    assert out.decision == "continue" and out.usable_slots == {
        "city_code": BEIJING,
        "lot_code": "BJ-C03",
    }


def test_ambiguous_intent_asks_which_unless_slots_decide() -> None:
    d = dialogue()
    out = d.say("check the arrears and verify the fee")
    assert out.decision == "ask" and out.question_kind == "intent"
    assert "check unpaid parking" in out.question and "verify an order's fee" in out.question
    d2 = dialogue()
    out = d2.say("check arrears or verify fee for order SCN-020")
    assert (
        out.resolved_intent == "fee_verify"
        and out.intent_source == "slots"
        and out.decision == "continue"
    )


def test_side_question_during_clarification_returns_to_the_open_question() -> None:
    d = dialogue()
    asked = d.say("verify my order").question
    out = d.say("what is a daily cap?")
    assert (
        out.meaning == "side_question"
        and out.side_question.topic == "daily_cap"
        and out.side_question.answer
    )
    assert out.decision == "ask" and out.question == asked
    assert d.state.pending_clarification.rounds == 1  # a side question is not a clarify round
    out = d.say("SCN-009")
    assert out.decision == "continue" and out.resolved_intent == "fee_verify"


def test_tool_result_can_invalidate_a_slot() -> None:
    d = dialogue()
    d.say("verify order SCN-020")
    d.state = set_slot_status(d.state, "order_no", valid=False)
    assert "order_no" not in d.state.usable_slots()
    out = d.say("what about it?")
    assert out.decision == "ask" and out.invalid_slots == ("order_no",)


def test_ordinal_reference_to_listed_orders() -> None:
    d = dialogue("zh")
    d.say("查一下沪A12345的欠费")
    d.state = with_slot_candidates(d.state, "order_no", ["SCN-009", "SCN-020"])
    out = d.say("核验第二笔")
    assert out.resolved_intent == "fee_verify" and out.usable_slots["order_no"] == "SCN-020"
