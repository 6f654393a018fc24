"""Form questions with clarifying threads.

Each form question has one active clarifying thread; when its answer is finalized the
thread is archived under the question id and the next unanswered question becomes
current. The rules backend finalizes deterministically (a choice, a number, a yes/no or
enough text); a model may instead return `form_answer` / `clarifying_question` through
the response contract, which lands in the same functions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from functools import cache, lru_cache

from ._serde import Serializable
from ._text import (
    NUMBER_WORDS,
    acknowledges_only,
    asks_question,
    compile_pattern,
    defers_answer,
    detect_language,
    first_match,
    is_non_answer,
    is_vacuous,
    iter_patterns,
    localize,
    may_match,
    negated_at,
    normalize_patterns,
    unnegated_hits,
    without_deferral,
    word_at,
)
from .catalog import say
from .certainty import CERTAIN, GUESS, LIKELY
from .config import TIMED_ANSWERS, ChoiceSpec, FormQuestionSpec, FormSpec
from .lexicon import lexicons_for, words_of
from .negation import (
    after_correction,
    after_instruction,
    after_reproach,
    doubt,
    hedge_near,
    message_parts,
    negated,
    said_as_total,
    word_swaps,
)
from .plain_words import answer_shown
from .recognizers.numbers import number_atoms, read_quantities
from .state import (
    VALID,
    ClarifyingQA,
    ClarifyingThread,
    ContextState,
    FinalizedAnswer,
    SlotValue,
    with_key,
)
from .timeparse import says_clock, says_time_of_day, zh_number
from .typos import distance, reach
from .units import FORM_UNITS, is_whole, measure_of, unit_id, unit_pattern

YES_NO = {
    "yes": normalize_patterns(
        {
            "en": [r"^\s*(?:yes|yep|yeah|sure|correct|there\s+(?:is|are|will\s+be))\b",
                   # "I called her twice", "tried texting": saying what was done answers yes
                   r"^\s*(?:i\s+|we\s+)?(?:already\s+|have\s+(?:already\s+)?)?(?:did(?!n)|called|texted|emailed|messaged|"
                   r"tried|phoned|rang|spoke|talked|reached|left\s+(?:a|her|him|them))\b"],
            "zh": [r"^\s*(?:是|有|对|会|需要)", r"^\s*(?:我)?(?:已经)?(?:给[她他]|跟[她他]|和[她他])?(?:打过|联系过|发过|试过|找过|问过|留过|微信过)"],
            "ru": [r"^\s*(?:да|есть|будет)(?!\w)"],
            "es": [r"^\s*(?:sí|si\b|claro|habr[aá])"],
        }
    ),
    "no": normalize_patterns(
        {
            "en": [r"^\s*(?:no|nope|none|not\s+really|there\s+(?:is|are|will\s+be)\s+no)\b",
                   r"^\s*(?:i\s+|we\s+)?(?:not\s+yet|haven'?t|have\s+not|didn'?t|did\s+not|never)\b"],
            "zh": [r"^\s*(?:不|没|无|否|还没|尚未|暂时没|暂未)"],
            "ru": [r"^\s*(?:нет|не\s+будет)(?!\w)"],
            "es": [r"^\s*(?:no|ninguno|ninguna)\b"],
        }
    ),
}
_NUM = re.compile(
    r"(?<![A-Za-z0-9_.])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:[.,]\d+)?)(?![A-Za-z0-9_])"
)
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")


@dataclass(frozen=True)
class FormEvaluation(Serializable):
    """Whether a reply answers the current form question, and the value it gives."""

    accepted: bool
    value: str | None = None
    # no_choice_matched | no_number | no_yes_no | too_short | non_answer | unsure_number | said_as_total | sum_said |
    # out_of_range | not_in_format | no_date | no_time | unsure_time
    reason: str | None = None
    certainty: str = CERTAIN  # likely: a hedged value ("about 950"), recorded and said back
    candidates: tuple[str, ...] = ()  # unsure_number: the values it may be ("6 or 7"), asked which
    converted_from: str | None = None  # the value as said in another unit ("110 m²"), converted into the question's


def number_value(text: str) -> str | None:
    """The number a message gives ("1,450 sq ft" -> "1450", "三层" -> "3", "a single storey" -> "1"), or None."""
    text = _SINGLE_UNIT.sub("1 ", text)
    text = re.sub(r"(\d)(?=(?:sq|square|ft|m2|m²|persons?|people|stor|floors?)\b|(?:sq|ft|m)[a-z.²]*\b)", r"\1 ", text, flags=re.IGNORECASE)  # "1450sqft"
    if m := _NUM.search(text):
        raw = m.group(1)
        if re.fullmatch(r"\d{1,3}(?:\.\d{3})+", raw):
            return raw.replace(".", "")  # "1.450 square feet": a dot between thousands, no form number has three decimals
        if _THOUSANDS.fullmatch(raw):
            return raw.replace(",", "")
        if re.fullmatch(r"\d+,\d{4,}", raw):
            return None  # "1,2000": neither thousands nor a decimal comma; a typo to ask about, not 1.2
        return raw.replace(",", ".")
    words = [m for m in _NUMBER_WORD.finditer(text) if m.group(0).lower() != "one" or not _PRONOUN_ONE.search(text[:m.start()])
             or _COUNTED_AFTER.match(text, m.end())]  # the earliest said; "the higher one" counts nothing, "the one floor" does
    if words:
        return str(NUMBER_WORDS[words[0].group(0).lower()])
    numeral = next((m for m in _CN_NUMERAL.finditer(text) if _counts(m)), None)
    return str(zh_number(numeral.group(0))) if numeral else None


_NUMBER_WORD = re.compile(r"(?<!\w)(?:" + "|".join(NUMBER_WORDS) + r")(?!\w)", re.IGNORECASE)
# "one" as a pronoun: "the top one", "the higher one", "which one", "that one"
_COUNTED_AFTER = re.compile(r"\s+(?!(?:is|was|that|which|please|i|you|we|it|for|then|so|and|or|but|of|with|under|on|in)\b)[a-z]{3,}",
                            re.IGNORECASE)
_PRONOUN_ONE = re.compile(r"\b(?:the|this|that|which|each|every|any|another|other|no)(?:\s+[a-z]+)?\s*$", re.IGNORECASE)


# A lone 一 inside a word is no number ("等一下", "一起", "统一"); with a counter or a unit after it, it is ("一层")
_COUNTER_AFTER = re.compile(r"\s*(?:[个人层楼位名户家口栋幢间套平米尺英方千百万十]|$)")


def _counts(numeral: re.Match[str]) -> bool:
    return numeral.group(0) != "一" or _COUNTER_AFTER.match(numeral.string, numeral.end()) is not None


_CN_NUMERAL = re.compile(r"[零〇一二两三四五六七八九十百千万]+")
# Two numbers offered as one answer: "6 or 7", "6-7", "6 to 7 people", "6 или 7", "6 o 7", "六七个", "六到七层"
_TWO_NUMBERS = re.compile(
    r"(?<![\d.,])(\d+(?:[.,]\d+)?)\s*(?:,?\s*(?:or(?:\s+maybe)?|possibly|maybe|perhaps|probably|may\s+be|could\s+be)\b|-|–|~|/|to|或者?|还是|到|至|"
    r"或许|也可能是?|可能|или|либо|может|o|u|a|quizás?)\s*(\d+(?:[.,]\d+)?)(?![\d.,:])"
    r"|(?<![零〇一二两三四五六七八九十百千万])([一二两三四五六七八九])\s*(?:或者?|还是|到|至)?\s*([一二两三四五六七八九])(?![十百千万])"
    # "四五十个人", "两三百平": two neighbouring digits of one place, 40 or 50
    r"|(?<![零〇一二两三四五六七八九十百千万])([一二两三四五六七八九])([二三四五六七八九])([十百千万])(?![一二三四五六七八九])",
    re.IGNORECASE,
)
# Half of something counted whole: "two and a half storeys", "2.5 floors", "两层半", "два с половиной", "dos y medio"
_HALF = re.compile(r"\band\s+a\s+half\b|½|半|с\s+половиной|полтора|y\s+medi[oa]\b", re.IGNORECASE)


def number_alternatives(text: str, unit: str | None) -> tuple[str, ...] | None:
    """The numbers an answer hesitates between ("6 or 7" -> 6, 7; "two and a half storeys" -> 2, 3), or
    None when it gives one number. Never stored as a fact: the person is asked which one."""
    if (two := _TWO_NUMBERS.search(text)) is not None:
        if two.group(1):
            first, second = two.group(1), two.group(2)
        elif two.group(3):
            first, second = str(zh_number(two.group(3))), str(zh_number(two.group(4)))
        else:
            first, second = (str(zh_number(two.group(5) + two.group(7))), str(zh_number(two.group(6) + two.group(7))))
        if first != second and _plain(first) < _plain(second):
            return first, second
    either = [span.value.either for span in read_quantities(text, detect_language(text)) if span.value.either]
    if len(either) == 1 and len(either[0]) == 2:  # "十个或者十二个", "6 people or 7 people": the recognizer's reading
        return tuple(f"{n:g}" for n in either[0])
    if (second := _second_thought(text)) is not None:
        return second
    if is_whole(unit_id(unit)) and (value := number_value(text)) is not None:
        number = _plain(value)
        if _HALF.search(text) or not number.is_integer():
            whole = int(number)
            return str(whole), str(whole + 1)
    return None


def _second_thought(text: str) -> tuple[str, str] | None:
    """Two numbers with doubt between them ("5 of us, maybe 6", "五个人，也可能六个", "12 people, possibly 14"):
    either may be meant. Two numbers of different things ("2 storeys, maybe 1800 sq ft") are not asked."""
    atoms = number_atoms(text, detect_language(text))
    if len(atoms) != 2 or _counts_differently(text, atoms[0].end, atoms[1].end):
        return None
    between = text[atoms[0].end:atoms[1].start]
    if _SENTENCE_END.search(between) or not any(lex.hedges.search(between) or _joins(lex.alternatives, between)
                                                 for lex in lexicons_for(text)):
        return None  # "1000 sq ft a floor. single-family": another sentence, and "a" joins nothing there
    first, second = (f"{a.value:g}" for a in atoms)
    return (first, second) if first != second else None


_SENTENCE_END = re.compile(r"[.!?;](?:\s|$)|[。！？；]")


def _joins(alternatives: re.Pattern[str], between: str) -> bool:
    """The words between two numbers offer one or the other ("6 or 7", "6 o 7"); a one-letter word only alone
    between them ("6 a 7"), never inside other words ("1000 sq ft a floor")."""
    found = alternatives.search(between)
    return found is not None and (len(found.group(0)) > 1 or between.strip(" ,，") == found.group(0))


def _names_a_thing(said: str) -> bool:
    """An answer outside a choice's list names a thing ("a tandem", "it's a cargo trike", "双人车"), not a remark
    ("lovely weather for a ride today, huh", "今天天气真好啊"): a few words, no copula, no question, no filler
    to close it. A remark is asked again, never kept as the answer."""
    if asks_question(said):
        return False
    for lex in lexicons_for(said):
        lead = re.match(rf"\s*(?:{lex.pronouns.pattern})\s*(?:{words_of(lex.language, 'copulas').pattern})?\s*", said, re.IGNORECASE)
        rest = said[lead.end():] if lead and lead.end() else said
        if words_of(lex.language, "copulas").search(rest):
            return False
        closing = re.search(rf"(?:{words_of(lex.language, 'small_talk', 'fillers').pattern})[\s,，.。!！~]*$", rest, re.IGNORECASE)
        if closing is not None:
            return False
    words = said.split()
    return len(words) <= 6 if len(words) > 1 else text_length(said) <= 12


def _counts_differently(text: str, first_end: int, second_end: int) -> bool:
    """Whether the two numbers are followed by different units ("2 storeys … 1800 sq ft")."""
    units = [re.match(r"\s*([^\W\d_]+)", text[end:]) for end in (first_end, second_end)]
    words = [u.group(1).casefold() for u in units if u is not None]
    people = unit_pattern("person")
    measures = [w for w in words if w not in ("of", "个", "個") and not re.fullmatch(people, w, re.IGNORECASE)]
    return len(measures) == 2 and measures[0][:4] != measures[1][:4]


def _plain(value: str) -> float:
    try:
        return float(value.replace(",", "."))
    except ValueError:
        return 0.0


_ANY_NUMBER = re.compile(r"\d+(?:[.,]\d+)*|[零〇一二两三四五六七八九十百千万]+|(?<!\w)(?:" + "|".join(NUMBER_WORDS) + r")(?!\w)", re.IGNORECASE)


def _hedged_number(text: str) -> bool:
    """A number said with a hedge ("about 950", "maybe two", "3 or so", "2000左右")."""
    return any(hedge_near(text, m.start(), m.end()) for m in _ANY_NUMBER.finditer(text))


def evaluate_answer(
    text: str, spec: FormQuestionSpec, language: str, thread: ClarifyingThread | None = None, *,
    now: datetime | None = None, timezone: str | None = None,
) -> FormEvaluation:
    """Judge a reply against the question type; clarifying answers count as context. A date or time question
    reads its days from `now` ("next Friday"): without the turn's clock nothing answers it."""
    if spec.answer_type in TIMED_ANSWERS and not is_non_answer(text) and not defers_answer(text):
        return _timed_answer(text, spec, language, now, timezone)
    if is_non_answer(text) or spec.answer_type == "text" and (is_vacuous(text) or acknowledges_only(text)):
        return FormEvaluation(False, reason="non_answer")  # "whatever", "随便" say nothing in words
    if defers_answer(text):  # "not sure yet": no answer; "maybe 2 or 3, still deciding": those values, asked
        if not _names_a_value(without_deferral(text), spec, language):
            return FormEvaluation(False, reason="non_answer")
        said = text if spec.answer_type == "text" else without_deferral(text)  # free text is kept as said
        verdict = evaluate_answer(said, spec, language, thread) if said != text else FormEvaluation(True, text.strip())
        return replace(verdict, certainty=GUESS) if verdict.accepted else verdict
    context = " ".join([e.answer for e in (thread.entries if thread else ()) if e.answer] + [text])
    if spec.answer_type == "choice":
        for candidate in (text, context):
            named = choices_named(candidate, spec, language)
            if len(named) == 1:
                return FormEvaluation(True, named[0])
            if len(named) > 1:
                return FormEvaluation(False, reason="several_choices")  # ask which, never pick the first
        said = _GREETING.sub("", _OTHER_WORD.sub("", text)).strip(" ,，.。:：-!！")
        unsaid = not said or text_length(said) < 3 or bool(_VAGUE_THING.search(said))
        if spec.other and unsaid and (_OTHER_WORD.search(text) or _VAGUE_THING.search(said)) and not is_non_answer(text):
            return FormEvaluation(False, reason="other_unspecified")  # "something else", "我要借东西": what is it?
        if (spec.other and said and text_length(said) >= max(spec.min_chars, 3) and not is_non_answer(said)
                and _names_a_thing(said)):
            return FormEvaluation(True, f"other: {said}")  # "other, please specify": their words, kept as said
        return FormEvaluation(False, reason="no_choice_matched")
    if spec.answer_type == "number":
        if (added := sum_said(text, language)) is not None:  # "35 staff plus 10 visitors": 45 in all, asked first
            return FormEvaluation(False, reason="sum_said", candidates=(f"{added:g}",))
        if said_as_total(text):  # "both floors combined come to 2,400 sq ft": a sum of several, put back, never kept
            own = _with_own_unit(text, spec) if spec.unit else text
            total = number_value(own) if own else None
            return FormEvaluation(False, reason="said_as_total", candidates=(total,) if total else ())
        if _other_unit(text, spec.unit):
            if (converted := _converted(text, spec)) is not None:
                return converted  # "110平方米" for the square feet: 1,184 sq ft, both said
            return FormEvaluation(False, reason="wrong_unit")  # "2 storeys" is not a floor area
        if _counts_something_else(text, spec.unit, _plan_unit_words(spec)):
            return FormEvaluation(False, reason="no_number")  # "two families will live there" is no number of storeys
        own = _said_in_own_unit(after_correction(text), spec.unit)  # "…sorry i mean 1,200": after the correction
        said = own or (text if number_value(text) is not None else context)
        if number_value(meant := after_correction(said)) is not None:
            said = meant  # "一万二，哦不对，是一千二": the number said after correcting oneself
        value = number_value(said)
        if value is None:
            return FormEvaluation(False, reason="no_number")
        if re.search(rf"(?<![\w.,])[-−]\s?{re.escape(value)}(?![\d])", said):
            value = f"-{value}"  # "-2": the sign is said, and a count below its bounds is refused with them
        if (candidates := number_alternatives(text if own else said, spec.unit)) is not None:
            return FormEvaluation(False, reason="unsure_number", candidates=candidates)
        if not _within_bounds(float(value), spec):  # refused, the bounds said (not asked whether it is right)
            return FormEvaluation(False, reason="out_of_range", candidates=(value,))
        if spec.plausible is not None and not spec.plausible[0] <= float(value) <= spec.plausible[1]:
            return FormEvaluation(False, reason="implausible_number", candidates=(value,))
        hedged = _hedged_number(text if own else said)
        return FormEvaluation(True, number_answer(value, spec.unit), certainty=LIKELY if hedged else CERTAIN)
    if spec.answer_type == "yes_no":
        # a question's own ways of saying yes or no come first, in the plan's order ("straight to voicemail"
        # is yes to "have you tried to reach him?", "还没找他聊过" is no)
        # "Yes, twice in person. And I never asked for an email": the yes or no the answer opens with is the
        # answer; a way of saying the other one in a later sentence speaks of something else
        parts = message_parts(text)
        opening_end = text.find(parts[0]) + len(parts[0]) if parts else 0
        opening = next((v for v, patterns in YES_NO.items() if parts and first_match(parts[0], patterns, language)), None)
        for choice in spec.choices:  # a way of saying it that is negated ("这件事先不聊了") says nothing
            said = unnegated_hits(text, choice.patterns, language)
            if said and opening not in (None, choice.value) and all(m.start() >= opening_end for m in said):
                return FormEvaluation(True, opening)
            if said:
                return FormEvaluation(True, choice.value)
        for value, patterns in YES_NO.items():
            if first_match(text, patterns, language):
                return FormEvaluation(True, value)
        return FormEvaluation(False, reason="no_yes_no")
    stripped = text.strip()
    if spec.answer_pattern is not None:  # the part of the reply in the plan's format is the answer
        found = re.search(spec.answer_pattern, stripped, 0 if not spec.ignore_case else re.IGNORECASE)
        if found is None:
            return FormEvaluation(False, reason="not_in_format")
        return FormEvaluation(True, found.group(1) if found.groups() and found.group(1) else found.group(0))
    if text_length(stripped) < spec.min_chars:
        return FormEvaluation(False, reason="too_short")
    return FormEvaluation(True, stripped)


