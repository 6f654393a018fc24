"""Identifiers are read whole, a request is known by the detail only it needs, and the identifier asked for wins."""

from __future__ import annotations

from datetime import UTC, datetime

from conversations.engine import ConversationConfig, advance_context, initial_state, load_example

CONFIG = ConversationConfig.from_dict(load_example("parking_help_desk"))
NOW = datetime(2026, 3, 12, 2, tzinfo=UTC)
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


def say(state, text: str):  # noqa: ANN001, ANN201
    return advance_context(state, text, now=NOW, timezone="Asia/Shanghai", config=CONFIG, lookups=LOOKUPS, finders=[finder])


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
