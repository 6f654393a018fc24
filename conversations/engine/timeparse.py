"""Date and time expressions in four languages, resolved against a given `now` and timezone.

Handles ISO datetimes ("2026-02-10T14:00:00+08:00"), "2026-02-10 14:00", "2026/2/10",
"2026年2月10日 下午2点", relative days ("yesterday 3pm", "昨天下午3点", "明天上午9点",
"вчера в 15:00", "ayer a las 3 de la tarde") and bare times ("at 14:30" means today).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo

# The slot extractors read the same pieces of a message several times in one turn (the start, the end,
# the range, a correction each look again); the readers below are pure, so each piece is read once.
_MEMO_SIZE = 1024

_ISO = re.compile(
    r"\b(\d{4}-\d{2}-\d{2})[T ](\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})?(?![\d:])"
)
_DATE = re.compile(r"(?<!\d)(\d{4})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})\s*[日号]?(?!\d)")
_MONTH_DAY_ZH = re.compile(r"(?<!\d)(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")

_RELATIVE_DAYS: tuple[tuple[re.Pattern[str], int], ...] = tuple(
    (re.compile(p, re.IGNORECASE), offset)
    for p, offset in (
        (r"大前天", -3),
        (r"大后天|大後天", 3),
        (r"\bday\s+before\s+yesterday\b|前天|позавчера|\banteayer\b|\bantes\s+de\s+ayer\b", -2),
        (r"\bday\s+after\s+tomorrow\b|后天|послезавтра|\bpasado\s+ma[ñn]ana\b", 2),
        (r"\byesterday\b|昨天|昨日|昨晚|(?<!\w)вчера(?!\w)|\bayer\b", -1),
        (
            r"\b(?:tomorrow|tomorow|tommorow|tommorrow|tomorrw|tmrw|tmr|2moro|2morrow)\b|明天|明日|明早|明晚|(?<!\w)завтра(?!\w)|(?<!la\s)(?<!por\s)\bma[ñn]ana\b",
            1,
        ),
        (
            r"\btoday\b|\btonight\b|\bthis\s+(?:morning|afternoon|evening)\b|今天|今日|今晚|今早|"
            r"(?<!\w)сегодня(?!\w)|\bhoy\b|\besta\s+(?:ma[ñn]ana|tarde|noche)\b",
            0,
        ),
    )
)

CN_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
    "俩": 2,  # spoken: 俩钟头 is two hours
    "仨": 3,
}

_ZH_TIME = re.compile(
    r"(凌晨|早上|早晨|上午|中午|下午|傍晚|晚上|夜里|今晚|昨晚|明晚|今早|明早|昨早)?\s*"
    # "多一点", "便宜一点", "一点点", "一点儿": a bit, no one o'clock
    r"(\d{1,2}|(?<![多少快慢好大小高低贵宜有差])[零一二两三四五六七八九十]{1,3})\s*(?:[点點](?![点點儿])|[时時](?![间間候]))(?:\s*(\d{1,2}|半|一刻|三刻|[零一二三四五六七八九十]{1,3}(?![零一二三四五六七八九十点點时時个]))\s*分?)?"
)
_CLOCK = re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?::\d{2})?(?![\d:])")
_AMPM = re.compile(
    r"(?<![\d:])(\d{1,2})(?::(\d{2}))?\s*(a\.?m\.?|p\.?m\.?)(?![a-z])", re.IGNORECASE
)
# "в 3 часа дня", "с 8", "к 10 утра"; "a las 5 de la tarde", "de 8", "desde las 7" (a range's start)
_RU_TIME = re.compile(
    r"(?<!\w)(?:в|во|с|со|к|после|около)\s+(\d{1,2})(?![\d/.-])(?::(\d{2}))?(?!\s*(?:минут|дн|день|недел|месяц|раз|человек|этаж|январ|феврал|март|апрел|ма[яй]|июн|июл|август|сентябр|октябр|ноябр|декабр|%|[.,]\d))"
    r"\s*(?:час\w*)?\s*(утра|дня|вечера|ночи)?", re.IGNORECASE
)
_ES_TIME = re.compile(
    r"\b(?:a\s+las?|desde\s+las?|de\s+las?|hasta\s+las?|de(?=\s+\d{1,2}(?::\d{2})?(?:\s*$|\s+a\s+\d)))\s+(\d{1,2})(?![\d/.-])(?::(\d{2}))?"
    r"(?!\s*(?:minutos?|d[ií]as?|semanas?|mes|personas?|pisos?|%|[.,]\d))\s*(?:de\s+la\s+(ma[ñn]ana|tarde|noche))?", re.IGNORECASE
)
_NOON = re.compile(r"\bnoon\b|\bmidday\b|中午|(?<!\w)полдень(?!\w)|\bmediod[ií]a\b", re.IGNORECASE)
_MIDNIGHT = re.compile(r"\bmidnight\b|午夜|半夜|(?<!\w)полночь(?!\w)|\bmedianoche\b", re.IGNORECASE)
_PM_WORDS = re.compile(r"\b(?:afternoon|evening|tonight|pm)\b", re.IGNORECASE)
_AM_WORDS = re.compile(r"\bmorning\b", re.IGNORECASE)
# "last Saturday morning from 9", "Friday afternoon at 3": a bare hour the day's period says
_PERIOD_HOUR = re.compile(
    r"\b(?:from|at|since|starting(?:\s+at)?|around)\s+(\d{1,2})(?::(\d{2}))?\b"
    r"(?!\s*(?:%|percent|hours?|hrs?|minutes?|mins?|days?|h\b|am\b|pm\b|a\.m|p\.m|people|persons|[:.]\d))",
    re.IGNORECASE,
)

# "10 tomorrow morning", "9 in the morning", "7 tonight", "11 at night", "6 the next morning": a bare hour with
# the part of the day after it ("for 1 night" is a count of nights, not a time)
_HOUR_THEN_PERIOD = re.compile(
    r"(?<![\w:.\-/])(\d{1,2})(?::(\d{2}))?\s*(?:o'?clock\s+)?"
    r"(?:(?:tomorrow|today|yesterday|this|that|the\s+next|the\s+following|next|in\s+the)\s+(morning|afternoon|evening|night)"
    r"|(morning|afternoon|evening)|(tonight|at\s+night))\b",
    re.IGNORECASE,
)


def _hour_then_period(m: re.Match[str]) -> time | None:
    hour, period = int(m.group(1)), (m.group(3) or m.group(4) or m.group(5) or "").lower()
    if hour > 12:
        return None
    if period == "morning" or hour == 12 and period != "afternoon":  # "12 at night": midnight
        hour %= 12
    elif period in ("afternoon", "evening") or hour >= 6:  # "11 at night", "7 tonight"; "2 at night" stays 02:00
        hour = hour % 12 + 12
    return time(hour, int(m.group(2) or 0) % 60)


_PERIOD = re.compile(
    r"a\.?m\.?|p\.?m\.?|\b(?:morning|afternoon|evening|tonight|night|noon|midnight)\b|凌晨|早上|早晨|上午|中午|下午|傍晚|晚上|夜里|"
    r"今晚|昨晚|明晚|今早|明早|昨早|午夜|半夜|утра|дня|вечера|ночи|полдень|полночь|de\s+la\s+(?:ma[ñn]ana|tarde|noche)|mediod[ií]a|medianoche",
    re.IGNORECASE,
)


def says_period(text: str) -> bool:
    """Whether text names a half or part of the day in words (pm, 下午, tonight), not only by a 24-hour clock."""
    return bool(_PERIOD.search(text))


def names_period(text: str) -> bool:
    """Whether text says which half of the day it means (pm, 下午, вечера...) or a 24-hour clock past noon."""
    return bool(_PERIOD.search(text)) or any(int(m.group(1)) >= 13 for m in _CLOCK.finditer(text))


@dataclass(frozen=True)
class ParsedTime:
    """A resolved moment: aware datetime, how precise the text was, and the text it came from."""

    value: datetime
    precision: str  # minute | day
    raw: str

    def iso(self) -> str:
        return self.value.isoformat()


def zh_number(token: str) -> int:
    """A Chinese numeral (or digits) as an int: 三 -> 3, 十二 -> 12, 两百五 -> 250, 一千二百五十 -> 1250, 一万二 -> 12000."""
    if token.isdigit():
        return int(token)
    total = section = digit = 0
    unit_before = 1  # the place unit just before the current digit (1: none, or a 零 between)
    for ch in token:
        if ch in "十百千":
            unit_before = {"十": 10, "百": 100, "千": 1000}[ch]
            section, digit = section + (digit or 1) * unit_before, 0
        elif ch == "万":
            total, section, digit, unit_before = total + (section + digit) * 10000, 0, 0, 10000
        else:
            digit = CN_DIGITS.get(ch, 0)
            unit_before = 1 if ch in "零〇" else unit_before
    if digit and unit_before >= 100:  # 两百五 is 250, 一万二 is 12000: a digit right after a unit is the next place
        digit *= unit_before // 10
    return total + section + digit


_NIGHT_PERIODS = ("晚上", "夜里", "今晚", "昨晚", "明晚", "noche")
_NIGHT_ENDS = 4  # the last hour a night's words still name after its midnight ("晚上四点" is 04:00)


def _pm_adjust(hour: int, period: str | None) -> int:
    period = (period or "").lower().replace(".", "")
    if hour == 12 and period in _NIGHT_PERIODS:
        return 0  # "晚上十二点": midnight, not noon
    if hour <= _NIGHT_ENDS and period in _NIGHT_PERIODS:
        return hour  # "今晚一点": one in the morning, after that evening's midnight
    if period in (
        "pm",
        "下午",
        "傍晚",
        "晚上",
        "夜里",
        "今晚",
        "昨晚",
        "明晚",
        "дня",
        "вечера",
        "tarde",
        "noche",
    ):
        return hour + 12 if hour < 12 else hour
    if period in ("am", "凌晨", "早上", "早晨", "上午", "今早", "明早", "昨早", "утра", "ночи", "mañana", "manana"):
        return 0 if hour == 12 else hour
    if period == "中午":
        return hour + 12 if hour < 6 else hour
    return hour


def _zh_period_before(text: str, at: int) -> str | None:
    """The part of the day said earlier in the same sentence as an hour that names none ("后天下午，还是两点左右")."""
    sentence = re.split(r"[。！？!?；;]", text[:at])[-1]
    said = re.findall(r"上午|早上|早晨|中午|下午|傍晚|晚上|夜里|凌晨", sentence)
    return said[-1] if said else None


@lru_cache(maxsize=_MEMO_SIZE)
def _time_of_day(text: str) -> tuple[time, str] | None:
    """The first time of day in text and the matched snippet."""
    found: list[tuple[int, time, str]] = []
    if (m := _HOUR_THEN_PERIOD.search(text)) and (at := _hour_then_period(m)) is not None:
        found.append((m.start(), at, m.group(0)))  # first: it wins a tie with a bare clock ("10:00 at night")
    if m := _ZH_TIME.search(text):
        minute_token = m.group(3)
        minute = {"半": 30, "一刻": 15, "三刻": 45}.get(minute_token or "")
        if minute is None:  # "9点40", "九点四十", "十点零五"
            minute = (int(minute_token) if minute_token.isdigit() else zh_number(minute_token.lstrip("零") or "零")) if minute_token else 0
        hour = _pm_adjust(zh_number(m.group(2)), m.group(1) or _zh_period_before(text, m.start()))
        found.append((m.start(), time(hour % 24, minute % 60), m.group(0)))
    if m := _AMPM.search(text):
        hour = _pm_adjust(int(m.group(1)), m.group(3))
        found.append((m.start(), time(hour % 24, int(m.group(2) or 0) % 60), m.group(0)))
    if m := _CLOCK.search(text):
        hour = int(m.group(1))
        if hour < 12 and _PM_WORDS.search(text):
            hour += 12
        found.append((m.start(), time(hour % 24, int(m.group(2)) % 60), m.group(0)))
    if m := _RU_TIME.search(text):
        hour = _pm_adjust(int(m.group(1)), m.group(3))
        found.append((m.start(), time(hour % 24, int(m.group(2) or 0) % 60), m.group(0)))
    if m := _ES_TIME.search(text):
        hour = int(m.group(1))
        hour = _pm_adjust(hour, m.group(3)) if m.group(3) else hour
        found.append((m.start(), time(hour % 24, int(m.group(2) or 0) % 60), m.group(0)))
    if (m := _PERIOD_HOUR.search(text)) and (_AM_WORDS.search(text) or _PM_WORDS.search(text)) and int(m.group(1)) <= 12:
        hour = int(m.group(1)) % 12 + (12 if _PM_WORDS.search(text) and not _AM_WORDS.search(text) else 0)
        found.append((m.start(), time(hour, int(m.group(2) or 0) % 60), m.group(0)))
    if m := _NOON.search(text):
        found.append((m.start(), time(12, 0), m.group(0)))
    if m := _MIDNIGHT.search(text):
        found.append((m.start(), time(0, 0), m.group(0)))
    if not found:
        return None
    first = min(found, key=lambda item: item[0])
    if first[1] in (time(12, 0), time(0, 0)) and (_NOON.fullmatch(first[2]) or _MIDNIGHT.fullmatch(first[2])):
        # "中午12:10", "noon, 12:30": the clock said right after the part of the day is the time
        end = first[0] + len(first[2])
        clock = [item for item in found if item is not first and 0 <= item[0] - end <= 2]
        if clock:
            first = clock[0]
    at, value, raw = first
    if value.minute == 0 and (half := _HALF_BEFORE.search(text, 0, at)) is not None:
        return value.replace(minute=30), text[half.start():at] + raw  # "half 10 in the morning", "half past 9pm"
    return value, raw


_HALF_BEFORE = re.compile(r"\bhalf\s+(?:past\s+)?$", re.IGNORECASE)
_BARE_CLOCK = re.compile(r"^\D{0,12}?(?<![\d:])(\d{1,2})(?:[:：.](\d{2}))?(?![\d:])\D{0,12}$")
_HALF_HOUR = re.compile(r"\bhalf\s+(\d{1,2})\b", re.IGNORECASE)  # British "half 10": 10:30


def clock_said(words: str) -> tuple[time, bool] | None:
    """The time of day a few words say, and whether they say its half of the day ("9pm", "晚上九点四十"): a bare
    "10" or "10:30" is a clock time too when the words are a value put in place of another ("10:30 not 10")."""
    if (half := _HALF_HOUR.search(words)) is not None and 0 < int(half.group(1)) <= 12:
        return time(int(half.group(1)) % 24, 30), says_period(words)
    if (said := _time_of_day(words)) is not None:
        return said[0], says_period(words) or said[0].hour >= 13
    if (bare := _BARE_CLOCK.match(words)) is not None and int(bare.group(1)) <= 23 and int(bare.group(2) or 0) < 60:
        hour = int(bare.group(1))
        return time(hour, int(bare.group(2) or 0)), hour >= 13 or hour == 0
    return None


# "5ish", "10-ish": an hour said roughly (the words after the hour, so a reader can blank them and keep the rest)
ROUGH_HOUR = re.compile(r"(?<=\d)\s*-?ish\b", re.IGNORECASE)


def says_time_of_day(text: str) -> bool:
    """Whether the text says a time of day at all ("at 9", "3pm", "九点", "noon"), by the clock readers."""
    return _time_of_day(text) is not None


def says_clock(text: str) -> bool:
    """Whether text says a time of day by the clock ("9pm", "21:00", "晚上九点"), not only a part of the day."""
    found = _time_of_day(text or "")
    return found is not None and not _NOON.fullmatch(found[1]) and not _MIDNIGHT.fullmatch(found[1])


_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
# a month by its own spellings only: "maybe 15" is no 15 May, "marching 3" no 3 March
_MONTH_NAME = (r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
               r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?")
_MONTH_DAY_EN = re.compile(
    rf"\b{_MONTH_NAME}\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(\d{{4}}))?(?!\s*:)\b"
    rf"|\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH_NAME}(?:,?\s+(\d{{4}}))?\b",
    re.IGNORECASE,
)


def _month_day_en(text: str, today: date) -> tuple[date, str] | None:
    """ "April 1", "Mar 2nd, 2026", "1 April" """
    m = _MONTH_DAY_EN.search(text)
    if not m:
        return None
    if m.group(1):
        month, day, year = m.group(1), m.group(2), m.group(3)
    else:
        day, month, year = m.group(4), m.group(5), m.group(6)
    try:
        return date(int(year) if year else today.year, _MONTHS.index(month.lower()[:3]) + 1, int(day)), m.group(0)
    except ValueError:
        return None


_WEEKDAYS = {
    # Full names only: "sat" or "sun" in a sentence is rarely a day ("the car sat there").
    "en": ("monday", "tues(?:day)?", "wednesday|weds", "thurs(?:day)?", "friday", "saturday", "sunday"),
    "ru": ("понедельник\\w*", "вторник\\w*", "сред[ауы]", "четверг\\w*", "пятниц[ауы]", "суббот[ауы]", "воскресень[ея]"),
    "es": ("lunes", "martes", "mi[ée]rcoles", "jueves", "viernes", "s[áa]bado", "domingo"),
}
_ZH_WEEKDAY_DIGITS = "一二三四五六日天"
_ZH_WEEKDAY = re.compile(r"(上上|上|下下|下|这|這|本)?\s*(?:个|個)?\s*(?:周|週|星期|礼拜|禮拜)([一二三四五六日天])")
_EN_WEEKDAY = re.compile(r"\b(?:(last|next|this|coming|past)\s+)?(" + "|".join(_WEEKDAYS["en"]) + r")\b\.?(?:\s+(before\s+last))?",
                         re.IGNORECASE)
_RU_WEEKDAY = re.compile(r"(?<!\w)(?:(?:в|во)\s+)?(?:(прошл\w*|следующ\w*|эт\w*)\s+)?(" + "|".join(_WEEKDAYS["ru"]) + r")(?!\w)",
                         re.IGNORECASE)
_ES_WEEKDAY = re.compile(r"\b(?:(?:el|este)\s+)?(?:(pr[óo]ximo)\s+)?(" + "|".join(_WEEKDAYS["es"])
                         + r")\b(?:\s+(pasado|que\s+viene|pr[óo]ximo))?", re.IGNORECASE)
_PAST, _NEXT, _THIS, _NEAREST = "past", "next", "this", "nearest"


def _weekday_date(today: date, weekday: int, relation: str, weeks: int = 1) -> date:
    """The date of `weekday` (Monday 0) relative to today: the one before, after, in this week, or nearest."""
    if relation == "week":  # Chinese 上周六 / 下周一: that weekday of the week `weeks` away (weeks start Monday)
        return today - timedelta(days=today.weekday()) + timedelta(days=7 * weeks + weekday)
    ahead = (weekday - today.weekday()) % 7
    if relation == _PAST:
        return today - timedelta(days=(7 - ahead) % 7 or 7)
    if relation == _NEXT:
        return today + timedelta(days=ahead or 7)
    if relation == _THIS:
        return today - timedelta(days=today.weekday()) + timedelta(days=weekday)
    # A bare weekday: the coming one, today included ("周日停三个小时多少钱" asks about a stay to come)
    return today + timedelta(days=ahead)


# A stay that has happened ("I parked there on Sunday", "周日停的", "was I charged right for Saturday"): a bare
# weekday or weekend in it is the most recent one, today included; otherwise the coming one.
_PAST_STAY = re.compile(
    r"\b(?:parked|stayed|left|went|came|paid|was|were|did|didn'?t|had|got|entered|exited|drove|charged|billed\s+me|took)\b|"
    r"没有?(?:过夜|停|付|交)|停的|停了|去的|来的|进的|出的|走的|付的|付了|交的|交了|收了|扣了|收的|扣的|那天|当时|上次|"
    r"(?<!\w)(?:был\w*|стоял\w*|заплатил\w*|уехал\w*|приехал\w*)(?!\w)|\b(?:estacion[eé]|aparqu[eé]|pagu[eé]|fue|estuve|dej[eé])\b",
    re.IGNORECASE,
)


def speaks_of_past_stay(text: str) -> bool:
    """Whether a message tells of a stay that has happened (a bare weekday in it is the most recent one)."""
    return bool(_PAST_STAY.search(text or ""))


def _on_or_before(anchor: date, weekday: int) -> date:
    """The last `weekday` (Monday 0) on or before `anchor`."""
    return anchor - timedelta(days=(anchor.weekday() - weekday) % 7)


def _on_or_after(anchor: date, weekday: int) -> date:
    """The first `weekday` (Monday 0) on or after `anchor`."""
    return anchor + timedelta(days=(weekday - anchor.weekday()) % 7)


def nearest_weekday(anchor: date, weekday: int) -> date:
    """The `weekday` (Monday 0) nearest `anchor`, within three days either way (the day a correction means)."""
    return anchor + timedelta(days=(weekday - anchor.weekday() + 3) % 7 - 3)


def _from_anchor(anchor: date, weekday: int, corrects: bool, text: str) -> date:
    """A bare weekday said of the day talked about: a follow-up's is the first on or after it ("what about
    Sunday?"), a correction's the nearest ("不对，是周五" after a Saturday is the day before), and so is one said
    beside the day talked about ("eg friday 8pm to saturday 8am" of a Saturday)."""
    beside = sum(1 for _ in _weekdays_said(text)) > 1 and anchor.weekday() in _weekdays_said(text)
    return nearest_weekday(anchor, weekday) if corrects or beside else _on_or_after(anchor, weekday)


def _weekdays_said(text: str) -> list[int]:
    """Every weekday a message names (Monday 0), in any of the four languages."""
    said = [min(_ZH_WEEKDAY_DIGITS.index(m.group(2)), 6) for m in _ZH_WEEKDAY.finditer(text)]
    for pattern, names in ((_EN_WEEKDAY, _WEEKDAYS["en"]), (_RU_WEEKDAY, _WEEKDAYS["ru"]), (_ES_WEEKDAY, _WEEKDAYS["es"])):
        said += [next(i for i, name in enumerate(names) if re.fullmatch(name, m.group(2), re.IGNORECASE))
                 for m in pattern.finditer(text)]
    return said


# A day said again to correct it: "no, Friday", "not Saturday, Friday", "actually Friday", "I meant Friday",
# "不对，是周五", "不是周六，是周五", "我是说周五" (not "what about Sunday?" nor "周日是不是便宜点")
_CORRECTS = re.compile(
    r"^\W*(?:no|nope|nah|not|actually|sorry|oops)\b|\bi\s+mean[t]?\b|\bnot\s+(?:on\s+)?\w+day\b|\bi\s+said\b"
    r"|不对|(?<!是)不是(?!吗)|我是说|我说的是|我指的是|我的意思是|说错|打错|应该是|其实是"
    r"|^\W*нет(?!\w)|(?<!\w)я\s+имел\s+в\s+виду|\bquise\s+decir\b",
    re.IGNORECASE,
)
# A day or time refused ("not Thursday", "不是周四") is not the one meant.
_REFUSED = {
    "en": re.compile(r"\b(?:not|instead\s+of|rather\s+than)\s+(?:on\s+|at\s+)?(?:this\s+|next\s+)?"
                     r"(?:\w+day|\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)?|tomorrow|today|noon)\b", re.IGNORECASE),
    # a week's words only before 周 / 星期 / 礼拜: "不是一点" refuses one o'clock whole (not a Monday, leaving "点"),
    # "不是下午一点" the afternoon's one o'clock (not 下 of 下周, leaving "午一点")
    "zh": re.compile(r"(?:不是|而不是|不要|别)(?:大后天|今天|明天|后天|昨天|前天)?(?:(?:下|这|本)?(?:个)?(?:周|星期|礼拜)[一二三四五六日天]?)?"
                     r"(?:上午|下午|晚上|早上|中午)?"
                     r"(?:[零一二两三四五六七八九十\d]{1,3}[点點](?:半|一刻|三刻|\d{1,2}分?|[零一二三四五六七八九十]{1,3}分?)?)?"),
}


@lru_cache(maxsize=_MEMO_SIZE)
def says_correction(text: str) -> bool:
    """Whether a message corrects what was said before ("no, Friday", "不对，是周五")."""
    return bool(_CORRECTS.search(text or ""))


def without_refused(text: str, language: str | None = None) -> str:
    """The message without the days and times it refuses ("not Thursday", "不是周四"): those of one language
    ("en", "zh"), or of both."""
    for lang in (language,) if language in _REFUSED else tuple(_REFUSED):
        text = _REFUSED[lang].sub(" ", text)
    return text


# "the weekend", "this weekend", "周末", "下周末", "last weekend": the weekend's Saturday
_WEEKEND = re.compile(r"(上上|上|下下|下|这|這|本)?\s*(?:个|個)?\s*(?:周末|週末|礼拜天?末)"
                      r"|\b(?:(last|next|this|coming|past)\s+)?week-?ends?\b|(?<!\w)выходны\w*|\bfin\s+de\s+semana\b",
                      re.IGNORECASE)


def _weekend_part(text: str, today: date, anchor: date | None, message: str | None = None) -> tuple[date, str] | None:
    """The Saturday of the weekend a text names: a bare one is the first from `anchor` (a follow-up's
    day) or from today; "上周末" / "last weekend" the one before, "下周末" / "next weekend" the one after."""
    m = _WEEKEND.search(text)
    if m is None:
        return None
    word = (m.group(1) or m.group(2) or "").lower()
    if word in ("上上", "上", "下下", "下", "这", "這", "本"):
        weeks = {"上上": -2, "上": -1, "下下": 2, "下": 1}.get(word, 0)
        return _weekday_date(today, 5, "week", weeks), m.group(0)
    saturday = _on_or_after(anchor or today, 5) if (anchor or today).weekday() != 6 else (anchor or today) - timedelta(days=1)
    if anchor is None and speaks_of_past_stay(message or text):  # "I parked there at the weekend": the one just gone (or going on)
        saturday = _on_or_before(today, 5)
    if word in ("last", "past"):
        saturday = _weekday_date(today, 5, _PAST)
    elif word in ("next",):
        saturday = _weekday_date(today, 5, "week", 1)
    return saturday, m.group(0).strip()


def is_weekend(raw: str) -> bool:
    """Whether the words that said a day named a weekend (both its days are meant)."""
    return bool(_WEEKEND.search(raw or ""))


def _bare_weekday(text: str, today: date, weekday: int) -> date:  # text: the whole message
    """A weekday said alone with no day talked about: the most recent one for a stay that has happened, else the coming one."""
    return _on_or_before(today, weekday) if speaks_of_past_stay(text) else _weekday_date(today, weekday, _NEAREST)


# "on a weekday", "a workday", "工作日", "平时": the first day Monday to Friday (from the day talked about, or today)
_WORKDAY = re.compile(r"\b(?:week-?days?|work-?days?|working\s+days?|business\s+days?)\b|工作日|平日|(?<!\w)будн\w*|"
                      r"\bd[ií]as?\s+(?:laborables?|h[áa]biles?|entre\s+semana)\b|\bentre\s+semana\b", re.IGNORECASE)


def _workday_part(text: str, today: date, anchor: date | None, message: str | None = None) -> tuple[date, str] | None:
    if (m := _WORKDAY.search(text)) is None:
        return None
    start = anchor or today
    if speaks_of_past_stay(message or text) and anchor is None:
        return start - timedelta(days=max(0, start.weekday() - 4)), m.group(0)
    return start + timedelta(days=(7 - start.weekday()) % 7 if start.weekday() >= 5 else 0), m.group(0)


def _weekday_part(text: str, today: date, anchor: date | None = None, message: str | None = None,
                  corrects: bool = False) -> tuple[date, str] | None:
    """ "上周六", "下星期一", "周四", "last Saturday", "on Thursday", "в субботу", "el sábado pasado"

    A bare weekday is the nearest one to today; with an `anchor` (the day a follow-up talks about:
    "what about Sunday?" after a stay on Thursday) it is the first such weekday on or after it, or the
    nearest one when the message `corrects` that day ("no, Friday" after a Saturday).
    """
    if m := _ZH_WEEKDAY.search(text):
        weekday = min(_ZH_WEEKDAY_DIGITS.index(m.group(2)), 6)
        weeks = {"上上": -2, "上": -1, "下下": 2, "下": 1, "这": 0, "這": 0, "本": 0}.get(m.group(1) or "")
        if weeks is not None:
            on = _weekday_date(today, weekday, "week", weeks)
        else:
            on = _from_anchor(anchor, weekday, corrects, message or text) if anchor else _bare_weekday(message or text, today, weekday)
        return on, m.group(0)
    for pattern, names in ((_EN_WEEKDAY, _WEEKDAYS["en"]), (_RU_WEEKDAY, _WEEKDAYS["ru"]), (_ES_WEEKDAY, _WEEKDAYS["es"])):
        if m := pattern.search(text):
            weekday = next(i for i, name in enumerate(names) if re.fullmatch(name, m.group(2), re.IGNORECASE))
            word = " ".join(w for w in (m.group(1), m.group(3) if m.lastindex and m.lastindex >= 3 else None) if w).lower()
            relation = (_PAST if re.search(r"last|past|прошл|pasado", word) else _NEXT if re.search(r"next|coming|следующ|pr[óo]ximo|viene", word)
                        else _THIS if re.search(r"this|эт", word) else _NEAREST)
            on = ((_from_anchor(anchor, weekday, corrects, message or text) if anchor else _bare_weekday(message or text, today, weekday)) if relation == _NEAREST
                  else _weekday_date(today, weekday, relation))
            if "before last" in word:
                on -= timedelta(days=7)
            return on, m.group(0).strip()
    return None


# A month said without a day: "in April", "back in april", "during March 2026", "last April", "last month",
# "4月份", "四月", "去年十二月", "上个月". A month name needs a word before it (or a year after it), since
# "may" and "march" are also verbs; a Chinese month is not followed by its day (that is a date).
_MONTH_ALONE_EN = re.compile(
    r"\b(?:(?:back\s+)?in|during|for|throughout|over|(last|this|next))\s+(?:the\s+month\s+of\s+)?"
    r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|"
    r"dec(?:ember)?)\b\.?(?:,?\s+(\d{4})\b)?(?!\s*\d)"
    r"|\b(jan(?:uary)?|feb(?:ruary)?|march|apr(?:il)?|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|"
    r"dec(?:ember)?)\.?,?\s+(\d{4})\b",
    re.IGNORECASE,
)
_MONTH_ALONE_ZH = re.compile(
    r"(?:(\d{4})\s*年|(去年|今年|明年))?\s*(?<![\d零一二两三四五六七八九十个個每])(1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])\s*月(?:份)?"
    r"(?!\s*(?:\d|[零一二三四五六七八九十])+\s*[日号號]?)(?![卡票度])"
)
_LAST_MONTH = re.compile(r"\blast\s+month\b|上(?:个|個)?月(?!\s*(?:\d|[一二三四五六七八九十])+\s*[日号])", re.IGNORECASE)
MONTH_DAY = 15  # the day a month said alone stands for (mid-month), never after today in the current month


def _month_date(today: date, month: int, year: int | None = None) -> date:
    """A day in `month`: the 15th of the most recent such month not in the future (today, in the current
    month before the 15th), or of the year said."""
    if year is None:
        year = today.year if month <= today.month else today.year - 1  # "in December", said in May: last December
    on = date(year, month, MONTH_DAY)
    return today if (year, month) == (today.year, today.month) and on > today else on


def _month_year(today: date, month: int, word: str) -> int | None:
    """The year of a month said with "last" / "this" / "next" (去年 / 今年 / 明年); None for the most recent one."""
    word = word.lower()
    if word in ("last", "去年"):
        return today.year if word == "last" and month < today.month else today.year - 1
    if word in ("this", "今年"):
        return today.year
    if word in ("next", "明年"):
        return today.year if word == "next" and month > today.month else today.year + 1
    return None


def _month_part(text: str, today: date) -> tuple[date, str] | None:
    """A month said without a day, as a day inside it (see `_month_date`)."""
    if m := _MONTH_ALONE_ZH.search(text):
        month = zh_number(m.group(3))
        year = int(m.group(1)) if m.group(1) else _month_year(today, month, m.group(2) or "")
        return _month_date(today, month, year), m.group(0).strip()
    if m := _MONTH_ALONE_EN.search(text):
        name, year, word = (m.group(2), m.group(3), m.group(1)) if m.group(2) else (m.group(4), m.group(5), None)
        month = _MONTHS.index(name.lower()[:3]) + 1
        return _month_date(today, month, int(year) if year else _month_year(today, month, word or "")), m.group(0).strip()
    if m := _LAST_MONTH.search(text):
        last = today.replace(day=1) - timedelta(days=1)
        return _month_date(today, last.month, last.year), m.group(0)
    return None


def _date_part(text: str, today: date, anchor: date | None = None, message: str | None = None,
               corrects: bool = False) -> tuple[date, str] | None:
    if m := _DATE.search(text):
        try:
            return date(int(m.group(1)), int(m.group(2)), int(m.group(3))), m.group(0)
        except ValueError:
            return None
    if m := _MONTH_DAY_ZH.search(text):
        try:
            return date(today.year, int(m.group(1)), int(m.group(2))), m.group(0)
        except ValueError:
            return None
    if found := _month_day_en(text, today):
        return found
    # the day word said first ("今晚八点停到明早九点" starts tonight), the longer one at the same place
    said = [(m.start(), -len(m.group(0)), offset, m.group(0)) for pattern, offset in _RELATIVE_DAYS if (m := pattern.search(text))]
    if said:
        _, _, offset, raw = min(said)
        return today + timedelta(days=offset), raw
    return (_weekday_part(text, today, anchor, message, corrects) or _weekend_part(text, today, anchor, message)
            or _workday_part(text, today, anchor, message)
            or _month_part(text, today))


def names_day_of_week(raw: str) -> bool:
    """Whether the words that said a day name it by its place in the week ("周日", "last Sunday", "the weekend",
    "a weekday"), not by the calendar (a date, a month) nor by its distance from today ("tomorrow")."""
    return any(p.fullmatch(raw.strip()) for p in (_ZH_WEEKDAY, _EN_WEEKDAY, _RU_WEEKDAY, _ES_WEEKDAY, _WEEKEND, _WORKDAY))


def _local_now(now: datetime, timezone: str) -> datetime:
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    return now.astimezone(ZoneInfo(timezone))


@lru_cache(maxsize=_MEMO_SIZE)
def parse_datetime(text: str, *, now: datetime, timezone: str, anchor: date | None = None,
                   message: str | None = None, corrects: bool = False) -> ParsedTime | None:
    """The first date/time expression in text as an aware datetime in `timezone` (a bare weekday
    or weekend counts from `anchor` when one is given: the day a follow-up talks about, a bare weekday the one
    nearest it when the message `corrects` that day; `message`, when text is part of one, says whether it tells
    of a stay that has happened)."""
    zone = ZoneInfo(timezone)
    local_now = _local_now(now, timezone)
    if m := _ISO.search(text):
        raw = m.group(0)
        value = datetime.fromisoformat(raw.replace(" ", "T", 1))
        value = value.replace(tzinfo=zone) if value.tzinfo is None else value
        return ParsedTime(value=value, precision="minute", raw=raw)
    day = _date_part(text, local_now.date(), anchor, message, corrects)
    clock = _time_of_day(text)
    if day is None and clock is None:
        return None
    on = day[0] if day else local_now.date()
    if clock is None:
        return ParsedTime(
            datetime.combine(on, time(0, 0), tzinfo=zone), "day", day[1] if day else ""
        )
    if _AM_WORDS.search(text) and clock[0].hour == 12:
        clock = (time(0, clock[0].minute), clock[1])
    raw = " ".join(part for part in ((day[1] if day else ""), clock[1]) if part)
    if clock[0].hour <= _NIGHT_ENDS and any(word in clock[1] or word in (day[1] if day else "") for word in _NIGHT_PERIODS):
        on += timedelta(days=1)  # "今晚十二点", "今晚一点": after that night's midnight, the next calendar day
    return ParsedTime(datetime.combine(on, clock[0], tzinfo=zone), "minute", raw)


@lru_cache(maxsize=_MEMO_SIZE)
def parse_date(text: str, *, now: datetime, timezone: str, anchor: date | None = None, message: str | None = None) -> date | None:
    """The first calendar date in text (absolute or relative to `now` in `timezone`; see `parse_datetime`)."""
    if m := _ISO.search(text):
        return date.fromisoformat(m.group(1))
    day = _date_part(text, _local_now(now, timezone).date(), anchor, message)
    return day[0] if day else None