# "other", "something else": the choice of a question that takes other answers, its words still to say
_OTHER_WORD = re.compile(r"^\W*(?:(?:it'?s|something|an?)\s+)?(?:other|else|something\s+else)\b[\s,:：-]*|^\W*(?:其他|别的|其它)[的：:，,]?"
                         r"|^\W*(?:друго[ей]|иное)\b[\s,:：-]*|^\W*(?:otro|otra)\b[\s,:：-]*", re.IGNORECASE)


_GREETING = re.compile(r"^\W*(?:hi|hello|hey|good\s+(?:morning|afternoon|evening)|你好|您好|嗨|привет|здравствуйте|hola|buenas)(?![a-z])[\s,，!！.。]*",
                       re.IGNORECASE)
# a thing not said ("I need something", "我要借东西"): no answer to "which one", whatever else the message says
_VAGUE_THING = re.compile(r"\b(?:something|anything|stuff|some\s+things?|a\s+thing)\b|东西|什么|(?<!\w)(?:что-то|что-нибудь)(?!\w)|\balgo\b",
                          re.IGNORECASE)


def _within_bounds(value: float, spec: FormQuestionSpec) -> bool:
    return (spec.min is None or value >= spec.min) and (spec.max is None or value <= spec.max)


def _timed_answer(text: str, spec: FormQuestionSpec, language: str, now: datetime | None, timezone: str | None) -> FormEvaluation:
    """A date, a time of day or both, as the time recognizer reads them: a day or a time offered as two, or said
    roughly, is asked, never picked; a day that is likely but not certain (a month assumed) is kept and said back."""
    from .recognizers.times import read_time  # the recognizers read slots, which read forms' words

    if now is None:
        return FormEvaluation(False, reason="no_date")
    span = read_time(text, now=now, language=language, timezone=timezone)
    found = span.value if span is not None else None
    day = found and (found.date or found.by or (found.at.date() if found.at else None))
    # "noon", "midnight" name a time too, kept and said back ("中午" is looser than 12:00); a part of the day is none
    clock = found.at.strftime("%H:%M") if found and found.at and says_time_of_day(text) else None
    if span is not None and span.certainty == GUESS:
        return FormEvaluation(False, reason="unsure_time")
    if spec.answer_type == "date":
        value = day.isoformat() if day else None
    elif spec.answer_type == "time":
        value = clock
    else:
        value = f"{day.isoformat()} {clock}" if day and clock else None
    if value is None:
        return FormEvaluation(False, reason="no_time" if spec.answer_type == "time" or day else "no_date")
    certain = span is not None and span.certainty == CERTAIN and (clock is None or says_clock(text))
    return FormEvaluation(True, value, certainty=CERTAIN if certain else LIKELY)


