"""Extraction is scoped (issue 33): with a request in progress, a generic value (a day, a time, a number, free
text) fills that request's details, the detail asked, the details of the request the message asks for, a detail
no request owns, or one the message names by its label; never another request's detail in passing."""

from __future__ import annotations

from datetime import UTC, datetime

from conversations.engine import ConversationConfig
from conversations.engine.simulate import Dialogue

NOW = datetime(2026, 3, 4, 2, tzinfo=UTC)  # Wednesday 4 March, 10:00 in Shanghai
CONFIG = ConversationConfig.from_dict({
    "intents": [
        {"name": "book_room", "patterns": {"en": [r"\bbook\b"], "zh": ["订房"]}, "required_slots": ["room_day", "guests"]},
        {"name": "order_catering", "patterns": {"en": [r"\bcatering\b"]}, "required_slots": ["delivery_day", "portions"]},
    ],
    "slots": {
        "room_day": {"extractor": "date", "label": {"en": "room day"}},
        "guests": {"extractor": "number", "label": {"en": "guests"}},
        "delivery_day": {"extractor": "date", "label": {"en": "delivery day", "zh": "送餐日期"}},
        "portions": {"extractor": "number", "label": {"en": "portions"}},
    },
})


def test_a_day_said_for_one_request_fills_no_other_requests_day() -> None:
    d = Dialogue(CONFIG, NOW)
    d.say("I'd like to book a room")
    out = d.say("friday, for 8 people")
    assert out.usable_slots.get("room_day") == "2026-03-06" and "delivery_day" not in d.state.slots
    assert "portions" not in d.state.slots


def test_a_detail_named_by_its_label_is_filled_whatever_the_request() -> None:
    d = Dialogue(CONFIG, NOW)
    d.say("I'd like to book a room")
    d.say("friday, 8 guests, and the delivery day is thursday")
    assert d.state.slots["room_day"].value == "2026-03-06" and d.state.slots["delivery_day"].value == "2026-03-05"


def test_the_request_the_message_asks_for_takes_its_details() -> None:
    d = Dialogue(CONFIG, NOW)
    d.say("I'd like to book a room for friday, 8 guests")
    out = d.say("and catering: 8 portions on friday")
    assert out.resolved_intent == "order_catering" and d.state.slots["portions"].value == "8"
    assert d.state.slots["delivery_day"].value == "2026-03-06"


def test_a_label_in_chinese_takes_the_day_said_after_it() -> None:
    d = Dialogue(CONFIG, NOW, locale="zh-hans")
    d.say("我想订房")
    d.say("周五，8个人，送餐日期是周四")
    assert d.state.slots["room_day"].value == "2026-03-06" and d.state.slots["delivery_day"].value == "2026-03-05"


def test_a_label_inside_a_word_is_no_label() -> None:
    config = ConversationConfig.from_dict({
        "intents": [{"name": "visit", "patterns": {"en": [r"\bvisit\b"]}, "required_slots": ["visit_day"]},
                    {"name": "refill", "patterns": {"en": [r"\brefill\b"]}, "required_slots": ["refill_day"]}],
        "slots": {"visit_day": {"extractor": "date", "label": {"en": "visit"}},
                  "refill_day": {"extractor": "date", "label": {"en": "day"}}},
    })
    d = Dialogue(config, NOW)
    d.say("a visit please")
    d.say("friday works")  # "day" in "Friday" names no refill day
    assert d.state.slots["visit_day"].value == "2026-03-06" and "refill_day" not in d.state.slots
