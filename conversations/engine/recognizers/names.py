"""Persons' names, whole, in four languages: "Siobhan O'Brien-Adeyemi", "José María García López",
"Анна Петрова", "欧阳娜娜", without titles ("Dr Okafor" -> Okafor, 王经理 -> 王), possessives ("priya's") or the
words after a name (小李今天又迟到了 -> 小李), and a Russian name said in another case read as its nominative
("с Иваном" -> Иван).

A capitalised name is certain; a name typed in lower case after a word that introduces one ("talk to
priya") is likely; a word that is as often a common word as a name ("Will", "Summer", 文明, Надежда) is a
guess. The words (titles, particles, stop words, the words that end a Chinese name) are the lexicon's
`names` entries and the Chinese surnames its `surnames` list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from itertools import islice

from ..certainty import CERTAIN, GUESS, LIKELY
from ..lexicon import LANGUAGES, entry, word_list
from . import Span


@dataclass(frozen=True)
class _Words:
    stops: frozenset[str]
    titles: frozenset[str]
    particles: frozenset[str]
    cues: tuple[str, ...]
    ambiguous: frozenset[str]
    enders: tuple[str, ...]
    not_given: str  # characters no Chinese given name holds (function words, numerals, pronouns)
    word_like: frozenset[str]  # surnames that are as often part of a word (周, 车): a name only where a clause or cue begins
    weak_cues: frozenset[str]  # cues as often before a common word ("asked to speak", "back from lunch"): a guess after them


@cache
def _words(language: str) -> _Words:
    data = entry(language, "names")
    return _Words(frozenset(w.lower() for w in data["stops"]), frozenset(w.lower().rstrip(".") for w in data["titles"]),
                  frozenset(data["particles"]), tuple(sorted(data["cues"], key=len, reverse=True)),
                  frozenset(w.lower() for w in data["ambiguous"]), tuple(sorted(data.get("enders", ()), key=len, reverse=True)),
                  data.get("not_given", ""), frozenset(data.get("word_like_surnames", ())), frozenset(data.get("weak_cues", ())))


@cache
def _all(attribute: str) -> frozenset[str]:
    found: set[str] = set()
    for language in LANGUAGES:
        value = getattr(_words(language), attribute)
        found |= set(value)
    return frozenset(found)


@cache
def _surnames() -> tuple[frozenset[str], tuple[int, ...]]:
    """The surnames, and their lengths longest first (a set looked up per length, not a list scanned)."""
    names = frozenset(word_list("zh", "surnames"))
    return names, tuple(sorted({len(n) for n in names}, reverse=True))


def _surname_at(chunk: str, at: int) -> str | None:
    """The longest surname that begins at `at` (欧阳 before 欧)."""
    names, lengths = _surnames()
    return next((chunk[at:at + n] for n in lengths if chunk[at:at + n] in names and at + n <= len(chunk)), None)


def _ends_with_surname(text: str) -> bool:
    names, lengths = _surnames()
    return any(len(text) >= n and text[-n:] in names for n in lengths)


@cache
def _titles_longest_first(language: str) -> tuple[str, ...]:
    return tuple(sorted(_words(language).titles, key=len, reverse=True))


@cache
def _places() -> frozenset[str]:
    from .identifiers import gazetteer  # the city names: "Hangzhou" is no person

    names, _ = gazetteer()
    return frozenset(names)


# --- Latin and Cyrillic script ------------------------------------------------------------------------------

_L = r"A-Za-zÀ-ÖØ-öø-ÿĀ-žА-Яа-яЁё"
_UP = r"A-ZÀ-ÖØ-ÞĀ-ŽА-ЯЁ"
_WORD = re.compile(rf"[{_L}](?:[{_L}]|['’](?=[{_L}])|-(?=[{_L}]))*")
_SENTENCE_END = re.compile(r"[.!?。！？:\n]\s*$|^\s*$")


def _capitalised(word: str) -> bool:
    return word[:1].isupper() and not (len(word) > 1 and word.isupper() and len(word) <= 3)


def _nominative(word: str, before: str, language: str, after: str = "") -> str:
    """A Russian name in the case its preposition or verb asks, back in the nominative ("с Иваном" -> Иван,
    "напиши Наталье" -> Наталья, "Ивана нет" -> Иван)."""
    if language != "ru" or not re.search(r"[а-яё]$", word, re.IGNORECASE):
        return word
    cue = before.strip().split()[-1].lower() if before.strip() else ""
    lower = word.lower()
    if cue in ("с", "со"):
        for ending, back in (("ым", ""), ("им", ""), ("ом", ""), ("еем", "ей"), ("ем", ""), ("ой", "а"), ("ей", "я"), ("ью", "ь")):
            if lower.endswith(ending) and len(word) > len(ending) + 2:
                return word[: -len(ending)] + back
    if cue in ("напиши", "передай", "скажи", "позвони", "к", "ко", "сообщи", "отправь"):
        if lower.endswith(("ье", "ие")):
            return word[:-1] + "я"
        if lower.endswith("е") and len(word) > 3:
            return word[:-1] + "а"
        if lower.endswith(("ову", "еву", "ину", "ыну")):
            return word[:-1]
        if lower.endswith("у") and len(word) > 3:
            return word[:-1]
    if cue in ("спроси", "позови", "найди", "вызови", "про", "попроси") and lower.endswith(("у", "ю")) and len(word) > 3:
        return word[:-1] + ("а" if lower.endswith("у") else "я")
    genitive = cue in ("у", "для", "от", "без", "до", "нет") or re.match(r"\s+(?:нет|не\s+было|опять\s+нет)(?!\w)", after, re.IGNORECASE)
    if genitive:
        if re.search(r"[бвгдзклмнпрстфхцчшщ]а$", lower) and len(word) > 3:
            return word[:-1]
        if lower.endswith(("ова", "ева", "ина")):
            return word[:-1]
    return word


_OWNER = re.compile(r"^([А-ЯЁ][а-яё]+?)(?:ин|ын)(?:ой|ого|ому|ым|ыми|ых|ую|у|ы|а|о)$")
_NOUN_AFTER = re.compile(r"\s+[а-яё]{3,}")


def _owner_of(word: str, after: str) -> str | None:
    """A Russian possessive of a first name before its noun ("Олиной сменой", "Машиного отчёта"): the name
    it is made from (Оля, Маша). The same letters may be a case of a name in -ина (Марина), so it is likely."""
    m = _OWNER.match(word)
    if m is None or not _NOUN_AFTER.match(after):
        return None
    stem = m.group(1)
    return stem + ("а" if stem[-1] in "шжчщкгх" else "я")


def _latin_names(text: str, language: str) -> list[Span]:
    words = list(_WORD.finditer(text))
    spans: list[Span] = []
    titles, particles, stops = _all("titles"), _all("particles"), _all("stops")
    shouting = text.upper() == text and any(ch.isalpha() for ch in text)
    i = 0
    while i < len(words):
        w = words[i]
        token = w.group(0)
        lower = token.lower()
        own = _clean(token)
        at_start = _SENTENCE_END.search(text[: w.start()]) is not None
        if lower in titles and i + 1 < len(words):
            i += 1
            continue
        capital = _capitalised(token) or (shouting and lower not in stops)
        if not capital or own.lower() in stops or own.lower() in _places():
            i += 1
            continue
        j = i + 1
        parts = [words[i]]
        while j < len(words):
            nxt = words[j].group(0)
            gap = text[words[j - 1].end():words[j].start()]
            if gap.strip() or "\n" in gap:
                break
            if (_capitalised(nxt) or (shouting and nxt.lower() not in stops)) and _clean(nxt).lower() not in stops \
                    and _clean(nxt).lower() not in _places():
                parts.append(words[j])
                j += 1
                continue
            if nxt.lower() in particles and j + 1 < len(words) and _capitalised(words[j + 1].group(0)) and not shouting:
                parts.append(words[j])
                j += 1
                continue
            if nxt.lower() in particles and j + 2 < len(words) and words[j + 1].group(0).lower() in particles \
                    and _capitalised(words[j + 2].group(0)):
                parts.extend([words[j], words[j + 1]])
                j += 2
                continue
            break
        while len(parts) > 1 and parts[-1].group(0).lower() in particles:
            parts.pop()
        name = " ".join(_clean(p.group(0)) for p in parts)
        if shouting:
            name = " ".join(part.capitalize() if part.isupper() else part for part in name.split())
        if language == "ru" or re.search(r"[а-яё]", name, re.IGNORECASE):
            before, after = text[: parts[0].start()], text[parts[-1].end():]
            name = " ".join(_nominative(part, before, "ru", after) for part in name.split())
        certainty = CERTAIN
        if len(parts) == 1 and language == "ru" and (owner := _owner_of(own, text[parts[0].end():])) is not None:
            name, certainty = owner, LIKELY  # "с Олиной сменой": Оля's shift, or a Марина-like name's; said back
        elif len(parts) == 1 and (own.lower() in _all("ambiguous") or at_start and not _introduced(text, parts[0].start())):
            certainty = GUESS if own.lower() in _all("ambiguous") else LIKELY
        if len(parts) == 1 and at_start and own.lower() not in _all("ambiguous") and not _followed_by_person_verb(text, parts[0].end()):
            certainty = GUESS
        spans.append(Span("name", parts[0].start(), parts[-1].end(), text[parts[0].start():parts[-1].end()], name, certainty))
        i = j
    return spans


_GREETINGS = frozenset(entry("en", "names")["greetings"])
_PERSON_VERB = re.compile(r"\s+(?:(?:on|from|in)\s+(?:my|our|the|his|her)\s|who\s|and\s+(?:his|her|their)\s|(?:has|had|is|was|will|can|did|didn'?t|doesn'?t|isn'?t|wasn'?t|hasn'?t|hasnt|havent|won'?t|keeps|kept|"
                          r"never|always|just|also|said|says|asked|told|called|left|came|missed|quit|wants|needs|signed|showed|"
                          r"pidi[oó]|lleg[oó]|dijo|se\s+fue|firm[oó]|no\s+(?:vino|contesta|lleg[oó])|"
                          r"сказал\w*|попросил\w*|подал\w*|ушл?\w*|пришл?\w*|не\s+(?:вышел|вышла|пришел|пришла|отвечает))(?![\w'])|[,:])",
                          re.IGNORECASE)


def _followed_by_person_verb(text: str, end: int) -> bool:
    return _PERSON_VERB.match(text, end) is not None or text[end:].strip() == "" or text[end:end + 2] in ("'s", "’s")


def _introduced(text: str, start: int) -> bool:
    before = text[:start].lower().rstrip()
    return any(before.endswith(cue) for cue in _all("cues"))


def _clean(token: str) -> str:
    return re.sub(r"['’]s$", "", token)


@cache
def _cue_pattern(language: str) -> re.Pattern[str]:
    """The words that introduce a name typed in lower case, in the message's language ("a" is one in Spanish only)."""
    cues = sorted(_words(language if language in LANGUAGES else "en").cues, key=len, reverse=True)
    return re.compile(r"(?<![\w])(?:" + "|".join(re.escape(c) for c in cues) + r")\s+")


