"""People typing the way people type (issue 15): a slip in a lot's name still names it, and a corrected weekday
is the same week's, while a follow-up's is the next one. No database."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conversations.engine.action_prefs import read_when
from conversations.engine.slots import ExtractContext, _at_time, _until
from conversations.engine.timeparse import (
    nearest_weekday,
    parse_datetime,
    says_correction,
    without_refused,
)
from conversations.engine.typos import NearWords, distance, reach

ZONE = "Asia/Shanghai"
NOW = datetime(2026, 11, 25, 4, 0, tzinfo=ZoneInfo(ZONE))  # a Wednesday
SATURDAY = datetime.fromisoformat("2026-12-05T00:00:00+08:00")
WEDNESDAY_2PM = datetime.fromisoformat("2026-12-09T14:00:00+08:00")
LOTS = NearWords.of([("jiefangbei", "JFB-01"), ("hongyadong", "P2@500100"), ("dayanta", "DYT_7"), ("riverside", "RS-1"),
                     ("riverdale", "RD-2"), ("tower", "P2@610100"), ("shared", "A"), ("shared", "B")])


# --- a slip in a name -------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("typed", "known"), [
    ("jiefangbai", ("jiefangbei",)),  # one letter wrong
    ("jeifangbei", ("jiefangbei",)),  # two letters swapped
    ("jiefangbeii", ("jiefangbei",)),  # one too many
    ("jiefngbai", ("jiefangbei",)),  # two edits on a word of nine letters or more
    ("dayanda", ("dayanta",)),  # one edit on a word of six to eight letters
    ("riversile", ("riverdale", "riverside")),  # near two: both, to be asked about
    ("JIEFANGBAI", ("jiefangbei",)),
])
def test_a_slip_of_a_known_word_finds_it(typed, known) -> None:  # noqa: ANN001
    assert LOTS.slips_of(typed) == known


@pytest.mark.parametrize("typed", [
    "jiefangbei",  # the word itself is the exact finder's
    "dayenda",  # two edits on a word of fewer than nine letters
    "jxefxngbxi",  # three edits
    "towr", "towel", "tower",  # short words
    "p2", "jfb01",  # codes
    "saturday", "parked", "minutes",  # words people type anyway
    "解放碑",  # Chinese is matched exactly or not at all
])
def test_what_is_no_slip(typed) -> None:  # noqa: ANN001
    assert LOTS.slips_of(typed) == ()


def test_a_word_shared_by_two_lots_names_both() -> None:
    # the finder keeps only words naming one lot; the index itself says which lots share one
    assert LOTS.slips_of("sharedd") == ("shared",) and LOTS.names["shared"] == frozenset({"A", "B"})


def test_reach_grows_with_the_word() -> None:
    assert [reach(w) for w in ("tower", "dayanta", "pagodas", "jiefangbei", "lot7", "解放碑停车场")] == [0, 1, 1, 2, 0, 0]


_WORD = st.text(alphabet="abcdefghij", min_size=6, max_size=12)


@given(_WORD, _WORD)
def test_the_index_finds_exactly_the_words_within_reach(known, typed) -> None:  # noqa: ANN001
    index = NearWords.of([(known, 1)])
    within = typed != known and distance(typed, known, 2) <= reach(known)
    assert (index.slips_of(typed) == (known,)) == within


@given(_WORD, _WORD)
def test_distance_is_symmetric(a, b) -> None:  # noqa: ANN001
    assert distance(a, b, 3) == distance(b, a, 3)


# --- a corrected weekday ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["no, Friday", "No Friday", "not Saturday, Friday", "actually Friday", "I meant Friday",
                                  "sorry, I meant friday", "不对，是周五", "不是周六，是周五", "我是说周五", "нет, в пятницу"])
def test_a_correction_is_said(text) -> None:  # noqa: ANN001
    assert says_correction(text)


@pytest.mark.parametrize("text", ["what about Sunday?", "and on Friday?", "那周日呢", "周日是不是便宜点", "how about friday instead"])
def test_a_follow_up_is_no_correction(text) -> None:  # noqa: ANN001
    assert not says_correction(text)


@given(st.dates(min_value=date(2020, 1, 1), max_value=date(2035, 12, 31)), st.integers(min_value=0, max_value=6))
def test_the_nearest_weekday_is_within_three_days(anchor, weekday) -> None:  # noqa: ANN001
    on = nearest_weekday(anchor, weekday)
    assert on.weekday() == weekday and abs((on - anchor).days) <= 3


@given(st.dates(min_value=date(2020, 1, 1), max_value=date(2035, 12, 31)), st.integers(min_value=0, max_value=6),
       st.sampled_from(["en", "zh"]))
def test_a_corrected_bare_weekday_is_the_nearest_one(anchor, weekday, lang) -> None:  # noqa: ANN001
    word = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")[weekday] if lang == "en" \
        else "周" + "一二三四五六日"[weekday]
    parsed = parse_datetime(f"no, {word}" if lang == "en" else f"不对，是{word}", now=NOW, timezone=ZONE, anchor=anchor,
                            corrects=True)
    assert parsed is not None and parsed.value.date() == nearest_weekday(anchor, weekday)


@pytest.mark.parametrize(("text", "day"), [
    ("no, Friday", "2026-12-04"),  # the day before, not the Friday after
    ("不对，是周五", "2026-12-04"),
    ("不是周六，是周五", "2026-12-04"),
    ("not Saturday, Monday", "2026-12-07"),
    ("I meant Wednesday", "2026-12-02"),
    ("我是说周二", "2026-12-08"),
    ("what about Friday?", "2026-12-11"),  # a follow-up: the first Friday on or after the Saturday
    ("那周五呢", "2026-12-11"),
    ("不对，是下周五", "2026-12-04"),  # a week said is counted from today, as before
])
def test_a_corrected_weekday_stays_in_the_week(text, day) -> None:  # noqa: ANN001
    found = _at_time(text, ExtractContext(now=NOW, timezone=ZONE, language="zh" if "周" in text else "en", entry=SATURDAY))
    assert found is not None and found.value.startswith(day + "T00:00")


def test_a_corrected_weekday_keeps_the_time_talked_about() -> None:
    found = _at_time("我是说周六", ExtractContext(now=NOW, timezone=ZONE, language="zh", entry=WEDNESDAY_2PM))
    assert found is not None and found.value.startswith("2026-12-12T14:00")


def test_without_a_stay_talked_about_a_correction_counts_from_today() -> None:
    found = _at_time("no, Friday", ExtractContext(now=NOW, timezone=ZONE))
    assert found is not None and found.value.startswith("2026-11-27")


@pytest.mark.parametrize(("text", "lang", "left"), [
    ("not Saturday, Friday", "en", "Friday"), ("不是周六，是周五", "zh", "周五"), ("不是周六，是周五", None, "周五"),
])
def test_a_refused_day_is_not_the_one_meant(text, lang, left) -> None:  # noqa: ANN001
    meant = without_refused(text, lang)
    assert left in meant and "Saturday" not in meant and "周六" not in meant


def test_the_call_assistant_still_skips_a_refused_day() -> None:
    assert read_when("not Thursday, Friday at 3", "en", now=NOW, timezone=ZONE) == ("2026-11-27", "15:00")


@pytest.mark.parametrize(("text", "start", "end"), [
    ("no, friday from 9am to 11am", "2026-12-04T09:00", "2026-12-04T11:00"),
    ("not saturday, friday from 9am to 11am", "2026-12-04T09:00", "2026-12-04T11:00"),
    ("不是周六，是周五上午9点到11点", "2026-12-04T09:00", "2026-12-04T11:00"),
    ("not saturday, friday, until 8pm", "2026-12-04T00:00", "2026-12-04T20:00"),  # the time talked about stays
    ("and friday from 9am to 11am", "2026-12-11T09:00", "2026-12-11T11:00"),  # a follow-up: the next Friday
])
def test_a_corrected_weekday_with_a_range_stays_in_the_week(text, start, end) -> None:  # noqa: ANN001
    ctx = ExtractContext(now=NOW, timezone=ZONE, language="zh" if "周" in text else "en", entry=SATURDAY)
    found, until = _at_time(text, ctx), _until(text, ctx)
    assert found is not None and found.value.startswith(start) and until is not None and until.value.startswith(end)
