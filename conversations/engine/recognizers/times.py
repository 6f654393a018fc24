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

from ..certainty import CERTAIN, GUESS, LIKELY, end_either_half, offers_alternatives, time_certainty
from ..fee_questions import day_part
from ..lexicon import LANGUAGES, entry
from ..negation import hedge_near
from ..slots import PLAIN_STAY_READERS, ExtractContext, shared_period
from ..timeparse import MONTH_DAY, parse_date, parse_datetime, says_clock, zh_number
from . import Span, trie_pattern
from .clock_words import plain_time_words
from .numbers import number_atoms


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


_NAMED_MONTH_END = re.compile(
    r"\b(?:the\s+)?end\s+of\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|(1[0-2]|[1-9]|十[一二]?|[一二三四五六七八九])\s*月(?:底|末)|"
    r"(?<!\w)(?:в\s+)?конц[еау]\s+(январ|феврал|март|апрел|ма|июн|июл|август|сентябр|октябр|ноябр|декабр)\w*|"
    r"\b(?:a\s+)?finales\s+de\s+(enero|febrero|marzo|abril|mayo|junio|julio|agosto|sept?iembre|octubre|noviembre|diciembre)\b",
    re.IGNORECASE)
_MONTH_STEMS = (("jan", "январ", "enero"), ("feb", "феврал", "febrero"), ("mar", "март", "marzo"), ("apr", "апрел", "abril"),
                ("may", "ма", "mayo"), ("jun", "июн", "junio"), ("jul", "июл", "julio"), ("aug", "август", "agosto"),
                ("sep", "сентябр", "septiembre", "setiembre"), ("oct", "октябр", "octubre"), ("nov", "ноябр", "noviembre"),
                ("dec", "декабр", "diciembre"))


def _named_month_end(text: str, today: date) -> tuple[date, re.Match[str]] | None:
    """"the end of june", "6月底", "в конце июня", "a finales de junio": that month's last day, the next one to come."""
    if (m := _NAMED_MONTH_END.search(text)) is None:
        return None
    said = next(g for g in m.groups() if g).lower()
    month = int(said) if said.isdigit() else zh_number(said) if re.match(r"[一二三四五六七八九十]", said) else next(
        i + 1 for i, stems in enumerate(_MONTH_STEMS) if said in stems or said[:3] == stems[0])
    year = today.year if month >= today.month else today.year + 1
    return date(year + (month == 12), month % 12 + 1, 1) - timedelta(days=1), m


def _period_end(text: str, today: date) -> tuple[date, re.Match[str]] | None:
    if (named := _named_month_end(text, today)) is not None:
        return named
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
    """A day something must be done by: a deadline word with a date, a festival or a period's end."""
    cue = _DEADLINE.search(text)
    if cue is None:
        return None
    named = _festival(text, today) or _period_end(text, today)
    if named is not None:
        return named[0], named[1].group(0)
    day = parse_date(text[cue.end():], now=now, timezone=timezone)
    if day is None and cue.start() > 0:
        day = parse_date(text[: cue.start()], now=now, timezone=timezone) if re.match(r"截止|之前|以前|前", cue.group(0)) else None
    year_said = re.search(r"(?<!\d)(?:19|20)\d{2}(?!\d)|\d{2,4}\s*年", text) is not None
    if day is not None and day < today - timedelta(days=31) and not year_said:
        day = day.replace(year=day.year + 1)  # "by 15 January" said in December is next January
    # a day with its year is the day said, gone by or not ("by 30 September 2026" in December: it has passed)
    return (day, cue.group(0)) if day is not None and (day > today + timedelta(days=1) or year_said) else None


# --- days named another way, written as dates for the clock readers ------------------------------------------

_ORDINAL_DAY = re.compile(r"\b(?:on\s+)?the\s+(\d{1,2})(?:st|nd|rd|th)\b|\bel\s+d[ií]a\s+(\d{1,2})\b|(?<!\w)(\d{1,2})-?(?:го|е)\s+числа(?!\w)",
                          re.IGNORECASE)
