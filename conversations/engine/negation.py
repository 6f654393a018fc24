"""Negation and hedge scope, one mechanism for every language (NegEx, as clinical NLP reads notes).

A negation cue ("not", "no", "不", "не", "sin") negates what follows it up to a scope boundary: a
punctuation mark, a boundary word ("but", "但是", "но", "pero") or the lexicon's word limit. A cue
after the words ("rattling: none", "异响也没有", "стука нет") negates them when it closes its clause.
Phrases that look like a negation and are none ("not sure", "no problem", "won't stay lit") are
skipped. Words that carry a negation of their own are read as said: in Russian and Spanish a
second negative agrees with the first ("no enfría en ningún modo"). The words themselves live in the per-language lexicon (`lexicon`), not here.

`negation_cue(text, start, end)` is the cue that negates the words `text[start:end]`, or None;
`hedge_near(text, start, end)` the hedge that makes a value there unsure ("maybe 6", "3点左右").
Both read every language's lexicon: a message may mix them.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

from .lexicon import Lexicon, lexicon, lexicons_for, word_list, words_of

_PUNCTUATION = re.compile(r"[.;:!?\n。；：！？,，、()（）…]|(?<!\w)-(?!\w)|—")
_WORD = re.compile(r"[^\W\d_]+|\d+", re.UNICODE)
_CJK_CHAR = re.compile(r"[\u3400-\u9fff]")
_OBJECT_CUES = frozenset({"nothing", "ничего", "nada"})  # what a verb found, said as its object: it negates the finding
_AFTER_SCOPE = 3  # a cue after the words is close to them: "noise, none" is not "noise ... none at all"
_HEDGE_BEFORE = 3  # words between a hedge and its value: "maybe around 6", "I think it was 6"
_HEDGE_AFTER = 2  # "6-ish", "6 or so", "3点左右"


def _segment_start(text: str, start: int) -> int:
    """Where the clause holding `start` begins: just after the last punctuation mark before it."""
    ends = [mark.end() for mark in _PUNCTUATION.finditer(text, 0, start)]
    return ends[-1] if ends else 0


def _segment_end(text: str, end: int) -> int:
    found = _PUNCTUATION.search(text, end)
    return found.start() if found is not None else len(text)


def _distance(lex: Lexicon, between: str) -> int:
    """How far apart two spots are, in the lexicon's unit: words, or characters for Chinese."""
    if lex.spaced:
        return len(_WORD.findall(between))
    return len(re.sub(r"\s+", "", between))


def _pseudo(lex: Lexicon, text: str, cue: re.Match[str], segment: tuple[int, int]) -> bool:
    """Whether the cue is part of a phrase that only looks like a negation ("not sure", "没问题"), or asks a
    question by saying a word and its negative ("欠不欠费", "贵不贵", "有没有")."""
    if cue.start() > 0 and cue.end() < len(text) and cue.group(0) in ("不", "没") and text[cue.start() - 1] == text[cue.end()]:
        return True
    return any(p.start() <= cue.start() < p.end() for p in lex.pseudo_negation.finditer(text, *segment))


def _cue_before(lex: Lexicon, text: str, start: int, end: int) -> re.Match[str] | None:
    begin = _segment_start(text, start)
    cues = [c for c in lex.negation_before.finditer(text, begin, start) if c.end() <= start]
    for cue in reversed(cues):
        if _pseudo(lex, text, cue, (begin, max(end, cue.end()))):
            continue
        between = text[cue.end():start]
        if lex.boundary.search(text, cue.end(), start) or _distance(lex, between) > lex.scope:
            return None  # the nearest real cue is out of reach; an earlier one is further still
        return cue
    return None


def _cue_after(lex: Lexicon, text: str, end: int) -> re.Match[str] | None:
    close = _segment_end(text, end)
    for cue in lex.negation_after.finditer(text, end, close):
        between = text[end:cue.start()]
        rest = text[cue.end():close]
        if lex.boundary.search(text, end, cue.start()) or _distance(lex, between) > _AFTER_SCOPE:
            return None
        if _pseudo(lex, text, cue, (end, close)):
            continue
        if _distance(lex, rest) and not _only_fillers(lex, rest) and not (lex.spaced and cue.group(0).lower() in _OBJECT_CUES
                                                                          and not between.strip()):
            continue  # a cue after the words negates them only when it closes the clause ("stuck, none"), or is
            # what they found right after them ("the bubble test found nothing at the coil")
        return cue
    return None