def _lowercase_names(text: str, taken: list[Span], language: str = "en") -> list[Span]:
    """A name typed in lower case after a word that introduces one ("talk to priya", "напиши наталье")."""
    spans = []
    stops = _all("stops") | _all("titles")
    for m in _cue_pattern(language).finditer(text.lower()):
        if _said_as_noun(text, m, language):
            continue  # "an email feels a bit cold", "the call went badly": the thing, not a word that introduces a name
        words = list(islice(_WORD.finditer(text, m.end()), 4))
        picked = []
        for w in words[:3]:
            token = w.group(0)
            gap = text[(picked[-1].end() if picked else m.end()):w.start()]
            if gap.strip() or not token.islower() or _clean(token) in stops or token in _all("particles") and not picked:
                if token in _all("particles") and picked and len(words) > len(picked) + 1:
                    picked.append(w)
                    continue
                break
            if len(token) < 3 or _clean(token) in _places():
                break
            picked.append(w)
        while picked and picked[-1].group(0) in _all("particles"):
            picked.pop()
        if not picked or any(s.overlaps(picked[0].start(), picked[-1].end()) for s in [*taken, *spans]):
            continue
        if len(picked) > 1 and not _looks_like_name_words(picked):
            picked = picked[:1]
        name = " ".join(p.group(0) if p.group(0) in _all("particles") else _clean(p.group(0)).capitalize() for p in picked)
        name = " ".join(_nominative(part, text[: picked[0].start()], "ru") for part in name.split())
        weak = m.group(0).strip() in _words(language if language in LANGUAGES else "en").weak_cues
        certainty = GUESS if weak or _clean(picked[0].group(0)) in _all("ambiguous") else LIKELY
        spans.append(Span("name", picked[0].start(), picked[-1].end(), text[picked[0].start():picked[-1].end()], name, certainty))
    return spans