def _names_a_value(text: str, spec: FormQuestionSpec, language: str) -> bool:
    """Whether words said beside putting the answer off give a value of the question's type."""
    if spec.answer_type == "choice":
        return bool(choices_named(text, spec, language))
    if spec.answer_type == "number":
        return number_value(text) is not None
    if spec.answer_type == "text":  # offered with a hedge ("maybe just the front desk", "可能春节前"), not "I'll ask my boss"
        return bool(doubt(text)) and not is_non_answer(text) and text_length(text.strip(" ,，。.;；")) >= max(spec.min_chars, 4)
    return False


def may_volunteer(text: str, spec: FormQuestionSpec, language: str) -> bool:
    """Whether a message could answer this question in its own terms at all (its unit, its words, a choice's
    name, its patterns): the quick look before its parts are read one by one."""
    if spec.answer_type == "number":
        return _said_in_unit(text, spec) is not None or names_question(text, spec)
    if spec.answer_type == "choice":
        return any(_names_choice(text, c) for c in spec.choices)
    return first_match(text, spec.patterns, language) is not None


def sum_said(text: str, language: str) -> float | None:
    """The sum of two numbers a message adds up in words ("35 staff plus up to 10 visitors", "三十五个员工加上十个访客":
    45; lexicon `sums`), which is asked before it is put, never one of its parts kept."""
    words = words_of(language, "sums")
    atoms = number_atoms(text)
    for first, second in zip(atoms, atoms[1:], strict=False):
        between = text[first.end:second.start]
        if len(between) <= 30 and words.search(between):
            return first.value + second.value
    return None