_NEXT_WEEK = re.compile(r"\bnext\s+week\b|\bthe\s+week\s+after\b|(?<!\w)(?:на\s+)?следующей\s+неделе(?!\w)|(?<!\w)на\s+той\s+неделе(?!\w)|"
                        r"\b(?:de\s+)?la\s+semana\s+que\s+viene\b|\b(?:de\s+)?la\s+pr[óo]xima\s+semana\b|\bla\s+semana\s+pr[óo]xima\b",
                        re.IGNORECASE)
_WEEKDAY_WORDS = (r"\bmon(?:day)?\b|понедельник\w*|\blunes\b", r"\btues?(?:day)?\b|вторник\w*|\bmartes\b",
                  r"\bwed(?:nesday)?\b|сред[ауы]|\bmi[ée]rcoles\b", r"\bthu(?:rs)?(?:day)?\b|четверг\w*|\bjueves\b",
                  r"\bfri(?:day)?\b|пятниц[ауы]|\bviernes\b", r"\bsat(?:urday)?\b|суббот[ауы]|\bs[áa]bado\b",
                  r"\bsun(?:day)?\b|воскресень[ея]|\bdomingo\b")
_SINCE = re.compile(r"\bsince\b|\bdesde\s+el\b|(?<!\w)с\s+(?=понедельник|вторник|сред|четверг|пятниц|суббот|воскресень)", re.IGNORECASE)
_LAST_MONTH_END = re.compile(r"\bend\s+of\s+last\s+month\b|上个?月底|上个?月末|(?<!\w)в\s+конце\s+прошлого\s+месяца(?!\w)|"
                             r"\ba\s+finales\s+del\s+mes\s+pasado\b", re.IGNORECASE)


def _as_date(day: date) -> str:
    return f"{day.year}/{day.month:02d}/{day.day:02d}"


def _dated(text: str, today: date) -> str:
    """The text with a day said another way written as a date the clock readers read ("on the 3rd at 14:00",
    "wednesday next week", "元旦那天", "since monday")."""
    if (m := _ORDINAL_DAY.search(text)) is not None:
        number = int(next(g for g in m.groups() if g))
        month = today if number >= today.day else (today.replace(day=1) + timedelta(days=32))
        try:
            return text[: m.start()] + _as_date(month.replace(day=number)) + text[m.end():]
        except ValueError:
            return text
    if (m := _SLASH_DATE.search(text)) is not None and int(m.group(1)) <= 12 and int(m.group(2)) <= 31:
        try:  # "by 3/1": month first, as in the US; asked when the day could be the month (see _day_certainty)
            day = date(today.year, int(m.group(1)), int(m.group(2)))
        except ValueError:
            day = None
        if day is not None:
            day = day if day >= today - timedelta(days=31) else day.replace(year=today.year + 1)
            return text[: m.start()] + _as_date(day) + text[m.end():]
    if (m := _LAST_MONTH_END.search(text)) is not None:
        return text[: m.start()] + _as_date(today.replace(day=1) - timedelta(days=1)) + text[m.end():]
    if (week := _NEXT_WEEK.search(text)) is not None:
        monday = today - timedelta(days=today.weekday()) + timedelta(days=7)
        for index, pattern in enumerate(_WEEKDAY_WORDS):
            if (day := re.search(pattern, text, re.IGNORECASE)) is not None:
                first, last = sorted([day.span(), week.span()])
                return text[: first[0]] + _as_date(monday + timedelta(days=index)) + text[last[1]:]
    if (found := _festival(text, today)) is not None:
        return text[: found[1].start()] + _as_date(found[0]) + text[found[1].end():]
    return text


# --- the words, made plain: spellings, clock phrases, month names and number words ------------------------

def _time_words(language: str) -> dict[str, Any]:
    return entry(language, "time_words")


# --- lengths of time and offsets from now ("3 hours", "полтора часа", "3 days ago", "через две недели") -------

_MINUTES = {"minute": 1, "hour": 60, "day": 1440, "week": 10080, "month": 43200}