def _said_as_noun(text: str, cue: re.Match[str], language: str) -> bool:
    """A cue that is also a noun ("call", "email") said after a determiner ("an email", "the call")."""
    data = entry(language if language in LANGUAGES else "en", "names")
    if cue.group(0).strip().lower() not in data.get("noun_cues", ()):
        return False
    before = re.search(r"([^\W\d]+)\W*$", text[: cue.start()])
    return before is not None and before.group(1).lower() in data.get("determiners", ())


def _looks_like_name_words(words: list[re.Match[str]]) -> bool:
    return all(len(w.group(0)) >= 2 for w in words) and not any(w.group(0).endswith(("ing", "ed")) for w in words[1:])


def _possessive_names(text: str, taken: list[Span]) -> list[Span]:
    """"priya's timekeeping": a lower-case word with an 's that is no common word."""
    spans = []
    for m in re.finditer(r"(?<![\w'])([a-z]{3,})['’]s\b", text):
        if m.group(1) in _all("stops") or any(s.overlaps(m.start(), m.end()) for s in taken):
            continue
        spans.append(Span("name", m.start(1), m.end(1), m.group(1), m.group(1).capitalize(), LIKELY))
    return spans


# --- Chinese ------------------------------------------------------------------------------------------------

_CJK_RUN = re.compile(r"[\u4e00-\u9fff]+")


