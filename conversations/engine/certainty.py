"""How sure a reading is (contract 10: a guess is never a fact).

- `certain`: the words say it plainly; it changes data, prices a stay or runs a tool without a word;
- `likely`: one reading fits best (a hedged value, a range end that inherits the start's half of the
  day); it is said back with the reading used, or confirmed first where a recorded fact depends on it;
- `guess`: two readings fit, or the value is implausible; it is asked, never stored.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from functools import cache

from .lexicon import LANGUAGES, phrases, word_list
from .negation import doubt, hedge_near, rough, unknowing
from .timeparse import ROUGH_HOUR, names_period, says_clock, says_time_of_day, zh_number

CERTAIN, LIKELY, GUESS = "certain", "likely", "guess"
CERTAINTIES = (CERTAIN, LIKELY, GUESS)

_DAY = r"(?:mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)(?:day)?|周[一二三四五六日天]|星期[一二三四五六日天]|" \
       r"понедельник\w*|вторник\w*|сред[ауы]|четверг\w*|пятниц[ауы]|суббот[ауы]|воскресень[ея]|" \
       r"lunes|martes|mi[ée]rcoles|jueves|viernes|s[áa]bado|domingo"
_WHEN = rf"(?:\d{{1,2}}(?:[:：]\d{{2}})?(?:\s*(?:am|pm))?|{_DAY})"
# Two times or days offered as one ("6 or 7", "monday or tuesday", "周一还是周二", "六七点", "в 6 или 7")
_ALTERNATIVE_WHEN = re.compile(
    rf"(?<![A-Za-z0-9:]){_WHEN}\s*(?:,\s*)?(?:or(?:\s+maybe)?|或者?|还是|или|либо|o|u)\s*(?:maybe\s+|perhaps\s+|可能\s*)?"
    rf"(?:(?:on|в|во|el|la|las)\s+)?{_WHEN}(?![A-Za-z0-9:])"
    r"|[一二两三四五六七八九十\d]{1,3}[点點]\s*(?:或者?|还是)\s*[一二两三四五六七八九十\d]{1,3}[点點]"
    r"|(?<![十一二三四五六七八九])([一二三四五六七八九])(?!\1)[一二三四五六七八九][点點]",
    re.IGNORECASE,
)


@cache
def _part_of_day() -> re.Pattern[str]:
    """A part of the day said with no hour ("late afternoon", "end of the day", "下班前", "вечером", "por la tarde"),
    from every language's lexicon (a message may mix them)."""
    said = []
    for language in LANGUAGES:
        parts, modifiers = word_list(language, "parts_of_day"), word_list(language, "part_of_day_modifiers")
        part = phrases(list(parts), spaced=language != "zh").pattern
        said.append(rf"(?:{phrases(list(modifiers), spaced=True).pattern}\s+)?{part}" if modifiers else part)
    return re.compile("|".join(said), re.IGNORECASE)


# an hour said as a number ("at 3", "3:30", "3点"), not a length ("about 20 minutes", "2 hours")
_HOUR_SAID = re.compile(r"(?<![\d:])(\d{1,2})(?=\s*(?:[:：]\d{2}|[点點时時]|o'?clock|h\b)|(?![\d:.,]))"
                        r"(?!\s*(?:minutes?|mins?|hours?|hrs?|分钟|小时|个小时|钟头|минут\w*|час\w*|horas?|minutos?)(?!\w))",
                        re.IGNORECASE)
_ZH_HOUR = re.compile(r"([一二两三四五六七八九十]{1,3})[点點]")
_TIME_WORDS = re.compile(rf"\d{{1,2}}(?:[:：]\d{{2}})?(?:\s*(?:am|pm|a\.m\.|p\.m\.))?|[一二两三四五六七八九十]{{1,3}}[点點]|{_DAY}", re.IGNORECASE)
_LONGEST_STAY_MINUTES = 60 * 24 * 60  # a stay, a call or a slot of more than 60 days is more likely a joke or a slip


# A duration said with no one value ("a few hours", "half a day", "两三个小时"), or roughly ("a couple of hours")
_VAGUE_DURATION = re.compile(r"\bfew\b|\bhalf\s+a\s+day\b|半天|[一两二三四五六七八九][一二三四五六七八九十]\s*个?\s*(?:小时|钟头)",
                             re.IGNORECASE)
_RANGE_DURATION = re.compile(r"\d+\s*(?:-|–|to|~|或|到)\s*\d+\s*(?:hours?|hrs?|h\b|小时|个小时|minutes?|mins?|分钟)", re.IGNORECASE)
_ROUGH_DURATION = re.compile(r"\bcouple\b|个把", re.IGNORECASE)


_LENGTH_SAID = re.compile(r"(?:\d+(?:[.,]\d+)?|[一两二三四五六七八九十俩仨半]+|\b(?:an?|one|two|three|four|five|six|couple\s+of|few)|"
                          r"(?<!\w)(?:два|две|три|пару|полтора)|\b(?:una?|dos|tres|cuatro))\s*(?:个)?\s*(?:hours?|hrs?|h\b|minutes?|mins?|"
                          r"小时|钟头|钟(?!点)|分钟|час\w*|минут\w*|horas?|minutos?)", re.IGNORECASE)