@cache
def _unit_words() -> tuple[re.Pattern[str], dict[str, str]]:
    """One pattern for every unit of time in every language ("hours", "часов", "horas", "小时"; "3h" yes, "friday"
    no), longest first, and the unit each word names."""
    units: dict[str, str] = {}
    pieces = []
    for language in LANGUAGES:
        for unit, words in _time_words(language)["units"].items():
            for word in words:
                units.setdefault(word.lower(), unit)
    for word in sorted(units, key=len, reverse=True):
        spaced = word.isascii() or re.match(r"[а-яё]", word)
        before, after = (r"(?<![^\W\d])", r"(?![\w])") if spaced else ("", "")
        pieces.append(rf"{before}{re.escape(word)}{after}")
    return re.compile("|".join(pieces), re.IGNORECASE), units


@cache
def _phrase_pattern(key: str) -> re.Pattern[str] | None:
    words = {w for language in LANGUAGES for w in _time_words(language)[key]}
    if not words:
        return None
    body = "|".join(r"\s+".join(re.escape(p) for p in w.split()) for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"(?:{body})", re.IGNORECASE)


@cache
def _vague() -> dict[str, tuple[float, str]]:
    return {w.lower(): (float(v[0]), v[1]) for language in LANGUAGES for w, v in _time_words(language)["vague"].items()}


@cache
def _vague_pattern() -> re.Pattern[str]:
    words = sorted(_vague(), key=len, reverse=True)
    return re.compile(r"(?<![\w])(" + "|".join(r"\s+".join(map(re.escape, w.split())) for w in words) + r")\s*$", re.IGNORECASE)