def volunteered_answer(part: str, spec: FormQuestionSpec, language: str) -> FormEvaluation | None:
    """What one part of a message says for a question that is not asked now, or None. Only what the question
    itself declares counts: a number in its own unit ("2 floors") or said with the question's words ("floor area
    is 1,100"), the one choice it names by name ("group C"),
    its subject said or denied ("no mixed use"), or the words its plan says answer it ("wood frame"). A question said ("do I need sprinklers?") answers nothing."""
    if asks_question(part) or defers_answer(part):
        return None
    if spec.answer_type == "number":
        if said_as_total(part) or sum_said(part, language) is not None:  # "两层加起来三千平方英尺": a sum, asked in its turn
            return None
        said_with_unit = _with_own_unit(part, spec)
        if said_with_unit is None and names_question(part, spec) and len(re.findall(_NUMBER_TOKEN, part, re.IGNORECASE)) == 1:
            said_with_unit = part  # "floor area is 1,100": the question named by its words, with one number
        verdict = evaluate_answer(said_with_unit, spec, language) if said_with_unit else None
        return verdict if verdict is not None and verdict.accepted and verdict.value else None
    if spec.answer_type == "choice":  # by its own name only ("group C"): "a duplex" is no occupancy said
        named = [c.value for c in spec.choices if _names_choice(part, c)]
        return FormEvaluation(True, named[0], certainty=LIKELY) if len(named) == 1 else None
    said = [(m, p) for _, p in iter_patterns(spec.patterns, language) for m in compile_pattern(p).finditer(part)]
    if spec.answer_type == "yes_no":  # its own ways of saying yes or no answer it only when asked: "didn't call"
        if said:  # is the employee's doing, not the manager's; its subject is said, or said not to be
            denied = all(negated(part, m.start(), m.end(), pattern=p) for m, p in said)
            return FormEvaluation(True, "no" if denied else "yes", certainty=LIKELY)
        return None
    kept = [m for m, p in said if not negated(part, m.start(), m.end(), pattern=p)]
    if kept:  # from the first of its words on ("盖一栋两层的砖房" says "砖房"; "we'll have sprinklers + an alarm")
        words = part[min(m.start() for m in kept):].strip()
        return FormEvaluation(True, words, certainty=LIKELY) if text_length(words) >= spec.min_chars else None
    return None


def _said_in_unit(text: str, spec: FormQuestionSpec) -> re.Match[str] | None:
    """A number said in the question's unit: one the recognizers know ("3 floors", "三层"), or the plan's own in
    the words it gives ("two bikes", "2辆")."""
    if (key := unit_id(spec.unit)) is not None:
        return compile_pattern(rf"{_NUMBER_TOKEN}[\s-]*(?:{unit_pattern(key)})").search(text)
    if not (words := sorted(_plan_unit_words(spec), key=len, reverse=True)):
        return None
    pattern = "|".join(re.escape(w) for w in words) + r"(?![A-Za-z])"
    # a word or two of what kind may stand between ("two mountain bikes"), never what it is counted by ("3 flats per bike")
    between = r"(?:(?!(?:per|a|an|each|every|of)\b)[^\W\d_]+[\s-]+){0,2}?"
    return re.search(rf"{_NUMBER_TOKEN}[\s-]*{between}(?:{pattern})", text, re.IGNORECASE)


def _with_own_unit(part: str, spec: FormQuestionSpec) -> str | None:
    """The words around a number said in this unit, without the numbers before and after it ("盖一栋两层的砖房"
    gives "栋两层的砖房": the storeys are two, the building one), or None when no number is said in it."""
    found = _said_in_unit(part, spec)
    if found is None:
        return None
    numbers = list(re.finditer(_NUMBER_TOKEN, part, re.IGNORECASE))
    start = max((m.end() for m in numbers if m.end() <= found.start()), default=0)
    end = min((m.start() for m in numbers if m.start() >= found.end()), default=len(part))
    return part[start:end]


def _names_choice(part: str, choice: ChoiceSpec) -> bool:
    """Whether the part names the choice itself: its value or its label in any language, less the words that
    describe it ("Group C - residential" is named "Group C")."""
    for found in _choice_names(choice.value, tuple(choice.label.values())).finditer(part):
        if not negated_at(part, found.start(), found.end()):  # "not group A" names none
            return True
    return False


@lru_cache(maxsize=512)
def _choice_names(value: str, labels: tuple[str, ...]) -> re.Pattern[str]:
    names = {value, *(re.split(r"\s+[-–—]\s+|[（(]", label)[0] for label in labels)}
    spelled = [rf"(?<!\w){re.escape(n)}(?!\w)" if n.isascii() else re.escape(n) for n in (x.strip() for x in names) if n]
    return re.compile("|".join(spelled) or r"(?!x)x", re.IGNORECASE)


def text_length(text: str) -> int:
    """How long an answer is, a Chinese character counting as two letters (护士 says as much as "nurses")."""
    return len(text) + len(re.findall(r"[\u3400-\u9fff]", text))


def choices_named(text: str, spec: FormQuestionSpec, language: str) -> list[str]:
    """The choices the text names and does not negate ("no retail" names no shop)."""
    named = []
    for choice in spec.choices:
        if not may_match(text, choice.patterns):
            continue
        for _, pattern in iter_patterns(choice.patterns, language):
            if any(not negated_at(text, m.start(), m.end()) for m in compile_pattern(pattern).finditer(text)):
                named.append(choice.value)
                break
    return named


# Units people give numbers in; a number with another question's unit does not answer this one.
_NUMBER_TOKEN = r"(?:\d[\d,.]*|[零〇一二两三四五六七八九十百千万]+|(?<![a-z])(?:" + "|".join(NUMBER_WORDS) + r"))"


@cache
def _units() -> dict[str, str]:
    """The words of each unit a form question may be in, by the recognizers' id (see `units`)."""
    return {key: unit_pattern(key) for key in FORM_UNITS}


# "single" said of a form unit is one of it ("a single storey", "single-storey", "单层"; never "single-family")
_SINGLE_UNIT = re.compile(r"\bsingle[\s-]+(?=" + "|".join(_units().values()) + r")|单(?=层|楼层)|(?<!\w)одноэтажн\w*", re.IGNORECASE)


