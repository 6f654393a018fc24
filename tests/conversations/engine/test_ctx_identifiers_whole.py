"""Identifiers are read whole, a request is known by the detail only it needs, and the identifier asked for wins."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from conversations.engine import ConversationConfig, advance_context, initial_state, load_example

CONFIG = ConversationConfig.from_dict(load_example("parking_help_desk"))
NOW = datetime(2026, 3, 12, 2, tzinfo=UTC)
PLAN = Path(__file__).resolve().parents[3] / "workflows" / "plans" / "parking_help_desk.json"
SHIPPED = ConversationConfig.from_dict(json.loads(PLAN.read_text(encoding="utf-8"))["conversation"])
ORDERS = {"SZ-2026-0312-77", "A1001"}
LOOKUPS = {"order_no": lambda value: value.upper() if value.upper() in ORDERS else False}


def finder(text: str, lang: str) -> list[dict]:
    """A lot "A1001" in Suzhou, and Shanghai by its one-character alias 沪."""
    hits = []
    if "A1001" in text:
        hits.append({"slots": {"lot_code": "A1001", "city_code": "320500"}, "raw": "A1001", "labels": {}})
    if "沪" in text:
        hits.append({"slots": {"city_code": "310100"}, "raw": "沪", "labels": {}})
    return hits


def say(state, text: str, config: ConversationConfig = CONFIG):  # noqa: ANN001, ANN201
    return advance_context(state, text, now=NOW, timezone="Asia/Shanghai", config=config, lookups=LOOKUPS, finders=[finder])


def test_a_lot_code_inside_an_order_number_is_no_lot() -> None:
    out = say(initial_state(CONFIG), "check order SZ-2026-0312-77 please")
    slots = out.state.usable_slots()
    assert slots.get("order_no") == "SZ-2026-0312-77" and "lot_code" not in slots
    assert out.resolved_intent == "fee_verify"  # the order is what only a verification needs


def test_a_plates_province_is_no_city() -> None:
    out = say(initial_state(CONFIG), "any arrears for 沪A99999?")
    assert out.state.usable_slots() == {"plate_no": "沪A99999"}


def test_the_order_asked_for_wins_over_a_lot_of_the_same_code() -> None:
    out = say(initial_state(CONFIG), "was I overcharged?")
    assert out.decision == "ask"
    out = say(out.state, "A1001")
    slots = out.state.usable_slots()
    assert slots == {"order_no": "A1001"} and out.resolved_intent == "fee_verify"


def test_bare_hour_ranges_and_a_new_end_and_a_whole_day() -> None:
    from conversations.engine.slots import shared_period

    assert shared_period("last Saturday 9 to 5") == "last Saturday 09:00 to 17:00"
    assert shared_period("from 9 to 11:30 tomorrow") == "from 09:00 to 11:30 tomorrow"
    assert shared_period("2 to 4") == "14:00 to 16:00" and shared_period("2 to 3 hours") == "2 to 3 hours"
    out = say(initial_state(SHIPPED), "how much is A1001 today from 10am until 1pm", SHIPPED)
    assert out.state.slots["until_time"].value.endswith("T13:00:00+08:00")
    out = say(out.state, "sorry, until 2pm", SHIPPED)
    slots = out.state.slots
    assert slots["at_time"].value.endswith("T10:00:00+08:00") and slots["until_time"].value.endswith("T14:00:00+08:00")
    out = say(out.state, "and for a whole day?", SHIPPED)
    assert out.state.slots["duration_minutes"].value == "1440"


def test_two_cancel_phrases_cancel_and_the_plate_is_no_reference_to_an_order() -> None:
    from conversations.engine._text import asks_to_cancel
    from conversations.engine.slots import resolve_reference

    assert asks_to_cancel("算了，不查了") and asks_to_cancel("never mind, forget it") and not asks_to_cancel("不用取消，查一下")
    assert resolve_reference("sorry, the plate is 苏E 9Z8Y7", ["WX-7781-B"]) is None
    assert resolve_reference("verify that one", ["WX-7781-B"]) == "WX-7781-B"


def test_which_lot_stays_asked_until_answered() -> None:
    def two_cities(text: str, lang: str) -> list[dict]:
        if "P1" not in text:
            return []
        return [{"slots": {"lot_code": "P1", "city_code": code}, "raw": "P1", "labels": {"city_code": name}}
                for code, name in (("320200", "Wuxi (320200)"), ("320500", "Suzhou (320500)"))]

    def talk(state, text: str):  # noqa: ANN001, ANN202
        return advance_context(state, text, now=NOW, timezone="Asia/Shanghai", config=SHIPPED, finders=[two_cities],
                               lookups={"lot_code": lambda value: value == "P1"})

    out = talk(initial_state(SHIPPED), "how much is P1 tomorrow 9 to 11?")
    assert out.decision == "ask" and "Suzhou" in out.question
    out = talk(out.state, "is there a daily cap?")
    assert out.decision == "ask" and "Suzhou" in out.question and "city_code" not in out.state.usable_slots()
