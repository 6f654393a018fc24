"""Finding cities and lots in words: by code, by their names and aliases per language, or mistyped.

Rules and orders name a city and a lot by code; the records say how people call them
("浦东一号停车场", "the Pudong lot 1 car park", "苏州", "Suzhou"), so the help desk can
understand a name as well as a code. A lot code is unique within its city only: the same
code in two cities is a real ambiguity, which the finder reports rather than resolves.
The records are written by `billing.services` (`city_save`, `lot_save`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings
from django.db import connection
from django.db.models import Count, Max
from pypinyin import lazy_pinyin

from conversations.engine.typos import NearWords, latin_words

from .models import City, Lot

_SPACES = re.compile(r"[\s·・_\-]+")
_WORD = re.compile(r"[0-9a-z]")


def _normal(text: str) -> str:
    """Lower case, with spaces, dots and dashes folded away ("Pudong Lot-1" == "pudong lot 1" == "pudonglot1")."""
    return _SPACES.sub("", text.casefold().replace("’", "'"))


@dataclass(frozen=True)
class PlaceHit:
    """A lot or a city named in a message: the slots it gives and the words that named it."""

    slots: dict[str, str]
    raw: str
    labels: dict[str, str]  # slot -> how to name the value to a person (for a question)


def find_places(text: str, lang: str = "en") -> list[PlaceHit]:
    """Every lot and city the message names by code, name or alias (longest names first, no overlaps), and
    the lots a mistyped word of the message names ("jiefangbai" for "Jiefangbei": see `_slips`)."""
    folded, index = _folded_with_index(text)
    names, heads, near = _name_index(lang)
    # Each name found, at each place: (-length, its first rank, start, what it names). A word many lots share
    # ("town" of "Town 312 garage 7") is one entry to check, not one per lot.
    found: list[tuple[int, int, int, list[tuple[int, PlaceHit]]]] = []
    for start in range(len(folded)):
        # only the lengths of the names that begin with the characters found here
        pair = folded[start:start + 2]
        lengths = (*heads.get(pair, ()), *heads.get(pair[0], ())) if len(pair) == 2 else heads.get(pair, ())
        for length in lengths:
            named = names.get(folded[start:start + length]) if start + length <= len(folded) else None
            if named:
                found.append((-length, named[0][0], start, named))
    taken: list[tuple[int, int]] = []
    kept: list[tuple[tuple[int, int, int], PlaceHit]] = []
    for minus_length, _, start, named in sorted(found, key=lambda f: f[:3]):  # longest first, then as listed
        end = start - minus_length
        if _bounded(text, index[start], index[end - 1] + 1, named[0][1].raw) and not any(s < end and start < e and (s, e) != (start, end) for s, e in taken):
            # the same words may name several things (one code in two cities), never a piece of a longer name
            taken.append((start, end))
            words = text[index[start]:index[end - 1] + 1]
            kept += [((minus_length, rank, start), PlaceHit(hit.slots, words, hit.labels)) for rank, hit in named]
    hits = [hit for _, hit in sorted(kept, key=lambda k: k[0])]
    spans = [(index[s], index[e - 1] + 1) for s, e in taken]
    return hits + _slips(text, near, spans)


def _slips(text: str, near: _Near, spans: list[tuple[int, int]]) -> list[PlaceHit]:
    """Lots named by a word a small edit away from a distinctive word of exactly one lot's name or alias (a word
    near two lots' words names both, to be asked about), or by Chinese characters typed for others that sound the
    same ("南沾" for 南站, a pinyin input's slip); never a word inside a name already found."""
    words, lots, sounds = near
    out: list[PlaceHit] = []
    for m in latin_words(text):
        if any(s < m.end() and m.start() < e for s, e in spans):
            continue
        named = {lot for known in words.slips_of(m.group(0)) if len(words.names[known]) == 1 for lot in words.names[known]}
        out += [PlaceHit(lots[lot].slots, m.group(0), lots[lot].labels) for lot in sorted(named)]
    for start, end, said in _sound_alikes(text, sounds, spans):
        out += [PlaceHit(lots[lot].slots, text[start:end], lots[lot].labels) for lot in sorted(sounds[said])]
    return out


def _sound_alikes(text: str, sounds: dict[str, set[int]], spans: list[tuple[int, int]]) -> list[tuple[int, int, str]]:
    """Runs of Chinese characters outside the names found that sound like exactly one lot's Chinese name or
    distinctive piece, longest first: (start, end, the pinyin they share)."""
    if not sounds or not any(word in text for word in _CJK_PLACE_WORDS):
        return []  # a sound-alike is a place only before a car park's word: no pinyin for other messages
    found: list[tuple[int, int, str]] = []
    for run in _CJK_ANY.finditer(text):
        syllables = lazy_pinyin(run.group(0))
        if len(syllables) != len(run.group(0)):
            continue
        for size in range(min(len(syllables), _LONGEST_SOUND), 1, -1):
            for i in range(len(syllables) - size + 1):
                start, end = run.start() + i, run.start() + i + size
                said = " ".join(syllables[i:i + size])
                if (len(sounds.get(said, ())) == 1 and not any(s < end and start < e for s, e in spans)
                        and not any(s < end and start < e for s, e, _ in found) and _said_as_a_place(text, start, end)):
                    found.append((start, end, said))
    return found


def _said_as_a_place(text: str, start: int, end: int) -> bool:
    """Whether the characters stand as a place's name: a car park's word right after them ("南沾停车场"), never
    words that only sound like one ("下午一点" holds 午一, which sounds like 五一)."""
    return text.startswith(_CJK_PLACE_WORDS, end)


_CJK_ANY = re.compile(r"[\u4e00-\u9fff]+")
_LONGEST_SOUND = 8


# Each process keeps the names of every city and lot in a dictionary. Its own writes drop it at once
# (`forget_place_names`, on City and Lot saves and deletes); another process's are seen when it checks
# the records' count and newest change, at most every PLACES_RECHECK_SECONDS. A message is looked up at
# each position for each length a name beginning there has, never scanned once per name.
# the lots' distinctive words (each naming lots by position), the lots, and how their Chinese names and pieces sound
_Near = tuple[NearWords, tuple[PlaceHit, ...], dict[str, set[int]]]
# names -> what each names; a name's first two characters (its only one) -> the lengths names beginning so have
_Index = tuple[dict[str, list[tuple[int, PlaceHit]]], dict[str, tuple[int, ...]], _Near]
_INDEXES: dict[tuple[str, str], tuple[tuple, _Index, float]] = {}  # (fingerprint, index, when last checked)


def forget_place_names(**kwargs: object) -> None:
    """Drop the kept name indexes (connected to City's and Lot's post_save and post_delete)."""
    _INDEXES.clear()


def place_names_warm(langs: Iterable[str]) -> None:
    """Read the place names for each language now (at start-up), not on a person's first message."""
    for lang in langs:
        _name_index(lang)


def _name_index(lang: str) -> _Index:
    """Every folded name with what it names (in the finder's order), the lengths of the names by how they
    begin, and the lots' distinctive words for reading a mistyped one."""
    slot = (connection.alias + ":" + str(connection.settings_dict.get("NAME")), lang)
    cached = _INDEXES.get(slot)
    now = time.monotonic()
    if cached is not None and now - cached[2] < settings.PLACES_RECHECK_SECONDS:
        return cached[1]
    fingerprint = tuple(v for model in (City, Lot) for v in model.objects.aggregate(n=Count("id"), at=Max("updated_at")).values())
    if cached is not None and cached[0] == fingerprint:
        _INDEXES[slot] = (fingerprint, cached[1], now)
        return cached[1]
    names: dict[str, list[tuple[int, PlaceHit]]] = {}
    lots: list[tuple[PlaceHit, set[str]]] = []
    for rank, (name, hit) in enumerate(_place_names(lang, lots)):
        names.setdefault(name, []).append((rank, PlaceHit(hit.slots, name, hit.labels)))
    lengths: dict[str, set[int]] = {}
    for name in names:
        lengths.setdefault(name[:2], set()).add(len(name))
    heads = {head: tuple(sorted(of_head, reverse=True)) for head, of_head in lengths.items()}
    sounds: dict[str, set[int]] = {}
    for i, (_, words) in enumerate(lots):
        for word in words:
            if _CJK_ANY.fullmatch(word):
                sounds.setdefault(" ".join(lazy_pinyin(word)), set()).add(i)
    near = (NearWords.of((word, i) for i, (_, words) in enumerate(lots) for word in words), tuple(lot for lot, _ in lots), sounds)
    _INDEXES[slot] = (fingerprint, (names, heads, near), now)
    return names, heads, near


def _folded_with_index(text: str) -> tuple[str, list[int]]:
    """The message folded like names are, and for each folded character its position in the message."""
    chars, index = [], []
    for i, ch in enumerate(text.casefold().replace("’", "'")):
        if not _SPACES.fullmatch(ch):
            chars.append(ch)
            index.append(i)
    return "".join(chars), index


def _bounded(text: str, start: int, end: int, name: str) -> bool:
    """A name of letters or digits is not a piece of a longer word or code ("a1" inside "sha12")."""
    before = text[start - 1].casefold() if start else ""
    after = text[end].casefold() if end < len(text) else ""
    if _WORD.match(name[0]) and before and _WORD.match(before):
        return False
    return not (_WORD.match(name[-1]) and after and _WORD.match(after))


def _place_names(lang: str, lots: list[tuple[PlaceHit, set[str]]]) -> list[tuple[str, PlaceHit]]:
    """(folded name, what it names), longest first: codes, names in every language, aliases. Each lot is
    added to `lots` with its distinctive words."""
    cities = {c.pk: c for c in City.objects.all()}
    out: list[tuple[str, PlaceHit]] = []
    city_spellings = {pk: _spellings(city.code, city.names.values(), city.aliases) for pk, city in cities.items()}
    for pk, city in cities.items():
        label = _label(city.names, city.code, lang)
        out += [(name, PlaceHit({"city_code": city.code}, name, {"city_code": label})) for name in city_spellings[pk]]
    whole = {name for name, _ in out}
    partial: list[tuple[str, PlaceHit]] = []
    for lot in Lot.objects.all():
        city = cities[lot.city_id]
        labels = {"lot_code": _label(lot.names, lot.code, lang), "city_code": _label(city.names, city.code, lang)}
        hit = PlaceHit({"lot_code": lot.code, "city_code": city.code}, "", labels)
        spelled = _spellings(lot.code, lot.names.values(), lot.aliases)
        whole |= spelled
        out += [(name, PlaceHit(hit.slots, name, labels)) for name in spelled]
        distinctive = _distinctive_words(lot.names.values(), lot.aliases, city_names=city_spellings[lot.city_id])
        partial += [(name, PlaceHit(hit.slots, name, labels)) for name in distinctive]
        lots.append((hit, distinctive))
    # "the Jingan one", "静安的": a distinctive word of a lot's name names it (several lots sharing it are asked about)
    out += [(name, hit) for name, hit in partial if name not in whole]
    return sorted(out, key=lambda item: -len(item[0]))


# Words of a lot's name too common to name one by themselves. A word several lots share ("station", "机场")
# names them all, and the city said or talked about chooses among them; these name no lot at all.
_GENERIC = frozenset(["lot", "lots", "park", "parking", "carpark", "garage", "garages", "car", "cars", "the", "and", "street", "road", "centre", "center", "city", "north", "south", "east", "west", "level", "floor", "public", "private", "underground", "multi", "storey", "area", "zone"])
_CJK_PLACE_WORDS = ("停车场", "停车库", "停车楼", "车场", "车库", "停车")
_CJK_GENERIC = (*_CJK_PLACE_WORDS, "号", "一号", "二号", "三号")
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]{3,}")


