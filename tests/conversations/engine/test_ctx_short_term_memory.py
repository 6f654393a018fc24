"""Short-term memory (seed 001 RAG-009): facts a tool established carried as slots with their source, and
a listed item pointed at by what the list said of it ("the one at Chengdu East", "成都东站那笔")."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from conversations.engine import (
    ConversationConfig,
    advance_context,
    initial_state,
    learn_from_tool,
    record_reply,
    with_slot_candidates,
)
from conversations.engine.slots import (
    learn_slots,
    listed_by_details,
    points_at_listed_item,
    resolve_reference,
)
from conversations.engine.state import TOOL, USER, VALID, ContextState, SlotValue

PLAN = json.loads((Path(__file__).resolve().parents[3] / "workflows/plans/parking_help_desk.json").read_text(encoding="utf-8"))
CONFIG = ConversationConfig.from_dict(PLAN["conversation"])
NOW = datetime(2026, 5, 20, 2, 30, tzinfo=UTC)
ORDERS = {"XM-1", "XM-2", "XM-3", "QD-9"}
LOTS = {("ZS-1", "350200"), ("GLY", "350200"), ("T3", "350200"), ("T3", "370200")}
LOOKUPS = {
    "order_no": lambda value: value.upper() if value.upper() in ORDERS else False,
    "lot_code": lambda value, known: any(code == value and (not known.get("city_code") or city == known["city_code"])
                                         for code, city in LOTS),
    "plate_no": lambda value: value,
    "city_code": lambda value: value in {"350200", "370200"},
}
PLACES = {  # words -> the slots they name (a stand-in for billing's finder)
    "Gulangyu": {"lot_code": "GLY", "city_code": "350200"},
    "鼓浪屿": {"lot_code": "GLY", "city_code": "350200"},
    "the airport": {"lot_code": "T3", "city_code": "350200"},
    "机场": {"lot_code": "T3", "city_code": "350200"},
}
LISTED = ("XM-1", "XM-2", "XM-3")
DETAILS = {"XM-1": {"lot_code": "GLY", "city_code": "350200", "amounts": "18.00 0.00 18.00", "label": "XM-1 (GLY)"},
           "XM-2": {"lot_code": "T3", "city_code": "350200", "amounts": "9.50 2.00 7.50", "label": "XM-2 (T3)"},
           "XM-3": {"lot_code": "GLY", "city_code": "350200", "amounts": "7.50 0.00 7.50", "label": "XM-3 (GLY)"}}


def finder(text: str, lang: str) -> list[dict]:
    return [{"slots": slots, "raw": words, "labels": {}} for words, slots in PLACES.items() if words in text]


def say(state: ContextState, text: str):  # noqa: ANN201
    out = advance_context(state, text, now=NOW, timezone="Asia/Shanghai", config=CONFIG, lookups=LOOKUPS, finders=[finder])
    return out, record_reply(out.state, text="ok", action=out.proposed_action)


def verified(order: str = "QD-9", **learned: str) -> ContextState:
    """A conversation whose first turn verified an order, and the tool's result learned."""
    out, state = say(initial_state(CONFIG), f"verify order {order}")
    assert out.resolved_intent == "fee_verify" and out.decision == "continue"
    return learn_from_tool(state, learned or {"plate_no": "鲁B7H6J5", "lot_code": "T3", "city_code": "370200"},
                           tool="billing.fee_verify", record=f"order_no={order}")


def listed(text: str = "闽D·K3P21 有没有欠费") -> ContextState:
    out, state = say(initial_state(CONFIG), text)
    assert out.resolved_intent == "arrears_check" and out.decision == "continue"
    return with_slot_candidates(state, "order_no", LISTED, DETAILS)


# -- learning from a tool's result -----------------------------------------------------------