def _only_fillers(lex: Lexicon, words: str) -> bool:
    return not _WORD.findall(lex.fillers.sub(" ", words))


def negation_cue(text: str, start: int, end: int, *, pattern: str | None = None) -> str | None:
    r"""The words that negate `text[start:end]` ("no", "doesn't", "没", "не"), or None when nothing does.

    With the `pattern` the words matched: one that says a negation itself (`не\s+гор`, `ning[uú]n modo`) is read
    as said, whatever stands before it (Russian and Spanish negative concord: "no enfría en ningún modo"); one
    that does not is negated by a cue inside its words too ("плита тоже не зажигается" is no stove lighting).
    Without it, words holding a cue are taken to carry their own negation."""
    own = says_negation(pattern) if pattern is not None else None
    if own and _opens_negated(pattern or ""):
        return None  # negative concord: "no enfría en ningún modo" is what `ning[uú]n modo` says
    if own:  # its own negation comes later ("zumba … no arranca"): a cue right before its first words still
        for lex in lexicons_for(text):  # negates them ("No zumba, no arranca" is no humming)
            cue = _cue_before(lex, text, start, end)
            if cue is not None and _distance(lex, text[cue.end():start]) <= 1:
                return cue.group(0)
        return None
    for lex in lexicons_for(text):
        inside = lex.negation_before.search(text, start, end)
        if inside is not None and own is None:
            return None  # the words carry their own negation ("no cooling in any mode", "ни на газу ни от сети")
        if inside is not None and not _pseudo(lex, text, inside, (start, end)):
            return inside.group(0)
    while end < len(text) and text[end].isalpha() and not _CJK_CHAR.match(text[end]):
        end += 1  # a pattern may stop inside a word ("аммиак" of "аммиака нет"): the word's end is what follows
    for lex in lexicons_for(text):
        cue = _cue_before(lex, text, start, end) or _cue_after(lex, text, end)
        if cue is not None:
            return cue.group(0)
    return None


@cache
def _opens_negated(pattern: str) -> bool:
    r"""Whether a pattern's words begin with a negation cue (`не\s+гор`, `ning[uú]n modo`, `doesn'?t\s+light`)."""
    words = pattern_as_words(pattern).strip()
    return any(cue.start() == 0 for lex in lexicons_for(words) for cue in [lex.negation_before.match(words)] if cue)


@lru_cache(maxsize=512)
def may_negate(text: str) -> bool:
    """Whether any negation cue of any language the text is written in is said at all: most messages say none,
    and then nothing in them is negated (one scan instead of one per reading)."""
    return any(lex.negation_before.search(text) or lex.negation_after.search(text) for lex in lexicons_for(text))


def negated(text: str, start: int, end: int, *, pattern: str | None = None) -> bool:
    return negation_cue(text, start, end, pattern=pattern) is not None


# A pattern read as words: lookarounds dropped (a guard such as `(?<!no )` says nothing), a character class
# as its first character (`ning[uú]n` -> "ningun"), escapes as what they stand for, the rest of the syntax as spaces
_PATTERN_AS_WORDS = (
    (re.compile(r"\(\?<?[=!](?:[^()]|\([^()]*\))*\)"), " "),
    (re.compile(r"\\[sbwdSBWD]"), " "),
    (re.compile(r"\[\^?\\?(.)[^\]]*\]"), r"\1"),
    (re.compile(r"\(\?(?::|P<\w+>|[imsx-]+:?)"), " "),
    (re.compile(r"\\(.)"), r"\1"),
    (re.compile(r"\{\d*,?\d*\}|[?*+]"), ""),
    (re.compile(r"[()|^$.]"), " "),
)


