"""A correction that names only the stay's end or start by a bare hour, in Chinese and English (the zh-hans walk:
"不对，到两点" after 10:00-13:00 was read as a new start at 02:00 and priced 02:00-05:00 at 0.00). The end's bare
hour is read in the half of the day that puts it after the start, the start's in the half that puts it before the
end. A fixed clock, no database."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from conversations.engine import ConversationConfig
from conversations.engine.config import SlotSpec
from conversations.engine.simulate import Dialogue
from conversations.engine.slots import ExtractContext, _start_in_period, extract_slots
from conversations.engine.timeparse import without_refused

ZONE = "Asia/Shanghai"
TZ = ZoneInfo(ZONE)
NOW = datetime(2026, 3, 4, 10, 0, tzinfo=TZ)  # a Wednesday: tomorrow is a workday
SPECS = [SlotSpec(name=n, extractor=n) for n in ("at_time", "until_time", "duration_minutes")]
PLAN = json.loads((Path(__file__).resolve().parents[3] / "workflows/plans/parking_help_desk.json").read_text(encoding="utf-8"))
CONFIG = ConversationConfig.from_dict(PLAN["conversation"])


def at(hour: int, minute: int = 0, day: int = 5) -> datetime:
    return datetime(2026, 3, day, hour, minute, tzinfo=TZ)


def corrected(text: str, entry: datetime, end: datetime) -> tuple[str | None, str | None]:
    """What a follow-up to the stay entry-end says of its start and end, as '03-05 14:00' (None: unchanged)."""
    found = extract_slots(text, SPECS, ExtractContext(now=NOW, timezone=ZONE, entry=entry, end=end))

    def said(name: str) -> str | None:
        return datetime.fromisoformat(found[name].value).strftime("%m-%d %H:%M") if name in found else None

    return said("at_time"), said("until_time")


@pytest.mark.parametrize(("text", "end"), [
    ("不对，到两点", "03-05 14:00"),
    ("不对，停到两点", "03-05 14:00"),
    ("改成到下午三点", "03-05 15:00"),
    ("不是一点，是两点走的", "03-05 14:00"),
    ("到两点半", "03-05 14:30"),
    ("不对，到十二点半", "03-05 12:30"),
    ("no wait, until 2pm", "03-05 14:00"),
    ("no, till 2", "03-05 14:00"),
    ("make it until 3", "03-05 15:00"),
    ("actually I left at 2:30", "03-05 14:30"),
    ("no, until 12", "03-05 12:00"),
])
def test_a_new_end_alone_keeps_the_start_and_lands_after_it(text: str, end: str) -> None:
    assert corrected(text, at(10), at(13)) == (None, end)


@pytest.mark.parametrize(("text", "end"), [
    ("不对，到一点", "03-05 13:00"),
    ("不对，到四点", "03-05 16:00"),
    ("不对，到十二点", "03-05 12:00"),
    ("no, until 1", "03-05 13:00"),
    ("no, till 11:30", "03-05 11:30"),
])
def test_a_new_end_after_a_stay_across_noon(text: str, end: str) -> None:
    assert corrected(text, at(11), at(14)) == (None, end)


@pytest.mark.parametrize("text", ["不对，到两点", "no, till 2"])
def test_a_bare_end_after_an_evening_start_is_after_midnight(text: str) -> None:
    assert corrected(text, at(22), at(1, day=6)) == (None, "03-06 02:00")


@pytest.mark.parametrize(("text", "entry", "end", "start"), [
    ("不对 是从十一点开始", at(10), at(13), "03-05 11:00"),
    ("no, from 11", at(10), at(13), "03-05 11:00"),
    ("actually I got there at 11", at(10), at(13), "03-05 11:00"),
    ("不对，是从一点开始", at(10), at(14), "03-05 13:00"),  # across noon: one o'clock before the 14:00 end
    ("sorry, from 1", at(10), at(14), "03-05 13:00"),
    ("no, from 1am", at(10), at(14), "03-05 01:00"),  # its period said: as said
    ("不对，是从十二点开始", at(10), at(14), "03-05 12:00"),
])
def test_a_new_start_alone_is_read_before_the_end(text: str, entry: datetime, end: datetime, start: str) -> None:
    assert corrected(text, entry, end)[0] == start


@pytest.mark.parametrize("text", ["改到三点", "推迟到三点"])
def test_moving_the_stay_to_a_time_is_no_new_end(text: str) -> None:
    assert corrected(text, at(10), at(13))[1] is None


def test_without_an_end_said_to_before_a_time_is_no_correction_of_one() -> None:
    found = extract_slots("浦东一号停车场明天上午十点到下午一点多少钱", SPECS, ExtractContext(now=NOW, timezone=ZONE))
    assert (found["at_time"].value[11:16], found["until_time"].value[11:16]) == ("10:00", "13:00")


@pytest.mark.parametrize(("text", "left"), [
    ("不是一点，是两点走的", "，是两点走的"),
    ("不是下午一点，是两点", "，是两点"),
    ("不是周六，是周五", "，是周五"),
    ("不是下周，是这周", "，是这周"),
])
def test_a_refused_time_is_taken_out_whole(text: str, left: str) -> None:
    assert without_refused(text, "zh").strip() == left


def test_a_bare_start_takes_the_half_of_the_day_nearest_the_old_start_before_the_end() -> None:
    assert _start_in_period(at(1), "一点", at(10), at(14)) == at(13)
    assert _start_in_period(at(9), "9", at(22), at(8, day=6)) == at(21)
    assert _start_in_period(at(9), "09:00", at(22), at(8, day=6)) == at(9)  # a 24-hour clock says its half


def _stay_of(d: Dialogue) -> tuple[str, str]:
    slots = d.outcomes[-1].usable_slots
    return (datetime.fromisoformat(slots["at_time"]).strftime("%m-%d %H:%M"),
            datetime.fromisoformat(slots["until_time"]).strftime("%m-%d %H:%M"))


def test_the_zh_walk_moves_only_the_end_then_only_the_start() -> None:
    d = Dialogue(CONFIG, NOW, lookups={"lot_code": lambda value: value == "SH-PD-001"})
    d.say("SH-PD-001明天上午十点到下午一点多少钱")
    assert _stay_of(d) == ("03-05 10:00", "03-05 13:00")
    d.say("不对，到两点")
    assert _stay_of(d) == ("03-05 10:00", "03-05 14:00")
    d.say("不对 是从十一点开始")  # a corrected start keeps the end
    assert _stay_of(d) == ("03-05 11:00", "03-05 14:00")


def test_the_en_walk_across_noon() -> None:
    d = Dialogue(CONFIG, NOW, lookups={"lot_code": lambda value: value == "SH-PD-001"})
    d.say("SH-PD-001 tomorrow 11am to 2pm, how much?")
    d.say("no, till 12:30")
    assert _stay_of(d) == ("03-05 11:00", "03-05 12:30")
    d.say("no, until 3")
    assert _stay_of(d) == ("03-05 11:00", "03-05 15:00")
    d.say("sorry, from 1")
    assert _stay_of(d) == ("03-05 13:00", "03-05 15:00")


@pytest.mark.parametrize(("text", "entry", "start"), [
    ("yeah afternoon is right. actually make it 4 hours", at(15), None),  # 15:00 is the afternoon: kept
    ("是下午，不是凌晨", at(3), "03-05 15:00"),  # 03:00 said back, the afternoon meant: twelve hours on
    ("in the morning", at(21), "03-05 09:00"),  # 21:00 is twelve hours from no morning hour: the morning's own
    ("and at night?", at(20), "03-05 22:00"),  # a part asked about, not a correction: the part's own usual hour
])
def test_a_part_of_the_day_keeps_the_time_talked_about_that_lies_in_it(text: str, entry: datetime, start: str | None) -> None:
    """The walk: "yeah afternoon is right" after 15:00-18:15 had moved the stay to 14:00, "是下午" after 03:00 to 14:00."""
    assert corrected(text, entry, at(entry.hour + 2))[0] == start


def test_a_stay_s_morning_said_before_a_comma_is_no_greeting() -> None:
    found = extract_slots("dropping my dad at the airport tomorrow morning, I'll leave the car there for a couple hours",
                          SPECS, ExtractContext(now=NOW, timezone=ZONE))
    assert found["at_time"].value.startswith("2026-03-05T09:00")  # not 00:00
