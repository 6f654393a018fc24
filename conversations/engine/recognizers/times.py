"""Times, dates, ranges, durations and deadlines in four languages, as one reading per message.

The reading is one of: a moment (`at`), a range (`start`, `end`), a day (`date`), a length (`minutes`) or a
deadline (`by`, the day named: "by 1 March 2027", "before the Spring Festival", "by the end of the month").
Clock times and ranges come from `timeparse` and the stay readers of `slots` (a range's end that names no
period or date inherits both from the start); festivals come from the `holidays` package (the lunar
festivals computed offline); certainty from `certainty.time_certainty` (either half of the day, a part of
the day, alternatives, a hedge, an implausible length).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import cache
from typing import Any

import holidays

from ..certainty import CERTAIN, GUESS, LIKELY, time_certainty
from ..slots import EXTRACTORS, ExtractContext, shared_period
from ..timeparse import parse_date, parse_datetime
from . import Span


@dataclass(frozen=True)
class TimeValue:
    at: datetime | None = None
    start: datetime | None = None
    end: datetime | None = None
    date: date | None = None
    minutes: int | None = None
    by: date | None = None

    def as_dict(self) -> dict[str, Any]:
        shown = {}
        for key in ("at", "start", "end"):
            if (moment := getattr(self, key)) is not None:
                shown[key] = moment.strftime("%Y-%m-%dT%H:%M")
        for key in ("date", "by"):
            if (day := getattr(self, key)) is not None:
                shown[key] = day.isoformat()
        if self.minutes is not None:
            shown["minutes"] = self.minutes
        return shown


# --- deadlines ------------------------------------------------------------------------------------------

_DEADLINE = re.compile(
    r"\b(?:by|before|no\s+later\s+than|not\s+later\s+than|deadline(?:\s+is)?|due(?:\s+by)?|in\s+time\s+for|ahead\s+of|until)\b"
    r"|(?<!\w)(?:до|к|не\s+позднее|не\s+позже|крайний\s+срок)(?!\w)"
    r"|\b(?:antes\s+de(?:l)?|para|a\s+m[aá]s\s+tardar|como\s+m[aá]ximo|plazo)\b"
    r"|截止|之前|以前|前(?![天晚])|赶在|必须在|最晚|最迟",
    re.IGNORECASE,
)
_MONTH_END = re.compile(r"\b(?:(?:the\s+)?end\s+of\s+(?:the\s+|this\s+)?month|month[\s-]end)\b|月底|月末|"
                        r"(?<!\w)(?:конц[уае]\s+месяца)(?!\w)|\bfin(?:al)?\s+de(?:l)?\s+mes\b", re.IGNORECASE)
_YEAR_END = re.compile(r"\b(?:(?:the\s+)?end\s+of\s+(?:the\s+|this\s+)?year|year[\s-]end)\b|年底|年末|"
                       r"(?<!\w)конц[уае]\s+года(?!\w)|\bfin(?:al)?\s+de(?:l)?\s+año\b", re.IGNORECASE)
_QUARTER_END = re.compile(r"\b(?:end\s+of\s+)?q([1-4])\b|第([一二三四1-4])季度", re.IGNORECASE)
_FESTIVALS = (
    (re.compile(r"spring\s+festival|chinese\s+new\s+year|lunar\s+new\s+year|春节|过年|китайск\w+\s+нов\w+\s+год\w*|año\s+nuevo\s+chino",
                re.IGNORECASE), "Chinese New Year (Spring Festival)"),
    (re.compile(r"national\s+day|国庆", re.IGNORECASE), "National Day"),
    (re.compile(r"mid-?autumn|中秋", re.IGNORECASE), "Mid-Autumn Festival"),
    (re.compile(r"dragon\s+boat|端午", re.IGNORECASE), "Dragon Boat Festival"),
    (re.compile(r"qingming|tomb[\s-]sweeping|清明", re.IGNORECASE), "Tomb-Sweeping Day"),
    (re.compile(r"labou?r\s+day|五一|劳动节", re.IGNORECASE), "Labor Day"),
)
_FIXED_DAYS = (
    (re.compile(r"new\s+year'?s\s+eve|跨年|除夕夜?(?!.*春节)|новогодн\w+\s+ноч\w+|nochevieja", re.IGNORECASE), (12, 31)),
    (re.compile(r"christmas\s+eve|平安夜|nochebuena", re.IGNORECASE), (12, 24)),
    (re.compile(r"christmas|xmas|圣诞|рождеств\w*|navidad", re.IGNORECASE), (12, 25)),
    (re.compile(r"new\s+year'?s?(?:\s+day)?\b|元旦|нов\w+\s+год\w*|año\s+nuevo|nochevieja", re.IGNORECASE), (1, 1)),
)


@cache
def _china_holidays(year: int) -> dict[str, date]:
    first: dict[str, date] = {}
    for day, name in sorted(holidays.China(years=year).items()):
        first.setdefault(name, day)
    return first


def _festival(text: str, today: date) -> tuple[date, re.Match[str]] | None:
    for pattern, name in _FESTIVALS:
        if (m := pattern.search(text)) is not None:
            for year in (today.year, today.year + 1):
                if (day := _china_holidays(year).get(name)) is not None and day >= today:
                    return day, m
    for pattern, (month, day_of_month) in _FIXED_DAYS:
        if (m := pattern.search(text)) is not None:
            day = date(today.year, month, day_of_month)
            return (day if day >= today else date(today.year + 1, month, day_of_month)), m
    return None


def _period_end(text: str, today: date) -> tuple[date, re.Match[str]] | None:
    if (m := _MONTH_END.search(text)) is not None:
        following = date(today.year + (today.month == 12), today.month % 12 + 1, 1)
        return following - timedelta(days=1), m
    if (m := _YEAR_END.search(text)) is not None:
        return date(today.year, 12, 31), m
    if (m := _QUARTER_END.search(text)) is not None:
        quarter = int(m.group(1) or "一二三四1234".index(m.group(2)) % 4 + 1)
        year = today.year if quarter >= (today.month - 1) // 3 + 1 else today.year + 1
        last_month = quarter * 3
        return date(year + (last_month == 12), last_month % 12 + 1, 1) - timedelta(days=1), m
    return None


def _deadline(text: str, today: date, now: datetime, timezone: str) -> tuple[date, str] | None:
    named = _festival(text, today) or _period_end(text, today)
    if named is not None:
        return named[0], named[1].group(0)
    cue = _DEADLINE.search(text)
    if cue is None:
        return None
    day = parse_date(text[cue.end():], now=now, timezone=timezone)
    if day is None and cue.start() > 0:
        day = parse_date(text[: cue.start()], now=now, timezone=timezone) if re.match(r"截止|之前|以前|前", cue.group(0)) else None
    return (day, cue.group(0)) if day is not None and day > today + timedelta(days=1) else None


# --- the reading ------------------------------------------------------------------------------------------

_WHOLE_DAY = re.compile(r"\b(?:the\s+)?(?:whole|full|entire)\s+day\b|\ball\s+day\b|一整天|整天|全天|(?<!\w)(?:весь|целый)\s+день(?!\w)|"
                        r"\btodo\s+el\s+d[ií]a\b|\bd[ií]a\s+(?:entero|completo)\b", re.IGNORECASE)


def read_time(text: str, *, now: datetime, language: str = "en", timezone: str | None = None) -> Span | None:
    """The one time the message says, or None."""
    zone = timezone or str(now.tzinfo)
    ctx = ExtractContext(now=now, timezone=zone, language=language)
    today = now.date()
    timed = shared_period(text)
    if (deadline := _deadline(text, today, now, zone)) is not None:
        return Span("time", 0, len(text), deadline[1], TimeValue(by=deadline[0]), CERTAIN)
    start = EXTRACTORS["at_time"](timed, ctx)
    end = EXTRACTORS["until_time"](timed, ctx)
    length = EXTRACTORS["duration_minutes"](timed, ctx)
    day = parse_date(timed, now=now, timezone=zone)
    if _WHOLE_DAY.search(text) and day is not None:
        begin = datetime.combine(day, datetime.min.time(), tzinfo=now.tzinfo)
        return Span("time", 0, len(text), text, TimeValue(start=begin, end=begin + timedelta(days=1)), CERTAIN)
    if start is not None and end is not None:
        value = TimeValue(start=datetime.fromisoformat(start.value), end=datetime.fromisoformat(end.value))
        certainty, why = time_certainty(text, start.raw, "at_time", start.value)
        return Span("time", 0, len(text), f"{start.raw} {end.raw}", value, certainty, why)
    if length is not None and (start is None or not re.search(r"\d", start.raw or "")):
        certainty, why = time_certainty(text, length.raw, "duration_minutes", length.value)
        return Span("time", 0, len(text), length.raw, TimeValue(minutes=int(length.value)), certainty, why)
    if start is not None:
        parsed = parse_datetime(timed, now=now, timezone=zone)
        moment = datetime.fromisoformat(start.value)
        certainty, why = time_certainty(text, start.raw, "at_time", start.value)
        if parsed is not None and parsed.precision == "day":
            return Span("time", 0, len(text), start.raw, TimeValue(date=moment.date()), _day_certainty(text, certainty), why)
        return Span("time", 0, len(text), start.raw, TimeValue(at=moment), certainty, why)
    if day is not None:
        return Span("time", 0, len(text), text, TimeValue(date=day), _day_certainty(text, CERTAIN))
    return None


_NEXT_WEEKDAY = re.compile(r"\bnext\s+(?:mon|tue|wed|thu|fri|sat|sun)", re.IGNORECASE)
_SLASH_DATE = re.compile(r"(?<![\d/])(\d{1,2})/(\d{1,2})(?![\d/])")


def _day_certainty(text: str, certainty: str) -> str:
    """"next Friday" said midweek may be this week's or next week's; "3/1" may be either order."""
    if _NEXT_WEEKDAY.search(text):
        return LIKELY if certainty == CERTAIN else certainty
    if (m := _SLASH_DATE.search(text)) and int(m.group(1)) <= 12 and int(m.group(2)) <= 12 and m.group(1) != m.group(2):
        return GUESS
    return certainty