@cache
def pattern_as_words(pattern: str) -> str:
    r"""The words a pattern reads, its syntax dropped (`doesn'?t\s+light` -> "doesn't light")."""
    words = pattern
    for syntax, replacement in _PATTERN_AS_WORDS:
        words = syntax.sub(replacement, words)
    return re.sub(r"\s+", " ", words).strip()


@cache
def says_negation(pattern: str) -> bool:
    r"""Whether a pattern's own words say a negation (`doesn'?t\s+light`, `не\s+гор`, `没有?火`)."""
    words = pattern_as_words(pattern)
    return any(lex.negation_before.search(words) for lex in lexicons_for(words))


def only_fillers(words: str) -> bool:
    """Whether words say nothing but fillers ("um, well", "这个"): nothing is lost when they go."""
    return all(_only_fillers(lex, words) for lex in lexicons_for(words))


def offers_alternatives(words: str) -> bool:
    """Whether words join two alternatives ("or", "or maybe", "或者", "или", "o")."""
    return any(lex.alternatives.search(words) for lex in lexicons_for(words) or (lexicon("en"),))


def rough_or_doubtful(words: str) -> bool:
    """Whether the words hold any hedge or rough word at all ("差不多", "maybe", "or so"), wherever it stands."""
    return any(lex.hedges.search(words) or lex.approximators.search(words) for lex in lexicons_for(words))


def doubt(text: str) -> str | None:
    """The first word of doubt in a message ("I guess", "maybe", "我也说不太清", "наверное"), or None."""
    found = [m for lex in lexicons_for(text) if (m := lex.hedges.search(text))]
    return min(found, key=lambda m: m.start()).group(0) if found else None


def said_unsure(text: str) -> str | None:
    """Doubt over a whole statement: a hedge in its first clause ("好像是主管打过电话", "I think someone called") or
    a clause that is nothing but doubt ("…，我不太确定", "…, not sure"); not a hedge about something else in it
    ("no luck reaching him, phone seems off")."""
    pieces = [p for p in _PUNCTUATION.split(text) if p.strip()]
    if not pieces:
        return None
    if (first := doubt(pieces[0])) is not None:
        return first
    for piece in pieces[1:]:
        found = doubt(piece)
        if found is not None and only_fillers(re.sub(r"(?i)\b(?:i'?m|i\s+am|but)\b|我|但|я|но|pero", " ", piece.replace(found, " "))):
            return found
    return None


def after_correction(text: str) -> str:
    """The words after the last correction marker of a message ("一万二，哦不对，是一千二" -> "是一千二"), or the
    whole message when it corrects nothing: what a person says after correcting themselves is what they mean."""
    ends = [m.end() for lex in lexicons_for(text) for m in lex.corrections.finditer(text)]
    return text[max(ends):] if ends else text


def picks_between(text: str) -> str | None:
    """Which of two values offered back a message picks by its words: "higher" ("the higher one", "第二个",
    "больше", "el mayor"), "lower", or None."""
    for lex in lexicons_for(text):
        for side in ("higher", "lower"):
            words = word_list(lex.language, f"pick_{side}")
            if words and re.search(_words_pattern(words, spaced=lex.spaced), text, re.IGNORECASE):
                return side
    return None


@cache
def _words_pattern(words: tuple[str, ...], *, spaced: bool) -> str:
    alternatives = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return rf"(?<!\w)(?:{alternatives})(?!\w)" if spaced else f"(?:{alternatives})"


def opens_a_request(lead: str) -> bool:
    """Whether the words before a wish only open a request ("can I", "I'd like to", "我想", "хочу", "quiero"):
    anything more makes it a story of someone else's wish ("a customer asked to speak to a manager")."""
    rest = lead
    for lex in lexicons_for(lead):
        rest = lex.request_openers.sub(" ", rest)
    return not _WORD.findall(rest)


_SENTENCE_MARK = re.compile(r"[.!?\n。！？]+(?=\s|$)|[。！？\n]")
_DOUBT_SCOPE = 8  # words (twelve characters in Chinese) a doubt said first reaches over