def _converted(text: str, spec: FormQuestionSpec) -> FormEvaluation | None:
    """A number said in another unit of the same measure ("110 m²" for a floor area in square feet), in the
    question's unit, rounded to whole units, with the words it was said in; None when it does not convert."""
    own = unit_id(spec.unit)
    found = [span for span in read_quantities(text) if span.value.unit and span.value.unit != own]
    if own is None or len(found) != 1 or (value := found[0].value.converted(own)) is None:
        return None
    if spec.plausible is not None and not spec.plausible[0] <= value <= spec.plausible[1]:
        return FormEvaluation(False, reason="implausible_number", candidates=(f"{value:.0f}",))
    certainty = CERTAIN if found[0].certainty == CERTAIN else LIKELY
    return FormEvaluation(True, number_answer(f"{value:.0f}", spec.unit), certainty=certainty, converted_from=found[0].text.strip())


# Words a question's number may be followed by that count nothing ("3 above ground", "2 or so", "about 2 I think")
_NOT_COUNTED = (r"(?:and|or|so|ish|plus|above|below|over|under|total|tall|high|in\s+total|maybe|probably|i|we|think|guess|"
                r"please|at|in|on|of|with|if|but|then|now|only|max|maximum|minimum|min|each|per|for|to|the|a|an|it|that|this|"
                r"is|are|will|would|should|including|not|counting|without|plus|more|less|tops|or\s+so|basement|ground)")
# A number said of something counted that is no unit: "two families", "3 kids", "两家人", "三个孩子"
_COUNTED_NOUN = re.compile(
    rf"{_NUMBER_TOKEN}\s*(?:(?!{_NOT_COUNTED}\b)([a-z][a-z'-]{{2,}})\b|(家|户|辆|只|间|[个件台套张份本名位](?=[\u4e00-\u9fff])(?![层楼平米人])))",
    re.IGNORECASE)  # "一个建筑许可" counts permits, "两家人" families: no storeys


def _said_in_own_unit(text: str, unit: str | None) -> str | None:
    """The number said with the question's own unit, when another number stands beside it ("我们有2个门店，楼是三层"
    is 3 storeys)."""
    key = unit_id(unit)
    if key is None or len(re.findall(_NUMBER_TOKEN, text, re.IGNORECASE)) < 2:
        return None
    m = re.search(rf"{_NUMBER_TOKEN}[\s-]*(?:{unit_pattern(key)})", text, re.IGNORECASE)
    return m.group(0) if m else None


def _plan_unit_words(spec: FormQuestionSpec) -> tuple[str, ...]:
    """The words a plan's own unit is said in ("boxes", "box", "箱"): its name and its `unit_words` without {n}."""
    if not spec.unit or unit_id(spec.unit) is not None:
        return ()
    said = [spec.unit, spec.unit.removesuffix("es"), spec.unit.removesuffix("s")]
    said += [text.replace("{n}", "").strip() for forms in spec.unit_words.values() for text in forms.values()]
    return tuple(dict.fromkeys(w for w in said if w))


def _counts_something_else(text: str, unit: str | None, own: tuple[str, ...] = ()) -> bool:
    """Every number in the text counts something that is none of the form's units ("two families will live there"
    for the storeys): it answers another thing, not this question's number. `own`: the words of a plan's unit."""
    counted = list(_COUNTED_NOUN.finditer(text))
    if not counted or unit_id(unit) == "person":
        return False  # people are counted in too many words ("8 adults", "4 tenants") to tell them from other things
    numbers = re.findall(_NUMBER_TOKEN, text, re.IGNORECASE)
    units = "|".join([*_units().values(), *(re.escape(w) for w in own)])
    return len(counted) >= len(numbers) and not any(
        re.match(rf"(?:[^\W\d_]+[\s-]+){{0,2}}?(?:{units})", text[m.start(1 if m.group(1) else 2):], re.IGNORECASE)
        for m in counted)  # "two mountain bikes" counts bikes


def _other_unit(text: str, unit: str | None) -> bool:
    """The number in text is given in a unit that is not this question's."""
    own = unit_id(unit)
    for key, pattern in _units().items():
        if key != own and compile_pattern(rf"{_NUMBER_TOKEN}[\s-]*(?:{pattern})").search(text):  # "两百平米" too
            return own is not None
    return False


# "no, I meant 3 storeys", "change the floor area to 1,450", "不对，应该是两层", "я имел в виду", "quise decir"
_CORRECTION = re.compile(
    r"\b(?:no,?\s+i\s+meant|i\s+meant|actually|correction|wait,?\s+no|no,?\s+wait|oops|whoops|sorry,?\s+(?:it'?s|it\s+is|i\s+meant)|"
    r"change\s+(?:the\s+|my\s+)?(?:\w+\s+){0,3}?to|make\s+(?:it|that)|should\s+(?:be|have\s+been)|typo|mistyped)\b"
    r"|不对|说错了?|打错了?|写错了?|改成|改为|应该是|更正一下|更正"
    r"|не\s+так|я\s+имел\s+в\s+виду|опечат\w*|исправ\w*|поменя\w*|quise\s+decir|corrig\w*|cambi[ae]\w*",
    re.IGNORECASE,
)
def is_correction(text: str) -> bool:
    """The message corrects something said before ("actually", "no, I meant", 不对, 改成)."""
    return _CORRECTION.search(text) is not None


_STOPWORDS = frozenset(["what", "which", "will", "there", "that", "this", "have", "from", "with", "your", "many", "much", "does", "building"])


# Where a message giving several changes splits: "change the storeys to 3, and the area is 1800 now", "层数改成3，面积1800"
_CHANGES_APART = re.compile(r"\s*(?:[;；:：。！!]|(?<!\d)\.(?!\d)|,?\s+and\s+(?:also\s+)?|,(?!\d)\s*(?:also\s+|plus\s+)?|，\s*(?:还有|另外|而且)?|、|还有|另外|"
                            r"а\s+также|y\s+además)\s*", re.IGNORECASE)


def find_corrections(state: ContextState, form: FormSpec, text: str, language: str, *,
                     at_review: bool = False, now: datetime | None = None, timezone: str | None = None,
                     ) -> list[tuple[FormQuestionSpec, str]]:
    """Every answer a message corrects, each read from its own part of the message ("change X to A, and also
    Y is B now": two changes, each checked by its own question's type); one change read from the whole
    message otherwise. `at_review` (every question was answered before this message): a value named is a
    change, without a word of correction ("the occupant load is 15")."""
    if _CORRECTION.search(text) is None and not at_review:
        return []
    parts = [p for p in _CHANGES_APART.split(text) if p and p.strip()]
    if len(parts) >= 2:
        found: dict[str, tuple[FormQuestionSpec, str]] = {}
        for part in parts:
            change = find_correction(state, form, part, language, prefer="?", marked=True, now=now, timezone=timezone)
            if change is not None and change[0].id not in found:
                found[change[0].id] = change
        if len(found) >= 2:
            return list(found.values())
    single = find_correction(state, form, text, language, prefer="?" if at_review else None, marked=at_review, now=now,
                             timezone=timezone)
    return [single] if single is not None else []


