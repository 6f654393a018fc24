"""Numbers, amounts and quantities in four languages: digits with separators, number words, Chinese
numerals, "40k" and 八万, halves, alternatives ("6 or 7", "六七个"), ranges ("15 to 20k"), dual ratings
("45+5 MFD"), units and currencies (`units.json`).

A clock time, a date, a duration, an ordinal or an identifier's digits are no quantity: they are left to
their own recognizers. A reading is not certain when two numbers are offered as one (`guess`), when a hedge
or a rough word goes with it ("maybe 15" `guess`, "about 20" `likely`), when its value is implausible for
its unit, or when a comma may be a decimal or a thousands mark ("1,250" in a Spanish message).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from ..certainty import CERTAIN, GUESS, LIKELY
from ..lexicon import LANGUAGES, entry, lexicon
from ..negation import hedge_near
from ..timeparse import zh_number
from . import Span

_UNITS_FILE = Path(__file__).resolve().parent / "units.json"


@dataclass(frozen=True)
class Quantity:
    """A number said, alone or as two (alternatives, a range, a dual rating), with its unit or currency."""

    value: float | None = None
    either: tuple[float, float] | None = None
    range: tuple[float, float] | None = None
    dual: tuple[float, float] | None = None
    unit: str | None = None
    currency: str | None = None

    def as_dict(self) -> dict[str, Any]:
        shape = {key: getattr(self, key) for key in ("value", "either", "range", "dual") if getattr(self, key) is not None}
        shape = {key: (list(v) if isinstance(v, tuple) else v) for key, v in shape.items()}
        return shape | {key: getattr(self, key) for key in ("unit", "currency") if getattr(self, key)}

    def converted(self, unit: str) -> float | None:
        """The single value in another unit ("110 m²" in sq_ft), or None when no factor is known."""
        factor = units()["units"].get(self.unit or "", {}).get("convert", {}).get(unit)
        return None if factor is None or self.value is None else self.value * factor


@cache
def units() -> dict[str, Any]:
    return json.loads(_UNITS_FILE.read_text(encoding="utf-8"))


def _numbers(language: str) -> dict[str, Any]:
    return entry(language, "numbers")


def _alternation(words: list[str], *, spaced: bool = True) -> str:
    parts = sorted({w for w in words if w}, key=len, reverse=True)
    body = "|".join(r"\s+".join(re.escape(p) for p in w.split()) for w in parts)
    return rf"(?<![\w])(?:{body})(?![\w])" if spaced else f"(?:{body})"


# --- the atoms: one number each -------------------------------------------------------------------------

_DIGITS = (r"(?<![A-Za-z0-9_.,'’:：\u0400-\u04ff])(?:-(?=\d)(?<![\d\w]-))?(?:"
           r"\d{1,3}(?:(?P<sep>[,.'’\u00a0\u202f ])\d{3})(?:(?P=sep)\d{3})*(?:(?!(?P=sep))[.,]\d+)?(?![\d])"
           r"|\d+(?:[.,]\d+)?)")
_ZH_NUMERAL = r"[零〇一二两兩三四五六七八九十百千万萬亿]+(?:点[零〇一二三四五六七八九]+)?"


@cache
def _word_pattern() -> re.Pattern[str]:
    words, scales, joiners = set(), set(), set()
    for language in LANGUAGES:
        table = _numbers(language)
        words |= set(table["words"])
        scales |= {s for s in table["scales"] if not re.fullmatch(r"[\w]", s)}  # "k" and 万 are read after digits
        joiners |= set(table["joiners"]) - {"-"}
    word = _alternation(sorted(words | scales))
    joiner = "|".join(re.escape(j) for j in sorted(joiners, key=len, reverse=True))
    return re.compile(rf"(?:\ba\s+)?{word}(?:(?:\s*-\s*|\s+(?:(?:{joiner})\s+)?){word})*", re.IGNORECASE)


@cache
def _word_values() -> tuple[dict[str, float], dict[str, float]]:
    words: dict[str, float] = {}
    scales: dict[str, float] = {}
    for language in LANGUAGES:
        words |= {w.lower(): float(v) for w, v in _numbers(language)["words"].items()}
        scales |= {w.lower(): float(v) for w, v in _numbers(language)["scales"].items()}
    return words, scales


def _words_value(phrase: str) -> float | None:
    """"a hundred and ten" -> 110, "twenty-five" -> 25, "doscientos treinta" -> 230, "две тысячи" -> 2000."""
    words, scales = _word_values()
    text = re.sub(r"\s*-\s*", " ", phrase.lower()).strip()
    for multi in sorted((w for w in words if " " in w), key=len, reverse=True):  # "a dozen", "half a dozen"
        text = re.sub(rf"(?<!\w){re.escape(multi)}(?!\w)", f"§{words[multi]:g}", text)
    total = current = 0.0
    seen = False
    for token in text.split():
        if token.startswith("§"):
            current += float(token[1:])
            seen = True
        elif token in ("a", "and", "y"):
            continue
        elif token in scales:
            total, current = total + (current or 1) * scales[token], 0.0
            seen = True
        elif token in words:
            current += words[token]
            seen = True
    return total + current if seen else None


@dataclass
class _Atom:
    start: int
    end: int
    value: float
    scaled: bool = False  # said with its own "k", 万 or "thousand"
    unsure_comma: bool = False


@cache
def _scale_after() -> re.Pattern[str]:
    """A multiplier after digits: a word ("thousand", "тыс", 万) or a letter typed onto them ("40k", "2.5M")."""
    scales = set()
    for language in LANGUAGES:
        scales |= {s for s in _numbers(language)["scales"] if len(s) > 1 or not s.isascii()}
    body = "|".join(re.escape(s) for s in sorted(scales, key=len, reverse=True))
    return re.compile(rf"(?:\s?(?:{body})|(?:k|K|(?-i:M)))(?![a-zа-я])", re.IGNORECASE)


def _digits_value(raw: str, sep: str | None, language: str) -> tuple[float, bool] | None:
    """The value of digits as typed ("1,250" -> 1250, "1.250,50" -> 1250.5, "4,5" -> 4.5) and whether a comma
    left the reading open (a comma before three digits in a language that writes decimals with a comma)."""
    if sep:
        whole, _, fraction = raw, "", ""
        tail = re.search(r"[.,]\d+$", raw[len(raw.rsplit(sep, 1)[0]) + 4:]) if sep in ",." else None
        if tail is not None:
            fraction = tail.group(0)[1:]
            whole = raw[: len(raw) - len(tail.group(0))]
        digits = whole.replace(sep, "")
        unsure = sep == "," and raw.count(",") == 1 and not fraction and language in ("ru", "es")
        unsure = unsure or (sep == "." and raw.count(".") == 1 and not fraction and language in ("en", "zh"))
        return float(f"{digits}.{fraction}" if fraction else digits), unsure
    return float(raw.replace(",", ".")), False


_LEADING_ZERO = re.compile(r"0\d")


_PHONE = re.compile(r"(?<![\w])\+?\(?\d[\d\s\-().]{7,}\d(?![\w])")


_CHAIN = re.compile(r"(?<![\w.])(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}|[A-Za-z]+[-/.·]?\d+(?:[-/.·]\w+)+)(?![\w])")


def _phones(text: str) -> list[tuple[int, int]]:
    """Phone numbers and the like (nine digits or more in groups joined by dashes, brackets or a plus), dates
    written with separators and identifiers in groups: no number inside them is a quantity."""
    return [m.span() for m in _PHONE.finditer(text)
            if sum(ch.isdigit() for ch in m.group(0)) >= 9 and re.search(r"[-+()]", m.group(0))] + [
        m.span() for m in _CHAIN.finditer(text)]


def _atoms(text: str, language: str) -> list[_Atom]:
    atoms: list[_Atom] = []
    phones = _phones(text)
    for m in re.finditer(_DIGITS, text):
        raw = m.group(0)
        if _LEADING_ZERO.match(raw) and not raw.startswith("0.") and not raw.startswith("0,"):
            continue  # "007", "0450": an identifier's group, not an amount
        read = _digits_value(raw, m.group("sep"), language)
        if read is None:
            continue
        value, unsure = read
        end, scaled = m.end(), False
        if (scale := _scale_after().match(text, end)) is not None:
            factor = _scale_factor(scale.group(0).strip(), language)
            if factor:
                value, end, scaled = value * factor, scale.end(), True
        atoms.append(_Atom(m.start(), end, value, scaled, unsure))
    for m in re.finditer(_ZH_NUMERAL, text):
        atoms.extend(_zh_atoms(m, text))
    for m in _word_pattern().finditer(text):
        for start, end in _word_numbers(m):
            words = text[start:end]
            value = _words_value(words)
            if value is not None and not _pronoun_one(text, start, end):
                atoms.append(_Atom(start, end, value, scaled=bool(re.search(r"thousand|million|mil|тыс|млн", words, re.I))))
    atoms = [a for a in atoms if not any(start <= a.start < end for start, end in phones)]
    atoms.sort(key=lambda a: (a.start, -a.end))
    kept: list[_Atom] = []
    for atom in atoms:  # "1.5万" is one atom, not "1.5" and "万"
        if kept and atom.start < kept[-1].end:
            continue
        kept.append(atom)
    return kept


def _scale_factor(word: str, language: str) -> float | None:
    if word == "M":
        return 1e6
    own = {k.lower(): v for k, v in _numbers(language)["scales"].items()}
    if word.lower() in own:
        return float(own[word.lower()])
    return next((float(v) for other in LANGUAGES for k, v in _numbers(other)["scales"].items() if k.lower() == word.lower()), None)


_ZH_SINGLE = "一二两兩三四五六七八九"


def _zh_atoms(m: re.Match[str], text: str) -> list[_Atom]:
    token = m.group(0)
    if token == "一" and not re.match(r"\s*(?:[个人层楼位名台件套块元万千百米]|$)", text[m.end():]):
        return []  # "等一下", "一起": a lone 一 inside a word counts nothing
    if all(ch in "十百千万萬亿" for ch in token) and token != "十":
        return []  # "万" alone multiplies the digits before it
    if "点" in token:
        whole, _, fraction = token.partition("点")
        digits = "".join(str(zh_number(ch)) for ch in fraction)
        return [_Atom(m.start(), m.end(), float(f"{zh_number(whole)}.{digits}"))]
    return [_Atom(m.start(), m.end(), float(zh_number(token.replace("萬", "万").replace("兩", "两"))),
                  scaled=any(ch in token for ch in "万萬亿"))]


def _word_numbers(m: re.Match[str]) -> list[tuple[int, int]]:
    """A run of number words, split where a hyphen joins two numbers that make no compound ("шесть-семь" is six
    or seven, "twenty-five" is one number)."""
    words, _ = _word_values()
    pieces, start = [], m.start()
    for hyphen in re.finditer(r"\s*-\s*", m.group(0)):
        left = m.group(0)[: hyphen.start()].split()[-1].lower() if m.group(0)[: hyphen.start()].split() else ""
        if words.get(left, 0) % 10 != 0 or words.get(left, 0) >= 100 or left not in words:
            pieces.append((start, m.start() + hyphen.start()))
            start = m.start() + hyphen.end()
    pieces.append((start, m.end()))
    return pieces


_PRONOUN_ONE = re.compile(r"\b(?:the|this|that|which|each|every|any|another|other|no|one|some)(?:\s+[a-z]+)?\s*$", re.IGNORECASE)


def _pronoun_one(text: str, start: int, end: int) -> bool:
    word = text[start:end].lower()
    if (half := _half_after().match(text, end)) is not None:
        end = half.end()
    if word in ("one", "una", "uno", "одна", "один", "одно"):
        return bool(_PRONOUN_ONE.search(text[:start])) or not _unit_at(text, end)
    return word in ("couple of", "a couple") and _unit_at(text, end) is None


# --- what is not a quantity ------------------------------------------------------------------------------

_TIME_AFTER = re.compile(
    r"\s*(?:[:：]\d{2}|(?:a\.?m\.?|p\.?m\.?)(?![a-z])|o'?clock|h(?:rs?|ours?)?\b|mins?\b|minutes?\b|secs?\b|seconds?\b|days?\b|"
    r"nights?\b|weeks?\b|wks?\b|months?\b|mos?\b|years?\b|yrs?\b|y/?o\b|times?\b|x\b|st\b|nd\b|rd\b|th\b|"
    r"个?半?(?:小时|钟头|钟|星期|礼拜|月|晚上?)|[点點时時分秒天日号號晚夜周年月次倍岁歲楼樓]|"
    r"час\w*|минут\w*|мин\b|сек\w*|дн[яеи]\w*|день|сут\w*|недел\w*|месяц\w*|лет\b|год\w*|раз\w*|ноч\w*|числ\w*|-?го\b|-?е\b|-?й\b|"
    r"horas?\b|minutos?\b|segundos?\b|d[ií]as?\b|semanas?\b|mes(?:es)?\b|años?\b|noches?\b|veces\b|vez\b|de\s+(?:enero|febrero|marzo|abril|mayo|"
    r"junio|julio|agosto|septiembre|setiembre|octubre|noviembre|diciembre)\b|"
    r"(?:de\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|"
    r"(?:январ|феврал|март|апрел|ма[яй]|июн|июл|август|сентябр|октябр|ноябр|декабр)\w*)",
    re.IGNORECASE,
)
_TIME_BEFORE = re.compile(
    r"(?:\b(?:at|@|by|till|until|til|before|after|since|around|about)\s+(?:like\s+)?|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+|"
    r"(?<!\w)(?:в|к|до|после|около|с)\s+|\b(?:a|hasta|desde|sobre)\s+las?\s+|\blas?\s+|第|#|№|no\.\s*|"
    r"(?:上午|下午|晚上|早上|中午|凌晨|傍晚|今晚|明早|明晚)\s*|(?:周|星期|礼拜)|"
    r"\b(?:room|rm|apt|unit|suite|gate|bay|spot|space|level|floor|row|version|v|ver|model|no|number|#|ext|line|bus|route|"
    r"exit|door|step|page|section|item|option|order|plate|lot|ticket|case)\s*[.#:]?\s*)$",
    re.IGNORECASE,
)
_CLOCK_WORDS = re.compile(r"(?:^|\s)(?:at|@|till|until|by|в|к|a\s+las|hasta\s+las)\s+$", re.IGNORECASE)


_MODEL = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+\s+$|\b[A-Z]{2,}\s*$")


def _not_a_quantity(text: str, atom: _Atom, language: str) -> bool:
    before, after = text[: atom.start], text[atom.end:]
    if re.search(r"第\s*$", before):
        return True  # "第2个": a position, not a count
    if _unit_at(text, atom.end) is not None or _currency_before_at(text, atom.start) is not None:
        return False
    if atom.value >= 100 and _MODEL.search(before) and not atom.scaled:
        return True  # "Dometic 9200", "RV 2000": a model's number
    if _TIME_AFTER.match(after):
        return True
    if re.match(r"\s*[-/.]\s*\d", after) and re.search(r"\d\s*[-/.]\s*$", before):
        return True  # the middle of "2026-11-28" or "11/28/2026"
    if re.match(r"[-/.·]?[A-Za-z]*\d", after) and not re.match(r"\s*[-–~]\s*\d", after):
        return True  # "2611-00731": an identifier's groups
    if re.search(r"[A-Za-z][-/.·]?$", before):
        return True  # "HZ-2611", "A2611/0042"
    if re.search(r"[\u4e00-\u9fff]\s*[A-Za-z]\s*$", before):
        return True  # a plate's digits: "浙A 12345"
    if re.match(r"[A-Za-z]{1,3}\d", text[atom.end:]) or re.match(r"\s*[A-Za-z]+\d", after):
        return True
    if _TIME_BEFORE.search(before) and not atom.scaled:
        return True  # "at 3", "第二笔", "room 305", "v2"
    if 1900 <= atom.value <= 2100 and atom.value.is_integer() and atom.end - atom.start == 4 and not atom.scaled:
        return True  # a year said alone
    if atom.end - atom.start >= 7 and re.fullmatch(r"[\d\s-]+", text[atom.start:atom.end]) and not atom.scaled:
        return True  # a phone or an order number typed as digits
    return bool(re.match(r"\s*(?:点|點)(?![零〇一二三四五六七八九\d])", after))


# --- units and currencies -------------------------------------------------------------------------------

@cache
def _unit_patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    found = []
    for name, spec in units()["units"].items():
        for pattern in spec["after"]:
            found.append((name, pattern))
        for pattern in spec.get("assumed", ()):
            found.append((name + "?", pattern))  # the unit by habit only: said back
    for name, spec in units()["currencies"].items():
        for pattern in spec["after"]:
            found.append(("¤" + name, pattern))
    return tuple((name, re.compile(r"\s*-?\s*(?:" + pattern.replace("в\\b", "(?-i:В)\\b") + ")", re.IGNORECASE)) for name, pattern in found)


_GLUED_UNIT = re.compile(r"([VAWFCL])(?![A-Za-z])", re.IGNORECASE)
_GLUED = {"V": "V", "A": "A", "W": "W", "F": "F", "C": "C", "L": "L"}


def _unit_at(text: str, end: int) -> tuple[str, int] | None:
    """The unit or currency right after a number (the longest said), and where it ends; a unit's letter typed
    onto the digits counts on its own ("50A", "12.6v", "38f")."""
    if (glued := _GLUED_UNIT.match(text, end)) is not None and end > 0 and text[end - 1].isdigit():
        return _GLUED[glued.group(1).upper()], glued.end()
    best: tuple[str, int] | None = None
    for name, pattern in _unit_patterns():
        if (m := pattern.match(text, end)) is not None and m.end() > end and (best is None or m.end() > best[1]):
            best = (name, m.end())
    return best


@cache
def _currency_before() -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((name, re.compile(r"(?:" + "|".join(spec["before"]) + r")\s*$", re.IGNORECASE))
                 for name, spec in units()["currencies"].items())


def _currency_before_at(text: str, start: int) -> tuple[str, int] | None:
    head = text[:start]
    for name, pattern in _currency_before():
        if (m := pattern.search(head)) is not None:
            return name, m.start()
    return None


# --- joining atoms: halves, alternatives, ranges, dual ratings ----------------------------------------------

@cache
def _joiners(kind: str) -> re.Pattern[str]:
    words = set()
    for language in LANGUAGES:
        words |= set(_numbers(language)[kind])
    body = "|".join(
        (re.escape(w) if not w[0].isalpha() else rf"(?<!\w){re.escape(w)}(?!\w)") for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"\s*,?\s*(?:{body})\s*(?:maybe\s+|perhaps\s+|possibly\s+|может\s+|quizás\s+)?", re.IGNORECASE)


@cache
def _half_after() -> re.Pattern[str]:
    words = set()
    for language in LANGUAGES:
        words |= set(_numbers(language)["halves"])
    body = "|".join(r"\s+".join(re.escape(p) for p in w.split()) for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"\s*(?:个|個)?(?:{body})(?![A-Za-z])", re.IGNORECASE)


_CAPACITOR = re.compile(r"cap|mfd|µf|μf|uf\b|конденс|мкф|condensador|电容|dual|rated|номинал", re.IGNORECASE)
_ZH_NEIGHBOURS = re.compile(r"([一二两三四五六七八九])([二两三四五六七八九])([十百千万]?)(?=[个人层楼位名台件套块元万千百米平]|$|[^一二三四五六七八九十百千万])")


def _half(text: str, atom: _Atom) -> int | None:
    """Where "and a half" after a number ends ("two and a half", "两个半", "два с половиной"), or None."""
    if (m := _half_after().match(text, atom.end)) is not None:
        return m.end()
    return None


def read_quantities(text: str, language: str = "en") -> list[Span]:
    """Every quantity the text says, in order, as `Span`s whose value is a `Quantity`."""
    return list(_read(text, language))


@lru_cache(maxsize=512)
def _read(text: str, language: str) -> tuple[Span, ...]:
    atoms = _atoms(text, language)
    spans: list[Span] = []
    i = 0
    while i < len(atoms):
        atom = atoms[i]
        if spans and atom.start < spans[-1].end:
            i += 1
            continue
        start, end = atom.start, atom.end
        shape: dict[str, Any]
        value = atom.value
        if (half := _half(text, atom)) is not None:
            value, end = value + 0.5, half
        nxt = atoms[i + 1] if i + 1 < len(atoms) else None
        zh_pair = _ZH_NEIGHBOURS.match(text, atom.start) if text[atom.start:atom.start + 1] in _ZH_SINGLE else None
        if zh_pair is not None and zh_pair.end() >= atom.end - (1 if zh_pair.group(3) else 0):
            place = {"": 1, "十": 10, "百": 100, "千": 1000, "万": 10000}[zh_pair.group(3)]
            low, high = zh_number(zh_pair.group(1)) * place, zh_number(zh_pair.group(2)) * place
            if high > low:
                shape, end = {"either": (float(low), float(high))}, zh_pair.end()
                i += 1
                while i < len(atoms) and atoms[i].start < end:
                    i += 1
                spans.append(_finish(text, start, end, shape, language))
                continue
        joined = _join(text, atom, value, end, nxt)
        if joined is not None:
            shape, end = joined
            i += 2
        else:
            shape = {"value": value}
            i += 1
        if _not_a_quantity(text, _Atom(atom.start, end, value, atom.scaled), language) and "value" in shape:
            continue
        spans.append(_finish(text, start, end, shape, language, unsure_comma=atom.unsure_comma))
    return _counted_each(text, _currency_apart(text, spans))


def read_amounts(text: str, language: str = "en") -> list[Span]:
    """The amounts of money a text states, in order, as quantity `Span`s: a number said with a currency ("999
    yuan", "¥999", "九百九十九元", "999 рублей", "999 pesos"), one written as money ("999.00", "1,250.00", "13,00"),
    or one said bare in a sentence about money ("the fee is 999", "合计 13", "cuesta 999"). A count with its own
    unit ("3 hours", "2 floors", "two orders"), a clock time, a date or an identifier is no amount."""
    return [span for span in read_quantities(text, language) if _is_amount(text, span)]


_MONEY_SHAPE = re.compile(r"\d[.,]\d{2}$")  # two decimals: how money is written
_SENTENCE_END = re.compile(r"[.!?;](?=\s|$)|[。！？；\n]")


@cache
def _money_words() -> re.Pattern[str]:
    """The words of the four languages that make a sentence about money (`units.json` "money_words")."""
    table = units()["money_words"]
    spaced = "|".join(w for language in LANGUAGES if language != "zh" for w in table.get(language, ()))
    return re.compile(rf"(?<!\w)(?:{spaced})(?!\w)|" + "|".join(table.get("zh", ())), re.IGNORECASE)


def _is_amount(text: str, span: Span) -> bool:
    if span.value.currency is not None:
        return True
    if span.value.unit is not None:
        return False  # "3 hours", "2 floors", "two orders": a count of something else
    if _MONEY_SHAPE.search(span.text):
        return True
    start = max((m.end() for m in _SENTENCE_END.finditer(text, 0, span.start)), default=0)
    end = next((m.start() for m in _SENTENCE_END.finditer(text, span.end)), len(text))
    return _money_words().search(text, start, end) is not None


def _bare(span: Span) -> bool:
    return span.value.unit is None and span.value.currency is None and span.value.either is None


@cache
def _words_pattern(kind: str, key: str) -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((name, re.compile(r"(?<![\w$¥€₽])(?:" + "|".join(spec[key]) + r")(?![\w])", re.IGNORECASE))
                 for name, spec in units()[kind].items() if spec.get(key))


def _currency_apart(text: str, spans: list[Span]) -> list[Span]:
    """A currency said away from any number ("we've got 40k for this, USD") is the currency of the message's one
    amount said without one; with several such amounts, which one it names is not known and none takes it."""
    bare = [i for i, span in enumerate(spans) if _bare(span) and span.value.dual is None]
    if len(bare) != 1:
        return spans
    for name, pattern in _words_pattern("currencies", "apart"):
        for m in pattern.finditer(text):
            if not any(span.overlaps(*m.span()) for span in spans):
                found = spans[bare[0]]
                spans[bare[0]] = replace(found, value=replace(found.value, currency=name))
                return spans
    return spans


def _counted_each(text: str, spans: list[Span]) -> tuple[Span, ...]:
    """After a price of one piece ("the part is $89.99 each"), a bare whole count in the message ("i need 2")
    counts those pieces."""
    each = _each_pattern()
    said = next((m for span in spans if span.value.currency is not None and (m := each.match(text, span.end))), None)
    if said is None:
        return tuple(spans)
    kept = [span for span in spans if not (span.start >= said.start() and span.end <= said.end())]  # "¥30一个": no count
    return tuple(replace(span, value=replace(span.value, unit="item")) if _bare(span) and span.value.value is not None
                 and float(span.value.value).is_integer() and span.start >= said.end() else span for span in kept)


@cache
def _each_pattern() -> re.Pattern[str]:
    return re.compile(r"\s*/?\s*(?:" + "|".join(units()["units"]["item"]["each"]) + r")(?![\w])", re.IGNORECASE)


def _join(text: str, atom: _Atom, value: float, end: int, nxt: _Atom | None) -> tuple[dict[str, Any], int] | None:
    if nxt is None:
        return None
    between = text[end:nxt.start]
    unit, after = _unit_at(text, end) or (None, end)
    if unit is not None and after <= nxt.start and (_unit_at(text, nxt.end) or (unit,))[0] == unit:
        between = text[after:nxt.start]  # "十个或者十二个", "6 people or 7 people": the unit said with each
    second = nxt.value
    second_end = nxt.end
    if (half := _half(text, nxt)) is not None:
        second, second_end = second + 0.5, half
    if between.strip() in ("+", "/") and re.fullmatch(r"\s*[+/]\s*", between):
        unit = _unit_at(text, second_end)
        if (unit is not None and unit[0] == "uF") or _CAPACITOR.search(text):
            return {"dual": (value, second)}, second_end  # "45+5 MFD", "45/5 µF": a dual run capacitor
        if "+" in between:
            return None
    if nxt.scaled and not atom.scaled:  # "15 to 20k": the first number takes the second's multiplier
        scale = _scale_of(text[nxt.start:nxt.end])
        if scale and value * scale <= second:
            value *= scale
    if between == "-" and not any(ch.isdigit() for ch in text[atom.start:nxt.end]) and value < second:
        return {"either": (value, second)}, second_end  # "шесть-семь", "seis-siete": said as one, either
    if (m := _joiners("either").fullmatch(between)) is not None and m.group(0).strip() not in ("/",) or (
            between.strip() == "/" and value < second):
        return ({"either": (value, second)}, second_end) if value != second else None
    if _joiners("range").fullmatch(between) is not None and value < second:
        if between.strip() in ("and", "y") and not re.search(r"\b(?:between|entre)\s+$", text[:atom.start], re.IGNORECASE):
            return None
        if _clock_range(text, atom, nxt, between):
            return None
        return {"range": (value, second)}, second_end
    return None


def _scale_of(words: str) -> float | None:
    if (m := re.search(r"(?:\s?)([^\d\s.,]+)\.?$", words)) is None:
        return None
    return next((float(v) for language in LANGUAGES for k, v in _numbers(language)["scales"].items() if k.lower() == m.group(1).lower()),
                None)


def _clock_range(text: str, atom: _Atom, nxt: _Atom, between: str) -> bool:
    """"from 3 to 6", "8-11am", "8点到11点": two times of day, not a range of numbers."""
    if _unit_at(text, nxt.end) is not None:
        return False
    return bool(_TIME_AFTER.match(text, nxt.end) or _CLOCK_WORDS.search(text[: atom.start])
                or re.search(r"(?:from|since|с|от|de|desde)\s+$", text[: atom.start], re.IGNORECASE) and nxt.value <= 24)


def _finish(text: str, start: int, end: int, shape: dict[str, Any], language: str, *, unsure_comma: bool = False) -> Span:
    unit = currency = None
    assumed = inverted = False
    if (found := _unit_at(text, end)) is not None:
        name, end = found
        if name.startswith("¤"):
            currency = name[1:]
        else:
            unit, assumed = name.rstrip("?"), name.endswith("?")
    elif language == "ru" and (before := _unit_before(text, start)) is not None:
        unit, start, inverted = before[0], before[1], True  # "человек пять": the noun first says "about"
    if currency is None and (before := _currency_before_at(text, start)) is not None:
        currency, start = before
    if unit is not None and "value" in shape and (half := _half_after().match(text, end)) is not None:
        shape, end = {"value": shape["value"] + 0.5}, half.end()  # "dos plantas y media", "两层半"
    if currency == "CNY" and "value" in shape and text[end - 1:end] in "块元" and (
            jiao := re.match(r"([一二三四五六七八九]|\d)(?:毛|角)?(?![\d一二三四五六七八九十百千万个件台套张只份次位])", text[end:])):
        shape = {"value": shape["value"] + zh_number(jiao.group(1)) / 10}  # "一块五" is 1.5 yuan
        end += jiao.end()
    if unit is None and currency is None and (counted := _COUNTED.match(text, end)) is not None:
        unit, end = "item", counted.end()  # "3 more chairs": things counted by their own name
    quantity = Quantity(**shape, unit=unit, currency=currency)
    certainty, why = _certainty(text, start, end, quantity, unsure_comma)
    if certainty == CERTAIN and unit == "person" and (quantity.value or 0) > 50 and _SMALL.search(text):
        certainty, why = GUESS, "implausible"  # "a small team, like 400 people"
    if certainty == CERTAIN and (assumed or inverted):
        certainty, why = LIKELY, "assumed unit" if assumed else "rough"
    return Span("quantity", start, end, text[start:end], quantity, certainty, why)


# A plural noun after a count that is no unit ("3 more chairs", "2 extra keys"): the things counted
_COUNTED = re.compile(r"\s+(?:more\s+|extra\s+|new\s+|spare\s+)?(?!(?:times|hours|minutes|days|weeks|months|years|people|"
                      r"persons|floors|storeys|stories|levels)\b)([a-z]{3,}s)\b(?!\s+(?:ago|later|old))", re.IGNORECASE)
_SMALL = re.compile(r"\b(?:small|little|tiny)\b|\bpeque[ñn][oa]s?\b|(?<![а-яё])(?:маленьк|небольш)\w*|小(?:团队|公司|店|组)", re.IGNORECASE)


def _unit_before(text: str, start: int) -> tuple[str, int] | None:
    """A Russian unit said before its number ("человек пять", "этажей десять"), and where it begins."""
    for m in re.finditer(r"(?<![\w])([а-яё]+)\s+$", text[:start], re.IGNORECASE):
        for name, pattern in _unit_patterns():
            if not name.startswith("¤") and (hit := pattern.fullmatch(m.group(1))) is not None and hit.end() == len(m.group(1)):
                return name.rstrip("?"), m.start(1)
    return None


def _certainty(text: str, start: int, end: int, quantity: Quantity, unsure_comma: bool) -> tuple[str, str | None]:
    if quantity.either is not None:
        return GUESS, "alternatives"
    if (hedge := hedge_near(text, start, end)) is not None:
        doubting = any(lex.hedges.fullmatch(hedge) for lex in (lexicon(language) for language in LANGUAGES))
        return (GUESS, "hedged") if doubting else (LIKELY, "rough")
    values = [v for v in (quantity.value, *(quantity.range or ()), *(quantity.dual or ())) if v is not None]
    plausible = units()["units"].get(quantity.unit or "", {}).get("plausible")
    if plausible and any(not plausible[0] <= v <= plausible[1] for v in values):
        return GUESS, "implausible"
    if unsure_comma:
        return LIKELY, "separator"
    return CERTAIN, None


def number_atoms(text: str, language: str = "en") -> list[_Atom]:
    """Every number said in the text, each alone (no joining, no units), with where it stands."""
    return _atoms(text, language)


def with_digits(text: str) -> str:
    """The text with its number words as digits ("dos horas y media" -> "2 horas y media", "три часа" ->
    "3 часа"); Chinese numerals and digits are left as they are."""
    found = []
    for m in _word_pattern().finditer(text):
        for start, end in _word_numbers(m):
            value = _words_value(text[start:end])
            if value is not None and text[start:end].lower() not in ("a", "one", "una", "un", "a couple", "couple of", "пару", "пара"):
                found.append((start, end, value))
    for start, end, value in reversed(found):
        text = text[:start] + f"{value:g}" + text[end:]
    return text
