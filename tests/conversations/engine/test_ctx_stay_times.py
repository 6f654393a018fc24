"""A stay's times as people say them in a first question or a correction (issue 15): a range with a day on each
end, a bare hour with its part of the day after it, a part of the day or "overnight" with no day said, "a weekday",
a bare weekday (the coming one, the most recent one for a stay that has happened), a start corrected under an end
that was said. A fixed clock, no database."""

from __future__ import annotations

import json
from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conversations.engine import ConversationConfig
from conversations.engine.config import SlotSpec
from conversations.engine.fee_questions import day_part, says_start
from conversations.engine.simulate import Dialogue
from conversations.engine.slots import ExtractContext, extract_slots
from conversations.engine.timeparse import parse_datetime

ZONE = "Asia/Shanghai"
TZ = ZoneInfo(ZONE)
WEDNESDAY = datetime(2026, 11, 25, 5, 0, tzinfo=TZ)  # early morning, as in the walk
SATURDAY = datetime(2026, 11, 28, 16, 30, tzinfo=TZ)
SUNDAY = datetime(2026, 11, 29, 10, 0, tzinfo=TZ)
SPECS = [SlotSpec(name=n, extractor=n) for n in ("at_time", "until_time", "duration_minutes")]
PLAN = json.loads((Path(__file__).resolve().parents[3] / "workflows/plans/parking_help_desk.json").read_text(encoding="utf-8"))
CONFIG = ConversationConfig.from_dict(PLAN["conversation"])


def stay(text: str, now: datetime = WEDNESDAY, entry: datetime | None = None) -> tuple[str | None, str | None]:
    """The start and end a message says, as 'Wed 11-25 19:00'."""
    found = extract_slots(text, SPECS, ExtractContext(now=now, timezone=ZONE, entry=entry))

    def said(name: str) -> str | None:
        return datetime.fromisoformat(found[name].value).strftime("%a %m-%d %H:%M") if name in found else None

    return said("at_time"), said("until_time")


@pytest.mark.parametrize(("text", "start", "end"), [
    ("how much at JFB-01 from 7pm tonight till 10 tomorrow morning", "Wed 11-25 19:00", "Thu 11-26 10:00"),
    ("解放碑今晚八点停到明早九点多少钱", "Wed 11-25 20:00", "Thu 11-26 09:00"),
    ("from 10pm today to 8am tomorrow", "Wed 11-25 22:00", "Thu 11-26 08:00"),
    ("tonight 9pm to tomorrow 9am", "Wed 11-25 21:00", "Thu 11-26 09:00"),
    ("from 9 in the evening until 7 in the morning", "Wed 11-25 21:00", "Thu 11-26 07:00"),
    ("if I park at 8 tonight and leave at 9 tomorrow morning how much", "Wed 11-25 20:00", "Thu 11-26 09:00"),
    ("came in at 3pm yesterday and left at 6pm", "Tue 11-24 15:00", "Tue 11-24 18:00"),
    ("if I come at 6pm today and go at 11am tomorrow", "Wed 11-25 18:00", "Thu 11-26 11:00"),
    ("in at 9pm tonight, out at 7am tomorrow", "Wed 11-25 21:00", "Thu 11-26 07:00"),
    ("今晚八点进场，明早九点出场", "Wed 11-25 20:00", "Thu 11-26 09:00"),
    ("今晚八点停，明早九点走", "Wed 11-25 20:00", "Thu 11-26 09:00"),
    ("晚上七点进去 第二天十点开走", "Wed 11-25 19:00", "Thu 11-26 10:00"),
    ("昨天下午3点进的，5点走的", "Tue 11-24 15:00", "Tue 11-24 17:00"),
    ("今天晚上九点到明天早上八点多少钱", "Wed 11-25 21:00", "Thu 11-26 08:00"),
    ("今晚10点停到第二天上午10点", "Wed 11-25 22:00", "Thu 11-26 10:00"),
    ("从今晚七点到明天中午十二点", "Wed 11-25 19:00", "Thu 11-26 12:00"),
    ("明天下午两点到后天上午十点", "Thu 11-26 14:00", "Fri 11-27 10:00"),  # each end's day counts from today
    # a day said only after the end is the end's; the start is the last time of its clock before it
    ("2pm to 4pm tomorrow", "Thu 11-26 14:00", "Thu 11-26 16:00"),
    ("from 7pm till 10 tomorrow morning", "Wed 11-25 19:00", "Thu 11-26 10:00"),
    ("9pm Friday to 7am Saturday", "Fri 11-27 21:00", "Sat 11-28 07:00"),
    ("from 7 to 9 tonight", "Wed 11-25 19:00", "Wed 11-25 21:00"),  # the start takes the end's half of the day
    # an end said by its day and a bare hour or a part of the day
    ("tonight till tomorrow morning", "Wed 11-25 22:00", "Thu 11-26 09:00"),
    ("from 8 this evening until 9 tomorrow", "Wed 11-25 20:00", "Thu 11-26 09:00"),
    ("周六晚上到周日早上多少钱", "Sat 11-28 22:00", "Sun 11-29 09:00"),
    # a stay told in the past: the weekday before the range is the most recent one
    ("I parked on Saturday from 2 to 5", "Sat 11-21 14:00", "Sat 11-21 17:00"),
    ("周六下午两点到五点停的", "Sat 11-21 14:00", "Sat 11-21 17:00"),
    ("tomorrow from 9 in the morning till 5 in the afternoon", "Thu 11-26 09:00", "Thu 11-26 17:00"),
])
def test_each_end_of_a_range_has_its_own_day(text, start, end) -> None:  # noqa: ANN001
    assert stay(text) == (start, end)


