"""Typed form questions (issue 33): numbers with bounds, text in a declared format, dates and times read by the
time recognizer. A wrong kind of answer is refused with what is wrong said, never stored; nothing is guessed."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from conversations.engine import ConversationConfig, validate_config
from conversations.engine.simulate import Dialogue

QUESTIONS = [
    {"id": "guests", "question": {"en": "How many guests?", "zh": "几位客人？"}, "answer_type": "number", "min": 1, "max": 50},
    {"id": "account", "question": {"en": "Which account code should we bill?", "zh": "记到哪个账户代码？"}, "answer_type": "text",
     "answer_pattern": "\\b([A-Z]{2}-\\d{4})\\b", "example": {"en": "AB-1234", "zh": "AB-1234"}},
    {"id": "day", "question": {"en": "Which day is the event?", "zh": "活动哪天？"}, "answer_type": "date"},
    {"id": "start", "question": {"en": "What time does it start?", "zh": "几点开始？"}, "answer_type": "time"},
]
CONFIG = ConversationConfig.from_dict({"form": {"title": {"en": "Room booking"}, "questions": QUESTIONS}})
NOW = datetime(2026, 12, 4, 2, tzinfo=UTC)  # Friday 4 December, 10:00 in Shanghai


def answers(d: Dialogue) -> dict[str, str]:
    return {a.question_id: a.answer for a in d.state.finalized_answers}


def test_an_english_booking_refuses_each_wrong_kind_and_keeps_the_right_one() -> None:
    d = Dialogue(CONFIG, NOW, locale="en")
    d.say("hi")
    d.say("200 people")
    assert "from 1 to 50" in d.replies[-1] and "guests" not in answers(d)
    d.say("35")
    d.say("bill it to the marketing account")
    assert "for example AB-1234" in d.replies[-1] and "account" not in answers(d)
    d.say("it's MK-2041 I think")
    assert answers(d)["account"] == "MK-2041"
    d.say("next friday or saturday")  # two days offered: asked, never the first
    assert "one day" in d.replies[-1] and "day" not in answers(d)
    d.say("next friday")
    assert answers(d)["day"] == "2026-12-11"
    d.say("in the afternoon")  # a part of the day is no time
    assert "time of day" in d.replies[-1] and "start" not in answers(d)
    d.say("2:30pm")
    assert answers(d) == {"guests": "35", "account": "MK-2041", "day": "2026-12-11", "start": "14:30"}


def test_a_chinese_booking() -> None:
    d = Dialogue(CONFIG, NOW, locale="zh-hans")
    d.say("你好")
    d.say("三百人")
    assert "1到50" in d.replies[-1]
    for text in ("三十个人", "账户是 FN-0099", "下周五", "下午两点半"):
        d.say(text)
    assert answers(d) == {"guests": "30", "account": "FN-0099", "day": "2026-12-11", "start": "14:30"}


def test_the_format_is_case_sensitive_unless_the_plan_says_otherwise() -> None:
    d = Dialogue(CONFIG, NOW, locale="en")
    d.say("hi")
    d.say("12")
    d.say("ab-1234")
    assert "account" not in answers(d)
    relaxed = [dict(q, ignore_case=True) if q["id"] == "account" else q for q in QUESTIONS]
    d = Dialogue(ConversationConfig.from_dict({"form": {"questions": relaxed}}), NOW, locale="en")
    for text in ("hi", "12", "ab-1234"):
        d.say(text)
    assert answers(d)["account"] == "ab-1234"


@pytest.mark.parametrize(("question", "path", "message"), [
    ({"id": "q", "answer_type": "text", "min": 3}, "$.form.questions[0].min", "only a number question has bounds"),
    ({"id": "q", "answer_type": "number", "min": 9, "max": 3}, "$.form.questions[0].min", "must not be above max"),
    ({"id": "q", "answer_type": "number", "answer_pattern": "x"}, "$.form.questions[0].answer_pattern", "only a text question"),
    ({"id": "q", "answer_type": "text", "answer_pattern": "(unclosed"}, "$.form.questions[0].answer_pattern", "invalid regex"),
    ({"id": "q", "answer_type": "calendar"}, "$.form.questions[0].answer_type", ""),
])
def test_a_typed_question_that_cannot_work_is_refused(question: dict, path: str, message: str) -> None:
    problems = validate_config({"form": {"questions": [question]}})
    assert any(p == path and message in m for p, m in problems), problems


def test_a_models_answer_is_held_to_the_same_types() -> None:
    from conversations.engine.commands import QuestionRef, normalise_answer

    guests = QuestionRef("guests", "number", low=1, high=50)
    assert normalise_answer("35", guests) == "35" and normalise_answer("200", guests) is None
    account = QuestionRef("account", "text", pattern="\\b([A-Z]{2}-\\d{4})\\b")
    assert normalise_answer("bill MK-2041", account) == "MK-2041" and normalise_answer("mk-2041", account) is None
    item = QuestionRef("item", "choice", ("laptop", "camera"), other=True)
    assert normalise_answer("other: a tripod", item) == "other: a tripod" and normalise_answer("a tripod", item) is None
    assert normalise_answer("other: a tripod", QuestionRef("item", "choice", ("laptop",))) is None
    assert normalise_answer("14:30", QuestionRef("start", "time")) == "14:30"
    assert normalise_answer("2027-03-01 14:30", QuestionRef("at", "datetime")) == "2027-03-01 14:30"
    assert normalise_answer("2027-03-01", QuestionRef("day", "date")) == "2027-03-01"


BOXES = ConversationConfig.from_dict({"form": {"questions": [
    {"id": "boxes", "question": {"en": "How many boxes are you sending?", "zh": "您要寄几箱？"}, "answer_type": "number",
     "unit": "boxes", "min": 1, "max": 20, "unit_words": {"one": {"en": "{n} box", "zh": "{n}箱"}, "many": {"en": "{n} boxes", "zh": "{n}箱"}}},
    {"id": "note", "question": {"en": "Anything else?", "zh": "还有别的吗？"}}]}})


def test_a_unit_the_plan_names_is_read_and_said_in_its_words() -> None:
    from conversations.engine.plain_words import answer_shown

    d = Dialogue(BOXES, NOW, locale="zh-hans")
    d.say("你好")
    d.say("大概三十箱")
    assert "1箱到20箱" in d.replies[-1]  # the bounds in the plan's words for its unit
    d.say("三箱")
    assert answers(d) == {"boxes": "3 boxes"}
    assert answer_shown(BOXES.form.questions[0], "3 boxes", "zh") == "3箱"
    d = Dialogue(BOXES, NOW, locale="en")
    d.say("hi")
    d.say("just 1 box")
    assert answers(d) == {"boxes": "1 box"}  # "3 boxes", "1 box": the unit's own words count it, not something else