def doubt_over(text: str, start: int, end: int) -> str | None:
    """The doubt that holds over an observation `text[start:end]`: a hedge before it in its sentence, up to a
    boundary word ("I think it clicks", "может, предохранитель сгорел"; not "not sure, but it reads 0 V"), or
    one after it that closes its clause ("…сгорел, не уверен", "可能烧了，不确定", "zumba, pero no estoy seguro")."""
    marks = [m.end() for m in _SENTENCE_MARK.finditer(text, 0, start)]
    begin = marks[-1] if marks else 0
    stop = _SENTENCE_MARK.search(text, end)
    close = stop.start() if stop is not None else len(text)
    for lex in lexicons_for(text):
        for hedge in lex.hedges.finditer(text, begin, start):
            between = text[hedge.end():start]
            reach = _DOUBT_SCOPE if lex.spaced else _DOUBT_SCOPE + 4
            if hedge.end() <= start and not lex.boundary.search(text, hedge.end(), start) and _distance(lex, between) <= reach:
                return hedge.group(0)
        for hedge in lex.hedges.finditer(text, end, close):
            rest = text[hedge.end():_segment_end(text, hedge.end())]
            if _only_fillers(lex, rest) or _only_refining(lex, rest):  # "…сгорел, не уверен"; "на четверти, может чуть ниже"
                return hedge.group(0)
    return None


@cache
def _list_pattern(lex: Lexicon, key: str, *, tail: str = "") -> re.Pattern[str] | None:
    """One of a language's word lists (`refiners`, `joiners`, `totals`…) as a pattern, compiled once; None
    when the language has no such list. `tail`: what may follow the words (the spaces after a lead-in)."""
    words = word_list(lex.language, key)
    return re.compile(_words_pattern(words, spaced=lex.spaced) + tail, re.IGNORECASE) if words else None


def _only_refining(lex: Lexicon, words: str) -> bool:
    """Whether words only move a value said before ("a bit lower", "чуть ниже", "再低一点"): a hedge with them
    doubts that value."""
    refiners = _list_pattern(lex, "refiners")
    if refiners is None or not refiners.search(words):
        return False
    rest = refiners.sub(" ", lex.fillers.sub(" ", lex.approximators.sub(" ", words)))
    return not _WORD.findall(rest)


def hedge_near(text: str, start: int, end: int) -> str | None:
    """The hedge ("maybe", "I think", "可能") or rough word ("around", "-ish", "左右") that makes the value
    `text[start:end]` unsure, or None (an observation's doubt is `doubt_over`'s: "about 20 mV" is sure)."""
    begin, close = _segment_start(text, start), _segment_end(text, end)
    for lex in lexicons_for(text):
        for words in (lex.hedges, lex.approximators):
            for hedge in words.finditer(text, begin, start):
                if hedge.end() <= start and _distance(lex, text[hedge.end():start]) <= _HEDGE_BEFORE:
                    return hedge.group(0)
            for hedge in words.finditer(text, end, close):
                if _distance(lex, text[end:hedge.start()]) <= _HEDGE_AFTER:
                    return hedge.group(0)
    return None


_NUMERAL = re.compile(r"\d|[一二两三四五六七八九十百千万亿]")


def unknowing(text: str) -> str | None:
    """The words that say the person does not know ("no idea", "真不知道", "не знаю", "ni idea"), or None."""
    for lex in lexicons_for(text):
        words = word_list(lex.language, "unknowing")
        if words and (found := re.search(_words_pattern(words, spaced=lex.spaced), text, re.IGNORECASE)):
            return found.group(0)
    return None


def rough(text: str) -> str | None:
    """A rough word on a value in free words: next to a number ("50k or so", "差不多明年三月") or closing its
    clause ("sometime in Q1, roughly"). "About" before other words is a topic ("it's about tracking jobs")."""
    for lex in lexicons_for(text):
        for word in lex.approximators.finditer(text):
            after = text[word.end():_segment_end(text, word.end())]
            before = text[_segment_start(text, word.start()):word.start()]
            near_after = _NUMERAL.search(after)
            if near_after is not None and _distance(lex, after[:near_after.start()]) <= _HEDGE_BEFORE:
                return word.group(0)
            last = _last_numeral(before)
            if last is not None and last > len(before) - 12 and _distance(lex, before[last:]) <= _HEDGE_AFTER:
                return word.group(0)
            trailing = word.group(0).casefold() in word_list(lex.language, "approximators_trailing")
            if trailing and text[:word.start()].strip() and _only_fillers(lex, after):
                return word.group(0)
    return None