_HALF_AFTER_UNIT = re.compile(r"\s*(?:and\s+a\s+half|y\s+medi[oa]|с\s+половиной|半)(?![\w])", re.IGNORECASE)
_HALF_BEFORE_UNIT = re.compile(r"\s*(?:个|個)?\s*(?:and\s+a\s+half|半)\s*(?:个|個)?\s*$", re.IGNORECASE)
_HALF_OF = re.compile(r"(?<![\w])(?:media|medio|пол)\s*$", re.IGNORECASE)
_ONE_BEFORE = re.compile(r"(?:\b(?:an?|one|una?|un)|(?<![\w])(?:одн[уа]|один)|一个?|一)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class _Length:
    start: int
    end: int
    minutes: int
    certainty: str
    why: str | None


def _lengths(text: str) -> list[_Length]:
    """Every length of time said: a number (or a word for one, or none: "через час") and a unit, halves and
    compounds ("一小时十五分钟") added up, rough amounts ("a few hours", "пару часов") marked."""
    atoms = number_atoms(text)
    found: list[_Length] = []
    pattern, units = _unit_words()
    for m in pattern.finditer(text):
        unit = units[m.group(0).lower()]
        if unit in ("minute", "hour") and re.fullmatch(r"[mh]", m.group(0), re.IGNORECASE) and not re.search(r"\d\s?$", text[: m.start()]):
            continue
        before = text[: m.start()]
        amount, start, certainty, why, article = None, m.start(), CERTAIN, None, False
        half = _HALF_BEFORE_UNIT.search(before)
        head = before[: half.start()] if half else before
        atom = next((a for a in atoms if a.end <= len(head) and not head[a.end:].strip(" -个個")), None)
        vague = _vague_pattern().search(head)
        if vague is not None:  # "a couple of hours", "пару часов", "unas horas": rough, said back or asked
            value, sure = _vague()[re.sub(r"\s+", " ", vague.group(1).lower())]
            amount, certainty, why, start = value, (GUESS if sure == "guess" else LIKELY), "rough", vague.start(1)
        elif atom is not None:
            amount, start = atom.value, atom.start
        elif (one := _ONE_BEFORE.search(head)) is not None:
            amount, start = 1.0, one.start()
            article = one.group(0).strip().lower() in ("a", "an")  # "at an hour and a half" is no clock time
        elif _HALF_OF.search(head) and m.group(0).lower().startswith(("hora", "час")):
            amount, start = 0.5, _HALF_OF.search(head).start()  # "media hora", "пол часа": half of one
        else:
            if m.group(0).lower() in ("час", "hora", "неделю"):
                amount = 1.0  # "через час", "hora y media", "неделю назад": the unit alone is one of it
            else:
                continue
        if not article and _CLOCK_CUE.search(text[:start]) or _DAY_PART_AFTER.match(text, m.end()):
            continue  # "в 3 часа дня", "в час ночи", "a las 3 horas": a time of day, not a length
        if half is not None:
            amount += 0.5
        end = m.end()
        if (after := _HALF_AFTER_UNIT.match(text, end)) is not None:
            amount, end = amount + 0.5, after.end()
        if unit == "minute" and amount is not None and 0 < amount < 1:
            continue
        found.append(_Length(start, end, int(round(amount * _MINUTES[unit])), certainty, why))
    found.sort(key=lambda f: f.start)
    merged: list[_Length] = []
    for length in found:  # "1 hour 15 minutes", "一小时十五分钟": one length
        if merged and re.fullmatch(r"\s*(?:and|y|и)?\s*", text[merged[-1].end:length.start]) and merged[-1].minutes > length.minutes:
            last = merged.pop()
            length = _Length(last.start, length.end, last.minutes + length.minutes, last.certainty, last.why)
        merged.append(length)
    return merged


def length_minutes(text: str, language: str = "en") -> int | None:
    """The first length of time the text says, in minutes ("一个半小时": 90, "полтора часа": 90), if any."""
    found = _lengths(plain_time_words(text))
    return found[0].minutes if found else None


_CLOCK_CUE = re.compile(r"(?<![\w])(?:в|во|к|до|после|около|с|со)\s*$|\b(?:a|hasta|desde)\s+las?\s*$|\bat\s*$|第\s*$", re.IGNORECASE)
_DAY_PART_AFTER = re.compile(r"\s*(?:утра|дня|вечера|ночи)(?![\w])", re.IGNORECASE)


def _half_day(text: str) -> re.Match[str] | None:
    pattern = _phrase_pattern("half_day")
    return pattern.search(text) if pattern is not None else None


def _offset(text: str, length: _Length, now: datetime) -> TimeValue | None:
    """A length said as a distance from now: "3 days ago" is a day, "in 20 minutes" a moment."""
    before, after = text[: length.start], text[length.end:]
    ago = (_phrase_pattern("ago_after") and re.match(rf"\s*(?:{_phrase_pattern('ago_after').pattern})", after, re.IGNORECASE)) or (
        _phrase_pattern("ago_before") and re.search(rf"(?:{_phrase_pattern('ago_before').pattern})\s*$", before, re.IGNORECASE))
    later = (_phrase_pattern("later_after") and re.match(rf"\s*(?:{_phrase_pattern('later_after').pattern})", after, re.IGNORECASE)) or (
        _phrase_pattern("later_before") and re.search(rf"(?<![\w])(?:{_phrase_pattern('later_before').pattern})\s*$", before, re.IGNORECASE))
    if not ago and not later:
        return None
    moment = now - timedelta(minutes=length.minutes) if ago else now + timedelta(minutes=length.minutes)
    if length.minutes >= 1440:
        return TimeValue(date=moment.date())
    return TimeValue(at=moment.replace(second=0, microsecond=0))


# --- the reading ------------------------------------------------------------------------------------------

_WHOLE_DAY = re.compile(r"\b(?:the\s+)?(?:whole|full|entire)\s+day\b|\ball\s+day\b|一整天|整天|全天|(?<!\w)(?:весь|целый)\s+день(?!\w)|"
                        r"\btodo\s+el\s+d[ií]a\b|\bd[ií]a\s+(?:entero|completo)\b", re.IGNORECASE)


# Every word a time can be said with begins with one of these (or holds a digit or a Chinese numeral or time
# character): a message with none of them holds no time, and the readers below are not run on it.
_LATIN_TIME_WORDS = (
    "today", "tonight", "tomorrow", "yesterday", "morning", "afternoon", "evening", "night", "noon", "midday",
    "midnight", "now", "ago", "later", "week", "month", "year", "quarter", "q1", "q2", "q3", "q4", "day", "hour", "hr",
    "min", "mon", "tue", "wed", "thu", "fri", "sat", "sun", "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug",
    "sep", "oct", "nov", "dec", "christmas", "xmas", "thanksgiving", "new_year", "eve", "eod", "eow", "weekend",
    "overnight", "half", "couple", "few", "several", "soon", "sometime", "first_thing", "end", "since", "lunch", "hoy",
    "mañana", "manana", "ayer", "anoche", "anteayer", "pasado", "tarde", "noche", "madrugada", "mediod", "medianoche",
    "ahora", "semana", "mes", "año", "hora", "minuto", "lunes", "martes", "miércoles", "miercoles", "jueves", "viernes",
    "sábado", "sabado", "domingo", "enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto",
    "septiembre", "setiembre", "octubre", "noviembre", "diciembre", "navidad", "nochebuena", "nochevieja", "fin", "par",
    "unas", "unos", "medio", "media", "hace", "dentro", "desde", "hasta", "día", "dia"
)
_RUSSIAN_TIME_WORDS = (
    "сегодн", "завтр", "вчер", "послезавтр", "позавчер", "утр", "дн", "день", "вечер", "ноч", "полдн", "полноч",
    "сейчас", "час", "минут", "сут", "недел", "месяц", "год", "понедельн", "вторн", "сред", "четверг", "пятниц",
    "суббот", "воскрес", "январ", "феврал", "март", "апрел", "мая", "май", "июн", "июл", "август", "сентябр", "октябр",
    "ноябр", "декабр", "рождеств", "нов", "конц", "пол", "пар", "нескольк", "через", "назад", "спуст", "раз", "сначал",
    "с_", "до_", "к_", "в_"
)


def _time_word_atoms(word: str, boundary: str) -> list[str]:
    """A word of the time vocabulary as pattern atoms: its letters, "_" a space between words (or after a
    Russian preposition); a word is matched where it begins, whatever follows ("mon" in "monday")."""
    return [boundary, *(r"\s+" if ch == "_" else re.escape(ch) for ch in word)]


# Every word a time can be said with begins with one of these (or holds a digit or a Chinese numeral or time
# character): a message with none of them holds no time, and the readers below are not run on it. The words
# are one pattern with their shared beginnings factored out (`trie_pattern`): a few microseconds a message.
_TIME_VOCABULARY = re.compile(
    r"[\d零〇一二两兩三四五六七八九十半点點时時天日周週月年晚早午夜节節旦诞誕现此庆慶秋明端劳]|"
    + trie_pattern([_time_word_atoms(w, r"\b") for w in _LATIN_TIME_WORDS]
                   + [_time_word_atoms(w, r"(?<![а-яё])") for w in _RUSSIAN_TIME_WORDS]),
    re.IGNORECASE,
)


def read_time(text: str, *, now: datetime, language: str = "en", timezone: str | None = None) -> Span | None:
    """The one time the message says, or None; two times or days offered as one are a guess."""
    plain = plain_time_words(text)
    if not _TIME_VOCABULARY.search(plain):
        return None
    found = _read_time(plain, now=now, language=language, timezone=timezone)
    if found is None or found.certainty == GUESS:
        return found
    if offers_alternatives(plain):
        return Span(found.kind, found.start, found.end, found.text, found.value, GUESS, "alternatives")
    if _ROUGH_LIKE.search(plain):  # "like a week ago", "like 3 hours": said roughly
        return Span(found.kind, found.start, found.end, found.text, found.value, GUESS, "rough")
    if found.value.date is not None and (says_clock(plain) or _BARE_HOUR.search(plain)):
        return Span(found.kind, found.start, found.end, found.text, found.value, GUESS, "a time not read")
    if found.certainty == CERTAIN and _next_month_assumed(plain, now.date()):
        return Span(found.kind, found.start, found.end, found.text, found.value, LIKELY, "month_assumed")
    return found


def _next_month_assumed(text: str, today: date) -> bool:
    """A day of the month said without its month that this month has passed ("by the 1st" on the 2nd): next
    month's is read, said back, as this month's may have been meant."""
    m = _ORDINAL_DAY.search(text)
    return m is not None and int(next(g for g in m.groups() if g)) < today.day


_ROUGH_LIKE = re.compile(r"(?<!would\s)(?<!'d\s)(?<!\bi\s)(?<!\bwe\s)(?<!\byou\s)(?<!they\s)\blike\s+(?:a|an|\d)", re.IGNORECASE)


_BARE_HOUR = re.compile(r"\b(?:at|around|about|@|a\s+eso\s+de\s+las|sobre\s+las)\s+(\d{1,2})(?::(\d{2}))?(?![\d:])"
                        r"(?!\s*(?:%|hours?|hrs?|h\b|minutes?|mins?|days?|people|persons|floors?|stor))", re.IGNORECASE)


def _with_bare_hour(text: str, day: date, tzinfo: Any) -> tuple[datetime, str] | None:
    """A day with an hour said bare ("tomorrow at 3", "monday around 10"): the hour in working time (1 to 6 in
    the afternoon, 7 to 11 in the morning), said back."""
    m = _BARE_HOUR.search(text)
    if m is None or int(m.group(1)) > 23:
        return None
    hour = int(m.group(1))
    if 1 <= hour <= 6:
        hour += 12
    return datetime.combine(day, datetime.min.time().replace(hour=hour % 24, minute=int(m.group(2) or 0) % 60), tzinfo=tzinfo), m.group(0)


def _read_time(text: str, *, now: datetime, language: str = "en", timezone: str | None = None) -> Span | None:
    zone = timezone or str(now.tzinfo)
    ctx = ExtractContext(now=now, timezone=zone, language=language)
    today = now.date()
    if (ended := _period_end(text, today)) is not None and not _LAST_MONTH_END.search(text):
        return Span("time", ended[1].start(), ended[1].end(), ended[1].group(0), TimeValue(by=ended[0]), CERTAIN)
    said = text
    text = _dated(text, today)
    if (deadline := _deadline(text, today, now, zone)) is not None:
        return Span("time", 0, len(text), deadline[1], TimeValue(by=deadline[0]), _day_certainty(said, CERTAIN, deadline[0]))
    timed = shared_period(text)
    next_week_alone = _NEXT_WEEK.search(text) is not None
    if next_week_alone:  # "next week sometime": a week, not a day; its Monday is asked
        monday = today - timedelta(days=today.weekday()) + timedelta(days=7)
        return Span("time", 0, len(text), text, TimeValue(date=monday), GUESS, "week")
    lengths = [] if _LATENESS.search(text) else _lengths(text)
    for length in lengths:
        if (offset := _offset(text, length, now)) is not None:
            certainty = length.certainty if length.certainty != CERTAIN else (LIKELY if offset.at is not None else CERTAIN)
            if hedge_near(text, length.start, length.end):
                certainty = GUESS if certainty == CERTAIN else certainty
            return Span("time", length.start, length.end, text[length.start:length.end], offset, certainty, length.why)
    start = PLAIN_STAY_READERS["at_time"](timed, ctx)
    end = PLAIN_STAY_READERS["until_time"](timed, ctx)
    length = PLAIN_STAY_READERS["duration_minutes"](timed, ctx)
    if _LATENESS.search(text) and start is None:
        return None  # "running 30 minutes late": how late, not a time
    if length is not None and lengths and lengths[0].end - lengths[0].start > len(length.raw) and lengths[0].minutes > int(length.value):
        length = None  # "一小时十五分钟": the whole length, not its first part
    if length is None and lengths and not re.search(r"\d[:：]\d\d|[点點]", text):
        own = lengths[0]
        certainty = own.certainty
        if certainty == CERTAIN and hedge_near(text, own.start, own.end):
            certainty = LIKELY
        return Span("time", own.start, own.end, text[own.start:own.end], TimeValue(minutes=own.minutes), certainty, own.why)
    if length is None and (half := _half_day(text)) is not None:
        return Span("time", half.start(), half.end(), half.group(0), TimeValue(minutes=360), GUESS, "rough")
    day = parse_date(timed, now=now, timezone=zone)
    if _WHOLE_DAY.search(text) and day is not None:
        begin = datetime.combine(day, datetime.min.time(), tzinfo=now.tzinfo)
        return Span("time", 0, len(text), text, TimeValue(start=begin, end=begin + timedelta(days=1)), CERTAIN)
    if start is not None and end is not None:
        value = TimeValue(start=datetime.fromisoformat(start.value), end=datetime.fromisoformat(end.value))
        certainty, why = time_certainty(text, start.raw, "at_time", start.value)
        said_day = parse_date(end.raw, now=now, timezone=zone) is not None
        if certainty == CERTAIN and end_either_half(value.start, value.end, end.raw, names_day=said_day):
            certainty, why = LIKELY, "half_of_day"
        return Span("time", 0, len(text), f"{start.raw} {end.raw}", value, certainty, why)
    if length is not None and (start is None or not re.search(r"\d", start.raw or "")):
        certainty, why = time_certainty(text, length.raw, "duration_minutes", length.value)
        return Span("time", 0, len(text), length.raw, TimeValue(minutes=int(length.value)), certainty, why)
    if start is not None:
        parsed = parse_datetime(timed, now=now, timezone=zone)
        moment = datetime.fromisoformat(start.value)
        certainty, why = time_certainty(text, start.raw, "at_time", start.value)
        if _SINCE.search(text) and moment.date() > today:
            moment -= timedelta(days=7)  # "since monday": the one before today
        if parsed is not None and parsed.precision == "day":
            if (bare := _with_bare_hour(text, moment.date(), moment.tzinfo)) is not None:
                return Span("time", 0, len(text), bare[1], TimeValue(at=bare[0]), LIKELY, "half_of_day")
            if (part := day_part(text)) is not None:  # "明早", "tomorrow evening": the part's usual hour, asked
                return Span("time", 0, len(text), start.raw, TimeValue(at=datetime.combine(moment.date(), part[1], tzinfo=moment.tzinfo)),
                            GUESS, "part_of_day")
            return Span("time", 0, len(text), start.raw, TimeValue(date=moment.date()), _day_certainty(text, certainty), why)
        return Span("time", 0, len(text), start.raw, TimeValue(at=moment), _day_certainty(text, certainty), why)
    if day is not None:
        return Span("time", 0, len(text), text, TimeValue(date=day), _day_certainty(text, CERTAIN, day))
    return None


_LATENESS = re.compile(r"\blate\b|опазд\w*|\btarde\b(?!\s*$)|迟到|晚到", re.IGNORECASE)
# "next Friday" said midweek: this week's or next week's
_NEXT_WEEKDAY = re.compile(r"\bnext\s+(?:mon|tue|wed|thu|fri|sat|sun)|(?<!\w)следующ\w*\s+(?:понед|вторн|сред|четв|пятн|субб|воскр)|"
                           r"\bpr[óo]xim[oa]\s+(?:lunes|martes|mi[ée]|jueves|viernes|s[áa]b|domingo)|"
                           r"\b(?:lunes|martes|mi[ée]rcoles|jueves|viernes|s[áa]bado|domingo)\s+pr[óo]xim[oa]\b", re.IGNORECASE)
_SLASH_DATE = re.compile(r"(?<![\d/])(\d{1,2})/(\d{1,2})(?![\d/])")


def _day_certainty(text: str, certainty: str, day: date | None = None) -> str:
    """"next Friday" said midweek may be this week's or next week's; "3/1" may be either order; a month said
    without its day ("明年三月前", "by March") stands for no one day of it."""
    if day is not None and day.day == MONTH_DAY and not re.search(rf"(?<!\d){MONTH_DAY}(?!\d)|十五", text):
        return GUESS
    if _NEXT_WEEKDAY.search(text):
        return LIKELY if certainty == CERTAIN else certainty
    if (m := _SLASH_DATE.search(text)) and int(m.group(1)) <= 12 and int(m.group(2)) <= 12 and m.group(1) != m.group(2):
        return GUESS
    return certainty
