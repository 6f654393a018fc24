"""Identifiers and named things: order numbers and plates in any case, with spaces, dots, dashes or slashes
between their groups, or without the plate's province; lots, cities and systems by name, alias or a near
typo (`rapidfuzz`).

Identifiers are resolved, not pattern-matched: every candidate join of neighbouring tokens is compared with
the operator's records (`Records`) without separators or case. A token shaped like an identifier that no
record has is still reported (value None, its words kept), so the desk says it found no such order instead
of answering for another; a plate's tail that two records end is reported with both, to ask which. A city
named that has no record (the gazetteer in `places.json`) is reported the same way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz, process

from ..certainty import CERTAIN, GUESS, LIKELY
from . import Span, trie_pattern

_PLACES_FILE = Path(__file__).resolve().parent / "places.json"
_PROVINCES = "京津沪渝冀豫云辽黑湘皖鲁新苏浙赣鄂桂甘晋蒙陕吉闽贵粤青藏川宁琼"
_SEPARATORS = re.compile(r"[\s\-_./·•,:#]+")
NEAR_SCORE = 86  # rapidfuzz ratio (0-100) from which a word is a near typo of a name


_LOOKALIKES = str.maketrans("АВЕКМНОРСТУХ", "ABEKMHOPCTYX")  # Cyrillic letters a plate shares with Latin ones


def normalized(value: str) -> str:
    """An identifier without separators, case or script: "hz 2611.00731" and "HZ-2611-00731" are one, and so are
    a Russian plate typed in Latin letters and in Cyrillic ones."""
    return _SEPARATORS.sub("", value).upper().translate(_LOOKALIKES)


@dataclass(frozen=True)
class Records:
    """What the operator has, to resolve what a message names: canonical orders and plates, and named things
    (lots, cities, systems) as code -> the words that name it. `lot_city` says which city a lot is in, to read
    a lot name two cities share by the city said beside it."""

    orders: tuple[str, ...] = ()
    plates: tuple[str, ...] = ()
    named: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)
    lot_city: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, known: Mapping[str, Any]) -> Records:
        named = {kind: {code: tuple(words) for code, words in known.get(kind, {}).items()} for kind in ("lot", "city", "system")}
        cities = named["city"]
        lot_city = {lot: next((c for c in cities if lot.upper().startswith(c.upper() + "-")), "") for lot in named["lot"]}
        return cls(tuple(known.get("order", ())), tuple(known.get("plate", ())), named, lot_city)

    def __hash__(self) -> int:
        return hash((self.orders, self.plates))


@cache
def gazetteer() -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    data = json.loads(_PLACES_FILE.read_text(encoding="utf-8"))
    names = {}
    for place in data["cities"]:
        shown = place.get("zh") or place["en"]
        for word in place.values():
            names[word.lower()] = shown if place.get("zh") and re.search(r"[\u4e00-\u9fff]", word) else place["en"]
    return names, {k: tuple(v) for k, v in data["plate_provinces"].items()}


# --- plates and orders ---------------------------------------------------------------------------------

_PLATE = re.compile(rf"([{_PROVINCES}])\s*([A-Za-z])\s*[·•.\-\s]?\s*((?:[A-Za-z0-9]\s?){{4,5}}[A-Za-z0-9])(?![A-Za-z0-9])")
_PINYIN_PLATE = re.compile(r"(?<![A-Za-z])([a-z]{1,5})\s+([A-Za-z])\s*[·.\-\s]?\s*([A-Za-z0-9]{5,6})(?![A-Za-z0-9])", re.IGNORECASE)
_TOKEN = re.compile(r"[A-Za-z0-9\u0400-\u04ff]+(?:[\-_./·][A-Za-z0-9\u0400-\u04ff]+)*")
_MAX_JOIN = 4


def _plate_spans(text: str, records: Records) -> list[Span]:
    spans = []
    _, by_plate, _ = _keys(records)
    for m in _PLATE.finditer(text):
        value = f"{m.group(1)}{m.group(2)}{m.group(3)}"
        key = normalized(value)
        spans.append(Span("plate", m.start(), m.end(), m.group(0), {"kind": "plate", "value": by_plate.get(key),
                                                                      **({} if key in by_plate else {"text": m.group(0)})}))
    _, provinces = gazetteer()
    for m in _PINYIN_PLATE.finditer(text):
        if any(s.overlaps(m.start(), m.end()) for s in spans) or not any(ch.isdigit() for ch in m.group(3)):
            continue
        options = [f"{p}{m.group(2)}{m.group(3)}" for p in provinces.get(m.group(1).lower(), ())]
        hits = [by_plate[normalized(o)] for o in options if normalized(o) in by_plate]
        if hits:
            spans.append(_one_or_either("plate", m.start(), m.end(), text, hits))
    return spans


def _one_or_either(kind: str, start: int, end: int, text: str, hits: list[str], certainty: str = CERTAIN) -> Span:
    hits = list(dict.fromkeys(hits))
    if len(hits) == 1:
        return Span(kind, start, end, text[start:end], {"kind": kind, "value": hits[0]}, certainty)
    return Span(kind, start, end, text[start:end], {"kind": kind, "value": None, "either": hits}, GUESS, "either")


def _joins(text: str, lengths: range) -> list[tuple[int, int, str, str]]:
    """Every join of up to four neighbouring tokens one separator apart ("hz 2611 00731"), longest first, with
    its key (no separators, upper case); only joins whose key is as long as a record's can name one."""
    tokens = list(_TOKEN.finditer(text))
    keys = [normalized(t.group(0)) for t in tokens]
    joined = [len(text[a.end():b.start()]) <= 2 and bool(_SEPARATORS.fullmatch(text[a.end():b.start()] or " "))
              for a, b in zip(tokens, tokens[1:], strict=False)]
    found = []
    for i in range(len(tokens)):
        last = i
        while last + 1 < min(len(tokens), i + _MAX_JOIN) and joined[last]:
            last += 1
        for j in range(last, i - 1, -1):
            key = "".join(keys[i:j + 1])
            if len(key) in lengths:
                start, end = tokens[i].start(), tokens[j].end()
                found.append((start, end, text[start:end], key))
    return found