def _last_numeral(words: str) -> int | None:
    """Where the last numeral of the words ends, or None."""
    found = [m.end() for m in _NUMERAL.finditer(words)]
    return found[-1] if found else None


# a colon or a point between digits is part of a value ("10:30", "12.5"), not a clause's end
_CLAUSE_WORDS = r"(?:[^,.;:!?，。；：！？\n—–]|(?<=\d)[:.：](?=\d))"


@cache
def _swap_patterns(language: str) -> tuple[re.Pattern[str], ...]:
    """The lexicon's swap templates ("X instead of Y", "是X，不是Y") as patterns with groups `new` and `old`
    (a group that ends the template takes the clause's rest; one before words stops at them)."""
    patterns = []
    for template in word_list(language, "swaps"):
        parts = [part for part in re.split(r"([XY])", template) if part]
        body = ""
        for index, part in enumerate(parts):
            if part in ("X", "Y"):
                name, reach = ("new" if part == "X" else "old"), ("+" if index == len(parts) - 1 else "+?")
                body += rf"(?P<{name}>{_CLAUSE_WORDS}{reach})"
            else:
                body += r"\s*" + r"\s*".join(_template_word(word, spaced=language != "zh") for word in part.split()) + r"\s*"
        patterns.append(re.compile(body, re.IGNORECASE))
    return tuple(patterns)


@cache
def _swap_words(language: str) -> re.Pattern[str]:
    """Any word the language's swap templates are written with, to skip them all when none is said."""
    words = {word for template in word_list(language, "swaps") for word in re.split(r"[XY,，\s]+", template) if word}
    return re.compile(_words_pattern(tuple(sorted(words)), spaced=language != "zh"), re.IGNORECASE)


def _template_word(word: str, *, spaced: bool) -> str:
    """A template's own word as a pattern: whole words where words are spaced ("not" is no part of "nothing")."""
    pattern = re.escape(word).replace(",", "[,，—–]")  # a dash pauses as a comma does ("not Jon — John")
    if spaced and word[0].isalnum():
        pattern = r"\b" + pattern
    return pattern + r"\b" if spaced and word[-1].isalnum() else pattern


def word_swaps(text: str) -> list[tuple[str, str]]:
    """The words a message puts in place of others: ("tennis courts", "squash") for "it's tennis courts, not
    squash"; ("钢结构", "木结构") for "是钢结构，不是木结构". The new words lose their lead-in ("it's", "是")."""
    return list(_swaps_in(text))


@lru_cache(maxsize=256)
def _swaps_in(text: str) -> tuple[tuple[str, str], ...]:
    """`word_swaps`, read once per message: the slots, the form and the whole answer each ask it in one turn."""
    found: list[tuple[str, str]] = []
    for lex in lexicons_for(text):
        if not _swap_words(lex.language).search(text):
            continue  # none of the templates' own words is said ("instead of", "不是"): no swap to look for
        lead = _list_pattern(lex, "swap_leads", tail=r"\s*")
        for pattern in _swap_patterns(lex.language):
            for match in pattern.finditer(text):
                # both lose their lead-in: "it's a yoga studio, not a gym" puts "yoga studio" for "gym"
                new, old = _without_lead(lex, lead, match.group("new")), _without_lead(lex, lead, match.group("old"))
                if lex.negation_before.fullmatch(new) or _only_fillers(lex, new):
                    continue  # "no, not Jon — John": a "no" is no new value
                if (copula := _copula_pattern(lex)) is not None and len(said := copula.split(new)) > 1 and said[-1].strip():
                    new = said[-1].strip()  # "the frame will be light steel, not timber": "light steel"
                if new and old and (new, old) not in found:
                    found.append((new, old))
            if found:
                return tuple(found)
    return tuple(found)


