"""The units a form question may count or measure in without declaring its words, and how replies say them.

A question's `unit` is read as one of the units the recognizers know (`recognizers/units.json`) when it is
one of that unit's words ("storeys", "floors", "sq ft", "m2", "persons"); its answers are then read, told
apart from the other units' and said in the person's language by the words below. A unit none of them is
("boxes") is the plan's own: it declares its words with `unit_words`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from .catalog import marked, say, say_in, say_n
from .recognizers.numbers import units


@dataclass(frozen=True)
class UnitWords:
    """How replies say a unit: what it measures ("floor area", "层数"), the same with an article ("a floor area"),
    a number in it ("3 storeys", "3层") and the unit alone ("sq ft", "平方英尺")."""

    measure: str
    a_measure: str
    number: Callable[[str, str, int], str]  # (lang, number as said, count for the plural form)
    word: Callable[[str], str]


# by the recognizers' unit id
_SAID: dict[str, UnitWords] = {
    "storey": UnitWords(marked("number of storeys"), marked("a number of storeys"),
                        lambda lang, n, count: say_n(lang, "{n} storey", "{n} storeys", count, n=n),
                        lambda lang: say_in(lang, "unit", "storeys")),
    "sq_ft": UnitWords(marked("floor area"), marked("a floor area"), lambda lang, n, count: say(lang, "{n} sq ft", n=n),
                       lambda lang: say_in(lang, "unit", "sq ft")),
    "sq_m": UnitWords(marked("floor area"), marked("a floor area"), lambda lang, n, count: say(lang, "{n} m2", n=n),
                      lambda lang: say_in(lang, "unit", "m2")),
    "person": UnitWords(marked("number of people"), marked("a number of people"),
                        lambda lang, n, count: say_n(lang, "{n} person", "{n} persons", count, n=n),
                        lambda lang: say_in(lang, "unit", "persons")),
}
FORM_UNITS = tuple(_SAID)


@cache
def unit_pattern(unit_id: str) -> str:
    """The words a unit is said in, as one pattern ("stor(?:e?y|eys|ies)|floors?|层…")."""
    return "|".join(f"(?:{word})" for word in units()["units"][unit_id]["after"])


@cache
def unit_id(unit: str | None) -> str | None:
    """Which of the form units a question's unit is (its id, or one of its words: "storeys", "sq ft"), else None."""
    if not unit:
        return None
    if unit in _SAID:
        return unit
    return next((key for key in FORM_UNITS if re.fullmatch(unit_pattern(key), unit.strip(), re.IGNORECASE)), None)


def is_whole(unit_key: str | None) -> bool:
    """The unit counts in whole numbers (storeys, people): "two and a half" is between two of them."""
    return bool(unit_key and units()["units"][unit_key].get("whole"))


def measure_of(unit: str | None, lang: str, *, article: bool = False) -> str:
    """What a question's unit measures, in words ("floor area", "层数"); "" for a unit these words do not cover."""
    said = _SAID.get(unit_id(unit) or "")
    return "" if said is None else say(lang, said.a_measure if article else said.measure)


def number_in(unit: str | None, number: str, count: int, lang: str) -> str | None:
    """A number in the question's unit, in the language ("3层", "3 этажа"); None for a unit these words do not cover."""
    said = _SAID.get(unit_id(unit) or "")
    return None if said is None else said.number(lang, number, count)


def unit_word(unit: str, lang: str) -> str:
    """The unit alone in the language ("平方英尺"); the plan's own word for a unit these words do not cover."""
    said = _SAID.get(unit_id(unit) or "")
    return unit if said is None else said.word(lang)