_ID_SHAPED = re.compile(r"(?=[A-Za-z0-9\-_./·]*\d)(?:[A-Za-z]{1,4}[\-_./·]?\d{3,}(?:[\-_./·]\d{2,})*|\d{4,}(?:[\-_./·]\d{3,})+|"
                        r"[A-Za-z]{1,4}\d{2,}[\-_./·]\d{2,}(?:[\-_./·]\d{2,})*)")


@lru_cache(maxsize=16)
def _keys(records: Records) -> tuple[dict[str, str], dict[str, str], dict[str, list[str]]]:
    """The records' orders and plates by their normalized form, and plates by their tail (no province)."""
    by_tail: dict[str, list[str]] = {}
    for plate in records.plates:
        if plate[:1] in _PROVINCES:
            by_tail.setdefault(normalized(plate)[1:], []).append(plate)
    return {normalized(o): o for o in records.orders}, {normalized(p): p for p in records.plates}, by_tail


@lru_cache(maxsize=16)
def _key_lengths(records: Records) -> range:
    """From the shortest to the longest key a record has (a join of another length names none)."""
    by_order, by_plate, by_tail = _keys(records)
    sizes = [len(k) for k in (*by_order, *by_plate, *(t for t in by_tail if len(t) >= 6))]
    return range(min(sizes), max(sizes) + 1) if sizes else range(0)


