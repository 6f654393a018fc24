"""Measure the recognizers on their test sets (tests/recognizers/*.json): per kind and language, the share
read right, marked not certain and read wrong with confidence, with the libraries' figures beside ours.

A case is **right** when the reading equals the expected one and is certain exactly when the case is; **not
certain** when the reading is marked likely or guess (asked or said back, never stored as a fact) without
being right; **confidently wrong** when a certain reading differs from the expected one or the case was
not certain; **missed** when nothing certain was read where something was expected.
"""

from __future__ import annotations

import json
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from conversations.engine.certainty import CERTAIN
from conversations.engine.recognizers import identifiers, names, numbers, times

CASES_DIR = Path(__file__).resolve().parent.parent / "tests" / "recognizers"
KINDS = ("times", "numbers", "names", "identifiers")
OUTCOMES = ("right", "unsure", "wrong", "missed")

# A reader takes a case (with the file's defaults merged in) and returns (reading, certainty), or None when it
# reads nothing; the reading has the expected value's shape.
Reader = Callable[[dict[str, Any]], tuple[Any, str] | None]


def _read_times(case: dict[str, Any]) -> tuple[Any, str] | None:
    now = datetime.fromisoformat(case["now"]).replace(tzinfo=ZoneInfo(case["timezone"]))
    found = times.read_time(case["text"], now=now, language=case["language"])
    return (found.value.as_dict(), found.certainty) if found is not None else None


def _read_numbers(case: dict[str, Any]) -> tuple[Any, str] | None:
    spans = numbers.read_quantities(case["text"], case["language"])
    return [s.value.as_dict() for s in spans], least_certain(s.certainty for s in spans)


def _read_names(case: dict[str, Any]) -> tuple[Any, str] | None:
    spans = names.read_names(case["text"], case["language"])
    return [s.value for s in spans], least_certain(s.certainty for s in spans)


def _read_identifiers(case: dict[str, Any]) -> tuple[Any, str] | None:
    spans = identifiers.read_identifiers(case["text"], identifiers.Records.of(case["known"]), case["language"])
    return [s.value for s in spans], least_certain(s.certainty for s in spans)


OURS: dict[str, Reader] = {"times": _read_times, "numbers": _read_numbers, "names": _read_names,
                           "identifiers": _read_identifiers}


def least_certain(certainties: Iterable[str]) -> str:
    order = {"certain": 0, "likely": 1, "guess": 2}
    return max(certainties, key=lambda c: order.get(c, 2), default=CERTAIN)


@dataclass
class Report:
    counts: dict[tuple[str, str, str], Counter] = field(default_factory=lambda: defaultdict(Counter))
    notes: list[str] = field(default_factory=list)

    def add(self, reader: str, kind: str, language: str, outcome: str) -> None:
        self.counts[(reader, kind, language)][outcome] += 1

    def lines(self) -> list[str]:
        out = [f"{'reader':<14}{'kind':<13}{'lang':<6}{'cases':>6}{'right':>8}{'not sure':>10}{'wrong':>8}{'missed':>8}"]
        for (reader, kind, language), count in sorted(self.counts.items(), key=lambda kv: (KINDS.index(kv[0][1]), kv[0][0] != "ours", kv[0])):
            total = sum(count.values())
            share = {k: 100 * count[k] / total for k in OUTCOMES}
            out.append(f"{reader:<14}{kind:<13}{language:<6}{total:>6}{share['right']:>7.1f}%{share['unsure']:>9.1f}%"
                       f"{share['wrong']:>7.1f}%{share['missed']:>7.1f}%")
        return out

    def total(self, reader: str = "ours", kind: str | None = None) -> Counter:
        summed: Counter = Counter()
        for (name, k, _), count in self.counts.items():
            if name == reader and (kind is None or k == kind):
                summed += count
        return summed


def load_cases(kinds: Iterable[str] = KINDS, folder: Path = CASES_DIR) -> dict[str, list[dict[str, Any]]]:
    """The cases of each kind, with the file's defaults (the clock, the known records) merged into each."""
    loaded = {}
    for kind in kinds:
        data = json.loads((folder / f"{kind}.json").read_text(encoding="utf-8"))
        shared = dict(data.get("defaults", {}))
        if "known" in data:
            shared["known"] = data["known"]
        loaded[kind] = [shared | case for case in data["cases"]]
    return loaded


def judge(kind: str, case: dict[str, Any], read: tuple[Any, str] | None) -> str:
    expected, expected_certain = case["expect"], case["certainty"] == CERTAIN
    reading, certainty = read if read is not None else (None, CERTAIN)
    empty = reading in (None, [])
    if empty:
        return "right" if expected in (None, []) else "missed"
    same = _same(kind, expected, reading)
    if same and (certainty == CERTAIN) == expected_certain:
        return "right"
    if certainty != CERTAIN:
        return "unsure"
    return "wrong"


def _same(kind: str, expected: Any, reading: Any) -> bool:
    if expected in (None, []):
        return False
    if kind == "times":
        return expected == reading
    if kind == "names":
        return [n.casefold() for n in expected] == [n.casefold() for n in reading]
    if kind == "identifiers":
        return [(i["kind"], i.get("value")) for i in expected] == [(i["kind"], i.get("value")) for i in reading]
    return len(expected) == len(reading) and all(_same_quantity(e, r) for e, r in zip(expected, reading, strict=True))


def _same_quantity(expected: dict[str, Any], reading: dict[str, Any]) -> bool:
    if expected.get("unit") != reading.get("unit") or expected.get("currency") != reading.get("currency"):
        return False
    for key in ("value", "either", "range", "dual"):
        if (key in expected) != (key in reading):
            return False
        if key in expected:
            want, got = expected[key], reading[key]
            pairs = zip(want, got, strict=False) if isinstance(want, list) else [(want, got)]
            if isinstance(want, list) and len(want) != len(got):
                return False
            if any(abs(float(w) - float(g)) > 1e-6 * max(1.0, abs(float(w))) for w, g in pairs):
                return False
    return True


def evaluate(cases: dict[str, list[dict[str, Any]]], readers: dict[str, dict[str, Reader]] | None = None,
             *, show: bool = False, languages: dict[str, tuple[str, ...]] | None = None) -> Report:
    """Read every case with our recognizers and any other readers given ({name: {kind: reader}}), each other
    reader on the cases in the languages it reads ({name: languages}, all when not given)."""
    report = Report()
    everyone = {"ours": OURS} | (readers or {})
    for name, by_kind in everyone.items():
        for kind, kind_cases in cases.items():
            reader = by_kind.get(kind)
            if reader is None:
                continue
            for case in kind_cases:
                if name != "ours" and case["language"] not in (languages or {}).get(name, (case["language"],)):
                    continue
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")  # a library's own complaints about a text (cn2an, jieba)
                        read = reader(case)
                except Exception as error:  # noqa: BLE001 - a library that fails on a case reads nothing
                    read = None
                    if show and name == "ours":
                        report.notes.append(f"{case['id']}: error {error!r}")
                outcome = judge(kind, case, read)
                report.add(name, kind, case["language"], outcome)
                if show and name == "ours" and outcome != "right":
                    report.notes.append(f"{outcome:<7}{case['id']:<12}{case['text']!r}\n        expected {case['expect']} "
                                        f"{case['certainty']}\n        read     {read}")
    return report
