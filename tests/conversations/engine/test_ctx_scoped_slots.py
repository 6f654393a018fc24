"""Slots a plan declares (issue 33, part 3): its patterns replace the generic reader, and one span fills one slot."""

from __future__ import annotations

from datetime import UTC, datetime

from conversations.engine import ConversationConfig
from conversations.engine.slots import ExtractContext, extract_slots

CONFIG = ConversationConfig.from_dict({"slots": {
    "booking_ref": {"extractor": "text", "patterns": {"any": ["\\b(VC-?\\d{5})\\b"]}},
    "guests": {"extractor": "number"},
    "account": {"extractor": "number", "patterns": {"en": ["\\baccount\\s+(\\d{6})\\b"]}},
}})
CTX = ExtractContext(now=datetime(2026, 3, 4, 2, tzinfo=UTC), timezone="Asia/Shanghai", language="en")


def found(text: str) -> dict[str, str]:
    return {name: x.value for name, x in extract_slots(text, CONFIG.slots.values(), CTX).items()}


def test_an_identifiers_digits_fill_no_number() -> None:
    assert found("please cancel VC-10234") == {"booking_ref": "VC-10234"}


def test_a_number_said_apart_still_fills_its_slot() -> None:
    assert found("VC-10234, and we are 3 guests") == {"booking_ref": "VC-10234", "guests": "3"}


def test_declared_patterns_replace_the_generic_reader() -> None:
    assert "account" not in found("we are 4")  # the number reader would take 4; the plan said how an account is said
    assert found("account 123456")["account"] == "123456"