def _without_lead(lex: Lexicon, lead: re.Pattern[str] | None, words: str) -> str:
    """The words without what leads into them: "it's", "是", a correction marker ("I meant"), fillers ("sorry"),
    joining words ("and actually it's steel frame")."""
    while True:
        words = words.strip(" ,，:：-—")
        cut = next((m for p in (lead, lex.corrections, lex.fillers, _list_pattern(lex, "joiners", tail=r"\s*")) if p is not None
                    and (m := p.match(words)) and m.end() > 0), None)
        if cut is None:
            return words
        words = words[cut.end():]


def after_instruction(words: str) -> str:
    """The new value after an instruction that ends in a colon: "目标改一下，改成：团长每月多赚两千块", "set the
    constraints to: budget 15-20k" -> what follows the colon; other words as they are."""
    colon = re.search(r"[:：]", words)
    if colon is None or colon.start() > 40:
        return words
    lead = words[:colon.start()]
    if any(words_of(lex.language, "instructions").search(lead) or lex.corrections.search(lead) for lex in lexicons_for(lead)):
        return words[colon.end():].strip(" 。.，,;；")
    return words


def without_lead_words(words: str) -> str:
    """Words without what leads into a value: "it's", "是", a correction marker, fillers ("sorry, it's Priya")."""
    words = words.strip(" ,，:：-—")
    for lex in lexicons_for(words):
        words = _without_lead(lex, _list_pattern(lex, "swap_leads", tail=r"\s*"), words)
    return words


# A message's parts: its clauses and the pieces a comma, a semicolon or a pause ("-", "—") sets apart.
_PART_BREAK = re.compile(r"(?:(?<!\d)[.,]|[.,](?!\d)|[;!?\n。；！？，、]|(?<!\w)-(?!\w)|—)+")


def message_parts(text: str, *, at_contrasts: bool = True) -> list[str]:
    """The parts of a message, each without the words that join it to the one before ("and", "还有", "и",
    "además") or fill it ("well", "嗯"): "2 floors, 1,300 sq ft each, and it's just our family" gives three.
    `at_contrasts`: "but" and its kind part too ("3 floors but 900 sq ft each")."""
    parts = []
    for piece in _PART_BREAK.split(text):
        for lex in lexicons_for(piece) if at_contrasts else ():
            contrast = _list_pattern(lex, "contrasts")
            piece = contrast.sub("\n", piece) if contrast is not None else piece
        for part in piece.split("\n"):
            for lex in lexicons_for(part):
                part = _without_lead(lex, _list_pattern(lex, "joiners", tail=r"\s*"), part)
            if part.strip(" ,，:：-—"):
                parts.append(part.strip(" ,，:：-—"))
    return parts


def said_as_total(words: str) -> str | None:
    """The word that makes a number a sum of several ("in total", "加起来", "всего", "en total"), or None: it
    is no value of one of them."""
    for lex in lexicons_for(words):
        pattern = _list_pattern(lex, "totals")
        if pattern is not None and (found := pattern.search(words)):
            return found.group(0)
    return None


def tells_lateness(text: str, start: int, end: int) -> bool:
    """Whether the length said at `text[start:end]` tells how late someone was ("30 minutes late", "迟到半小时"),
    not a length asked for."""
    for lex in lexicons_for(text):
        words = _list_pattern(lex, "lateness")
        if words is None:
            continue
        before = re.search(rf"(?:{words.pattern})\s*$", text[max(0, start - 8):start], re.IGNORECASE)
        if words.match(text[end:].lstrip()) or before is not None:
            return True
    return False


def request_from(part: str) -> str:
    """The words of a part from where it opens a request on ("Tomás has been late all month and I'd like a call
    with him" asks from "I'd like"): what comes before is an account, not the request."""
    for lex in lexicons_for(part):
        opener = lex.request_openers.search(part)
        if opener is not None and opener.start() > 0:
            return part[opener.start():]
    return part