def _order_spans(text: str, records: Records, taken: list[Span]) -> list[Span]:
    by_order, by_plate, by_tail = _keys(records)
    spans: list[Span] = []
    for start, end, words, key in _joins(text, _key_lengths(records)):
        if any(s.overlaps(start, end) for s in [*taken, *spans]):
            continue
        if key in by_order:
            spans.append(Span("order", start, end, words, {"kind": "order", "value": by_order[key]}))
            continue
        if key in by_plate:
            spans.append(Span("plate", start, end, words, {"kind": "plate", "value": by_plate[key]}, *_script(words, by_plate[key])))
            continue
        tails = by_tail.get(key, []) if len(key) >= 6 and any(ch.isdigit() for ch in key) and key[:1].isalpha() else []
        if tails:
            spans.append(_one_or_either("plate", start, end, text, tails, _script(words, tails[0])[0]))
    for m in _ID_SHAPED.finditer(text):  # shaped like an order number, and no record has it
        if not any(s.overlaps(m.start(), m.end()) for s in [*taken, *spans]) and not _date_or_time(m.group(0)):
            spans.append(Span("order", m.start(), m.end(), m.group(0), {"kind": "order", "value": None, "text": m.group(0)}))
    return spans


def _script(words: str, record: str) -> tuple[str, str | None]:
    """A plate typed in the other script's look-alike letters ("o123pk" for О123РК) is likely, said back."""
    own = _SEPARATORS.sub("", words).upper()
    return (CERTAIN, None) if own in _SEPARATORS.sub("", record).upper() else (LIKELY, "look-alike letters")


def _date_or_time(words: str) -> bool:
    return bool(re.fullmatch(r"\d{4}[-/.]\d{1,2}(?:[-/.]\d{1,2})?|\d{1,2}[-/.]\d{1,2}(?:[-/.]\d{2,4})?|\d{1,2}[:.]\d{2}", words))


# --- named things: lots, cities, systems ------------------------------------------------------------------

def _word_atoms(word: str) -> list[str]:
    """A name as pattern atoms: any case, any run of spaces or hyphens between its words, whole words in Latin
    and Cyrillic script."""
    spaced = word[:1].isascii() or _CYRILLIC.match(word[:1])
    atoms = [r"(?<![\w])" if spaced else ""]
    for i, part in enumerate(re.split(r"[\s\-]+", word)):
        atoms += ([r"[\s\-]*"] if i else []) + [re.escape(ch) for ch in part]
    return [*atoms, r"(?![\w])" if word[-1:].isascii() or _CYRILLIC.match(word[-1:]) else ""]


_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_NAME_GAP = re.compile(r"[\s\-]+")
_HAN = re.compile(r"[\u4e00-\u9fff]")


def _key(words: str) -> str:
    return _NAME_GAP.sub(" ", words.strip().lower())


@dataclass(frozen=True)
class _Index:
    """The names of one operator's records, compiled once: one pattern for every name, what each names, the
    names a near typo is measured against, and the gazetteer's cities the operator has no record of."""

    names: re.Pattern[str] | None
    named: dict[str, list[tuple[str, str]]]
    latin: list[str]
    chinese: list[str]
    unknown: re.Pattern[str] | None
    anchors: frozenset[str]  # how the gazetteer's unknown names begin (three letters, or a Chinese character)
    initials: frozenset[str]  # the first letters of the names a near typo is measured against
    latin_sizes: range  # the lengths a piece may have to be a near typo of a Latin name at all
    one_off: dict[str, list[int]]  # each Chinese name with one character blanked -> the names' places in `chinese`


