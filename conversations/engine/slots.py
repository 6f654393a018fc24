"""Slot extraction, short-term slot memory and the per-turn clarify decision.

- Extractors are a registry of small functions: `city_code`, `lot_code`, `plate_no` (incl.
  Chinese plates 沪A12345 / 沪AD12345), `order_no`, `at_time`, `date`, `number`, `email`,
  `text`. A slot spec may override an extractor with its own patterns and aliases.
- Memory: each `SlotValue` remembers the turn that supplied it; values carry over between
  turns and a new value replaces only its own slot, so a follow-up that changes the date
  keeps the city and the lot.
- Validation: callables passed in as `lookups={"order_no": fn}` return True / False / a
  normalised value (None or an exception means "could not check"). Slots without a lookup
  are valid by format. Only valid slots are usable for tools.
- Decision: `continue` when the intent's required slots are all valid, `ask` with one
  targeted question otherwise, `abort` after `max_rounds` asks without progress.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo

from ._serde import FrozenDict, Serializable
from ._text import (
    NUMBER_WORDS,
    compile_pattern,
    detect_language,
    first_match,
    is_non_answer,
    iter_patterns,
    localize,
)
from .catalog import say, say_in
from .config import SlotSpec
from .fee_questions import (
    OVERNIGHT,
    OVERNIGHT_MINUTES,
    OVERNIGHT_START,
    asks_cap,
    day_part,
    in_day_part,
    week_shift,
)
from .lexicon import words_of
from .negation import says_a_correction
from .recognizers.clock_words import plain_time_words
from .state import INVALID, TOOL, UNVERIFIED, VALID, PendingClarification, SlotValue
from .timeparse import (
    ROUGH_HOUR,
    ParsedTime,
    names_day_of_week,
    names_period,
    parse_date,
    parse_datetime,
    says_clock,
    says_correction,
    says_period,
    without_refused,
    zh_number,
)

CONTINUE, ASK, ABORT = "continue", "ask", "abort"

Lookup = Callable[..., Any]

_PROVINCES = "京津沪渝冀豫云辽黑湘皖鲁新苏浙赣鄂桂甘晋蒙陕吉闽贵粤青藏川宁琼"
_CN_PLATE = re.compile(
    rf"([{_PROVINCES}])\s*([A-Za-z])\s*[·•.\-\s]?\s*([A-Za-z0-9]{{5,6}})(?![A-Za-z0-9])"
)
_PLATE_KEYWORD = re.compile(
    r"(?:plate(?:\s*(?:no\.?|number|#))?(?:\s+is)?|车牌(?:号)?(?:是|为)?|номер|matr[ií]cula|placa)\s*[:：#]?\s*([A-Za-z0-9][A-Za-z0-9\-]{3,9})",
    re.IGNORECASE,
)
# ASCII boundaries, not \b: in "订单号SCN-020" the CJK character counts as a word character.
_ORDER_SHAPED = re.compile(
    r"(?<![A-Za-z0-9])((?:SCN|ORD|ORDER|PO|PK|INV)-?[A-Z0-9]*\d[A-Z0-9\-]*)(?![A-Za-z0-9])",
    re.IGNORECASE,
)
_ORDER_KEYWORD = re.compile(
    r"(?:order|订单|заказ\w*|pedido|orden)\s*(?:no\.?|number|#|号|编号|номер|n[uú]mero)?\s*[:：#]?\s*"
    r"([A-Za-z0-9](?:[A-Za-z0-9\-_]|\.(?=[A-Za-z0-9]))+)",
    re.IGNORECASE,
)
_LOT_KEYWORD = re.compile(
    r"(?:parking\s+lot|car\s*park|lot|停车场|车场|стоянк\w*|парковк\w*|estacionamiento|aparcamiento)"
    r"\s*(?:code|编码|编号|号)?\s*[:：#]?\s*([A-Za-z0-9][A-Za-z0-9_\-]{1,15})",
    re.IGNORECASE,
)
# "SH-A01", "SH-PD-001", "BJ-001"; never an order number's shape.
_LOT_SHAPED = re.compile(
    r"(?<![A-Za-z0-9])(?!(?:SCN|ORD|ORDER|PO|PK|INV)-)([A-Z]{2,4}-(?:[A-Z]{1,3}-?)?\d{1,4})(?![A-Za-z0-9])"
)
_DATE_LIKE = re.compile(r"\d{4}[-/.]\d{1,2}(?:[-/.]\d{1,2})?$|\d{1,2}[-/.]\d{1,2}(?:[-/.]\d{2,4})?$")
_CITY_KEYWORD = re.compile(
    r"(?:city(?:\s*code)?|城市(?:编码|代码)?|город|ciudad)\s*[:：=]?\s*([A-Za-z]{2,6}|\d{4,6})",
    re.IGNORECASE,
)
# "in SH": upper-case codes only
_CITY_IN = re.compile(r"\b(?:in|at|for)\s+([A-Z]{2,3})(?![A-Za-z0-9_\-])")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
# Not the digits inside an id, a date or a plate ("SCN-020", "2026-02-10", "沪A12345").
_NUMBER = re.compile(r"(?<![A-Za-z0-9_.\-/:])[-+]?\d+(?:[.,]\d+)?(?![A-Za-z0-9_\-/:]|[.,]\d)")

# "this order", "这笔", "上一单", "the first one", "第二笔", "the last one".
# An ordinal names a listed item, not a time ("the first 30 minutes", "last Saturday", 第二天, 上一周, первый час,
# primera hora, el día anterior): a time word or a number after it makes it no pointer
_NOT_TIME_EN = (r"(?!\s+(?:\d|(?:time|hours?|minutes?|mins?|days?|nights?|weeks?|months?|years?|floors?|stor(?:e?y|ies|eys)|"
                r"segment|half|monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend|morning|evening|afternoon)\b))")
_NOT_TIME_ZH = r"(?![天次日晚夜周个小时层月年期]|个(?:小时|月|晚上|星期|礼拜))"
_NOT_TIME_RU = r"(?!\s+(?:час\w*|день|дня|дн\w+|ноч\w*|недел\w*|месяц\w*|раз\w*|этаж\w*|суббот\w*|воскресен\w*))"
_NOT_TIME_ES = r"(?!\s+(?:hora\w*|d[ií]a\w*|noche\w*|semana\w*|mes\w*|vez|piso\w*|planta\w*|s[aá]bado|domingo)(?!\w))"
_ORDINALS: tuple[tuple[re.Pattern[str], int], ...] = tuple(
    (re.compile(p, re.IGNORECASE), idx)
    for p, idx in (
        (rf"\b(?:first|1st)\b{_NOT_TIME_EN}|第一{_NOT_TIME_ZH}|первы\w*(?!\w){_NOT_TIME_RU}|primer\w*(?!\w){_NOT_TIME_ES}", 0),
        (rf"\b(?:second|2nd)\b{_NOT_TIME_EN}|第二{_NOT_TIME_ZH}|втор\w*(?!\w){_NOT_TIME_RU}|segund\w*(?!\w){_NOT_TIME_ES}", 1),
        (rf"\b(?:third|3rd)\b{_NOT_TIME_EN}|第三{_NOT_TIME_ZH}|трет\w*(?!\w){_NOT_TIME_RU}|tercer\w*(?!\w){_NOT_TIME_ES}", 2),
        (rf"\b(?:last|latest|previous)\b{_NOT_TIME_EN}|最后{_NOT_TIME_ZH}|上一{_NOT_TIME_ZH}|последн\w*(?!\w){_NOT_TIME_RU}"
         rf"|[uú]ltim\w*(?!\w){_NOT_TIME_ES}|(?<!d[ií]a\s)anterior", -1),
    )
)
_REFERENCE = re.compile(
    r"\b(?:this|that|the|it|same)\s+(?:one|order)\b|\bit\b(?!\s*(?:'s|’s|is)\b)|这笔|那笔|这单|那单|这个|那个|上一单|"
    r"上一笔|第.笔|第.单|эт(?:от|у|им)\s+(?:заказ|номер)|ese\s+pedido|este\s+pedido",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ExtractContext:
    """What extractors may need besides the text: the clock and the place."""

    now: datetime
    timezone: str
    language: str = "en"
    entry: datetime | None = None  # the stay's start already known: an exit time alone is on its day
    end: datetime | None = None  # the stay's end already talked about: a new bare end replaces it nearby


@dataclass(frozen=True)
class Extraction(Serializable):
    """A value found in the text, normalised, and the text it came from."""

    value: str
    raw: str


Extractor = Callable[[str, ExtractContext], Extraction | None]


def _plate(text: str, ctx: ExtractContext) -> Extraction | None:
    if m := _CN_PLATE.search(text):
        return Extraction(f"{m.group(1)}{m.group(2).upper()}{m.group(3).upper()}", m.group(0))
    if m := _PLATE_KEYWORD.search(text):
        return Extraction(m.group(1).upper().replace("-", ""), m.group(0))
    return None


def _order(text: str, ctx: ExtractContext) -> Extraction | None:
    if m := _ORDER_SHAPED.search(text):
        return Extraction(m.group(1).upper(), m.group(0))
    m = _ORDER_KEYWORD.search(text)
    if m and any(ch.isdigit() for ch in m.group(1)) and len(m.group(1)) >= 3:
        return Extraction(m.group(1).upper(), m.group(0))
    if m and (spaced := _spaced_runs(text[m.start(1):])) and text[m.start(1):].startswith(spaced[0]):
        # "order gz 0603 771": the number written with spaces between its groups (the lookup compares it without)
        return Extraction(spaced[0].upper(), text[m.start():m.start(1) + len(spaced[0])])
    return None


def _lot(text: str, ctx: ExtractContext) -> Extraction | None:
    shaped = _LOT_SHAPED.search(text)
    m = _LOT_KEYWORD.search(text)
    # The word after "lot" / "停车场" is the code, unless it is a date ("停车场 2026-03-02")
    # or a lot-shaped code elsewhere in the message says which lot is meant.
    if m is not None:
        word = m.group(1)
        code_like = any(ch.isdigit() for ch in word) or word.isupper()
        dated = _DATE_LIKE.match(word) or re.match(r"[/.]\d", text[m.end(1):])
        if code_like and not dated and (shaped is None or _LOT_SHAPED.fullmatch(word.upper())):
            return Extraction(word.upper(), m.group(0))
    if shaped:
        return Extraction(shaped.group(1), shaped.group(0))
    return None


def _city(text: str, ctx: ExtractContext) -> Extraction | None:
    if m := _CITY_KEYWORD.search(text):
        return Extraction(m.group(1).upper(), m.group(0))
    if m := _CITY_IN.search(text):
        return Extraction(m.group(1), m.group(0))
    return None


# Leaving: a time said with one of these is the end of the stay, not its start.
_EXIT = re.compile(
    r"开走|离开|离场|出场|开出|驶离|走的|(?<=[点點分半刻])\s*(?:就|才|再)?(?:走|出(?![发差门去国]))|\bout\s+(?=(?:at|by|around)\b)|取车|提车|\bleft\b|\bdrove\s+(?:out|off|away)|\bexit(?:ed)?\b|"
    r"\bpick(?:ed|ing)?\s+(?:it|the\s+car)\s+up|\bleav(?:e|ing)\b(?!\s+(?:it|the\s+car|my\s+car|the\s+vehicle|there|here))|"
    r"\bcollect(?:ed|ing)?\s+(?:it|the\s+car|my\s+car)\b|"
    r"\bcame\s+out\b|(?<!\w)(?:уехал\w*|выехал\w*)(?!\w)|\bsal[ií]\b|\bme\s+fui\b|\bretir[eé]\b|"
    # coming back for the car ends the stay: "if I come back at 10", "I'll be back by 6", "十点回来取"
    r"\b(?:come|came|coming|get|got|getting|be|am|are)\s+back\b|(?<=\w['’]m)\s+back\b|(?<=[点點分半刻])\s*(?:就|才|再)?回来",
    re.IGNORECASE,
)


_BARE_HOUR = re.compile(r"\b(?:at|around|about)\s+(\d{1,2})(?:[:.](\d{2}))?\b(?![:.]?\d)", re.IGNORECASE)


# "park at 8 tonight and leave at 9 tomorrow morning": leaving, with the start said before it and the end after it,
# parts a range as "to" does
_LEAVING_AT = re.compile(r"\b(?:leav(?:e|ing)|left|exit(?:s|ed|ing)?|drive\s+out|drove\s+out|pick(?:ed|ing)?\s+(?:it|the\s+car)\s+up|"
                         r"collect(?:ed|ing)?\s+(?:it|the\s+car|my\s+car)|(?:go(?:ing)?|head(?:ing)?\s+out|get(?:ting)?\s+out|out|"
                         r"(?:come|coming|came|get|getting|got|be|'m|am|are)\s+back)"
                         r"(?=\s+(?:at|around|about|by)\b))\b", re.IGNORECASE)
# "今晚八点进场，明早九点出场", "晚上七点进去 第二天十点开走": coming in after the start's time, with leaving after the end's
_COMING_IN = re.compile(r"(?<=[点點分半刻])\s*(?:进场|入场|进去|进来|开进去?|停进去?|进|停(?!到))(?:的)?\s*[，,、;；]?\s*(?:然后|再)?")


def _leaving_between(text: str) -> list[re.Match[str]]:
    """Where a stay said by its coming and leaving parts its start from its end (as "to" does)."""
    english = [m for m in _LEAVING_AT.finditer(text) if says_clock(text[: m.start()]) and says_clock(text[m.end():])]
    chinese = [m for m in _COMING_IN.finditer(text) if _EXIT.search(text[m.end():]) and says_clock(text[m.end():])]
    return english + chinese


# The stay's start, end and range are read from one message by several extractors, each asking again
# whether it says leaving, "now" or a range: those readings are pure, so each is worked out once.
_MEMO_SIZE = 256


@lru_cache(maxsize=_MEMO_SIZE)
def _is_exit_only(text: str) -> bool:
    return bool(_EXIT.search(text)) and not _range_separators(text) and not _leaving_between(text)


# "now until midnight", "from now till 6pm", "现在停到晚上十二点": a stay that starts now
_NOW = re.compile(r"\b(?:right\s+)?now\b|现在|此刻|这会儿?|(?<!\w)сейчас(?!\w)|\bahora\b", re.IGNORECASE)


@lru_cache(maxsize=_MEMO_SIZE)
def _now_start(text: str, ctx: ExtractContext) -> ParsedTime | None:
    """The start of a range said as "now" (and no other time before the range's end): the current minute. So is
    the start of a stay said only by its end ("if I stay until 8pm", "停到晚上十二点") when no stay is talked about."""
    for sep in _range_separators(text):
        before = text[: sep.start()]
        end = parse_datetime(text[sep.end():], now=ctx.now, timezone=ctx.timezone)
        if end is None or end.precision != "minute":
            continue  # no time after it: not a range
        if parse_datetime(before, now=ctx.now, timezone=ctx.timezone) is not None:
            return None
        said = _NOW.search(before)
        if said or (ctx.entry is None and _UNTIL_ONLY.fullmatch(sep.group(0).strip())):
            now = ctx.now.astimezone(ZoneInfo(ctx.timezone)).replace(second=0, microsecond=0)
            return ParsedTime(now, "minute", said.group(0) if said else "")
        return None
    return None


def _at_time(text: str, ctx: ExtractContext) -> Extraction | None:
    if (now := _now_start(text, ctx)) is not None:
        return Extraction(now.value.isoformat(), now.raw)
    if _is_exit_only(text) or _end_only(text, ctx) is not None or _corrected_end(text, ctx) is not None:
        # "不对，我是下午5点就开走了", "sorry, until 2pm": the time is when the stay ended; the start moves
        # only to a day said before it ("and for the weekend, if I stay till 8pm")
        start = _moved_start(text, ctx) if not _is_exit_only(text) else None
        if start is None or start == ctx.entry:
            return None
        m = _END_ONLY.search(text)
        return Extraction(start.isoformat(), text[: m.start()].strip()[:40] if m else "")
    parsed = parse_datetime(_meant(text, text, ctx), now=ctx.now, timezone=ctx.timezone, anchor=_anchor(ctx),
                            corrects=_corrects(text, ctx))
    corrected = _corrected_start_hour(text, ctx) if ctx.entry is not None else None
    if corrected is not None and (parsed is None or 0 <= text.find(corrected.raw) < text.find(parsed.raw)):
        parsed = corrected  # "i meant from 3, same end time 5:45": the start the correction gives, not the end's clock
    part = _part_of_day(text, parsed)
    shift = (_day_shift(text) or week_shift(text)) if ctx.entry is not None else 0
    if shift and (parsed is None or parse_date(text, now=ctx.now, timezone=ctx.timezone) is None):
        # "第二天同一时间呢？", "and the day after?", "same time next week?": a day counted from the one talked about
        entry = ctx.entry.astimezone(ZoneInfo(ctx.timezone))
        clock = (parsed.value.timetz() if parsed is not None and parsed.precision == "minute"
                 else part[1].replace(tzinfo=entry.tzinfo) if part else entry.timetz())
        value = datetime.combine(entry.date() + timedelta(days=shift), clock)
        return Extraction(value.isoformat(), parsed.raw if parsed else text.strip()[:40])
    if (span := _range(text, ctx)) is not None and span[0].precision == "minute":
        # "from 7pm tonight till 10 tomorrow morning": the start is what is said before the range's end
        return Extraction(span[0].value.isoformat(), span[0].raw)
    local = ctx.now.astimezone(ZoneInfo(ctx.timezone))
    if part is not None and (parsed is None or parsed.precision == "day"):
        # "and at night?", "那晚上呢", "tonight", "overnight?", "on a weekday afternoon": that part of the day talked
        # about (or named; today when none is), at a time inside it
        if parsed is None and _says_it_again(text, ctx) and (held := _held_in_part(part[0], ctx)) is not None:
            # "yes, the afternoon" of a stay talked about from 3: that 3 in the afternoon, not the afternoon's default
            return None if held == ctx.entry else Extraction(held.isoformat(), part[0])
        on = (parsed.value.date() if parsed is not None else
              ctx.entry.astimezone(ZoneInfo(ctx.timezone)).date() if ctx.entry is not None else local.date())
        value = datetime.combine(on, part[1], tzinfo=ZoneInfo(ctx.timezone))
        return Extraction(value.isoformat(), " ".join(w for w in (parsed.raw if parsed else "", part[0]) if w))
    if parsed is None:
        return None
    value = parsed.value
    if ctx.entry is not None:  # a follow-up changes only what it names
        entry = ctx.entry.astimezone(value.tzinfo)
        if parsed.precision == "day":  # "and tomorrow?", "上周六呢": at the time already talked about; a whole day from midnight
            value = datetime.combine(value.date(), time(0, tzinfo=entry.tzinfo) if _WHOLE_DAY.search(text) else entry.timetz())
        elif parse_date(text, now=ctx.now, timezone=ctx.timezone) is None:  # "and 11 to 1pm?": on that day
            value = datetime.combine(entry.date(), value.timetz())
            if _corrects(text, ctx) or _CHANGE_TO.search(text):  # "改成四点" after 15:00 is 16:00, not 04:00
                value = _start_in_period(value, parsed.raw, entry, ctx.end)
    elif parsed.precision == "day" and names_day_of_week(parsed.raw) and not _WHOLE_DAY.search(text):
        # "周日停三个小时多少钱", "what about sunday?" (after a stay priced from now): with no stay talked about, a day of
        # the week is at the current time of day (as a stay asked about now is), not at midnight; a whole day
        # ("星期天全天多少钱") is that day from midnight
        value = datetime.combine(value.date(), local.timetz().replace(second=0, microsecond=0))
    return Extraction(value.isoformat(), parsed.raw)


# "make it 4", "改成四点": the time talked about changed by an instruction, not a new one asked about
_CHANGE_TO = re.compile(r"\b(?:make\s+it|change\s+it\s+to|move\s+it\s+to|instead)\b|改成|改到|换成|换到|(?<!\w)(?:поменяй|перенеси)(?!\w)"
                        r"|\bc[aá]mbi(?:alo|a)\b", re.IGNORECASE)
# "no, from 11", "actually I got there at 11": a bare hour a correction gives the start
_START_HOUR = re.compile(r"\b(?:from|since|starting(?:\s+at)?|at|around|about)\s+(\d{1,2})(?::(\d{2}))?\b"
                         r"(?![:.]?\d|\s*(?:%|percent|hours?|hrs?|h\b|minutes?|mins?|days?|people))", re.IGNORECASE)
# a zero-padded clock ("09:30") is a 24-hour time: it says its half of the day
_PADDED_CLOCK = re.compile(r"(?<!\d)0\d:\d{2}")


def _corrected_start_hour(text: str, ctx: ExtractContext) -> ParsedTime | None:
    """The start a correction gives by a bare hour ("no, from 11"), on the stay's day: no reader of whole messages
    takes "from 11" for a time, since outside a stay it may be anything."""
    if not _corrects(text, ctx) or (m := _START_HOUR.search(_meant(text, text, ctx))) is None or int(m.group(1)) > 23:
        return None
    entry = ctx.entry.astimezone(ZoneInfo(ctx.timezone))
    value = datetime.combine(entry.date(), time(int(m.group(1)), int(m.group(2) or 0) % 60), tzinfo=entry.tzinfo)
    return ParsedTime(value, "minute", m.group(0))


def _start_in_period(start: datetime, said: str, old_start: datetime, end: datetime | None) -> datetime:
    """A corrected start said by a bare hour ("不对，是从一点开始" after 10:00-14:00) is in the half of the day that
    puts it before the stay's end, nearest the start it corrects (13:00, not 01:00); one said with its period
    ("下午一点", "1am", "09:00") stays as said."""
    if start.hour >= 12 or names_period(said) or _PADDED_CLOCK.search(said):
        return start
    candidates = [start, start + timedelta(hours=12)]
    before_end = [c for c in candidates if end is None or c < end] or candidates
    return min(before_end, key=lambda c: (abs(c - old_start), c))


def _anchor(ctx: ExtractContext) -> date | None:
    """The day a follow-up talks about: a bare weekday or weekend in it counts from there."""
    return ctx.entry.astimezone(ZoneInfo(ctx.timezone)).date() if ctx.entry is not None else None


def _corrects(text: str, ctx: ExtractContext) -> bool:
    """Whether the message corrects the stay talked about ("不对，是周五"): a bare weekday in it is the one nearest
    the day corrected (the same week's), not the next one from it ("那周日呢")."""
    return ctx.entry is not None and says_correction(text)


def _meant(part: str, text: str, ctx: ExtractContext) -> str:
    """A part of a correction without the days it refuses ("not Saturday, Friday" means Friday); else the part."""
    return without_refused(part) if _corrects(text, ctx) else part


def _says_it_again(text: str, ctx: ExtractContext) -> bool:
    """Whether a message about the stay talked about corrects or restates it ("yes, the afternoon, actually…",
    "是下午，不是凌晨"), rather than asking about another part of the day ("and at night?")."""
    return ctx.entry is not None and (says_correction(text) or says_a_correction(text))


def _held_in_part(part: str, ctx: ExtractContext) -> datetime | None:
    """The start talked about, kept where it lies in the part of the day named ("yes, the afternoon" of 15:00), or
    a small hour moved twelve hours into it (03:00 said back, "是下午，不是凌晨": 15:00); None when neither is."""
    entry = ctx.entry.astimezone(ZoneInfo(ctx.timezone))
    if in_day_part(part, entry.timetz()):
        return entry
    moved = entry + timedelta(hours=12)
    return moved if entry.hour < 7 and in_day_part(part, moved.timetz()) else None


def _part_of_day(text: str, parsed: ParsedTime | None) -> tuple[str, time] | None:
    """A part of the day said without a clock time, where the stay goes ("and at night?"); an overnight stay
    starts in the evening. Not when the message asks the most a day costs ("白天最多收多少？" moves nothing)."""
    if (parsed is not None and parsed.precision == "minute") or asks_cap(text):
        return None
    if OVERNIGHT.search(text):
        return "overnight", OVERNIGHT_START
    return day_part(text)


_DAY_BEFORE = re.compile(r"the\s+day\s+before|前一天|头一天|накануне|el\s+d[ií]a\s+anterior", re.IGNORECASE)


def _day_shift(text: str) -> int:
    """+1 for "the next day" / 第二天, -1 for "the day before" / 前一天, said of the day already talked about."""
    if _range_separators(text):
        return 0  # "21:00 到第二天 7:30": the next day is the range's end
    if _NEXT_DAY.search(text) or re.search(r"the\s+day\s+after(?!\s+tomorrow)|на\s+следующий\s+день|al\s+d[ií]a\s+siguiente", text, re.IGNORECASE):
        return 1
    return -1 if _DAY_BEFORE.search(text) else 0


def _exit_time(text: str, ctx: ExtractContext) -> Extraction | None:
    """ "I left at 5pm", "下午5点开走的": the stay's end, on the entry's day when one is known."""
    if not _is_exit_only(text):
        return None
    entry, meant = ctx.entry, _meant(text, text, ctx)  # "不是一点，是两点走的": left at two, not one
    if entry is not None and parse_date(meant, now=ctx.now, timezone=ctx.timezone) is not None:
        # the end's own day word counts from today ("停到后天早上九点" said on Thursday is Saturday, whatever day
        # the stay starts), a weekday from the stay's day
        parsed = parse_datetime(meant, now=ctx.now, timezone=ctx.timezone, anchor=entry.astimezone(ZoneInfo(ctx.timezone)).date())
    else:
        parsed = parse_datetime(meant, now=entry or ctx.now, timezone=ctx.timezone)
    if parsed is not None and parsed.precision == "minute":
        value, raw = parsed.value, parsed.raw
    elif entry is not None and (bare := _BARE_HOUR.search(meant)):  # "I drove out at 5"
        value = entry.replace(hour=int(bare.group(1)) % 24, minute=int(bare.group(2) or 0) % 60, second=0, microsecond=0)
        raw = bare.group(0)
    else:
        return None
    if entry is not None:
        value = _end_after(entry, value, text)
        if parse_date(text, now=ctx.now, timezone=ctx.timezone) is None:
            value = _near_old_end(entry, value, ctx.end, text)
    return Extraction(value.isoformat(), raw)


def _near_old_end(start: datetime, end: datetime, old_end: datetime | None, said: str) -> datetime:
    """A new end said by its clock alone replaces the end talked about: of the times that clock shows after the
    start (each half day when no part of the day is said), the one nearest that old end. After an overnight stay
    to 08:00, "and if I come back at 10 instead" is 10:00 the next morning, not 22:00 the same evening."""
    if old_end is None:
        return end
    step = timedelta(hours=24 if names_period(said) else 12)
    candidates = [end + k * step for k in range(-4, 5) if end + k * step > start]
    return min(candidates, key=lambda c: (abs(c - old_end), c))


# A start written on a 24-hour clock ("19:00", "07:30"): its end is on the same clock
_TWENTY_FOUR_HOUR = re.compile(r"(?<!\d)(?:1[3-9]|2[0-3]|0\d)\s*[:.：]\s*\d{2}(?!\s*(?:am|pm|a\.m|p\.m))", re.IGNORECASE)


# Twelve said with the morning ("to 12 in the morning", "到上午十二点"): the end of the morning, noon
_MORNING_TWELVE = re.compile(r"(?:12|twelve|十二)[^,，.。]{0,12}?(?:morning|上午|早上|утра|de\s+la\s+ma[ñn]ana)", re.IGNORECASE)


def _end_after(start: datetime, end: datetime, said: str, *, start_said: str = "") -> datetime:
    """An end the text put on or before its start's time of day, moved after the start.

    Without a period of its own ("五点", "to 5"), an end within the half day after the start
    keeps the start's afternoon ("from 7pm til 8"); otherwise, or when the start was written on
    a 24-hour clock ("19:00 to 8:00"), it is the next day ("21:00 - 7:30").
    """
    if end > start or end.date() != start.date():
        return end
    if (end.hour, end.minute) == (0, 0) and 0 < start.hour < 12 and _MORNING_TWELVE.search(said):
        return end.replace(hour=12)  # "from 9 to 12 in the morning": the morning's twelve is noon, not midnight
    later = end + timedelta(hours=12)
    if (end.hour < 12 and not names_period(said) and not _TWENTY_FOUR_HOUR.search(start_said)
            and start < later < start + timedelta(hours=12)):
        return later
    return end + timedelta(days=1)


# "8:00 to 9:05", "从早上8点停到9点", "21:00 - 7:30 next day", "until 20:30", "7pm til 8am", "6pm thru 9am",
# "с 19:00 до 8:00", "de 19:00 a 8:00", "desde las 7 hasta las 9"
_RANGE_SEP = re.compile(
    r"(?:\s+(?:to|until|till|til|'til|’til|thru|through)\s+|\s*(?:-|–|—|~|～)\s*(?=\d)|停到|到|至|直到|"
    r"\s+до\s+(?=\d|[а-яё]+\s+(?:утра|вечера|дня|ночи))|\s+hasta\s+(?:las?\s+)?|\s+a\s+(?:las?\s+)?(?=\d))",
    re.IGNORECASE,
)
# "between 7pm and 8am", "между 7 и 9", "entre las 7 y las 9": "and" parts a range only after "between"
_BETWEEN = re.compile(r"\bbetween\b|(?<!\w)между(?!\w)|\bentre\b", re.IGNORECASE)
_BETWEEN_AND = re.compile(r"\s+(?:and|и|y)\s+(?:las?\s+)?(?=\d)", re.IGNORECASE)


def _range_separators(text: str) -> list[re.Match[str]]:
    """Where a stay said as a range parts its start from its end, in the order they are said."""
    found = list(_RANGE_SEP.finditer(text))
    if (opened := _BETWEEN.search(text)) and (joined := _BETWEEN_AND.search(text, opened.end())):
        found.append(joined)
    return sorted(found, key=lambda m: m.start())


_NEXT_DAY = re.compile(r"next\s+(?:day|morning)|the\s+following\s+day|第二天|次日|隔天|翌日|"
                       r"(?<!\w)следующ\w+\s+(?:дня|утра)(?!\w)|\bd[ií]a\s+siguiente\b", re.IGNORECASE)
_DURATION = re.compile(
    r"(?<![第前后頭头隔\d])(\d+(?:\.\d+)?|[一两二三四五六七八九十俩仨]+|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\b)"
    r"\s*-?\s*(?:个)?\s*(半|and\s+a\s+half\s+)?\s*"
    r"(hours?|hrs?|h(?![a-z])|小时|钟头|钟(?![头点])|minutes?|mins?|分钟|days?|天)(\s*半|\s+and\s+a\s+half)?",  # "3个钟": 3 hours
    re.IGNORECASE,
)




def _number_of(token: str) -> float:
    if token.lower() in NUMBER_WORDS:
        return float(NUMBER_WORDS[token.lower()])
    if re.fullmatch(r"\d+(?:\.\d+)?", token):
        return float(token)
    return float(zh_number(token))


_UNTIL_ONLY = re.compile(r"\b(?:until|till|til)\b|一直到|直到|停到", re.IGNORECASE)
# A stay talked about ends anew at "until", and at a bare 到 / 至 right before a time ("不对，到两点", "改成到下午三点",
# "到两点半"): without it "到两点" was no end, and its time was read as a new start at 02:00. Not after a verb that
# moves the stay ("改到三点", "推迟到三点", "提前到九点"), which says where it goes, not where it ends.
_END_ONLY = re.compile(
    _UNTIL_ONLY.pattern + r"|(?<![改换挪移推迟前后调约])[到至](?=\s*(?:[今明后]天|今晚|明早|明晚|第二天|次日)?\s*"
    r"(?:凌晨|早上|早晨|上午|中午|下午|傍晚|晚上|夜里)?\s*[\d零一二两三四五六七八九十])",
    re.IGNORECASE,
)


def _end_time(tail: str, on: datetime, timezone: str, today: datetime | None = None) -> ParsedTime | None:
    """The time a new end names: a clock ("2pm", "两点半"), or a bare hour ("till 2", "until 3 tomorrow"), which no
    reader of whole messages takes for a time; which half of the day it is in is for the stay to say (`_end_after`).
    A day word of its own counts from `today` when given ("停到后天早上九点"), a weekday from the stay's day."""
    if today is not None and parse_date(tail, now=today, timezone=timezone) is not None:
        end = parse_datetime(tail, now=today, timezone=timezone, anchor=on.astimezone(ZoneInfo(timezone)).date())
    else:
        end = parse_datetime(tail, now=on, timezone=timezone)
    if end is not None and end.precision == "minute":
        return end
    m = _END_HOUR.match(tail)
    if m is None or int(m.group(1)) > 23:
        return None
    day = end.value.date() if end is not None else on.astimezone(ZoneInfo(timezone)).date()
    clock = time(int(m.group(1)), int(m.group(2) or 0) % 60, tzinfo=ZoneInfo(timezone))
    return ParsedTime(datetime.combine(day, clock), "minute", m.group(0).strip())


def _end_only(text: str, ctx: ExtractContext) -> Extraction | None:
    """ "sorry, until 2pm", "不对，停到五点", "no, till 2", "到两点半": a new end for the stay talked about (no start said)."""
    start = _moved_start(text, ctx)
    m = _END_ONLY.search(text) if ctx.entry is not None else None
    if m is None or start is None:
        return None
    tail = text[m.end():]
    end = _end_time(tail, ctx.entry, ctx.timezone, today=ctx.now)
    if end is None:
        return None
    value = end.value
    if parse_date(tail, now=ctx.now, timezone=ctx.timezone) is None:  # on the stay's day
        value = datetime.combine(start.astimezone(value.tzinfo).date(), value.timetz())
    value = _end_after(start, value, tail)
    if parse_date(tail, now=ctx.now, timezone=ctx.timezone) is None and start == ctx.entry:
        value = _near_old_end(start, value, ctx.end, tail)
    return Extraction(value.isoformat(), end.raw)


# words that say a corrected time is the stay's start ("no, make it 10, that's when I get there")
_START_WORDS = re.compile(r"\b(?:from|start\w*|arriv\w*|get\s+there|got\s+there|get\s+in|got\s+in|enter\w*|drop\w*\s+(?:it|the\s+car)\s+off)\b|"
                          r"从|开始|进场|入场|到达|停进|进去", re.IGNORECASE)


def _corrected_end(text: str, ctx: ExtractContext) -> Extraction | None:
    """A correction that gives one clock and names neither end ("actually no, make it 7pm, my session runs late"
    after 14:30-18:00): the end it is nearer to, on the stay's day; never the start moved with the length kept."""
    if (ctx.entry is None or ctx.end is None or not (says_correction(text) or says_a_correction(text))
            or _range_separators(text) or _START_WORDS.search(text)):
        return None
    if parse_date(text, now=ctx.now, timezone=ctx.timezone) is not None:
        return None  # "no, make it Friday 7pm": the day moves too, for the readers of a new start
    parsed = parse_datetime(text, now=ctx.entry, timezone=ctx.timezone)
    if parsed is None or parsed.precision != "minute":
        return None
    entry, end = ctx.entry.astimezone(parsed.value.tzinfo), ctx.end.astimezone(parsed.value.tzinfo)
    said = datetime.combine(end.date(), parsed.value.timetz())  # the clock on the end's day, either half if it names none
    readings = [said, said + timedelta(hours=12)] if said.hour < 12 and not names_period(text) else [said]
    after = [r for r in readings if r > entry]
    if not after:
        return None  # before the start: a new start
    said = min(after, key=lambda r: abs((r - end).total_seconds()))
    if abs((said - end).total_seconds()) >= abs((said - entry).total_seconds()):
        return None  # nearer the start: a new start
    return Extraction(said.isoformat(), parsed.raw)


def _moved_start(text: str, ctx: ExtractContext) -> datetime | None:
    """Where the stay starts for a new end said alone: where it was, or on the day named before the end
    ("and for the weekend, if I stay till 8pm"), at the same time; None when a time of day is said before it."""
    m = _END_ONLY.search(text) if ctx.entry is not None else None
    if m is None or _now_start(text, ctx) is not None:
        return None
    before = parse_datetime(_meant(text[: m.start()], text, ctx), now=ctx.now, timezone=ctx.timezone, anchor=_anchor(ctx),
                            corrects=_corrects(text, ctx))
    if before is None:
        return ctx.entry
    if before.precision != "day":
        return None
    entry = ctx.entry.astimezone(before.value.tzinfo)
    return datetime.combine(before.value.date(), entry.timetz())


def _until(text: str, ctx: ExtractContext) -> Extraction | None:
    """The end of a stay: the time after "to / 到 / -" on the start's day, or a time said with leaving."""
    if exit_time := _exit_time(text, ctx) or _end_only(text, ctx) or _corrected_end(text, ctx):
        return exit_time
    if (span := _range(text, ctx)) is not None:
        return Extraction(span[1].isoformat(), span[2])
    return None


@lru_cache(maxsize=_MEMO_SIZE)
def _range(text: str, ctx: ExtractContext) -> tuple[ParsedTime, datetime, str] | None:
    """A stay said as a range: its start from the words before "to / 到 / -", its end from the words after, each
    on its own day ("from 7pm tonight till 10 tomorrow morning", "今晚八点停到明早九点"); a day said only after
    the range's end is the end's, and the start is the last time of its clock before that end ("from 7pm till
    10 tomorrow morning" starts tonight, "2pm to 4pm tomorrow" tomorrow). (start, end, the end's words)"""
    now = _now_start(text, ctx)
    for sep in sorted([*_range_separators(text), *_leaving_between(text)], key=lambda m: m.start()):
        head, tail = text[: sep.start()], text[sep.end():]
        start = now or parse_datetime(_meant(head, text, ctx), now=ctx.now, timezone=ctx.timezone, anchor=_anchor(ctx),
                                      message=text, corrects=_corrects(text, ctx))
        if (start is None or start.precision == "day") and now is None and (bare := _RANGE_START_HOUR.search(head)) \
                and int(bare.group(1)) <= 23:
            # "this sunday from 10 till 1:30": the start is the bare hour said before the end, on its day
            day = start.value.date() if start is not None else ctx.now.astimezone(ZoneInfo(ctx.timezone)).date()
            clock = time(int(bare.group(1)), 0, tzinfo=ZoneInfo(ctx.timezone))
            start = ParsedTime(datetime.combine(day, clock), "minute", bare.group(0).strip())
        if start is None:
            continue
        if ctx.entry is not None and now is None and parse_date(text, now=ctx.now, timezone=ctx.timezone) is None:
            # "and 11 to 1pm?": the range is on the day already talked about
            day = ctx.entry.astimezone(start.value.tzinfo).date()
            start = replace(start, value=datetime.combine(day, start.value.timetz()))
        # "until 9:59: which version" - a colon after the time is punctuation, not seconds
        tail = re.sub(r"(\d):(?=\s|$)", r"\1 ", tail)
        # the end's own day word counts from today ("明早" is tomorrow), a weekday from the start's day; a bare time
        # is on the start's day
        own_day = parse_date(tail, now=ctx.now, timezone=ctx.timezone, anchor=start.value.date())
        end = (parse_datetime(tail, now=ctx.now, timezone=ctx.timezone, anchor=start.value.date()) if own_day is not None
               else parse_datetime(tail, now=start.value, timezone=ctx.timezone))
        if end is None and start.precision == "minute":
            end = _end_time(tail, start.value, ctx.timezone)  # "from 7pm till 8": a bare hour after a clock time
        if end is None and _NOW.fullmatch(tail.strip(" ，,。.!?？！")) and ctx.now > start.value:
            end = ParsedTime(ctx.now.astimezone(start.value.tzinfo).replace(second=0, microsecond=0), "minute", tail)  # "停到现在"
        if end is None:
            continue
        if end.precision == "day" and (clock := _end_clock(tail)) is not None:
            end = ParsedTime(datetime.combine(end.value.date(), clock, tzinfo=end.value.tzinfo), "minute", end.raw)
        if (end.precision == "minute" and start.precision == "minute" and start.value.hour >= 12 and end.value.hour < 12
                and names_period(head) and not _TWENTY_FOUR_HOUR.search(head) and not _TWENTY_FOUR_HOUR.search(tail)
                and not names_period(tail) and day_part(tail) is None and not _NEXT_DAY.search(tail)
                and parse_date(head, now=ctx.now, timezone=ctx.timezone) is None
                and (end.value.hour + 12, end.value.minute) > (start.value.hour, start.value.minute)):
            # "from 3pm to 6:15 tomorrow": a range whose day is said after it, its end naming no half of the day,
            # ends in the start's afternoon ("from 8 this evening until 9 tomorrow" names the start's day: overnight)
            end = replace(end, value=end.value + timedelta(hours=12))
        value = end.value
        if (own_day is not None and now is None and end.precision == "minute" and start.precision == "minute"
                and parse_date(head, now=ctx.now, timezone=ctx.timezone) is None):
            moved = datetime.combine(value.date(), start.value.timetz())
            start = replace(start, value=moved if moved < value else moved - timedelta(days=1))
        later = start.value + timedelta(hours=12)
        if (start.precision == "minute" and start.value.hour < 12 and not names_period(head) and says_period(tail)
                and later.date() == start.value.date() and later < value):
            start = replace(start, value=later)  # "from 7 to 9 tonight": the start takes the end's half of the day
        if _NEXT_DAY.search(tail) and value.date() == start.value.date():
            value = value + timedelta(days=1)
        else:
            value = _end_after(start.value, value, tail, start_said=start.raw)  # "下午两点到五点" keeps the afternoon
        return start, value, tail.strip()[:40]
    return None


# "from 10 till 1:30": a bare hour that starts a range
_RANGE_START_HOUR = re.compile(r"(?:\bfrom|\bsince|\bdesde(?:\s+las)?|\bde(?:\s+las)?|(?<!\w)с|从)\s*(\d{1,2})\s*(?:点|點)?\s*$",
                               re.IGNORECASE)


# "till 9 tomorrow": a bare hour at the start of a range's end, before its day word
_END_HOUR = re.compile(r"^\s*(?:at\s+|around\s+|about\s+)?(\d{1,2})(?::(\d{2}))?(?!\s*(?:hours?|hrs?|h\b|minutes?|mins?|days?|%|[:.]\d))\b",
                       re.IGNORECASE)


def _end_clock(tail: str) -> time | None:
    """The time of day of a range's end said by a day and a bare hour or a part of the day ("till 9 tomorrow",
    "tonight till tomorrow morning", "周六晚上到周日早上"): the hour (in the part of the day said), or the part's time."""
    part = day_part(tail)
    if (m := _END_HOUR.match(tail)) and int(m.group(1)) <= 23:
        hour = int(m.group(1))
        if part is not None and part[1].hour >= 12 and hour < 12:
            hour += 12
        return time(hour, int(m.group(2) or 0) % 60)
    return part[1] if part is not None else None


_WHOLE_DAY = re.compile(r"\b(?:(?:a|one|the)\s+)?(?:whole|full|entire)\s+day\b|\ball\s+day(?:\s+long)?\b|一整天|整整一天|停一天|全天|(?<!白)整天|全日|"
                        r"(?<!\w)(?:целый|весь)\s+день(?!\w)|\btodo\s+el\s+d[ií]a\b|\bun\s+d[ií]a\s+(?:entero|completo)\b", re.IGNORECASE)
_WORDED_DURATIONS = (
    (_WHOLE_DAY, 1440),
    (OVERNIGHT, OVERNIGHT_MINUTES),
    (re.compile(r"\b(?:an|one)\s+hour\s+and\s+a\s+half\b", re.IGNORECASE), 90),
    (re.compile(r"个把(?:小时|钟头|钟)"), 60),  # "about an hour": said back (certainty's rough durations)
    (re.compile(r"\bhalf\s+an\s+hour\b|\b(?:a\s+)?half[\s-]+hour\b|(?<![\d一两二三四五六七八九十个])半(?:个)?小时|"
                r"(?<!\w)полчаса(?!\w)|\bmedia\s+hora\b", re.IGNORECASE), 30),
    (re.compile(r"\b(?:an|one)\s+hour\b", re.IGNORECASE), 60),
    # said roughly: read, then judged by certainty (a couple is said back; a few, half a day, 两三个 are asked)
    (re.compile(r"\b(?:a\s+)?couple(?:\s+of)?\s+(?:hours?|hrs?)\b", re.IGNORECASE), 120),
    (re.compile(r"\b(?:a\s+)?few\s+(?:hours?|hrs?)\b", re.IGNORECASE), 180),
    (re.compile(r"\bhalf\s+a\s+day\b|(?<![一两二三四五六七八九十\d])半天", re.IGNORECASE), 360),
)
# "两三个小时", "三四个钟头": two numbers said as one, the smaller read (and asked which)
_TWO_NUMERALS_DURATION = re.compile(r"([一两二三四五六七八九])[一二三四五六七八九十]\s*个?\s*(?:小时|钟头)")


def _duration(text: str, ctx: ExtractContext) -> Extraction | None:
    """A stay's length: "3 hours", "停3小时", "两个半小时", "90 minutes" -> minutes."""
    for pattern, minutes in _WORDED_DURATIONS:
        if worded := pattern.search(text):
            return Extraction(str(minutes), worded.group(0))
    if two := _TWO_NUMERALS_DURATION.search(text):
        return Extraction(str(int(_number_of(two.group(1)) * 60)), two.group(0))
    m = _DURATION.search(text)
    if not m:
        return None
    amount = _number_of(m.group(1)) + (0.5 if m.group(2) or m.group(4) else 0)
    unit = m.group(3).lower()
    factor = 1 if unit.startswith(("min", "分")) else 1440 if unit.startswith(("day", "天")) else 60
    minutes = int(round(amount * factor))
    if minutes == 1440 and asks_cap(text):
        return None  # "一天最多收多少", "what's the max for one day": the cap's period, no stay
    return Extraction(str(minutes), m.group(0)) if minutes > 0 else None


def _date(text: str, ctx: ExtractContext) -> Extraction | None:
    # a bare weekday counts from the day talked about ("can we do Wednesday instead?" after Tuesday 10 March is the
    # 11th, not today), as the stay's readers do
    anchor = _anchor(ctx)
    said = parse_date(text, now=ctx.now, timezone=ctx.timezone, anchor=anchor)
    if said is not None and anchor is not None and (_corrects(text, ctx) or _CHANGE_TO.search(text)):
        # "make it Thursday instead": the Thursday nearest the day it replaces
        moment = parse_datetime(text, now=ctx.now, timezone=ctx.timezone, anchor=anchor, corrects=True)
        parsed = moment.value.date() if moment is not None else None
    else:
        parsed = said
    return Extraction(parsed.isoformat(), parsed.isoformat()) if parsed else None


def _number(text: str, ctx: ExtractContext) -> Extraction | None:
    m = _NUMBER.search(text)
    return Extraction(m.group(0).replace(",", ".").lstrip("+"), m.group(0)) if m else None


def _email(text: str, ctx: ExtractContext) -> Extraction | None:
    m = _EMAIL.search(text)
    return Extraction(m.group(0).lower(), m.group(0)) if m else None


def _text(text: str, ctx: ExtractContext) -> Extraction | None:
    # Free text only fills a slot through explicit patterns or a form answer, never by itself.
    return None


# The stay's readers of a text whose time words are already plain (the times recognizer's)
PLAIN_STAY_READERS: dict[str, Extractor] = {"at_time": _at_time, "until_time": _until, "duration_minutes": _duration, "date": _date}


def _plain(extract: Extractor) -> Extractor:
    """A reader of the stay's times that sees the time words made plain ("from half past two till 6" reads 2:30),
    as the times recognizer does."""
    def read(text: str, ctx: ExtractContext) -> Extraction | None:
        return extract(plain_time_words(text), ctx)
    read.__doc__ = extract.__doc__
    return read


EXTRACTORS: dict[str, Extractor] = {
    "city_code": _city,
    "lot_code": _lot,
    "plate_no": _plate,
    "order_no": _order,
    "at_time": _plain(_at_time),
    "until_time": _plain(_until),
    "duration_minutes": _plain(_duration),
    "date": _plain(_date),
    "number": _number,
    "email": _email,
    "text": _text,
}


def _alias(text: str, aliases: Mapping[str, str]) -> Extraction | None:
    # Longest alias first so "Shanghai Pudong" beats "Shanghai".
    for surface in sorted(aliases, key=len, reverse=True):
        # Word boundaries only make sense for Latin-script aliases ("上海SH" must still match 上海).
        before = r"(?<![A-Za-z])" if surface[:1].isascii() else ""
        after = r"(?![A-Za-z])" if surface[-1:].isascii() else ""
        if compile_pattern(before + re.escape(surface) + after).search(text):
            return Extraction(aliases[surface], surface)
    return None


def extract_slot(text: str, spec: SlotSpec, ctx: ExtractContext) -> Extraction | None:
    """One slot's value in text: spec patterns first, then aliases, then the extractor."""
    if spec.patterns and not spec.ignore_case:  # "[A-Z][a-z]+" for a name: "for my" is none
        match = _earliest_match(text, spec.patterns, ctx.language, flags=0)
        if match is not None:
            value = (match.group(1) if match.groups() else match.group(0)).strip()
            return Extraction(spec.aliases.get(value, value), match.group(0))
    elif spec.patterns and (hit := first_match(text, spec.patterns, ctx.language)):
        match = hit[2]
        if spec.extractor == "text":  # free text: what the message says first, at its longest
            match = _earliest_match(text, spec.patterns, ctx.language) or match
        value = (match.group(1) if match.groups() else match.group(0)).strip()
        return Extraction(spec.aliases.get(value, value), match.group(0))
    if spec.aliases and (found := _alias(text, spec.aliases)):
        return found
    if spec.patterns:  # the plan's patterns replace the generic reader: a stray number is no head count
        return None
    extractor = EXTRACTORS.get(spec.extractor)
    return extractor(text, ctx) if extractor else None


def _earliest_match(text: str, patterns: Mapping[str, Iterable[str]], language: str,
                    flags: int | None = None) -> re.Match[str] | None:
    """Of every pattern's match, the one that starts first (the longest of those): "must be self-hosted, done
    by end of Q1" is all constraints, not only the deadline a later-listed pattern found first. `flags`: the
    plan's own (0: case-sensitive), instead of the engine's case-insensitive compilation."""
    matches = [m for _, pattern in iter_patterns(patterns, language)
               if (m := (compile_pattern(pattern) if flags is None else re.compile(pattern, flags)).search(text))]
    return min(matches, key=lambda m: (m.start(), -len(m.group(0))), default=None)


def extract_slots(
    text: str, specs: Iterable[SlotSpec], ctx: ExtractContext
) -> dict[str, Extraction]:
    """All declared slots found in text."""
    # "9 to 5" read as a day's hours, "5ish" as 5 (its hedge is still read from the message); a free text keeps
    # the words as said ("15 to 20k")
    timed = shared_period(ROUGH_HOUR.sub(lambda m: " " * len(m.group(0)), text))  # spaces keep every word where it was
    stay = without_rule_questions(timed, ctx.language)
    found = {}
    specs = list(specs)
    for spec in specs:
        said = text if spec.extractor == "text" else stay if spec.extractor in _STAY_TIMES else timed
        if extraction := extract_slot(said, spec, ctx):
            found[spec.name] = extraction
    for spec in specs:  # one span fills one slot: "VC-10234" is a reference, not also 10234 guests
        own = found.get(spec.name)
        if own is not None and spec.extractor == "number" and any(
                other != spec.name and own.raw and own.raw in x.raw and own.raw != x.raw and text.count(own.raw) == 1
                for other, x in found.items()):
            del found[spec.name]
    free = [s.name for s in specs if s.extractor == "text" and s.name in found]
    for name in free:  # "the goal is X, users are Y": the goal stops where the users begin
        found[name] = _own_text(found[name], [found[o].raw for o in free if o != name])
    return found


_STAY_TIMES = frozenset({"at_time", "until_time", "duration_minutes", "date"})
_SENTENCES = re.compile(r"[^?？!！。；;]+[?？!！。；;]*")
# a question, by its mark or by how it opens: "does the cap reset at midnight", "会重新算吗", "¿se reinicia…"
_ASKS = re.compile(r"[?？¿]|[吗么呢]\W*$|几点|什么时候|^\W*(?:does|do|is|are|will|would|when|what\s+time)\b|(?<!\w)ли(?!\w)", re.IGNORECASE)


def without_rule_questions(text: str, language: str) -> str:
    """The message with its questions about when the rule changes blanked: in "does the 60 cap reset at midnight?"
    midnight is the rule's, not the stay's; an example after them ("eg friday 8pm to saturday 8am", "比如明晚十点
    停到后天早上八点") is a stay and stays. Spaces keep every word where it was."""
    languages = dict.fromkeys((language, detect_language(text)))
    changes = [words_of(lang, "rule_questions", "changes") for lang in languages]
    examples = [words_of(lang, "rule_questions", "examples") for lang in languages]
    for sentence in _SENTENCES.finditer(text):
        words = sentence.group(0)
        if not any(p.search(words) for p in changes):
            continue
        example = min((m for p in examples if (m := p.search(words))), key=lambda m: m.start(), default=None)
        if example is not None:
            end = sentence.start() + example.end()
        elif _ASKS.search(words):
            end = sentence.end()
        else:
            continue
        text = text[:sentence.start()] + " " * (end - sentence.start()) + text[end:]
    return text


# The part of a free-text value a person negates or sets aside: "nurses, not doctors", "护士，不是医生".
_NEGATED_TAIL = re.compile(
    r"(?:\s*[,;，；、]\s*(?:but\s+|and\s+)?not\s+(?!later|earlier|more|less|over|above|below|before|after|exceed)|\s+(?:rather\s+than|instead\s+of|but\s+not)\s+"
    r"|\s*[,，；、]\s*(?:而)?(?:不是|并非)|而(?:不是|非)).*$",
    re.IGNORECASE,
)
_TRAILING = re.compile(r"[\s,;:，；：、。.]*(?:\b(?:and|also|plus|the|our|my|a|an)\b|和|以及|并且|还有)?[\s,;:，；：、。.]*$", re.IGNORECASE)


def _own_text(found: Extraction, others: Iterable[str]) -> Extraction:
    """A free-text value without what another slot's words took, nor a negated tail."""
    value, raw = found.value, found.raw
    for other in others:
        at = value.find(other) if other else -1
        if at > 0:
            tail = value[at:]
            value, raw = value[:at], raw[: -len(tail)] if raw.endswith(tail) else raw
    value = _NEGATED_TAIL.sub("", value)
    value = _TRAILING.sub("", value).strip()
    return Extraction(value, raw.strip(" ,;:，；：、")) if value else found


# "9 to 11am", "2-4pm", "11 to 1pm": the start's hour takes the end's period (or, when it is the
# later number, the other half of the day), so the range is read as the person means it.
_SHARED_PERIOD = re.compile(
    r"(?<![\d:])(\d{1,2})(:\d{2})?(\s*(?:to|until|till|til|thru|through|-|–|—)\s*)(\d{1,2})(:\d{2})?\s*(am|pm|a\.m\.|p\.m\.)",
    re.IGNORECASE,
)


def shared_period(text: str) -> str:
    """The text with a range's bare start hour given the period its end names."""
    def fill(m: re.Match[str]) -> str:
        start, end, period = int(m.group(1)), int(m.group(4)), m.group(6).lower().replace(".", "")
        if start > 12 or end > 12:
            return m.group(0)
        if start > end and 12 not in (start, end):
            period = "am" if period == "pm" else "pm"  # "11 to 1pm" starts before noon
        return f"{m.group(1)}{m.group(2) or ''}{period}{m.group(3)}{m.group(4)}{m.group(5) or ''}{m.group(6)}"

    text = _BETWEEN_HOURS.sub(r"\1 to ", text)
    return _BARE_RANGE.sub(_clock_range, _SHARED_PERIOD.sub(fill, text))


# "between 2 and 4pm", "between 9 and 11": read as "2 to 4pm", "9 to 11"
_BETWEEN_HOURS = re.compile(r"\b(between\s+\d{1,2}(?::\d{2})?(?:\s*(?:am|pm))?)\s+and\s+(?=\d)", re.IGNORECASE)


# "9 to 5", "9 to 11:30", "from 8 till 10": a range of bare hours is read as a day's hours
# (7 to 11 in the morning, 12 noon, 1 to 6 in the afternoon; an end before its start is later
# in the day); with a 24-hour number ("8 to 20") both are 24-hour times.
_BARE_RANGE = re.compile(
    r"(?<![\d:.\-/])(\d{1,2})(?::(\d{2}))?(\s+(?:to|until|till|til|thru|through)\s+)(\d{1,2})(?::(\d{2}))?"
    r"(?![\d:]|[^\W\d_]|\s*(?:a\.?m|p\.?m|h\b|hours?|hrs?|mins?|minutes?|days?|weeks?|%|grand|thousand|million|dollars|bucks))",
    re.IGNORECASE,
)


def _clock_range(m: re.Match[str]) -> str:
    start, end = int(m.group(1)), int(m.group(4))
    if start > 23 or end > 24:
        return m.group(0)
    if start <= 12 and end <= 12:
        start = start + 12 if 1 <= start <= 6 else start
        end = end + 12 if end < 12 and end + 12 > start and (end < start or start >= 12) else end
    return f"{start:02d}:{m.group(2) or '00'}{m.group(3)}{end % 24:02d}:{m.group(5) or '00'}"


def resolve_reference(text: str, candidates: Iterable[str]) -> str | None:
    """Map 'this order' / '第一笔' / 'the last one' onto a candidate value, when unambiguous."""
    options = list(candidates)
    if not options:
        return None
    for pattern, index in _ORDINALS:
        if pattern.search(text) and -len(options) <= index < len(options):
            return options[index]
    if len(options) == 1 and _REFERENCE.search(text):
        return options[0]
    return None


# "the one at Chengdu East", "the Kuanzhai one", "成都东站那笔", "宽窄巷子的订单": one of the listed items, pointed at
# by what the list said of it (its lot, its city), not by its place in the list
_LISTED_ITEM = re.compile(
    r"\bones?\b(?!\s*(?:hours?|hrs?|h\b|days?|nights?|minutes?|mins?|weeks?|more|of\b|or\b|-))"
    r"|\b(?:order|orders|bill|bills|ticket|tickets|transaction)\b"
    r"|笔|订单|[这那哪上]单|单子|那次|这次|记录|заказ\w*|\bpedido\b|\borden\b",
    re.IGNORECASE,
)


def points_at_listed_item(text: str) -> bool:
    """Whether the message speaks of an item (an order, "the one ...") rather than of a place itself."""
    return bool(_LISTED_ITEM.search(text))


# A listed item's detail holding the amounts the list showed of it ("12.00 5.00 7.00"): one of them said fits
AMOUNTS = "amounts"


def listed_by_details(
    candidates: Iterable[str], details: Mapping[str, Mapping[str, str]], named: Mapping[str, str | Iterable[str]]
) -> tuple[str, ...]:
    """The listed candidates whose details agree with every value the message named (of the kinds the
    list describes; a name that fits several values, such as one lot code in two cities, agrees with
    any of them; an amount fits an item that showed it); none when the message named none of those
    kinds. The list's order is kept."""
    options = list(candidates)
    kinds = {k for c in options for k in details.get(c, {})}
    said = {k: {v.casefold()} if isinstance(v, str) else {str(x).casefold() for x in v}
            for k, v in named.items() if k in kinds and v}
    if not said:
        return ()

    def agrees(candidate: str, kind: str, values: set[str]) -> bool:
        held = str(details.get(candidate, {}).get(kind, "")).casefold()
        return bool(values & set(held.split())) if kind == AMOUNTS else held in values

    return tuple(c for c in options if all(agrees(c, k, values) for k, values in said.items()))


# -- memory -------------------------------------------------------------------------------
_REMEMBERED = 3  # earlier values a slot keeps ("the other car park" is the one before)
def merge_slots(
    memory: Mapping[str, SlotValue], found: Mapping[str, Extraction], turn: int
) -> tuple[FrozenDict, tuple[str, ...]]:
    """New memory with this turn's values; returns it and the names that changed."""
    merged = dict(memory)
    changed = []
    for name, extraction in found.items():
        previous = memory.get(name)
        if (
            previous is not None
            and previous.value == extraction.value
            and previous.status != INVALID
            and not previous.learned
        ):
            continue  # same value again: keep its original turn and validation (one only learned is now said)
        earlier = () if previous is None else tuple(dict.fromkeys(
            v for v in (previous.value, *previous.previous) if v != extraction.value))[:_REMEMBERED]
        merged[name] = SlotValue(
            name=name, value=extraction.value, source_turn=turn, raw=extraction.raw, previous=earlier
        )
        changed.append(name)
    return FrozenDict(merged), tuple(changed)


def learn_slots(
    memory: Mapping[str, SlotValue], values: Mapping[str, str | None], *, turn: int, tool: str, record: str | None = None
) -> tuple[FrozenDict, tuple[str, ...]]:
    """Memory with the values a tool's result established (the plate, lot and city of the order just verified):
    each becomes the slot's value, valid, with the tool and the record it read as its source; the value it
    replaces stays as the one before. A slot that already holds the value keeps where it first came from."""
    merged = dict(memory)
    changed = []
    for name, value in values.items():
        if not value:
            continue
        previous = memory.get(name)
        if previous is not None and previous.value.casefold() == str(value).casefold() and previous.status == VALID:
            continue
        earlier = () if previous is None else tuple(dict.fromkeys(
            v for v in (previous.value, *previous.previous) if v != value))[:_REMEMBERED]
        merged[name] = SlotValue(
            name=name, value=str(value), source_turn=turn, status=VALID, validated_by="tool", validated_turn=turn,
            previous=earlier, source=TOOL, tool=tool, record=record,
        )
        changed.append(name)
    return FrozenDict(merged), tuple(changed)


def call_lookup(fn: Lookup, value: str, known: Mapping[str, str]) -> Any:
    """A lookup's answer for a value: True / False / the value as recorded; None when it could not check."""
    try:
        params = [
            p
            for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        return fn(value, known) if len(params) >= 2 else fn(value)
    except (TypeError, ValueError):
        raise
    except Exception:  # noqa: BLE001 - a failing lookup means "could not check", not a crash
        return None


# Any token with a digit may be an identifier: "7734412", "P2026-000871", "粤B·D12345" are looked up.
_ID_TOKEN = re.compile(
    r"(?<![A-Za-z0-9\-_·./])((?:[\u4e00-\u9fff](?=[A-Za-z]))?[A-Za-z0-9][A-Za-z0-9\-_·./]*)(?![A-Za-z0-9\-_·./])"
)
MAX_ID_CANDIDATES = 8
# short words that come before a number and are no part of it ("is 7734412", "at 14:00")
_SHORT_WORDS = frozenset(["a", "an", "at", "by", "in", "is", "it", "no", "of", "on", "or", "to", "my", "me", "we", "us", "be", "do", "so", "up", "as", "if", "vs", "id", "nr", "no.", "ok", "and", "are", "for", "the", "was", "its", "not", "from"])


# A group of an identifier written with spaces between its groups ("gz 0603 771", "abc 1234"): letters
# and digits, a word of letters only when it is short and no common word.
_GROUP = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-_./]{0,11}")
_MAX_GROUPS = 4


# words of up to four letters that are no group of an identifier ("pay 0511 318 now")
_NOT_GROUPS = _SHORT_WORDS | frozenset(["now", "pay", "paid", "fee", "fees", "lot", "car", "yes", "but", "how", "why", "who", "had", "has",
                                        "did", "can", "all", "any", "one", "two", "per", "day", "min", "mins", "hrs", "hour", "am",
                                        "pm", "yuan", "rmb", "cny", "plz", "pls", "thx", "what", "was", "were", "that", "this",
                                        "with", "till", "then", "than", "just", "ok", "okay", "hi", "hey", "i", "you", "your", "our",
                                        # "does b88888 owe anything?" read "DOESB88888" as the plate (a walk)
                                        "does", "owe", "owes", "have", "got", "get", "need", "want", "much", "many", "when",
                                        "where", "also", "whats", "hmm", "um", "uh", "oh", "ah", "well", "tell", "show",
                                        "give", "find", "look", "into", "some", "her", "his", "him", "she", "they",
                                        "them", "plate", "cars", "auto", "van", "suv", "bike"])


def _groupable(token: str) -> bool:
    return bool(_GROUP.fullmatch(token)) and (any(ch.isdigit() for ch in token) or (
        len(token) <= 4 and token.isalpha() and token.lower() not in _NOT_GROUPS))


def _spaced_runs(text: str) -> list[str]:
    """Identifiers written with single spaces between their groups, as said, longest first at each start
    ("gz 0603 771", then "gz 0603", then "0603 771"); each has a digit. Lookups compare them without the spaces."""
    runs: list[list[str]] = []
    current: list[str] = []
    last_end = -1
    for m in _ID_TOKEN.finditer(text):
        token = m.group(1).rstrip("-·_./")
        if "\u4e00" <= token[:1] <= "\u9fff":  # "订单gz 0603 771": the word before is no part of it ("苏E" is a plate's start)
            token = token[1:] if len(token) > 2 else ""
            runs.append(current)
            current = []
        if not _groupable(token):
            runs.append(current)
            current, last_end = [], -1
            continue
        if current and (text[last_end:m.start()] != " " or (token.isalpha() and any(ch.isdigit() for ch in current[-1]))):
            runs.append(current)  # not one space apart, or a word after the digits ("5r6t7 owe")
            current = []
        current.append(token)
        last_end = m.end(1) - (len(m.group(1)) - len(m.group(1).rstrip("-·_./")))
    runs.append(current)
    found = []
    for run in runs:
        for i in range(len(run)):
            for j in range(min(len(run), i + _MAX_GROUPS), i + 1, -1):
                piece = " ".join(run[i:j])
                if any(ch.isdigit() for ch in piece) and len(piece.replace(" ", "")) >= 4:
                    found.append(piece)
    return found


def identifier_candidates(text: str, taken: Iterable[str] = ()) -> list[str]:
    """Tokens that could be an identifier of any shape, in order, without the ones already used (nor tokens
    inside words already read as something else: the date of "on 2026-03-03 at 15:00" is no order number): an
    identifier written with spaces between its groups before its groups alone."""
    used = {t.upper() for t in taken}
    read = _spans_of(text, taken)
    spaced = _spaced_runs(text)
    found = []
    for m in _ID_TOKEN.finditer(text):
        token = m.group(1).strip("-·_./")
        bare = token[1:] if "\u4e00" <= token[:1] <= "\u9fff" else token
        for joined in [r for r in spaced if r.split(" ", 1)[0] == bare]:
            at = text.find(joined, m.start(1))
            groups = [(at + g.start(), at + g.end()) for g in re.finditer(r"\S+", joined)] if at >= 0 else []
            if joined.upper() not in used and joined not in found and not all(_inside(g, read) for g in groups):
                found.append(joined)  # "gz" read as a city: "gz 0603 771" may still be an order
        spaced = [r for r in spaced if r not in found]
        if _inside(m.span(1), read):
            continue  # ... and "gz" alone is not
        # "NO.7781-B" may be the number itself or "No." before it: both are tried, the whole first
        for candidate in dict.fromkeys((token, re.split(r"[./]", token)[-1])):
            if any(ch.isdigit() for ch in candidate) and 3 <= len(candidate) <= 40 and candidate.upper() not in used and candidate not in found:
                found.append(candidate)
    return found[:MAX_ID_CANDIDATES]


def _inside(span: tuple[int, int], spans: list[tuple[int, int]]) -> bool:
    return any(start <= span[0] and span[1] <= end for start, end in spans)


def _spans_of(text: str, words: Iterable[str]) -> list[tuple[int, int]]:
    """Where the given words, and each of their space-separated parts, occur in the text, in any case (a
    time's words may be given as read, "2026-03-03  15:00" for "on 2026-03-03 at 15:00")."""
    pieces = {p for w in words for p in (w, *w.split()) if len(p) > 1}
    return [m.span() for piece in pieces for m in re.finditer(re.escape(piece), text, re.IGNORECASE)]


def lookup_identifier(lookup: Lookup, tokens: Iterable[str], known: Mapping[str, str]) -> tuple[str, str] | None:
    """The first token the domain knows, as (canonical value, token): identifiers are resolved, not pattern-matched."""
    for token in tokens:
        result = call_lookup(lookup, token, known)
        if result is True:
            return token, token
        if isinstance(result, str) and result:
            return result, token
    return None


def validate_slots(
    memory: Mapping[str, SlotValue],
    names: Iterable[str],
    lookups: Mapping[str, Lookup] | None,
    turn: int,
) -> FrozenDict:
    """Validate the named (new) slots: by lookup when one is given, else by format."""
    lookups = lookups or {}
    updated = dict(memory)
    for name in names:
        slot = updated.get(name)
        if slot is None or slot.status == VALID:
            continue
        known = {k: v.value for k, v in updated.items() if k != name}
        if name not in lookups:
            updated[name] = replace(slot, status=VALID, validated_by="format", validated_turn=turn)
            continue
        result = call_lookup(lookups[name], slot.value, known)
        if result is True:
            updated[name] = replace(slot, status=VALID, validated_by="lookup", validated_turn=turn)
        elif result is False:
            updated[name] = replace(
                slot, status=INVALID, validated_by="lookup", validated_turn=turn
            )
        elif isinstance(result, str) and result:
            updated[name] = replace(
                slot, value=result, status=VALID, validated_by="lookup", validated_turn=turn
            )
        else:
            updated[name] = replace(slot, status=UNVERIFIED)
    return FrozenDict(updated)


def usable_slots(memory: Mapping[str, SlotValue]) -> dict[str, str]:
    """Validated values only: what tools may use."""
    return {name: slot.value for name, slot in memory.items() if slot.usable}


# -- clarify decision ---------------------------------------------------------------------
def _default_label(name: str, lang: str) -> str | None:
    """The name of a slot the plan gives no label, in the conversation's language."""
    labels = {"city_code": say_in(lang, "slot", "city code"), "lot_code": say_in(lang, "slot", "parking lot code"),
              "plate_no": say_in(lang, "slot", "licence plate number"), "order_no": say_in(lang, "slot", "order number"),
              "at_time": say_in(lang, "slot", "date and time"), "date": say_in(lang, "slot", "date"),
              "email": say_in(lang, "slot", "email address")}
    return labels.get(name)


_DEFAULT_EXAMPLES = {
    "city_code": "SH",
    "lot_code": "SH-A01",
    "plate_no": "沪A12345",
    "order_no": "SCN-020",
    "at_time": "2026-02-10 14:00",
    "date": "2026-02-10",
}
def slot_label(spec: SlotSpec, locale: str) -> str:
    """The human name of a slot in a locale."""
    if spec.label:
        return localize(spec.label, locale)
    return _default_label(spec.name, locale) or spec.name.replace("_", " ")


def slot_question(
    spec: SlotSpec, locale: str, *, invalid_value: str | None = None, repeat: bool = False
) -> str:
    """A targeted question for one missing or invalid slot."""
    label = slot_label(spec, locale)
    example_value = spec.example or _DEFAULT_EXAMPLES.get(spec.extractor)
    example = say(locale, " (for example {example})", example=example_value) if example_value else ""
    if invalid_value is not None:
        if template := localize(spec.invalid_question, locale):  # the plan's own sentence
            return template.format(label=label, value=invalid_value, example=example)
        return say(locale, "I couldn't find {label} “{value}”. Could you check it and send it again?", label=label, value=invalid_value)
    if spec.question and not repeat:
        return localize(spec.question, locale)
    if repeat:
        return say(locale, "I still need the {label} to go on{example}. Could you send it?", label=label, example=example)
    return say(locale, "Could you give me the {label}{example}?", label=label, example=example)


def intent_question(labels: Iterable[str], locale: str) -> str:
    """'Do you want me to A or B?' for an ambiguous request."""
    return say(locale, "Just to be sure: do you want me to {options}?", options=say_in(locale, "which request", " or ").join(labels))


@dataclass(frozen=True)
class ClarifyDecision(Serializable):
    """The per-turn decision: continue, ask one targeted question, or abort."""

    decision: str  # continue | ask | abort
    intent: str | None
    missing: tuple[str, ...] = ()
    invalid: tuple[str, ...] = ()
    unverified: tuple[str, ...] = ()
    question: str | None = None
    slot: str | None = None
    rounds: int = 0
    pending: PendingClarification | None = None


def outstanding_slots(
    required: Iterable[str], memory: Mapping[str, SlotValue]
) -> tuple[tuple[str, ...], ...]:
    """(missing, invalid, unverified) among required slots, in required order."""
    missing, invalid, unverified = [], [], []
    for name in required:
        slot = memory.get(name)
        if slot is None:
            missing.append(name)
        elif slot.status == INVALID:
            invalid.append(name)
        elif slot.status != VALID:
            unverified.append(name)
    return tuple(missing), tuple(invalid), tuple(unverified)


def next_round(
    pending: PendingClarification | None, outstanding: tuple[str, ...], progressed: bool
) -> int:
    """Rounds of asking without progress, counting this ask."""
    if pending is None or progressed or set(outstanding) < set(pending.missing):
        return 1
    return pending.rounds + 1


def decide_clarify(
    *,
    intent: str | None,
    required: Iterable[str],
    memory: Mapping[str, SlotValue],
    specs: Mapping[str, SlotSpec],
    pending: PendingClarification | None,
    progressed: bool,
    locale: str,
    turn: int,
    max_rounds: int = 3,
) -> ClarifyDecision:
    """Continue when all required slots are valid; otherwise ask for the first one or abort."""
    missing, invalid, unverified = outstanding_slots(required, memory)
    outstanding = invalid + missing + unverified  # invalid first: the person just gave it
    if not outstanding:
        return ClarifyDecision(CONTINUE, intent)
    rounds = next_round(pending, outstanding, progressed)
    if rounds > max_rounds:
        return ClarifyDecision(ABORT, intent, missing, invalid, unverified, rounds=rounds - 1)
    slot = outstanding[0]
    spec = specs.get(slot) or SlotSpec(name=slot, extractor=slot)
    value = memory[slot].value if slot in invalid else None
    question = slot_question(spec, locale, invalid_value=value, repeat=rounds > 1 and value is None)
    new_pending = PendingClarification(
        intent=intent, missing=outstanding, rounds=rounds, last_question=question, asked_turn=turn
    )
    return ClarifyDecision(
        ASK, intent, missing, invalid, unverified, question, slot, rounds, new_pending
    )


def has_content(text: str) -> bool:
    """False for fillers like 'hmm' or 'I don't know'."""
    return bool(text.strip()) and not is_non_answer(text)