def test_learned_values_become_valid_slots_with_the_tool_as_their_source() -> None:
    memory = {"lot_code": SlotValue("lot_code", "ZS-1", 1, "Zhongshan", VALID, "lookup", 1)}
    merged, changed = learn_slots(memory, {"lot_code": "GLY", "plate_no": "闽DK3P21", "city_code": None},
                                  turn=2, tool="billing.fee_verify", record="order_no=XM-1")
    assert changed == ("lot_code", "plate_no")
    lot = merged["lot_code"]
    assert (lot.value, lot.source_turn, lot.status, lot.source, lot.tool, lot.record, lot.previous) == (
        "GLY", 2, VALID, TOOL, "billing.fee_verify", "order_no=XM-1", ("ZS-1",))
    assert lot.learned and lot.usable and "city_code" not in merged


def test_a_value_already_held_keeps_where_it_first_came_from() -> None:
    memory = {"plate_no": SlotValue("plate_no", "粤B·F67890", 1, "粤B·F67890", VALID, "lookup", 1)}
    merged, changed = learn_slots(memory, {"plate_no": "粤b·f67890"}, turn=3, tool="billing.fee_verify")
    assert changed == () and merged["plate_no"].source == USER and merged["plate_no"].source_turn == 1


def test_provenance_round_trips_and_older_rows_read_as_said_by_the_person() -> None:
    state = verified()
    again = ContextState.from_dict(state.to_dict())
    assert again.slots["plate_no"] == state.slots["plate_no"] and again.slots["plate_no"].record == "order_no=QD-9"
    old_row = {"name": "lot_code", "value": "T3", "source_turn": 1, "status": "valid"}
    assert SlotValue.from_dict(old_row).source == USER and not SlotValue.from_dict(old_row).learned


@pytest.mark.parametrize("text", ["does that car owe anything else?", "anything else unpaid on that car?",
                                  "and the plate's other unpaid ones?", "那辆车还有别的欠费吗", "这辆车还欠钱吗"])
def test_that_car_is_the_plate_of_the_order_just_verified(text: str) -> None:
    out, _ = say(verified(), text)
    assert out.resolved_intent == "arrears_check" and out.decision == "continue"
    assert out.usable_slots["plate_no"] == "鲁B7H6J5" and out.state.slots["plate_no"].source == TOOL


@pytest.mark.parametrize("text", ["what's the daily cap at that lot?", "how much is that car park from 7 to 9 tonight",
                                  "那这个停车场晚上怎么收费", "那个停车场每天最多收多少"])
def test_that_lot_is_the_lot_and_city_of_the_order_just_verified(text: str) -> None:
    out, _ = say(verified(), text)
    assert out.resolved_intent == "rule_explain" and out.decision == "continue"
    assert (out.usable_slots["lot_code"], out.usable_slots["city_code"]) == ("T3", "370200")


def test_a_learned_value_said_again_becomes_the_persons() -> None:
    out, _ = say(verified(), "how much is lot T3 in city 370200 for 2 hours?")
    city = out.state.slots["city_code"]
    assert (city.value, city.source, city.source_turn) == ("370200", USER, 2)


def test_a_lot_named_after_a_verification_wins_and_the_learned_one_is_the_other() -> None:
    out, state = say(verified(), "how much is Gulangyu for 2 hours?")
    assert out.usable_slots["lot_code"] == "GLY" and out.state.slots["lot_code"].source == USER
    out, _ = say(state, "and at the other car park?")
    assert out.usable_slots["lot_code"] == "T3"


# -- pointing at a listed item by its details ------------------------------------------------


def test_listed_by_details_keeps_the_list_order_and_takes_alternatives() -> None:
    assert listed_by_details(LISTED, DETAILS, {"lot_code": "GLY"}) == ("XM-1", "XM-3")
    assert listed_by_details(LISTED, DETAILS, {"lot_code": "t3", "city_code": "350200"}) == ("XM-2",)
    assert listed_by_details(LISTED, DETAILS, {"lot_code": ("T3", "ZS-1")}) == ("XM-2",)
    assert listed_by_details(LISTED, DETAILS, {"plate_no": "闽DK3P21"}) == ()  # the list says nothing of plates
    assert listed_by_details(LISTED, DETAILS, {"lot_code": "KZ"}) == ()