def test_the_day_said_first_is_the_days_word() -> None:
    # 今晚 before 明早: the start's day, not the one a pattern lists first
    parsed = parse_datetime("今晚八点停到明早九点", now=WEDNESDAY, timezone=ZONE)
    assert parsed is not None and parsed.value.strftime("%m-%d %H:%M") == "11-25 20:00"


@pytest.mark.parametrize(("text", "clock"), [
    ("till 10 tomorrow morning", "10:00"), ("9 in the morning", "09:00"), ("7 tonight", "19:00"),
    ("11 at night", "23:00"), ("12 at night", "00:00"), ("5 in the afternoon", "17:00"), ("明早九点", "09:00"),
    ("第二天上午10点", "10:00"),
])
def test_a_bare_hour_with_its_part_of_the_day_after_it_is_a_clock_time(text, clock) -> None:  # noqa: ANN001
    parsed = parse_datetime(text, now=WEDNESDAY, timezone=ZONE)
    assert parsed is not None and parsed.precision == "minute" and parsed.value.strftime("%H:%M") == clock


@pytest.mark.parametrize("text", ["for 1 night", "P1 this afternoon", "3 hours on a weekday afternoon"])
def test_a_number_before_a_part_of_the_day_that_is_no_hour(text) -> None:  # noqa: ANN001
    parsed = parse_datetime(text, now=WEDNESDAY, timezone=ZONE)
    assert parsed is None or parsed.precision == "day"


@pytest.mark.parametrize(("text", "now", "start"), [
    ("how much is the pagoda car park overnight?", WEDNESDAY, "Wed 11-25 20:00"),
    ("大雁塔停车场过夜多少钱", WEDNESDAY, "Wed 11-25 20:00"),
    ("bell tower p2, 3 hours on a weekday afternoon?", WEDNESDAY, "Wed 11-25 14:00"),
    ("bell tower p2, 3 hours on a weekday afternoon?", SATURDAY, "Mon 11-30 14:00"),  # the next weekday
    ("钟楼P2工作日下午停3个小时多少钱", SUNDAY, "Mon 11-30 14:00"),
    ("what does it cost on a weekend evening for 2 hours", WEDNESDAY, "Sat 11-28 18:00"),
    ("周末晚上停三个小时多少钱", WEDNESDAY, "Sat 11-28 22:00"),
    ("how much in the morning for 2 hours", WEDNESDAY, "Wed 11-25 09:00"),
])
def test_a_part_of_the_day_in_a_first_question_places_the_stay(text, now, start) -> None:  # noqa: ANN001
    assert stay(text, now)[0] == start