_MIDNIGHT_OR_WHOLE_DAY = re.compile(r"midnight|whole\s+day|all\s+day|full\s+day|entire\s+day|overnight|午夜|半夜|零点|凌晨|整天|全天|一天|"
                                    r"полноч|весь\s+день|целый\s+день|сутки|medianoche|todo\s+el\s+d[ií]a|d[ií]a\s+(?:entero|completo)",
                                    re.IGNORECASE)


def time_certainty(text: str, raw: str, kind: str, value: str) -> tuple[str, str | None]:
    """How sure a time read from `raw` (in the message `text`) is, and why when it is not certain.

    guess: two times or days offered ("6 or 7"), a call's time said as a part of the day ("late in the
    afternoon"), a duration past any stay; likely: a hedge on it ("around 3"), a stay's time said as a part
    of the day (priced at the period's usual hour), or hours that could be either half of the day with no
    word saying which ("from 3 to 6:15")."""
    at = text.find(raw) if raw else -1
    start, end = (at, at + len(raw)) if at >= 0 else (0, len(text))
    words = raw if at >= 0 else text  # an extractor may give its words normalised ("15:00" for "3"): then the message's
    if kind == "duration_minutes":
        try:
            long = float(value) > _LONGEST_STAY_MINUTES
        except ValueError:
            long = False
        if long:
            return GUESS, "implausible"
        if _ALTERNATIVE_WHEN.search(text) or _VAGUE_DURATION.search(words) or _RANGE_DURATION.search(text):
            return GUESS, "alternatives"  # "2 or 3 hours", "2-3 hours", "两三个小时", "a few hours", "half a day"
        return (LIKELY, "hedged") if hedge_near(text, start, end) or _ROUGH_DURATION.search(words) else (CERTAIN, None)
    if _ALTERNATIVE_WHEN.search(text):
        return GUESS, "alternatives"
    if (kind == "at_time" and value[11:16] == "00:00" and _LENGTH_SAID.search(text) and not says_time_of_day(text)
            and not _part_of_day().search(text) and not _MIDNIGHT_OR_WHOLE_DAY.search(text)):
        return GUESS, "no_time_of_day"  # "tomorrow, for 2 hours": a stay's day and length, no hour; never priced from midnight
    if kind in ("at_time", "until_time", "clock_time") and not says_clock(text) and _part_of_day().search(text) \
            and not _HOUR_SAID.search(text) and not _ZH_HOUR.search(text):
        # a stay priced "in the morning" takes the period's usual hour, said back; a call's time is asked
        return (GUESS if kind == "clock_time" else LIKELY), "part_of_day"
    if kind == "clock_time" and _hour(value) is not None and not 7 <= _hour(value) <= 21:
        return GUESS, "implausible"  # a call at 03:00 is a slip for 15:00 far more often than meant
    spans = [(start, end)] if at >= 0 else [m.span() for m in _TIME_WORDS.finditer(text)] or [(start, end)]
    if any(hedge_near(text, *span) for span in spans) or ROUGH_HOUR.search(text):  # "3ish": the hedge glued to the hour
        return LIKELY, "hedged"
    if kind in ("at_time", "until_time", "clock_time") and not names_period(text) and _either_half(words):
        return LIKELY, "half_of_day"
    return CERTAIN, None


def offers_alternatives(text: str) -> bool:
    """Whether two times or days are offered as one ("6 or 7", "tuesday or wednesday", "六点或者七点")."""
    return _ALTERNATIVE_WHEN.search(text) is not None


def text_certainty(text: str) -> str:
    """How sure an answer in the person's own words is: a guess when they say they don't know ("三五万？真不知道"),
    likely with a hedge or a rough value ("budget 50k or so", "sometime in Q1, roughly"), else certain."""
    if unknowing(text):
        return GUESS
    return LIKELY if doubt(text) or rough(text) else CERTAIN


def unsure_words(text: str, why: str | None) -> str | None:
    """The words that made a time unsure, to ask about them ("6 or 7", "late afternoon")."""
    pattern = {"alternatives": _ALTERNATIVE_WHEN, "part_of_day": _part_of_day()}.get(why or "")
    found = pattern.search(text) if pattern is not None else None
    return found.group(0) if found is not None else None


def _hour(value: str) -> int | None:
    found = re.match(r"(\d{1,2})[:：]\d{2}", value or "")
    return int(found.group(1)) if found else None


def end_either_half(start: datetime, end: datetime, end_words: str, *, names_day: bool) -> bool:
    """A range's end said with its own day and an hour that names no half of it ("今天21点到明天9点"): both of
    that day's readings come after the start, so neither wins by being the first after it."""
    if not names_day or names_period(end_words) or not _either_half(end_words):
        return False
    other = end + timedelta(hours=12) if end.hour < 12 else end - timedelta(hours=12)
    return other.date() == end.date() and min(other, end) > start


def _either_half(words: str) -> bool:
    """Hours said that fit the morning and the afternoon alike: 1 to 11, no 24-hour clock past noon."""
    hours = [int(h) for h in _HOUR_SAID.findall(words)] + [zh_number(h) for h in _ZH_HOUR.findall(words)]
    return bool(hours) and all(1 <= h <= 11 for h in hours)
