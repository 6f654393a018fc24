"""Issue 15, the help desk on any operator's data: identifiers by what they are, written loosely; an amount asked
about; who runs a lot; a month alone; a stay from now (no database: lookups and a finder are plain functions)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from conversations.engine import ConversationConfig, advance_context, initial_state
from conversations.engine.fee_questions import asks_amount_right
from conversations.engine.slots import ExtractContext, extract_slots, identifier_candidates
from conversations.engine.timeparse import parse_date, parse_datetime

PLAN = Path(__file__).resolve().parents[3] / "workflows" / "plans" / "parking_help_desk.json"
CONFIG = ConversationConfig.from_dict(json.loads(PLAN.read_text(encoding="utf-8"))["conversation"])
NOW = datetime(2026, 5, 20, 2, 30, tzinfo=UTC)  # Wednesday 2026-05-20 10:30 in Shanghai
TZ = "Asia/Shanghai"
ORDERS = ("WH-JH-3310", "WH-0612-045", "JH_K_77", "4201998877", "Q1001")
LOTS = ("JH-1", "Q1001")


def _key(value: str) -> str:
    return re.sub(r"[\s·.\-_]+", "", value).upper()


def order_lookup(value: str) -> str | bool:
    """Like the billing lookup: both sides compared without case and separators."""
    fits = [o for o in ORDERS if _key(o) == _key(value)]
    return fits[0] if len(fits) == 1 else False


def lot_lookup(value: str) -> str | bool:
    return value.upper() if value.upper() in LOTS else False


LOOKUPS = {"order_no": order_lookup, "lot_code": lot_lookup}


def finder(text: str, lang: str) -> list[dict]:
    """The Jianghan lot by its name, the lot Q1001 by its code (an order has that number too)."""
    hits = [{"slots": {"lot_code": "Q1001", "city_code": "420100"}, "raw": "Q1001", "labels": {}}] if "Q1001" in text else []
    if "Jianghan" in text or "江汉路" in text:
        raw = "Jianghan Road car park" if "Jianghan Road car park" in text else ("Jianghan" if "Jianghan" in text else "江汉路停车场")
        hits.append({"slots": {"lot_code": "JH-1", "city_code": "420100"}, "raw": raw, "labels": {}})
    return hits


def say(state, text: str):  # noqa: ANN001, ANN201
    return advance_context(state, text, now=NOW, timezone=TZ, config=CONFIG, lookups=LOOKUPS, finders=[finder])


# -- identifiers -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "first"), [
    ("verify wh 0612 045", "wh 0612 045"),
    ("订单wh 0612 045对吗", "wh 0612 045"),
    ("check jh k 77 please", "jh k 77"),
    ("abc 1234", "abc 1234"),
])
def test_an_identifier_written_with_spaces_is_tried_whole_first(text: str, first: str) -> None:
    assert identifier_candidates(text)[0] == first


@pytest.mark.parametrize(("text", "tokens"), [
    ("does su a 5r6t7 owe anything", ["5r6t7"]),  # a word after the digits is no group ("5r6t7 owe")
    ("plate 苏E 9Z8Y7 at 14:00", ["9Z8Y7"]),  # "苏E" starts a plate: the pattern reads it, not a spaced run
    ("pay 0511 318 now", ["0511 318", "0511", "318"]),
])
def test_common_words_are_no_groups(text: str, tokens: list[str]) -> None:
    assert identifier_candidates(text) == tokens


@pytest.mark.parametrize(("text", "taken", "tokens"), [
    ("and on 2027-11-04 at 09:30?", ["2027-11-04  09:30"], []),  # the date is a time, not an order number
    ("2027年11月4日 09:30 呢", ["2027年11月4日 09:30"], []),
    ("verify gz 0603 771", ["gz"], ["gz 0603 771", "gz 0603", "0603 771", "0603", "771"]),  # "gz" read as a city: the run is still tried
    ("check KT-88120 on 2027-11-04", ["2027-11-04"], ["KT-88120"]),
])
def test_words_already_read_as_something_else_are_no_identifier(text: str, taken: list[str], tokens: list[str]) -> None:
    assert identifier_candidates(text, taken) == tokens


@pytest.mark.parametrize("text", ["I think WH-JH-3310 overcharged me", "我觉得WH-JH-3310多收了"])
def test_a_lot_shaped_identifier_that_is_only_an_order_is_the_order(text: str) -> None:
    out = say(initial_state(CONFIG), text)
    assert out.state.usable_slots() == {"order_no": "WH-JH-3310"}
    assert out.resolved_intent == "fee_verify" and out.decision == "continue"


def test_a_token_that_is_a_lot_and_an_order_is_still_asked_about() -> None:
    out = say(initial_state(CONFIG), "Q1001")
    assert out.decision == "ask" and "both" in (out.notice or "")


@pytest.mark.parametrize(("text", "order"), [
    ("verify wh 0612 045", "WH-0612-045"),
    ("核对订单 wh.0612.045", "WH-0612-045"),
    ("check order wh_0612_045 please", "WH-0612-045"),
    ("can you check wh-jh-3310", "WH-JH-3310"),  # named alone, in lower case: the order it is
])
def test_an_order_written_loosely_is_found(text: str, order: str) -> None:
    out = say(initial_state(CONFIG), text)
    assert out.state.usable_slots().get("order_no") == order
    assert "city_code" not in out.state.usable_slots() and out.resolved_intent == "fee_verify"


@pytest.mark.parametrize(("text", "order"), [
    ("jh_k_77 - was the 60 correct", "JH_K_77"),
    ("4201998877 收了我12块 对吗", "4201998877"),
    ("4201998877这单收十二块钱对不对", "4201998877"),
    ("WH-JH-3310 charged me 45, is that right?", "WH-JH-3310"),  # "charged" alone would be a rule question
])
def test_an_order_with_an_amount_asked_about_is_a_fee_check(text: str, order: str) -> None:
    out = say(initial_state(CONFIG), text)
    assert out.state.usable_slots() == {"order_no": order}
    assert out.resolved_intent == "fee_verify"


@pytest.mark.parametrize(("text", "asks"), [
    (" - was the 60 correct", True), (" 收了我12块 对吗", True), ("paid ¥35 ok?", True), ("60元没错吧", True),
    ("is that right?", False),  # no amount
    ("停3小时对吗", False), ("park 3 hours, is that right", False),  # a length, not an amount
    ("right now 60", False), ("how much is it", False),
])
def test_an_amount_asked_about(text: str, asks: bool) -> None:
    assert asks_amount_right(text) is asks


# -- who runs a lot ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["who runs the Jianghan Road car park?", "who owns Jianghan?", "江汉路停车场是谁在管理？",
                                  "江汉路停车场是哪家公司运营的"])
def test_who_runs_a_lot_is_a_side_question_not_its_prices(text: str) -> None:
    out = say(initial_state(CONFIG), text)
    assert out.meaning == "side_question" and out.side_question is not None and out.side_question.topic == "lot_operator"
    assert out.resolved_intent is None and out.reply_action == "side_answer"


# -- a month alone ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "day"), [
    ("what did it charge back in april", "2026-04-15"),
    ("in April 2025", "2025-04-15"),
    ("4月份的时候呢", "2026-04-15"),
    ("四月呢", "2026-04-15"),
    ("in December", "2025-12-15"),  # the most recent December, never one to come
    ("去年十二月", "2025-12-15"),
    ("last May", "2025-05-15"),
    ("last month", "2026-04-15"),
    ("上个月", "2026-04-15"),
    ("2026年3月", "2026-03-15"),
    ("明年三月上线", "2027-03-15"),
])
def test_a_month_alone_is_the_15th_of_the_most_recent_one(text: str, day: str) -> None:
    parsed = parse_datetime(text, now=NOW, timezone=TZ)
    assert parsed is not None and parsed.precision == "day" and parsed.value.date().isoformat() == day


def test_the_current_month_is_never_a_day_to_come() -> None:
    early = datetime(2026, 5, 10, 2, tzinfo=UTC)
    assert parse_date("in May", now=early, timezone=TZ).isoformat() == "2026-05-10"
    assert parse_date("in May", now=NOW, timezone=TZ).isoformat() == "2026-05-15"


@pytest.mark.parametrize("text", ["may I park here", "I'll march in", "三个月", "办月卡", "5月20停的"])
def test_words_that_are_no_month(text: str) -> None:
    assert parse_date(text, now=NOW, timezone=TZ) is None


def test_a_month_moves_the_rule_asked_about_to_then() -> None:
    out = say(initial_state(CONFIG), "how is Jianghan charged")
    out = say(out.state, "4月份的时候呢")
    assert out.resolved_intent == "rule_explain" and out.state.slots["at_time"].value.startswith("2026-04-15")


# -- a stay from now ---------------------------------------------------------------------------------------------------

def _stay(text: str, entry: datetime | None = None) -> tuple[str | None, str | None]:
    ctx = ExtractContext(now=NOW, timezone=TZ, language="zh" if re.search(r"[\u4e00-\u9fff]", text) else "en", entry=entry)
    found = extract_slots(text, [CONFIG.slot_spec("at_time"), CONFIG.slot_spec("until_time")], ctx)
    return (found["at_time"].value if "at_time" in found else None, found["until_time"].value if "until_time" in found else None)


@pytest.mark.parametrize(("text", "until"), [
    ("现在停到晚上十二点要多少", "2026-05-21T00:00:00+08:00"),
    ("now until midnight", "2026-05-21T00:00:00+08:00"),
    ("from now till 6pm", "2026-05-20T18:00:00+08:00"),
    ("现在停到晚上六点", "2026-05-20T18:00:00+08:00"),
    ("right now to 9pm, how much", "2026-05-20T21:00:00+08:00"),
    ("how much if I stay until 8pm", "2026-05-20T20:00:00+08:00"),  # an end alone, no stay talked about: from now
])
def test_a_stay_from_now(text: str, until: str) -> None:
    assert _stay(text) == ("2026-05-20T10:30:00+08:00", until)


def test_an_end_alone_in_a_follow_up_keeps_the_stay_start() -> None:
    entry = datetime.fromisoformat("2026-05-21T09:00:00+08:00")
    assert _stay("不对，停到下午五点", entry) == (None, "2026-05-21T17:00:00+08:00")
    assert _stay("现在停到晚上十二点呢", entry) == ("2026-05-20T10:30:00+08:00", "2026-05-21T00:00:00+08:00")


def test_twelve_at_night_is_midnight() -> None:
    assert parse_datetime("晚上十二点", now=NOW, timezone=TZ).value.hour == 0
    assert parse_datetime("中午十二点", now=NOW, timezone=TZ).value.hour == 12
    assert parse_datetime("12pm", now=NOW, timezone=TZ).value.hour == 12


@pytest.mark.parametrize("follow_up", ["what about on 2027-11-04 at 09:30?", "那2027-11-04 09:30呢？"])
def test_a_date_said_alone_is_not_looked_up_as_an_order(follow_up: str) -> None:
    asked: list[str] = []
    lookups = {**LOOKUPS, "order_no": lambda value: asked.append(value) or order_lookup(value)}
    state = advance_context(initial_state(CONFIG), "How is parking charged at JH-1 on 2027-11-03 at 10:00?", now=NOW,
                            timezone=TZ, config=CONFIG, lookups=lookups, finders=[finder]).state
    asked.clear()
    out = advance_context(state, follow_up, now=NOW, timezone=TZ, config=CONFIG, lookups=lookups, finders=[finder])
    assert asked == []
    assert out.state.usable_slots()["at_time"].startswith("2027-11-04T09:30")