@pytest.mark.parametrize(("text", "points"), [
    ("the one at Chengdu East", True), ("check the airport one", True), ("and the Gulangyu ones?", True),
    ("what about the order at Kuanzhai?", True), ("那成都东站那笔呢", True), ("宽窄巷子的订单", True),
    ("how much is Chengdu East for one hour?", False), ("那这个停车场晚上怎么收费", False),
    ("what's the price there?", False), ("成都东站单价多少", False),
])
def test_points_at_listed_item(text: str, points: bool) -> None:
    assert points_at_listed_item(text) is points


@pytest.mark.parametrize("text", ["the one at the airport", "check the airport one", "核验一下机场那笔"])
def test_a_listed_order_named_by_its_lot_is_that_order(text: str) -> None:
    out, _ = say(listed(), text)
    assert out.resolved_intent == "fee_verify" and out.decision == "continue"
    assert out.usable_slots["order_no"] == "XM-2" and "lot_code" not in out.slots_changed


@pytest.mark.parametrize("text", ["and the Gulangyu ones?", "鼓浪屿那笔呢"])
def test_two_listed_orders_at_the_lot_are_asked_about_then_picked_by_place(text: str) -> None:
    out, state = say(listed(), text)
    assert out.resolved_intent == "fee_verify" and out.decision == "ask" and out.missing_slots == ("order_no",)
    assert "XM-1 (GLY)" in out.question and "XM-3 (GLY)" in out.question and "XM-2" not in out.question
    out, _ = say(state, "the second one")
    assert out.decision == "continue" and out.usable_slots["order_no"] == "XM-3"


@pytest.mark.parametrize("text", ["the 18 yuan one looks wrong to me", "that ¥18 order was too much", "18块那笔收错了吧",
                                  "十八块的那笔对吗"])
def test_a_listed_order_pointed_at_by_an_amount_it_showed_is_that_order(text: str) -> None:
    out, _ = say(listed(), text)
    assert out.resolved_intent == "fee_verify" and out.decision == "continue"
    assert out.usable_slots["order_no"] == "XM-1"


def test_an_amount_two_listed_orders_showed_is_asked_about_and_one_only_paid_is_that_order() -> None:
    out, state = say(listed(), "the 7.50 one is wrong")  # XM-2 owes 7.50, XM-3 cost 7.50
    assert out.decision == "ask" and out.missing_slots == ("order_no",)
    assert "XM-2 (T3)" in out.question and "XM-3 (GLY)" in out.question and "XM-1" not in out.question
    out, _ = say(listed(), "the one I paid 2 yuan on looks wrong")
    assert out.usable_slots["order_no"] == "XM-2"


def test_a_lot_named_without_pointing_at_an_order_is_a_lot() -> None:
    out, _ = say(listed(), "how much is the airport for 2 hours?")
    assert out.resolved_intent == "rule_explain" and out.usable_slots["lot_code"] == "T3"
    assert "order_no" not in out.usable_slots


def test_ordinals_still_pick_by_place() -> None:
    out, _ = say(listed(), "核验第一笔")
    assert out.usable_slots["order_no"] == "XM-1"
    out, _ = say(listed(), "上一单收得对吗")
    assert out.usable_slots["order_no"] == "XM-3"


@pytest.mark.parametrize("text", ["那要是晚上七点停到第二天早上八点呢", "what about the first 30 minutes", "last saturday at 3",
                                  "上一周呢", "第一次停车多少钱", "первый час", "la primera hora", "el día anterior"])
def test_an_ordinal_of_a_time_points_at_no_listed_order(text: str) -> None:
    assert resolve_reference(text, LISTED) is None


@pytest.mark.parametrize(("text", "order"), [("核验第二笔", "XM-2"), ("the second one", "XM-2"), ("check the last one", "XM-3"),
                                             ("проверьте второй заказ", "XM-2"), ("el último", "XM-3")])
def test_an_ordinal_of_a_listed_order_still_points_at_it(text: str, order: str) -> None:
    assert resolve_reference(text, LISTED) == order