def _chinese_names(text: str) -> list[Span]:
    words = _words("zh")
    spans: list[Span] = []
    for run in _CJK_RUN.finditer(text):
        chunk = run.group(0)
        i = 0
        while i < len(chunk):
            found = _chinese_name_at(chunk, i, words)
            if found is None:
                i += 1
                continue
            name, length, certainty = found
            start = run.start() + i
            spans.append(Span("name", start, start + length, chunk[i:i + length], name, certainty))
            i += length
    return spans


def _chinese_name_at(chunk: str, i: int, words: _Words) -> tuple[str, int, str] | None:
    """A Chinese name starting at `i`: a prefix and a surname (小李, 老王) or 阿 and a character (阿强), a surname
    and a title (王经理 -> 王), or a surname and a given name of one or two characters that no function word is in,
    followed by the end of the clause or a word that ends a name (小李今天…, 林晓的…)."""
    before = chunk[:i]
    if chunk[i] in "和跟给与同" and _chinese_name_at(chunk, i + 1, words) is not None:
        return None  # "和李娜": the name starts after the word that joins it
    prefix = next((p for p in ("小", "老", "阿") if chunk.startswith(p, i)), "")
    at = i + len(prefix)
    if prefix == "阿" and at < len(chunk) and chunk[at] not in words.not_given and _ends_name(chunk[at + 1:], words):
        return chunk[i:at + 1], at + 1 - i, CERTAIN
    surname = _surname_at(chunk, at)
    if surname is None:
        return None
    after = at + len(surname)
    title = next((t for t in _titles_longest_first("zh") if chunk.startswith(t, after)), None)
    if prefix:
        if prefix == "老" and chunk.startswith(("是", "板", "师", "公", "婆", "家"), at):
            return None
        if prefix == "小" and before and before[-1] in "半个几多两一二三四五六七八九十0123456789":
            return None  # "半小时", "两个小时": a length of time, no 小-name
        if before and before[-1] not in "和跟与同及、" and _ends_with_surname(before):
            return None  # "王小明": 小明 is the given name of a whole name
        return (chunk[i:after], after - i, CERTAIN) if not chunk.startswith(tuple(words.ambiguous), i) else None
    if title is not None:
        return surname, len(surname) + len(title), CERTAIN
    cued = any(before.endswith(c) for c in (*words.cues, *words.titles)) or not before or before[-1] in "员长工"  # 收银员王小明
    if not cued:
        return None  # "在海边玩", "上周连着": a name begins a clause or follows a word that introduces one
    overlapped = False
    for size in (2, 1):  # a given name of two characters, or of one
        end = after + size
        if end > len(chunk):
            continue
        given = chunk[after:end]
        if any(ch in words.not_given for ch in given):
            continue
        rest = chunk[end:]
        if size == 2 and rest and (not _ends_name(rest, words) or _long_ender(given[1:] + rest, words)) \
                and _ends_name(given[1:] + rest, words):
            overlapped = True
            continue  # "张伟说": the second character begins what follows ("李明明天": 李明 or 李明明, said back)
        if not _ends_name(rest, words) and not (size == 2 and cued and before):
            continue
        name = chunk[i:end]
        if name in words.ambiguous:
            return (name, len(name), GUESS) if rest.startswith(("说", "今天", "明天")) or cued else None
        if (not cued and not rest and len(name) == 2 and i == 0) or overlapped:
            return name, len(name), LIKELY
        return name, len(name), CERTAIN
    return None


