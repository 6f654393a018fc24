"""Time words made plain before any clock reader sees them: spellings ("tmrw" -> tomorrow, "завтро" -> завтра),
clock phrases as clocks ("quarter past 9" -> 9:15, "half one" -> 1:30, "полвосьмого" -> 7:30, "3 y cuarto" -> 3:15),
a day of a month named in Russian or Spanish as in English ("20 декабря" -> 20 December) and number words as digits.
The words are the lexicon's `time_words` entries. Used by the times recognizer and by the stay's slot readers
(`slots`), so both read the same message the same way.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from typing import Any

from ..lexicon import entry, lexicons_for
from ..typos import NearWords, latin_words
from .numbers import with_digits


def _time_words(language: str) -> dict[str, Any]:
    return entry(language, "time_words")


_RU_ORDINALS = ("перв", "втор", "трет", "четв", "пят", "шест", "седьм", "восьм", "девят", "десят", "одиннадцат", "двенадцат")


def _clock(template: str, m: re.Match[str]) -> str:
    said = m.group(1) if m.groups() else ""
    if "{ordinal-1}" in template:
        index = next(i for i, stem in enumerate(_RU_ORDINALS) if said.lower().replace("ё", "е").startswith(stem))
        return template.replace("{ordinal-1}", str(index or 12))
    if "{h-1}" in template:
        return template.replace("{h-1}", str((int(said) - 1) or 12))
    if "{2}" in template:  # two groups: the word before the clock is kept ("till half 2" -> "till 2:30")
        return template.replace("{1}", said).replace("{2}", m.group(2))
    return template.replace("{h}", said).replace("{1}", said)


_ENGLISH_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                   "November", "December", "September")


@lru_cache(maxsize=1024)
def plain_time_words(text: str) -> str:
    """The text with time words in their plain spelling ("tmrw" -> tomorrow, "завтро" -> завтра), clock phrases
    as clocks ("quarter past 9" -> 9:15, "полвосьмого" -> 7:30, "3 y cuarto" -> 3:15), a day of a month named in
    Russian or Spanish as in English ("20 декабря" -> 20 December) and number words as digits."""
    text = with_digits(text)
    for lex in lexicons_for(text) or ():
        words = _time_words(lex.language)
        text = _respelled(text, lex.language)
        for pattern, template in _clock_patterns(lex.language):
            text = pattern.sub(lambda m, t=template: _clock(t, m), text)
        if "month_day" in words:
            text = _month_day(lex.language).sub(lambda m, months=tuple(words["months"]): _english_day(m, months), text)
    return text


@cache
def _clock_patterns(language: str) -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((re.compile(pattern, re.IGNORECASE), template) for pattern, template in _time_words(language)["clock"])


@cache
def _month_day(language: str) -> re.Pattern[str]:
    return re.compile(_time_words(language)["month_day"], re.IGNORECASE)


@cache
def _spellings(language: str) -> tuple[re.Pattern[str] | None, dict[str, str]]:
    spellings = {k.lower(): v for k, v in _time_words(language)["spellings"].items()}
    if not spellings:
        return None, spellings
    pattern = "|".join(re.escape(k) for k in sorted(spellings, key=len, reverse=True))
    return re.compile(rf"(?<![\w])({pattern})(?![\w])", re.IGNORECASE), spellings


def _respelled(text: str, language: str) -> str:
    pattern, spellings = _spellings(language)
    text = pattern.sub(lambda m: spellings[m.group(1).lower()], text) if pattern is not None else text
    near = _time_names(language)
    for word in reversed(latin_words(text)):  # "thursdy", "thrusday", "wendesday", "febuary": a slip of one name
        typed = word.group(0).casefold()
        near_one = [name for name in near.slips_of(typed, depth=1) if _dropped_or_swapped(typed, name)]
        if len(near_one) == 1 and near.slips_of(typed) == (near_one[0],):  # and no other name two edits away
            text = text[:word.start()] + near_one[0] + text[word.end():]
    return text


def _dropped_or_swapped(typed: str, name: str) -> bool:
    """A slip that leaves a letter out ("thursdy", "febuary") or swaps two neighbours ("thrusday"); a letter
    changed or added makes another word as often as a slip ("Sundar", "sundae", "Mondal", "Augusta", "mourning")."""
    if len(typed) == len(name) - 1:
        return any(name[:i] + name[i + 1:] == typed for i in range(len(name)))
    if len(typed) == len(name):
        return any(name[:i] + name[i + 1] + name[i] + name[i + 2:] == typed for i in range(len(name) - 1))
    return False


_ENGLISH_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "tomorrow", "yesterday",
                 "tonight", "morning", "afternoon", "evening")


@cache
def _time_names(language: str) -> NearWords:
    """The day, month and time-of-day names a slip may be of (only words long enough for a slip to be safe)."""
    words = _time_words(language)
    names = {*words["spellings"].values(), *words.get("months", ()), *(_ENGLISH_DAYS + _ENGLISH_MONTHS if language == "en" else ())}
    return NearWords.of((name.casefold(), name.casefold()) for name in names)


def _english_day(m: re.Match[str], months: tuple[str, ...]) -> str:
    return f"{m.group(1)} {_ENGLISH_MONTHS[months.index(m.group(2).lower())]}" + (f" {m.group(3)}" if m.group(3) else "")
