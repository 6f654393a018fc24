"""Well-kept open-source libraries read the recognizer test sets beside ours (manage.py eval_recognizers --libraries).

Each adapter makes a plain, documented call and only maps the library's output to the shape of the cases'
"expect" (recognizer_eval._same): dateparser and ctparse read times, cn2an, text2num and quantulum3 read
numbers, jieba reads Chinese names. Libraries know nothing of certainty, so every reading is "certain".
They are only for this comparison (the `compare` extra in pyproject.toml); the product never imports them,
and a library that is not installed is left out.
"""

from __future__ import annotations

import logging
import re
import warnings
from datetime import datetime
from typing import Any

from conversations.recognizer_eval import Reader

CERTAIN = "certain"
NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")
TIME_WORDS = re.compile(r"\d:\d|\b[ap]\.?m\b|点|час|hora", re.IGNORECASE)
MINUTE, DAY = "%Y-%m-%dT%H:%M", "%Y-%m-%d"

# quantulum3's unit names (lower case) -> ours: ("unit" | "currency", value)
QUANTULUM_UNITS = {
    "square metre": ("unit", "sq_m"), "square foot": ("unit", "sq_ft"), "volt": ("unit", "V"),
    "ampere": ("unit", "A"), "watt": ("unit", "W"), "degree fahrenheit": ("unit", "F"),
    "degree celsius": ("unit", "C"), "percentage": ("unit", "percent"), "kilometre": ("unit", "km"),
    "mile": ("unit", "mi"), "kilogram": ("unit", "kg"), "pound-mass": ("unit", "lb"), "litre": ("unit", "L"),
    "gallon": ("unit", "gal"), "pound per square inch": ("unit", "psi"),
    "pound-force per square inch": ("unit", "psi"), "kilopascal": ("unit", "kPa"),
    "microfarad": ("unit", "uF"), "inch of water": ("unit", "in_wc"),
    "chinese yuan": ("currency", "CNY"), "yuan": ("currency", "CNY"), "renminbi": ("currency", "CNY"),
    "dollar": ("currency", "USD"), "united states dollar": ("currency", "USD"), "euro": ("currency", "EUR"),
    "russian ruble": ("currency", "RUB"), "ruble": ("currency", "RUB"), "rouble": ("currency", "RUB"),
}


def _now(case: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(case["now"])  # naive: the libraries take the wall clock of the case


def _numbers(text: str) -> list[dict[str, Any]]:
    return [{"value": float(n.replace(",", ""))} for n in NUMBER.findall(text)]


def _dateparser(case: dict[str, Any]) -> tuple[Any, str] | None:
    from dateparser.search import search_dates

    settings = {"RELATIVE_BASE": _now(case), "PREFER_DATES_FROM": "future", "RETURN_AS_TIMEZONE_AWARE": False}
    found = search_dates(case["text"], languages=[case["language"]], settings=settings) or []
    if len(found) == 1:
        words, when = found[0]
        if when.hour == when.minute == 0 and not TIME_WORDS.search(words):
            return {"date": when.strftime(DAY)}, CERTAIN
        return {"at": when.strftime(MINUTE)}, CERTAIN
    if len(found) == 2:
        return {"start": found[0][1].strftime(MINUTE), "end": found[1][1].strftime(MINUTE)}, CERTAIN
    return None


def _ctparse(case: dict[str, Any]) -> tuple[Any, str] | None:
    if case["language"] != "en":
        return None
    from ctparse import ctparse
    from ctparse.types import Duration, Interval, Time

    parsed = ctparse(case["text"], ts=_now(case), timeout=1)
    found = parsed.resolution if parsed is not None else None

    def moment(t: Time | None) -> str | None:
        if t is None or None in (t.year, t.month, t.day):
            return None
        return f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour or 0:02d}:{t.minute or 0:02d}"

    if isinstance(found, Time) and (at := moment(found)) is not None:
        return ({"date": at[:10]} if found.hour is None else {"at": at}), CERTAIN
    if isinstance(found, Interval):
        start, end = moment(found.t_from), moment(found.t_to)
        if start and end:
            return {"start": start, "end": end}, CERTAIN
        if end and not found.t_from:
            return {"by": end[:10]}, CERTAIN  # an interval open at the start: until then
    if isinstance(found, Duration):
        per = {"minutes": 1, "hours": 60, "days": 1440, "nights": 1440, "weeks": 10080}.get(found.unit.value)
        return ({"minutes": int(found.value * per)}, CERTAIN) if per else None
    return None


def _cn2an(case: dict[str, Any]) -> tuple[Any, str] | None:
    if case["language"] != "zh":
        return None
    import cn2an

    return _numbers(cn2an.transform(case["text"], "cn2an")), CERTAIN


def _text2num(case: dict[str, Any]) -> tuple[Any, str] | None:
    if case["language"] not in ("en", "es"):
        return None
    from text_to_num import alpha2digit

    return _numbers(alpha2digit(case["text"], case["language"])), CERTAIN


def _quantulum3(case: dict[str, Any]) -> tuple[Any, str] | None:
    if case["language"] != "en":
        return None
    from quantulum3 import parser

    items = []
    for quantity in parser.parse(case["text"]):
        item: dict[str, Any] = {"value": quantity.value}
        name = quantity.unit.name.lower()
        if name != "dimensionless":
            key, ours = QUANTULUM_UNITS.get(name, ("unit", name))  # a unit we have no name for stays its own
            item[key] = ours
        items.append(item)
    return items, CERTAIN


def _jieba(case: dict[str, Any]) -> tuple[Any, str] | None:
    if case["language"] != "zh":
        return None
    import jieba.posseg

    return [w.word for w in jieba.posseg.cut(case["text"]) if w.flag == "nr"], CERTAIN


# The languages each library reads: it is measured on those cases only.
LANGUAGES_READ: dict[str, tuple[str, ...]] = {"dateparser": ("en", "zh", "ru", "es"), "ctparse": ("en",), "cn2an": ("zh",),
                                              "text2num": ("en", "es"), "quantulum3": ("en",), "jieba": ("zh",)}


def available_readers() -> dict[str, dict[str, Reader]]:
    """{library: {kind: reader}} for the compared libraries that are installed."""
    readers: dict[str, dict[str, Reader]] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # quantulum3 warns that its optional classifier is not installed
        for name, module, kind, reader in (
            ("dateparser", "dateparser.search", "times", _dateparser),
            ("ctparse", "ctparse", "times", _ctparse),
            ("cn2an", "cn2an", "numbers", _cn2an),
            ("text2num", "text_to_num", "numbers", _text2num),
            ("quantulum3", "quantulum3.parser", "numbers", _quantulum3),
            ("jieba", "jieba.posseg", "names", _jieba),
        ):
            try:
                __import__(module)
            except ImportError:
                continue
            readers[name] = {kind: reader}
    logging.getLogger("ctparse").setLevel(logging.ERROR)  # it warns on every text it reads no time in
    if "jieba" in readers:
        import jieba

        jieba.setLogLevel(60)
    return readers