def _ends_name(rest: str, words: _Words) -> bool:
    return not rest or rest.startswith(words.enders)


def _long_ender(rest: str, words: _Words) -> bool:
    """A word of two characters or more that ends a name begins here ("单独谈", "谈谈"): the name ends before it."""
    return any(len(e) >= 2 and rest.startswith(e) for e in words.enders)


def _leading_names(text: str, taken: list[Span], certainty: str = LIKELY) -> list[Span]:
    """A name typed in lower case that opens a sentence, before what a person does ("pedro se fue temprano",
    "nguyen thi lan keeps swapping shifts", "will said he can't")."""
    spans = []
    for sentence in re.finditer(r"(?:^|(?<=[.!?\n]))\s*([^.!?\n]+)", text):
        words = list(_WORD.finditer(text, sentence.start(1), sentence.end(1)))
        while words and words[0].group(0).lower() in _GREETINGS:  # "hi, sarah mitchell on my team …"
            words = words[1:]
        picked: list[re.Match[str]] = []
        for w in words[:5]:
            token = w.group(0)
            if not token.islower() or _clean(token) in _all("stops") or (token in _all("particles") and not picked):
                break
            picked.append(w)
            if _PERSON_VERB.match(text, w.end()) or token != _clean(token):
                break  # "priya's timekeeping": a possessive ends the name
        while picked and picked[-1].group(0) in _all("particles"):
            picked.pop()
        if not picked or len(picked) > 4 or not _PERSON_VERB.match(text, picked[-1].end()):
            continue
        if any(s.overlaps(picked[0].start(), picked[-1].end()) for s in taken) or any(_clean(p.group(0)) in _places() for p in picked):
            continue
        name = " ".join(p.group(0) if p.group(0) in _all("particles") else _clean(p.group(0)).capitalize() for p in picked)
        sure = GUESS if len(picked) == 1 and picked[0].group(0) in _all("ambiguous") else certainty
        spans.append(Span("name", picked[0].start(), picked[-1].end(), text[picked[0].start():picked[-1].end()], name, sure))
    return spans


def read_names(text: str, language: str = "en") -> list[Span]:
    """Every person's name the text says, in order, as spans whose value is the name as it is written to them."""
    if text.upper() == text and re.search(r"[A-ZА-ЯЁ]{2}", text):  # SHOUTED: read as typed in lower case
        lowered = text.lower()
        spans = [*_leading_names(lowered, [], CERTAIN), *_lowercase_names(lowered, [], language)]
        return sorted((Span(s.kind, s.start, s.end, text[s.start:s.end], s.value, s.certainty) for s in spans),
                      key=lambda s: s.start)
    spans = [*_latin_names(text, language), *_chinese_names(text)]
    spans += _leading_names(text, spans)
    spans += _possessive_names(text, spans)  # "about priya's timekeeping": the 's says more than the cue before it
    spans += _lowercase_names(text, spans, language)
    return sorted(spans, key=lambda s: s.start)