@lru_cache(maxsize=16)
def _index(records: Records) -> _Index:
    named: dict[str, list[tuple[str, str]]] = {}
    for kind in ("lot", "city", "system"):
        for code, words in records.named.get(kind, {}).items():
            for word in (words if kind == "system" else (code, *words)):  # a system's code is no word people say
                named.setdefault(_key(word), []).append((kind, code))
    ordered = sorted(named, key=len, reverse=True)
    names = re.compile(trie_pattern([_word_atoms(w) for w in ordered]), re.IGNORECASE) if ordered else None
    typos = [w for w in named if len(w) >= (3 if re.search(r"[\u4e00-\u9fff]", w) else 5) and named[w][0][1] != w.upper()]
    known = set(named) | {c.lower() for c in records.named.get("city", {})}
    places, _ = gazetteer()
    unknown = [w for w, shown in places.items() if w not in known and shown.lower() not in known]
    pieces = [_word_atoms(w) for w in sorted(unknown, key=len, reverse=True)]
    pieces += [[r"(?<![\w])", *map(re.escape, re.sub(r"[аяеоиыьй]$", "", w)), "[а-яё]{0,2}", r"(?![\w])"]  # "в Казани"
               for w in unknown if re.fullmatch(r"[а-яё]{4,}", w)]
    latin = [w for w in typos if not _HAN.search(w)]
    chinese = [w for w in typos if _HAN.search(w)]
    anchors = frozenset(w[:1] if _HAN.match(w) else w[:3] for w in unknown)
    one_off: dict[str, list[int]] = {}
    for place, word in enumerate(chinese):
        for i in range(len(word)):
            one_off.setdefault(word[:i] + "\0" + word[i + 1:], []).append(place)
    # a ratio of NEAR_SCORE or more needs lengths within that share of each other (2m / (a + b), m <= min(a, b))
    share = NEAR_SCORE / (200 - NEAR_SCORE)
    sizes = range(int(min(map(len, latin)) * share), int(max(map(len, latin)) / share) + 2) if latin else range(0)
    return _Index(names, named, latin, chinese, re.compile(trie_pattern(pieces), re.IGNORECASE) if pieces else None, anchors,
                  frozenset(w[:1] for w in latin), sizes, one_off)


_ANCHOR_WORD = re.compile(r"[A-Za-zÀ-ÿ\u0400-\u04ff]{3,}")


def _may_name_unknown(text: str, index: _Index) -> bool:
    """A quick look: does a word of the text begin as a gazetteer name does (most messages name no city)?"""
    lowered = text.lower()
    return not index.anchors.isdisjoint(lowered) or any(m.group(0)[:3] in index.anchors for m in _ANCHOR_WORD.finditer(lowered))


def _named_spans(text: str, records: Records, taken: list[Span]) -> list[Span]:
    index = _index(records)
    hits: list[tuple[int, int, str, list[str]]] = []
    for m in index.names.finditer(text) if index.names is not None else ():
        by_kind: dict[str, list[str]] = {}
        for kind, code in index.named.get(_key(m.group(0)), ()):
            by_kind.setdefault(kind, []).append(code)
        hits += [(m.start(), m.end(), kind, codes) for kind, codes in by_kind.items()]
    spans: list[Span] = []
    typos = _near_typos(text, index, taken, {_key(text[h[0]:h[1]]) for h in hits})
    # a longer name typed a letter off outweighs a shorter name inside it ("watr heater" is no "heater")
    for typo in typos:  # ... but never one that holds two names said right ("shanghai airport car park")
        inside = {(h[0], h[1]) for h in hits if typo.start <= h[0] and h[1] <= typo.end}
        if len(inside) == 1 and all((h[1] - h[0]) < (typo.end - typo.start) for h in hits if (h[0], h[1]) in inside):
            spans.append(typo)
    for start, end, kind, codes in hits:
        if not any(s.overlaps(start, end) for s in [*taken, *spans]):
            spans.append(_one_or_either(kind, start, end, text, codes))
    spans += [s for s in typos if not any(o.overlaps(s.start, s.end) for o in [*taken, *spans])]
    spans += _unknown_cities(text, index, [*taken, *spans])
    return _resolve_shared_lots(sorted(spans, key=lambda s: s.start), records)


def _near_typos(text: str, index: _Index, taken: list[Span], exact: set[str]) -> list[Span]:
    """A name typed a letter off ("Hangzou", "furnance", "холодильнк", "热水期"): likely, said back."""
    spans: list[Span] = []
    for start, end, piece in _windows(text):
        key = _key(piece)
        if key in exact or key in index.named or any(s.overlaps(start, end) for s in [*taken, *spans]):
            continue
        if _HAN.match(piece):
            if _NOT_A_NAME_TYPO.search(piece):
                continue  # "暖风不…" is a name and a negation, not a name typed off
            places = [p for i in range(len(piece)) for p in index.one_off.get(piece[:i] + "\0" + piece[i + 1:], ())
                      if index.chinese[p] != piece]
            best = index.chinese[min(places)] if places else None
        else:  # a slip is rarely in the first letter: only names that begin as the piece does are measured
            found = (process.extractOne(key, index.latin, scorer=fuzz.ratio, score_cutoff=NEAR_SCORE)
                     if len(piece) >= 5 and key[:1] in index.initials and len(key) in index.latin_sizes else None)
            best = found[0] if found is not None else None
        if best is None:
            continue
        kind, code = index.named[best][0]
        spans.append(Span(kind, start, end, piece, {"kind": kind, "value": code}, LIKELY, "near typo"))
    return spans