@pytest.mark.parametrize("text", ["good morning, how much for 2 hours at JFB-01", "早上好，解放碑停两个小时多少钱",
                                  "晚上好，请问怎么收费"])
def test_a_greeting_names_no_part_of_the_day(text) -> None:  # noqa: ANN001
    assert day_part(text) is None and stay(text)[0] is None


@pytest.mark.parametrize(("text", "now", "start"), [
    ("周日停三个小时多少钱", WEDNESDAY, "Sun 11-29 05:00"),  # the coming one, at the current time of day
    ("what about sunday?", WEDNESDAY, "Sun 11-29 05:00"),
    ("what about sunday?", SUNDAY, "Sun 11-29 10:00"),  # today is that day
    ("how much on Monday for 2 hours", SATURDAY, "Mon 11-30 16:30"),
    ("星期天全天多少钱", WEDNESDAY, "Sun 11-29 00:00"),  # a whole day is that day from midnight
    # a stay that has happened: the most recent one
    ("I parked there on Sunday for 3 hours, how much should it be", WEDNESDAY, "Sun 11-22 05:00"),
    ("周日停的，三个小时，应该多少钱", WEDNESDAY, "Sun 11-22 05:00"),
    ("周六停的", SATURDAY, "Sat 11-28 16:30"),
    ("I parked there on a weekday", SUNDAY, "Fri 11-27 10:00"),
    # said as past: where the person says
    ("how much last Sunday 2 hours", WEDNESDAY, "Sun 11-22 05:00"),
    ("上周日停了两小时多少钱", WEDNESDAY, "Sun 11-22 05:00"),
    ("昨天停了两小时多少钱", WEDNESDAY, "Tue 11-24 00:00"),  # a day counted from today keeps its midnight
])
def test_a_bare_weekday_with_no_day_talked_about(text, now, start) -> None:  # noqa: ANN001
    assert stay(text, now)[0] == start


@given(st.dates(min_value=date(2020, 1, 1), max_value=date(2035, 12, 31)), st.times(), st.integers(min_value=0, max_value=6),
       st.sampled_from(["en", "zh"]))
def test_a_bare_weekday_in_a_price_question_is_never_in_the_past(day, clock, weekday, lang) -> None:  # noqa: ANN001
    now = datetime.combine(day, clock, tzinfo=TZ)
    word = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")[weekday] if lang == "en" \
        else "周" + "一二三四五六日"[weekday]
    start = extract_slots(f"how much on {word} for 3 hours?", SPECS, ExtractContext(now=now, timezone=ZONE))["at_time"]
    value = datetime.fromisoformat(start.value)
    assert value.weekday() == weekday and 0 <= (value.date() - now.date()).days <= 6
    assert value.strftime("%H:%M") == now.strftime("%H:%M")


@pytest.mark.parametrize("text", ["不是，我是说从下午两点开始", "sorry, I meant starting at 3pm", "no, from 2pm",
                                  "I got there at 2pm", "我两点进场的"])
def test_words_that_say_the_start(text) -> None:  # noqa: ANN001
    assert says_start(text)


@pytest.mark.parametrize("text", ["and in the morning?", "what about 9am?", "那下午呢"])
def test_words_that_move_the_stay(text) -> None:  # noqa: ANN001
    assert not says_start(text)


def _stay_of(d: Dialogue) -> tuple[str, str]:
    slots = d.outcomes[-1].usable_slots
    return (datetime.fromisoformat(slots["at_time"]).strftime("%m-%d %H:%M"),
            datetime.fromisoformat(slots["until_time"]).strftime("%m-%d %H:%M"))


def test_a_start_corrected_keeps_the_end_said() -> None:
    d = Dialogue(CONFIG, WEDNESDAY, lookups={"lot_code": lambda value: value == "P2"})
    d.say("lot P2 怎么收费")
    d.say("停到晚上十点呢")
    d.say("不是，我是说从下午两点开始")
    assert _stay_of(d) == ("11-25 14:00", "11-25 22:00")
    d.say("no wait, from 11pm")  # past the end: the stay keeps its length
    assert _stay_of(d) == ("11-25 23:00", "11-26 07:00")