def _distinctive_words(names: Iterable[str], aliases: Iterable[str], *, city_names: Iterable[str] = ()) -> set[str]:
    """Latin words of four letters or more that are not generic ("jingan" of "Jing'an lot 1", "station"), and
    each two characters of a Chinese name once its city and its generic ending are taken off ("南站" and "沙南"
    of "长沙南站停车场"; "机场" of "黄花机场停车场")."""
    cities = {c for c in city_names if len(c) >= 2}
    words: set[str] = set()
    for name in (*names, *aliases):
        for word in re.findall(r"[a-z]{4,}", name.casefold().replace("'", "").replace("’", "")):
            if word not in _GENERIC:
                words.add(word)
        for word in re.findall(r"[a-z]+(?:'[a-z]+)+", name.casefold().replace("’", "'")):
            if len(word.replace("'", "")) >= 4 and word.replace("'", "") not in _GENERIC:
                words.add(word)  # "jing'an" as written, beside "jingan"
        for run in _CJK_RUN.findall(name):
            words |= _cjk_pieces(run, cities)
    return words


def _cjk_pieces(run: str, cities: set[str]) -> set[str]:
    """The two-character pieces of a Chinese name without its city and generic ending, none generic."""
    for city in sorted(cities, key=len, reverse=True):
        if run.startswith(city) and len(run) > len(city):
            run = run[len(city):]
            break
    for ending in sorted(_CJK_GENERIC, key=len, reverse=True):
        if run.endswith(ending) and len(run) > len(ending):
            run = run[: -len(ending)]
            break
    pieces = {run[i:i + 2] for i in range(len(run) - 1)}
    return {p for p in pieces if p not in _CJK_GENERIC and p not in cities}


def _spellings(code: str, names: Iterable[str], aliases: Iterable[str]) -> set[str]:
    # A code of two letters alone ("SH") says too little to be found in free text.
    spelled = {_normal(n) for n in (*names, *aliases) if n and n.strip()}
    if len(_normal(code)) > 2 or any(ch.isdigit() for ch in code):
        spelled.add(_normal(code))
    return {s for s in spelled if s}


def _label(names: dict[str, str], code: str, lang: str) -> str:
    name = names.get(lang) or names.get("en") or next(iter(names.values()), None)
    return f"{name} ({code})" if name else code