def find_swap(state: ContextState, form: FormSpec, text: str, language: str, *, turn: int, now: datetime | None = None,
              timezone: str | None = None) -> tuple[FormQuestionSpec, str] | tuple[()] | None:
    """A final answer whose words the message replaces ("it's tennis courts, not squash", "是钢结构，不是木结构"):
    that question and its answer with the words swapped (a typed question takes the new words as its answer)."""
    for new, old in word_swaps(text):
        if (dated := _date_swap(state, form, text, language, new, old, now, timezone)) is not None:
            return dated  # () when several date answers are that day: asked which, never the last one
        for answer in reversed(state.finalized_answers):
            if answer.turn >= turn:
                continue  # an answer given in this very message says what it says ("site foremen rather than the office")
            spec = form.question(answer.question_id)
            at = word_at(answer.answer, old)
            same_number = (spec is not None and spec.answer_type == "number" and number_value(old) is not None
                           and number_value(old) == number_value(answer.answer))  # "five storeys, not four" for "4 storeys"
            if spec is None or at is None and not same_number:
                continue
            said = _without_question_words(new, spec)  # this question's own name goes, not another's
            if spec.answer_type != "text":
                verdict = evaluate_answer(said, spec, language)
                if verdict.accepted and verdict.value and verdict.value != answer.answer:
                    return spec, verdict.value
                continue
            before, after = answer.answer[:at], answer.answer[at + len(old):]
            words = said.split()
            if len(words) > 1 and after.split()[:1] == words[-1:]:  # "tennis courts" for "squash" in "squash courts"
                said = " ".join(words[:-1])
            return spec, before + said + after
    return None


def _date_swap(state: ContextState, form: FormSpec, text: str, language: str, new: str, old: str,
               now: datetime | None, timezone: str | None) -> tuple[FormQuestionSpec, str] | tuple[()] | None:
    """"Thursday, not Friday" for a date answered as that Friday: the one date question whose answer the old day
    is (or the one the message names by its words, when several are) takes the new day. `()` when the old day is
    the answer of several and the message names none: nothing is changed on a guess, which one is asked.
    None: no date answer is swapped."""
    if now is None:
        return None
    was = []
    for q in form.questions:
        final = state.finalized(q.id) if q.answer_type in TIMED_ANSWERS else None
        verdict = evaluate_answer(old, q, language, now=now, timezone=timezone) if final is not None else None
        if verdict is not None and verdict.accepted and verdict.value and final.answer.startswith(verdict.value.split(" ")[0]):
            was.append(q)
    if len(was) > 1:
        was = [q for q in was if shared_words(text, q) > 0] or was
    if len(was) != 1:
        return () if was else None
    verdict = evaluate_answer(new, was[0], language, now=now, timezone=timezone)
    return (was[0], verdict.value) if verdict.accepted and verdict.value else None


def _without_question_words(words: str, spec: FormQuestionSpec) -> str:
    """New words without the question's own name before them ("the materials steel frame" -> "steel frame")."""
    own = {w.rstrip("s") for w in re.findall(r"[a-z]{4,}", localize(spec.question, "en").lower())} - _STOPWORDS
    kept = list(words.split())
    while len(kept) > 1 and (kept[0].lower() in ("the", "a", "an") or _names_own(kept[0].lower().rstrip("s"), own)):
        kept.pop(0)
    return " ".join(kept)


def _names_own(word: str, own: set[str]) -> bool:
    """Whether a word is one of the question's own words, typed with a slip or not ("materals")."""
    return word in own or any(distance(word, w, reach(w)) <= reach(w) for w in own if reach(w))


def find_correction(
    state: ContextState, form: FormSpec, text: str, language: str, prefer: str | None = None, *, marked: bool = False,
    now: datetime | None = None, timezone: str | None = None,
) -> tuple[FormQuestionSpec, str] | None:
    """A correction of an answer already final, and the new value, or None.

    The target is the final answer the message points at (its unit, or words of its
    question), else `prefer` (the answer being changed; "?" for none: only one pointed at
    counts) or the last one finalized; the new value must fit that question's type.
    """
    marker = _CORRECTION.search(text)
    if (marker is None and not marked) or not state.finalized_answers:
        return None  # (`marked`: a part of a message whose marker stands in another part)
    rest = (text[: marker.start()] + " " + text[marker.end():]).strip(" ,，:：") if marker is not None else text.strip(" ,，:：")
    if (after := after_instruction(text)) != text:  # "目标改一下，改成：X": X is the new value
        rest = after
    final = {a.question_id for a in state.finalized_answers}
    specs = [q for q in form.questions if q.id in final]
    pending = current_question(state, form)
    if pending is not None and pending.unit and not _other_unit(text, pending.unit) and mentions_unit(text, pending.unit):
        return None  # the number is in the pending question's own unit: an answer, not a correction
    if (counted := _count_corrected(state, specs, rest)) is not None:
        return counted  # "make that 300 people": the answer that said "150 people"
    scored = [(2 if q.unit and mentions_unit(text, q.unit) else 0) + shared_words(text, q)
              + (2 if q.answer_type == "choice" and len(choices_named(rest, q, language)) == 1 else 0)  # "改成A组"
              + (2 if q.answer_type == "text" and q.patterns and volunteered_answer(rest, q, language) else 0)
              for q in specs]  # "actually I was wrong, she was late twice in January too": the history's own words
    ranked = sorted(zip(scored, specs, strict=True), key=lambda p: -p[0])
    pointed = [q for score, q in ranked if score > 0]
    # the one answer the message names above the others ("change the collection day to …"): said as it already
    # is, it is that answer unchanged, never a change of another one
    clearly = ranked[0][1] if ranked and ranked[0][0] > 0 and (len(ranked) == 1 or ranked[0][0] > ranked[1][0]) else None
    if len(pointed) >= 2 and (concluded := _named_last(rest, pointed, language)) is not None:
        pointed = [concluded, *(q for q in pointed if q is not concluded)]  # "… a little shop downstairs, so yes to mixed use"
    last = next((q for a in reversed(state.finalized_answers) for q in specs if q.id == a.question_id), None)
    last = None if prefer == "?" else next((q for q in specs if q.id == prefer), last)  # "?": only one pointed at
    # "actually" alone is too common in plain answers to redo the last one without pointing at it, and
    # a message it opens that answers the pending question is that answer ("actually, it's offices, Group D")
    weak = marker is not None and marker.group(0).lower() == "actually"
    named_other = (clearly is not None and clearly is not pending and label_said(text, clearly, form)  # "actually change the collection day to …"
                   and (said := evaluate_answer(rest or text, clearly, language, now=now, timezone=timezone)).accepted
                   and said.value != state.finalized(clearly.id).answer)
    if weak and pending is not None and not named_other and evaluate_answer(rest or text, pending, language, now=now, timezone=timezone).accepted:
        return None
    # a free-text answer is corrected only when the message points at it: "no wait, make it 11:30" or
    # "不对，改到周四" is no new account of the situation, whatever was answered last
    if last is not None and last.answer_type == "text" and prefer != last.id:
        last = None
    for spec in [*pointed, *([last] if last is not None and not weak else [])]:
        said = after_reproach(rest) if spec.answer_type == "text" else rest  # the new account, not "I was wrong"
        verdict = evaluate_answer(said or text, spec, language, now=now, timezone=timezone)
        if verdict.accepted and verdict.value and (verdict.value != state.finalized(spec.id).answer or spec is clearly):
            return spec, verdict.value
    return None