_NOT_A_NAME_TYPO = re.compile(r"[不没的了是在]")
_LETTERS = re.compile(r"[A-Za-z\u0400-\u04ff]+")
_HAN_RUN = re.compile(r"[\u4e00-\u9fff]{3,}")


def _windows(text: str) -> Iterable[tuple[int, int, str]]:
    """Pieces a name may be typed as: one to four neighbouring words, longest first, and every stretch of two
    to six Chinese characters."""
    words = list(_LETTERS.finditer(text))
    spaced = [bool(_NAME_GAP.fullmatch(text[x.end():y.start()])) for x, y in zip(words, words[1:], strict=False)]
    for size in (4, 3, 2, 1):
        for i in range(len(words) - size + 1):
            a, b = words[i], words[i + size - 1]
            if not all(spaced[i:i + size - 1]):
                continue
            if size > 1 and min(len(a.group(0)), len(b.group(0))) <= 2:
                continue  # "el calefactor" is the name with an article, not a name typed off
            yield a.start(), b.end(), text[a.start():b.end()]
    for run in _HAN_RUN.finditer(text):
        chunk = run.group(0)
        for size in range(min(len(chunk), 6), 2, -1):
            for i in range(len(chunk) - size + 1):
                yield run.start() + i, run.start() + i + size, chunk[i:i + size]


def _unknown_cities(text: str, index: _Index, taken: list[Span]) -> list[Span]:
    """A city named that the operator has no record of ("I parked in Dali", "в Казани"): reported, to be asked."""
    spans: list[Span] = []
    if index.unknown is None or not _may_name_unknown(text, index):
        return spans
    for m in index.unknown.finditer(text):
        words = m.group(0)
        if not any(s.overlaps(m.start(), m.end()) for s in [*taken, *spans]) and (not words.isascii() or words[:1].isupper() or len(words) > 5):
            shown = gazetteer()[0].get(_key(words), words) if words.isascii() else words  # "chengdu" said as Chengdu
            spans.append(Span("city", m.start(), m.end(), shown, {"kind": "city", "value": None, "text": words}))
    return spans


def _resolve_shared_lots(spans: list[Span], records: Records) -> list[Span]:
    """A lot name two cities share ("Station car park") is the one in the city said beside it."""
    cities = {s.value["value"] for s in spans if s.kind == "city" and s.value.get("value")}
    resolved = []
    for span in spans:
        either = span.value.get("either") if span.kind == "lot" else None
        if either and cities:
            mine = [code for code in either if records.lot_city.get(code) in cities]
            if len(mine) == 1:
                span = Span("lot", span.start, span.end, span.text, {"kind": "lot", "value": mine[0]})
        resolved.append(span)
    return resolved


def places_named(text: str) -> list[Span]:
    """The cities of the gazetteer a message names ("in Dali", "在大理", "в Казани"), whoever has records there."""
    return _unknown_cities(text, _index(Records()), [])


def read_identifiers(text: str, records: Records, language: str = "en") -> list[Span]:
    """Every order, plate, lot, city and system the text names, in order; each span's value is
    {"kind", "value"} (value None with "text" for one no record has, or with "either" for two that fit)."""
    plates = _plate_spans(text, records)
    orders = _order_spans(text, records, plates)
    named = _named_spans(text, records, [*plates, *orders])
    return sorted([*plates, *orders, *named], key=lambda s: s.start)