def test_a_stay_moved_keeps_its_length() -> None:
    d = Dialogue(CONFIG, WEDNESDAY, lookups={"lot_code": lambda value: value == "P2"})
    d.say("lot P2 tomorrow 2pm to 4pm, how much?")
    d.say("and in the morning?")
    assert _stay_of(d) == ("11-26 09:00", "11-26 11:00")
    d.say("and the day after?")
    assert _stay_of(d) == ("11-27 09:00", "11-27 11:00")
    d.say("actually from 8am")  # said as the start, on its day: the end stays
    assert _stay_of(d) == ("11-27 08:00", "11-27 11:00")


def test_a_new_bare_end_replaces_the_old_one_nearby():
    from datetime import timedelta

    from conversations.engine.slots import _near_old_end

    start = datetime(2026, 5, 20, 20, 0, tzinfo=ZoneInfo("Asia/Shanghai"))
    old_end = start + timedelta(hours=12)  # overnight, to 08:00
    evening_ten = start.replace(hour=22)
    # "if I come back at 10 instead": 10:00 the next morning, the ten o'clock nearest the old end
    assert _near_old_end(start, evening_ten, old_end, "at 10") == old_end + timedelta(hours=2)
    # a part of the day said keeps it: "at 10 tonight" stays the evening
    assert _near_old_end(start, evening_ten, old_end, "at 10 tonight") == evening_ten
    # nothing talked about before: as said
    assert _near_old_end(start, evening_ten, None, "at 10") == evening_ten


# -- the fourth walk: minutes in Chinese numerals, "half 10", a time put in place of another, a stay made longer ----
@pytest.mark.parametrize(("words", "hour", "minute"), [
    ("晚上九点四十", 21, 40), ("十点零五", 10, 5), ("三点二十个人", 3, 0), ("half 10 in the morning", 10, 30),
    ("half past 9pm", 21, 30), ("10:30", 10, 30),
])
def test_a_clock_time_keeps_its_minutes(words: str, hour: int, minute: int) -> None:
    from conversations.engine.timeparse import clock_said

    said = clock_said(words)
    assert said is not None and (said[0].hour, said[0].minute) == (hour, minute)


def _stay(*turns: str, now: datetime = WEDNESDAY) -> dict:
    dialogue = Dialogue(ConversationConfig.from_dict(PLAN["conversation"]), now=now, timezone=ZONE)
    for text in turns:
        dialogue.say(text)
    return {name: slot.value for name, slot in dialogue.state.slots.items()}


def test_a_time_put_in_place_of_the_end_changes_the_end_only() -> None:
    slots = _stay("lot A1 tomorrow from 17:30 to 21:40, how much?", "no, not 9:40, 10:40")
    assert slots["at_time"].startswith("2026-11-26T17:30") and slots["until_time"].startswith("2026-11-26T22:40")


def test_a_length_said_as_more_is_added_to_the_stay() -> None:
    slots = _stay("lot A1 tomorrow from 10:40 for 2 hours, how much?", "what if i stay 40 min longer")
    assert slots["at_time"].startswith("2026-11-26T10:40") and int(float(slots["duration_minutes"])) == 160


def test_not_leaving_until_a_time_is_leaving_then() -> None:
    from conversations.engine.negation import negation_cue

    text = "and if i dont leave till 9pm?"
    assert negation_cue(text, text.index("9pm"), text.index("9pm") + 3) is None


@pytest.mark.parametrize("text", ["a short call sometime next week, maybe 15 minutes", "marching 3 times round the yard"])
def test_a_month_is_read_by_its_own_spellings_only(text: str) -> None:
    from conversations.engine.timeparse import parse_date

    assert parse_date(text, now=WEDNESDAY, timezone=ZONE) is None


@pytest.mark.parametrize(("numeral", "value"), [("一千二百五十", 1250), ("两百五", 250), ("一万二", 12000), ("十二", 12), ("一千零五", 1005)])
def test_a_chinese_numeral_is_read_whole(numeral: str, value: int) -> None:
    from conversations.engine.timeparse import zh_number

    assert zh_number(numeral) == value