def label_said(text: str, spec: FormQuestionSpec, form: FormSpec | None = None) -> bool:
    """The message names the question by its label, in any of its languages ("the collection day", "取用日期"), or
    by the words of its label no other question's label has ("actually drop-off on Thursday" for the drop-off day
    beside the pick-up day)."""
    lowered = text.casefold()
    if any(label and re.search(rf"(?<![\w-]){re.escape(label.casefold())}(?![\w-])" if label.isascii() else re.escape(label.casefold()),
                               lowered) for label in spec.label.values()):
        return True
    if form is None:
        return False
    others = {w for q in form.questions if q is not spec for label in q.label.values() for w in label.casefold().split()}
    for label in (label for label in spec.label.values() if label and " " in label):
        own = [w for w in label.casefold().split() if w not in others]
        if own and all(re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", lowered) for w in own):
            return True
    return False


def _named_last(text: str, pointed: list[FormQuestionSpec], language: str) -> FormQuestionSpec | None:
    """The one question the message's last part names by its own words and answers ("so yes to mixed use" after "a
    little shop downstairs"): what a person concludes with is what they change. None when no part does."""
    parts = message_parts(text)
    if len(parts) < 2:
        return None
    last = parts[-1]
    named = [q for q in pointed if shared_words(last, q) > 0 and evaluate_answer(last, q, language).accepted]
    return named[0] if len(named) == 1 else None


# A count of something said in words ("300 people", "150 volunteers", "两百人"): the number and what it counts
_COUNT_OF = re.compile(r"(\d[\d,.]*\+?|[零〇一二两三四五六七八九十百千万]+)\s*([a-z][a-z-]{2,}|人|名|位|个|家)", re.IGNORECASE)


def _count_corrected(state: ContextState, specs: list[FormQuestionSpec], rest: str) -> tuple[FormQuestionSpec, str] | None:
    """A correction that gives a new count of what one free-text answer counted ("make that 300 people" after
    "... maybe 150 people"): that answer with only its count changed. None unless exactly one answer fits."""
    said = _COUNT_OF.search(rest)
    if said is None:
        return None
    fits = []
    for spec in specs:
        answer = state.finalized(spec.id).answer if spec.answer_type == "text" else ""
        old = next((m for m in _COUNT_OF.finditer(answer or "") if m.group(2).casefold() == said.group(2).casefold()), None)
        if old is not None and old.group(1) != said.group(1):
            fits.append((spec, f"{answer[:old.start()]}{said.group(0)}{answer[old.end():]}"))
    return fits[0] if len(fits) == 1 else None


def number_answer(value: str, unit: str | None) -> str:
    """A number answer as the form records it: with its unit, singular for one ("1 storey", "1 person")."""
    if not unit:
        return value
    if value in ("1", "1.0") and unit.endswith("s") and " " not in unit:
        return f"1 {unit[:-2] if re.search(r'(?:x|ch|sh|ss|z)es$', unit) else unit[:-1]}"  # "1 box", "1 storey"
    return f"{value} {unit}"


def without_own_unit(text: str, unit: str | None) -> str | None:
    """The number of a text with this question's own unit dropped ("2 storeys" -> "2", "1,450 sq ft" ->
    "1,450"); None when the number is given in another unit ("2 sq ft" for storeys)."""
    if _other_unit(text, unit):
        return None
    key = unit_id(unit)
    if key is None and unit:  # the plan's own unit, as the answers record it ("5 bikes", "1 bike")
        said = "|".join(re.escape(w) for w in sorted({unit, unit.removesuffix("s")}, key=len, reverse=True))
        return re.sub(rf"(?<=[\d\s])(?:{said})\s*$", "", text, flags=re.IGNORECASE).strip()
    return re.sub(rf"(?<=[\d\s])(?:{unit_pattern(key)})\s*$", "", text, flags=re.IGNORECASE).strip() if key else text.strip()




def mentions_unit(text: str, unit: str) -> bool:
    """A number given in this unit ("3 storeys", "3层", "三层", "three floors")."""
    key = unit_id(unit)
    return key is not None and re.search(rf"{_NUMBER_TOKEN}[\s-]*(?:{unit_pattern(key)})", text, re.IGNORECASE) is not None


def shared_words(text: str, spec: FormQuestionSpec) -> int:
    """How many words of the question (English words, Chinese character pairs) the text repeats."""
    words, pairs, names = _question_words(localize(spec.question, "en"), localize(spec.question, "zh"),
                                          (*spec.label.values(), *(measure_of(spec.unit, lang) for lang in ("en", "zh"))))
    lowered = text.lower()
    count = sum(1 for w in words if w.search(lowered)) + sum(1 for p in pairs if p in text)
    # the question's own short name ("users", "用户", "constraints"), or what its unit measures ("层数", "floor area"),
    # points at it as much as its words
    return count + sum(2 for name in names if (name.search(lowered) if isinstance(name, re.Pattern) else name in text))


@lru_cache(maxsize=512)
def _question_words(english: str, chinese: str, labels: tuple[str, ...]) -> tuple[tuple, frozenset, tuple]:
    """A question's words (as patterns), Chinese character pairs and short names, read once per question."""
    words = tuple(re.compile(rf"\b{w}") for w in {w for w in re.findall(r"[a-z]{4,}", english.lower())} - _STOPWORDS)
    pairs = frozenset(chinese[i:i + 2] for i in range(len(chinese) - 1)
                      if re.fullmatch(r"[\u4e00-\u9fff]{2}", chinese[i:i + 2])) - {"什么", "多少", "是否", "哪些", "请问"}
    found = {w for name in labels for w in re.findall(r"[a-z]{4,}|[\u4e00-\u9fff]{2,}", name.lower())} - _STOPWORDS
    names = tuple(re.compile(rf"\b{n}") if n.isascii() else n for n in found)
    return words, pairs, names


def current_question(state: ContextState, form: FormSpec) -> FormQuestionSpec | None:
    """The first question without a finalized answer (an optional one the person went past is skipped)."""
    return next((q for q in form.questions if state.finalized(q.id) is None and q.id not in state.skipped_steps), None)


def waiting_question(state: ContextState, form: FormSpec) -> FormQuestionSpec | None:
    """The question waiting for its answer: the one put to the person, or an interview's first before any is put
    (its opening message answers it)."""
    if state.current_step_id is None and form.kind == "interview" and not state.finalized_answers:
        return current_question(state, form)
    spec = form.question(state.current_step_id)
    return spec if spec is not None and state.finalized(spec.id) is None else None


def form_complete(state: ContextState, form: FormSpec) -> bool:
    """Every required question has a finalized answer."""
    return all(state.finalized(q.id) is not None for q in form.questions if q.required)


def open_thread(state: ContextState, question_id: str) -> ContextState:
    """Make sure the active thread belongs to this question."""
    if state.active_thread is not None and state.active_thread.question_id == question_id:
        return state
    return state.evolve(
        active_thread=ClarifyingThread(question_id=question_id), current_step_id=question_id
    )


def add_clarifying_question(
    state: ContextState, question: str, *, turn: int, question_id: str | None = None
) -> ContextState:
    """Append a clarifying question to the active thread (opening one if needed)."""
    question_id = question_id or (
        state.active_thread.question_id if state.active_thread else state.current_step_id
    )
    if question_id is None:
        return state
    state = open_thread(state, question_id)
    thread = state.active_thread
    assert thread is not None
    entry = ClarifyingQA(question=question, related_question_id=question_id, asked_turn=turn)
    return state.evolve(active_thread=replace(thread, entries=thread.entries + (entry,)))


def answer_clarifying_question(state: ContextState, answer: str, *, turn: int) -> ContextState:
    """Record the person's answer to the open clarifying question, if there is one."""
    thread = state.active_thread
    if thread is None or thread.open_entry is None:
        return state
    answered = replace(thread.open_entry, answer=answer, answered_turn=turn)
    return state.evolve(active_thread=replace(thread, entries=thread.entries[:-1] + (answered,)))


def finalize_answer(
    state: ContextState,
    spec: FormQuestionSpec,
    answer: str,
    *,
    turn: int,
    locale: str,
    form: FormSpec | None = None,
    needs_review: bool = False,
) -> ContextState:
    """Finalize an answer, archive its clarifying thread and move to the next question."""
    final = FinalizedAnswer(
        question_id=spec.id,
        question=localize(spec.question, locale),
        answer=answer,
        turn=turn,
        section=spec.section,
        needs_review=needs_review,
    )
    if state.finalized(spec.id) is not None:  # a corrected answer keeps its place in the form
        answers = tuple(final if a.question_id == spec.id else a for a in state.finalized_answers)
    else:
        answers = state.finalized_answers + (final,)
    archived = state.archived_threads
    active = state.active_thread
    if active is not None and active.question_id == spec.id:
        if active.entries:
            archived = tuple(t for t in archived if t.question_id != spec.id) + (active,)
        active = None
    slots = state.slots
    if spec.slot:
        known = slots.get(spec.slot)
        slots = with_key(
            slots,
            spec.slot,
            SlotValue(
                name=spec.slot,
                value=answer,
                source_turn=turn,
                raw=known.raw if known is not None and known.value == answer and known.raw else answer,  # the words it came from
                status=VALID,
                validated_by="form",
                validated_turn=turn,
            ),
        )
    state = state.evolve(
        finalized_answers=answers, archived_threads=archived, active_thread=active, slots=slots
    )
    nxt = current_question(state, form) if form else None
    return state.evolve(current_step_id=nxt.id if nxt else None)


def clarify_prompt(spec: FormQuestionSpec, asked: int, locale: str) -> str | None:
    """The next configured clarifying question for a form question, if any remain."""
    if asked < len(spec.clarify):
        return localize(spec.clarify[asked], locale)
    return None


def prefill_from_slots(
    state: ContextState, form: FormSpec, *, turn: int, locale: str
) -> tuple[ContextState, tuple[str, ...]]:
    """Finalize questions whose slot the person already supplied, so they are not asked again."""
    done = []
    for spec in form.questions:
        slot = state.slots.get(spec.slot) if spec.slot else None
        if slot is not None and slot.usable and state.finalized(spec.id) is None and not (spec.answer_type == "text" and is_vacuous(slot.value)):
            state = finalize_answer(state, spec, slot.value, turn=turn, locale=locale, form=form)
            done.append(spec.id)
    return state, tuple(done)


def thread_summary(threads: Iterable[ClarifyingThread]) -> dict[str, int]:
    """Question id -> number of clarifying exchanges (for display)."""
    return {t.question_id: len(t.entries) for t in threads}


# --- changing a final answer (the review's "Change an answer") --------------------------

# "I want to change an answer", "can I edit my answers", "go back", "我想改一下楼层数", "修改答案"
_EDIT_REQUEST = re.compile(
    r"\b(?:change|edit|modify|amend|revise|redo)\b|\b(?:fix|correct|update)\s+(?:an?|my|the|one|some\w*|that|this|it)\b"
    r"|\bgo\s+back\b|\bwrong\s+answer\b|\bmade\s+a\s+mistake\b"
    r"|修改|更改|改一下|改下|改个|改改|想改|要改|改答案|重新填|填错|改动"
    r"|измен\w*|поменя\w*|исправ\w*|cambi[ae]\w*|corregir|modificar",
    re.IGNORECASE,
)
# The listing's entries picked by position: "2", "the second one", "第二个", "number 3"
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
             "ninth": 9, "tenth": 10, "last": -1}
