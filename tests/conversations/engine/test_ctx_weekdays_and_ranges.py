"""Days of the week and time ranges as people say them (issue 14: times and dates), no database."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conversations.engine.slots import ExtractContext, _at_time, _until, shared_period
from conversations.engine.timeparse import parse_datetime

ZONE = "Asia/Shanghai"
MONDAY = datetime(2026, 11, 23, 10, 0, tzinfo=ZoneInfo(ZONE))


def when(text: str, now: datetime = MONDAY) -> str | None:
    parsed = parse_datetime(text, now=now, timezone=ZONE)
    return parsed.value.strftime("%a %m-%d %H:%M") if parsed else None


@pytest.mark.parametrize(("text", "expected"), [
    ("上周六下午两点", "Sat 11-21 14:00"),
    ("上个礼拜五", "Fri 11-20 00:00"),
    ("上上周三", "Wed 11-11 00:00"),
    ("下周一上午9点", "Mon 11-30 09:00"),
    ("这周五晚上八点半", "Fri 11-27 20:30"),
    ("周四下午2点", "Thu 11-26 14:00"),  # bare: the coming one (three days ahead)
    ("星期六", "Sat 11-28 00:00"),  # bare: the coming one, not the one two days back (issue 15)
    ("星期六停的", "Sat 11-21 00:00"),  # a stay that has happened: the most recent one
    ("I parked there on Saturday", "Sat 11-21 00:00"),
    ("星期一", "Mon 11-23 00:00"),  # today is a Monday: today, either way
    ("星期一停的", "Mon 11-23 00:00"),
    ("last Saturday at 3pm", "Sat 11-21 15:00"),
    ("on Thursday at 2pm", "Thu 11-26 14:00"),
    ("next Tuesday", "Tue 11-24 00:00"),
    ("this Friday", "Fri 11-27 00:00"),
    ("Sunday before last", "Sun 11-15 00:00"),
    ("в прошлую субботу в 15:00", "Sat 11-21 15:00"),
    ("в следующий понедельник", "Mon 11-30 00:00"),
    ("el sábado pasado a las 3 de la tarde", "Sat 11-21 15:00"),
    ("el próximo lunes", "Mon 11-30 00:00"),
])
def test_weekdays_resolve_against_today(text, expected) -> None:  # noqa: ANN001
    assert when(text) == expected


@pytest.mark.parametrize("text", ["the car sat there for 3 hours", "sun damage on the awning", "mon ami"])
def test_words_that_only_look_like_days_are_not_days(text) -> None:  # noqa: ANN001
    assert when(text) is None


@given(st.integers(min_value=0, max_value=400), st.sampled_from("一二三四五六日"), st.sampled_from(["上周", "下周", "这周", "周"]))
def test_a_chinese_weekday_lands_on_that_weekday_within_a_fortnight(days, digit, prefix) -> None:  # noqa: ANN001
    now = MONDAY + timedelta(days=days)
    parsed = parse_datetime(f"{prefix}{digit}", now=now, timezone=ZONE)
    assert parsed is not None and parsed.value.weekday() == "一二三四五六日".index(digit)
    assert abs((parsed.value.date() - now.date()).days) <= 13


@pytest.mark.parametrize(("text", "end"), [
    ("从下午两点到五点", "11-23 17:00"),  # the end keeps the afternoon (was 05:00 the next day)
    ("昨天下午两点到五点半", "11-22 17:30"),
    ("下午2点到晚上9点", "11-23 21:00"),
    ("晚上8点到早上7点", "11-24 07:00"),  # an explicit morning is the next day
    ("21:00 - 7:30", "11-24 07:30"),
    ("10:00 to 11:30", "11-23 11:30"),
    ("上周六下午两点到五点", "11-21 17:00"),
])
def test_a_range_ends_where_people_mean(text, end) -> None:  # noqa: ANN001
    found = _until(text, ExtractContext(now=MONDAY, timezone=ZONE, language="zh"))
    assert found is not None and datetime.fromisoformat(found.value).strftime("%m-%d %H:%M") == end


@pytest.mark.parametrize(("text", "language", "start", "end"), [
    # "til", "thru", "through", "between ... and": a range as people type it (a browser walk priced
    # "from like 7pm til 8 the next morning" as an hour from 7pm)
    ("how much wud it cost from like 7pm til 8 the next morning", "en", "11-23 19:00", "11-24 08:00"),
    ("7pm 'til 8am", "en", "11-23 19:00", "11-24 08:00"),
    ("from 10am til noon", "en", "11-23 10:00", "11-23 12:00"),
    ("6pm thru 9am", "en", "11-23 18:00", "11-24 09:00"),
    ("7pm through 8 am next day", "en", "11-23 19:00", "11-24 08:00"),
    ("between 7pm and 8am", "en", "11-23 19:00", "11-24 08:00"),
    ("between 2 and 4pm", "en", "11-23 14:00", "11-23 16:00"),
    ("between 9 and 11", "en", "11-23 09:00", "11-23 11:00"),
    ("from 2 til 5", "en", "11-23 14:00", "11-23 17:00"),
    # a start on a 24-hour clock puts the end on it too: 8:00 after 19:00 is the next morning
    ("from 19:00 to 8:00", "en", "11-23 19:00", "11-24 08:00"),
    ("from 7pm till 8", "en", "11-23 19:00", "11-23 20:00"),  # a 12-hour start keeps the evening
    ("парковка с 10:00 до 12:00", "ru", "11-23 10:00", "11-23 12:00"),
    ("de 19:00 a 8:00", "es", "11-23 19:00", "11-24 08:00"),
    ("desde las 19:00 hasta las 8:00 del día siguiente", "es", "11-23 19:00", "11-24 08:00"),
    ("entre las 10:00 y las 12:30", "es", "11-23 10:00", "11-23 12:30"),
])
def test_a_range_said_loosely_has_its_start_and_end(text, language, start, end) -> None:  # noqa: ANN001
    ctx, text = ExtractContext(now=MONDAY, timezone=ZONE, language=language), shared_period(text)  # as extract_slots reads it
    found_start, found_end = _at_time(text, ctx), _until(text, ctx)
    assert found_start is not None and found_end is not None, (found_start, found_end)
    assert datetime.fromisoformat(found_start.value).strftime("%m-%d %H:%M") == start
    assert datetime.fromisoformat(found_end.value).strftime("%m-%d %H:%M") == end


@pytest.mark.parametrize("text", ["a week to go", "I parked between the two pillars and the wall", "2 hours a day"])
def test_words_that_only_look_like_a_range_are_none(text) -> None:  # noqa: ANN001
    assert _until(shared_period(text), ExtractContext(now=MONDAY, timezone=ZONE)) is None