def said_as_more(text: str, start: int, end: int) -> bool:
    """Whether the length said at `text[start:end]` is said as more on top of the one kept ("40 min longer",
    "another hour", "再多停半小时", "ещё на час", "otros 40 minutos")."""
    for lex in lexicons_for(text):
        before, after = _list_pattern(lex, "extend_before", tail=r"\s*$"), _list_pattern(lex, "extend_after")
        if before is not None and before.search(text[max(0, start - 16):start]):
            return True
        if after is not None and after.match(text[end:].lstrip()):
            return True
    return False


def unread_parts(text: str, read: list[str]) -> list[str]:
    """The parts of a message none of the read words come from, that say something: not a question, a filler,
    a yes or no or a lone word ("ok", "嗯"); "pump runs, only dribbles" with "pump runs" read gives "only dribbles".
    A "but" does not part them: the words of one reading run across it ("hums but won't start")."""
    spans = [(at, at + len(words)) for words in read if words and (at := text.find(words)) >= 0]
    unread, cursor = [], 0
    for part in message_parts(text, at_contrasts=False):
        start = text.find(part, cursor)
        cursor = start + len(part) if start >= 0 else cursor
        if start < 0 or any(a < start + len(part) and start < b for a, b in spans):
            continue
        said = _without_asides(part)  # "whoa no", "我很确定", "но я не уверен": how it is said, no finding
        words = _WORD.findall(said)
        meaningful = len(_CJK_CHAR.findall(said)) >= 3 or len([w for w in words if not w.isdigit()]) >= 2
        asked = part.rstrip().endswith(("?", "？")) or text[start + len(part):].lstrip()[:1] in ("?", "？")
        if meaningful and not only_fillers(part) and not asked:
            unread.append(part)
    return unread


def _without_asides(part: str) -> str:
    """The words without asides, fillers, hedges and correction markers (lexicon `asides`, …): what is left to note."""
    for lex in lexicons_for(part):
        for pattern in (words_of(lex.language, "asides"), lex.fillers, lex.hedges, lex.corrections):
            part = pattern.sub(" ", part)
    return part


def opens_with_correction(text: str) -> bool:
    """Whether a message opens by correcting what was said ("sorry, to be precise: …", "不对，…", "поправлюсь: …"),
    fillers aside."""
    for lex in lexicons_for(text):
        words = text.strip(" ,，:：-—")
        while (filler := lex.fillers.match(words)) and filler.end() > 0:
            words = words[filler.end():].strip(" ,，:：-—")
        if (marker := lex.corrections.match(words)) and marker.end() > 0:
            return True
    return False


def says_a_correction(text: str) -> bool:
    """Whether a correction marker (lexicon `corrections`) is said anywhere in the message ("人数说少了，改成500人")."""
    return any(lex.corrections.search(text) for lex in lexicons_for(text))


def after_reproach(text: str) -> str:
    """The words after the last phrase that says something was wrong ("actually I was wrong, she was late twice"
    -> "she was late twice"), or the whole text when none is said."""
    ends = [m.end() for lex in lexicons_for(text) if (words := _list_pattern(lex, "reproaches")) is not None
            for m in words.finditer(text)]
    return text[max(ends):].strip(" ,，、:：;；.。-—") if ends else text


def reproached(text: str) -> bool:
    """Whether words say that what they name was wrong ("the 2 storeys was wrong", "你记错了")."""
    return any((words := _list_pattern(lex, "reproaches")) is not None and words.search(text) for lex in lexicons_for(text))


def says_it_corrects(text: str) -> bool:
    """Whether a message corrects something said before: a correction marker anywhere ("wait, correction …",
    "哦不对") or a reproach ("that 0 was wrong")."""
    return says_a_correction(text) or reproached(text)


def says_it_was_wrong(text: str) -> bool:
    """Whether a message corrects what was kept: it opens with a correction ("不对，…", "sorry, …") or reproaches
    the reading anywhere ("I told you", "你记错了", "я же сказал", "ya te dije")."""
    return opens_with_correction(text) or reproached(text)


@cache
def _copula_pattern(lex: Lexicon) -> re.Pattern[str] | None:
    words = word_list(lex.language, "copulas")
    if not words:
        return None
    spelled = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"(?<![\w'’])(?:{spelled})(?!\w)" if lex.spaced else f"(?:{spelled})", re.IGNORECASE)