_PICK = re.compile(
    r"^\s*(?:(?:the|number|no\.?|#)\s*)?(?P<n>\d{1,2}|" + "|".join(_ORDINALS) + r")(?:\s+(?:one|answer|question))?\s*[.!]?\s*$"
    r"|^\s*第\s*(?P<zh>[一二两三四五六七八九十\d]{1,2})\s*(?:个|项|条|题|道)?\s*[。！]?\s*$",
    re.IGNORECASE,
)
# Words a question goes by besides its wording (its slot's name: "floor area", "occupant load")
_SLOT_WORDS = re.compile(r"[a-z]{4,}")


_NO_EDIT_BEFORE = re.compile(r"(?:\b(?:don'?t|do\s+not|no\s+need\s+to|nothing\s+to)\s+(?:\w+\s+){0,2}|(?:不用|不要|不需要|无需|别)\s*)$", re.IGNORECASE)


def value_in_own_unit(state: ContextState, form: FormSpec, text: str, language: str) -> tuple[FormQuestionSpec, str] | None:
    """A number in the unit of exactly one answered question ("1600平方英尺" at the review), and its value."""
    fits = [q for q in form.questions if q.unit and state.finalized(q.id) is not None and mentions_unit(text, q.unit)]
    if len(fits) != 1 or not (verdict := evaluate_answer(text, fits[0], language)).accepted or verdict.value is None:
        return None
    return fits[0], verdict.value


def names_question(text: str, spec: FormQuestionSpec) -> bool:
    """The message names this question in words, beyond a number in its unit ("the storeys", not "2 storeys")."""
    key = unit_id(spec.unit)
    if key is not None:
        text = re.sub(rf"{_NUMBER_TOKEN}[\s-]*(?:{unit_pattern(key)})", " ", text, flags=re.IGNORECASE)
    return shared_words(text, spec) > 0


def wants_edit(text: str) -> bool:
    """The person asks to change one of the answers ("I want to change an answer", "我想改一下楼层数");
    "no changes", "don't change anything", "不用修改" do not."""
    text = text.replace("’", "'")
    return any(not negated_at(text, m.start(), m.end()) and not _NO_EDIT_BEFORE.search(text[: m.start()]) for m in _EDIT_REQUEST.finditer(text))


def edit_target(state: ContextState, form: FormSpec, text: str, *, listed: bool = False) -> FormQuestionSpec | None:
    """The final answer the message names to change: by position when the answers were listed
    ("the second one", "第二个"), else by its question's words, its slot's name or its unit; None
    when it names none, or two equally."""
    answered = [q for q in form.questions if state.finalized(q.id) is not None]
    if listed and (pick := _PICK.match(text)):
        raw = pick.group("n") or pick.group("zh")
        index = _ORDINALS.get(raw.lower()) if raw.lower() in _ORDINALS else int(raw) if raw.isdigit() else zh_number(raw)
        if index == -1:
            index = len(answered)
        return answered[index - 1] if 1 <= index <= len(answered) else None
    scored = []
    lowered = text.lower()
    for spec in answered:
        score = shared_words(text, spec)
        if spec.slot:
            score += sum(1 for w in _SLOT_WORDS.findall(spec.slot.replace("_", " ")) if re.search(rf"\b{w[:6]}", lowered))
        key = unit_id(spec.unit)
        if key is not None and re.search(unit_pattern(key), text, re.IGNORECASE):
            score += 3 if mentions_unit(text, spec.unit or "") else 1  # "3 floors" is a number of storeys
        scored.append((score, spec))
    best = max((score for score, _ in scored), default=0)
    top = [spec for score, spec in scored if score == best]
    return top[0] if best > 0 and len(top) == 1 else None


def answers_listing(state: ContextState, form: FormSpec, locale: str) -> str:
    """The final answers in plain words and the person's language ("3层", "住宅"), numbered in the form's order."""
    lines = []
    for number, spec in enumerate((q for q in form.questions if state.finalized(q.id) is not None), start=1):
        question = localize(spec.question, locale).rstrip("?？")
        answer = answer_shown(spec, state.finalized(spec.id).answer, locale)
        lines.append(say(locale, "{number}. {question}: {answer}", number=number, question=question, answer=answer))
    return "\n".join(lines)
