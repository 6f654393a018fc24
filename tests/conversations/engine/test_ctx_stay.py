"""Stays written the way people write them: ranges, lengths, month names, in English and Chinese."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from conversations.engine.slots import ExtractContext, _duration, _until
from conversations.engine.timeparse import parse_datetime

TZ = "Asia/Shanghai"
CTX = ExtractContext(now=datetime(2026, 3, 10, 10, 0, tzinfo=ZoneInfo(TZ)), timezone=TZ)


@pytest.mark.parametrize(
    ("text", "end"),
    [
        ("SH-PD-001 从8:00停到9:05收多少？", "2026-03-10T09:05:00+08:00"),
        ("What does lot SH-PD-001 charge for 8:00 to 9:05?", "2026-03-10T09:05:00+08:00"),
        ("晚上9点停到第二天早上7点半要钱吗？", "2026-03-11T07:30:00+08:00"),
        ("from 21:00 - 7:30", "2026-03-11T07:30:00+08:00"),  # an earlier clock time ends the next morning
        ("3月2日8点到3月4日20点", "2026-03-04T20:00:00+08:00"),
        ("Entering SH-PD-002 at 7:59 on April 1 until 9:59: which version?", "2026-04-01T09:59:00+08:00"),
        ("from 18:00 to 9:00 next day", "2026-03-11T09:00:00+08:00"),
    ],
)
def test_the_end_of_a_stay_written_as_a_range(text: str, end: str) -> None:
    assert _until(text, CTX).value == end


@pytest.mark.parametrize(
    ("text", "minutes"),
    [("停3小时", 180), ("两个半小时", 150), ("一个半小时", 90), ("停半小时", 30), ("停了一天", 1440), ("90 minutes", 90),
     ("a 45-minute stay", 45), ("two and a half hours", 150), ("an hour and a half", 90), ("1.5 hours", 90), ("two hours", 120)],
)
def test_the_length_of_a_stay(text: str, minutes: int) -> None:
    assert _duration(text, CTX).value == str(minutes)


@pytest.mark.parametrize("text", ["第二天早上", "SCN-020", "plate 沪A12345", "no numbers here"])
def test_no_length_where_there_is_none(text: str) -> None:
    assert _duration(text, CTX) is None


@pytest.mark.parametrize(
    ("text", "iso"),
    [("Mar 2 8:00", "2026-03-02T08:00:00+08:00"), ("April 1 at 9am", "2026-04-01T09:00:00+08:00"),
     ("1 April 9am", "2026-04-01T09:00:00+08:00"), ("March 2nd, 2025 at 3pm", "2025-03-02T15:00:00+08:00")],
)
def test_english_month_names(text: str, iso: str) -> None:
    assert parse_datetime(text, now=CTX.now, timezone=TZ).value.isoformat() == iso
