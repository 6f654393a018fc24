"""Follow-ups on a fee answer (issue 15): a bare weekday counts from the stay talked about, a part of
the day, overnight, another week, leaving earlier, the most a day costs, the other car park. No database."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conversations.engine import ConversationConfig
from conversations.engine.fee_questions import asks_cap, day_part, names_other_one, week_shift
from conversations.engine.intents import route_intent
from conversations.engine.replies import _explain_rule
from conversations.engine.simulate import Dialogue
from conversations.engine.slots import ExtractContext, _at_time, _duration, _until
from conversations.engine.timeparse import parse_datetime

ZONE = "Asia/Shanghai"
TZ = ZoneInfo(ZONE)
NOW = datetime(2026, 11, 25, 4, 0, tzinfo=TZ)  # a Wednesday
THURSDAY = datetime(2026, 11, 26, 9, 0, tzinfo=TZ)
PLAN = json.loads((Path(__file__).resolve().parents[3] / "workflows/plans/parking_help_desk.json").read_text(encoding="utf-8"))
CONFIG = ConversationConfig.from_dict(PLAN["conversation"])


def followup(text: str, entry: datetime = THURSDAY) -> str | None:
    found = _at_time(text, ExtractContext(now=NOW, timezone=ZONE, entry=entry))
    return datetime.fromisoformat(found.value).strftime("%a %m-%d %H:%M") if found else None


@pytest.mark.parametrize(("text", "entry", "expected"), [
    ("what about Sunday?", THURSDAY, "Sun 11-29 09:00"),  # after "tomorrow" (Thursday): the coming Sunday
    ("那周日呢？", datetime(2026, 11, 21, 14, 0, tzinfo=TZ), "Sun 11-22 14:00"),  # after 上周六: the next day
    ("and on thursday?", THURSDAY, "Thu 11-26 09:00"),  # the same day
    ("what about the weekend", THURSDAY, "Sat 11-28 09:00"),
    ("周末呢", THURSDAY, "Sat 11-28 09:00"),
    ("and at night?", THURSDAY, "Thu 11-26 22:00"),
    ("那晚上呢", THURSDAY, "Thu 11-26 22:00"),
    ("下午呢", THURSDAY, "Thu 11-26 14:00"),
    ("and overnight?", THURSDAY, "Thu 11-26 20:00"),
    ("same time next week?", THURSDAY, "Thu 12-03 09:00"),
    ("下周同一时间呢", THURSDAY, "Thu 12-03 09:00"),
    ("上周日呢", THURSDAY, "Sun 11-22 09:00"),  # said of this week: 上 counts from today, not from the stay
    ("and for the weekend, if I stay till 8pm", THURSDAY, "Sat 11-28 09:00"),
])
def test_a_follow_up_moves_the_stay_it_talks_about(text, entry, expected) -> None:  # noqa: ANN001
    assert followup(text, entry) == expected


@pytest.mark.parametrize("text", ["白天最多收多少？", "what's the most I'd pay at night?", "what if I leave at 6 instead?",
                                  "那如果六点走呢", "sorry, until 2pm"])
def test_what_does_not_move_the_start(text) -> None:  # noqa: ANN001
    assert followup(text) is None


@given(st.dates(min_value=date(2020, 1, 1), max_value=date(2035, 12, 31)), st.integers(min_value=0, max_value=6),
       st.sampled_from(["en", "zh"]))
def test_a_bare_weekday_after_a_stay_is_the_first_one_on_or_after_it(anchor, weekday, lang) -> None:  # noqa: ANN001
    word = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")[weekday] if lang == "en" \
        else "周" + "一二三四五六日"[weekday]
    parsed = parse_datetime(f"what about {word}?", now=NOW, timezone=ZONE, anchor=anchor)
    assert parsed is not None and parsed.value.weekday() == weekday
    assert 0 <= (parsed.value.date() - anchor).days <= 6


@pytest.mark.parametrize(("text", "end"), [
    ("what if I leave at 6 instead?", "11-26 18:00"),
    ("那如果六点走呢", "11-26 18:00"),
    ("if I stay till 8pm", "11-26 20:00"),
    ("and for the weekend, if I stay till 8pm", "11-28 20:00"),
])
def test_leaving_at_another_time_is_the_stays_end(text, end) -> None:  # noqa: ANN001
    found = _until(text, ExtractContext(now=NOW, timezone=ZONE, entry=THURSDAY))
    assert found is not None and datetime.fromisoformat(found.value).strftime("%m-%d %H:%M") == end


@pytest.mark.parametrize(("text", "minutes"), [("整天呢", "1440"), ("and a whole day?", "1440"), ("过夜呢", "720"),
                                               ("what about overnight", "720")])
def test_worded_lengths(text, minutes) -> None:  # noqa: ANN001
    found = _duration(text, ExtractContext(now=NOW, timezone=ZONE))
    assert found is not None and found.value == minutes


def test_the_words_of_a_fee_question() -> None:
    assert asks_cap("whats the max") and asks_cap("白天最多收多少？") and not asks_cap("and at night?")
    assert day_part("那晚上呢")[0] == "night" and day_part("傍晚呢")[0] == "evening" and day_part("how much?") is None
    assert week_shift("same time next week?") == 7 and week_shift("下周日呢") == 0 and week_shift("上周同一时间") == -7
    assert names_other_one("and at the other car park?") and names_other_one("那另一个停车场呢？")
    assert not names_other_one("另一个订单")


@pytest.mark.parametrize("text", ["what's the most I'd pay?", "whats the max", "is there a daily limit?", "最多收多少",
                                  "最高多少钱", "is there a cap?"])
def test_every_cap_question_the_reply_answers_is_routed_to_the_rule(text) -> None:  # noqa: ANN001
    # the router and the reply read the same words: a cap question is never a side question left to a snippet
    assert asks_cap(text)
    assert route_intent(text, domain_intents=CONFIG.intents).intent == "rule_explain"


LOTS = {"PJ-02", "GS-018", "HS-9"}
LOOKUPS = {"lot_code": lambda value: value in LOTS}


def test_a_question_changing_the_requests_detail_is_a_follow_up_not_a_side_question() -> None:
    d = Dialogue(CONFIG, NOW, lookups=LOOKUPS)
    d.say("how much at lot PJ-02 tomorrow 9 to 11am")
    out = d.say("what is it at lot GS-018?")
    assert out.resolved_intent == "rule_explain" and out.meaning == "follow_up" and out.side_question is None
    assert out.usable_slots["lot_code"] == "GS-018"


def test_the_other_car_park_is_the_one_before_or_is_asked() -> None:
    d = Dialogue(CONFIG, NOW, lookups=LOOKUPS)
    d.say("how much at lot PJ-02 tomorrow 9 to 11am")
    out = d.say("and at the other car park?")
    assert out.decision == "ask" and out.missing_slots == () and "lot_code" not in out.usable_slots
    out = d.say("lot GS-018")
    assert out.usable_slots["lot_code"] == "GS-018" and out.usable_slots["at_time"].endswith("T09:00:00+08:00")
    out = d.say("and at the other car park?")
    assert out.usable_slots["lot_code"] == "PJ-02"


WEEKDAY_RULE = {
    "tool": "rule_explain", "rule_code": "R", "rule_name": "r", "version_no": 1, "lot_code": "L",
    "effective_from": "2026-01-01T00:00:00+08:00", "effective_to": None, "at_time": "2026-11-29T10:00:00+08:00",
    "segments": [{"name": "workday", "type": "periodic", "time_window": {"start": "07:00", "end": "19:00"},
                  "weekdays": [1, 2, 3, 4, 5], "unit_minutes": 30, "unit_price": 3, "free_minutes": 0, "max_charge": 36},
                 {"name": "night", "type": "free", "time_window": {"start": "20:00", "end": "07:00"}}],
    "stays_asked": True,
}


def _sim(entry: str, hours: int, rows: list[dict]) -> dict:
    start = datetime.fromisoformat(entry)
    total = sum(float(r["amount"]) for r in rows)
    return {"entry_time": entry, "exit_time": (start + timedelta(hours=hours)).isoformat(), "total_amount": f"{total:.2f}",
            "breakdown": rows}


@pytest.mark.parametrize(("lang", "said"), [("en", ["No segment of this rule applies from Sunday 2026-11-29 10:00 to 13:00",
                                                     "workday applies Mon–Fri only"]),
                                            ("zh", ["2026-11-29（周日）10:00", "07:00–19:00 仅适用于周一至周五"])])
def test_a_stay_no_segment_covers_is_said_plainly(lang, said) -> None:  # noqa: ANN001
    result = {**WEEKDAY_RULE, "simulations": [_sim("2026-11-29T10:00:00+08:00", 3, [])]}
    facts, conclusion, _ = _explain_rule(result, lang, "what about Sunday?")
    assert all(s in conclusion for s in said)
    assert any("Mon–Fri" in f or "周一至周五" in f for f in facts)


def test_a_part_of_the_day_names_the_rules_segment_for_it_or_that_none_applies() -> None:
    night = {**WEEKDAY_RULE, "simulations": [_sim("2026-11-29T22:00:00+08:00", 2, [
        {"segment_name": "night", "minutes": 120, "amount": "0.00"}])]}
    assert "At night on Sunday 2026-11-29 this rule's segment is night 20:00–07:00: free." in _explain_rule(night, "en", "and at night?")[1]
    evening = {**WEEKDAY_RULE, "simulations": [_sim("2026-11-29T18:00:00+08:00", 1, [])]}
    assert "no segment of this rule applies" in _explain_rule(evening, "en", "what about the evening?")[1]


def test_a_weekend_is_both_its_days() -> None:
    result = {**WEEKDAY_RULE, "simulations": [_sim("2026-11-28T10:00:00+08:00", 2, []), _sim("2026-11-29T10:00:00+08:00", 2, [])]}
    conclusion = _explain_rule(result, "en", "what about the weekend?")[1]
    assert "Saturday 2026-11-28" in conclusion and "Sunday 2026-11-29" in conclusion


@pytest.mark.parametrize("text", ["不对，是前一天", "后一天呢", "第二天同一时间呢"])
def test_a_day_counted_from_the_stay_is_no_length(text) -> None:  # noqa: ANN001
    assert _duration(text, ExtractContext(now=NOW, timezone=ZONE)) is None
