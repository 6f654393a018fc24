"""Replies in plain words, in the conversation's language: answers said as people say them.

A form records values as the plan defines them ("residential", "3 storeys", "no"); a reply says
them in the person's language ("住宅", "3层"), a yes or no as a sentence built from its question
("OK, you haven't tried to contact them yet."), and a free-text account is acknowledged, never
repeated back. The greeting names the concierge once, and a choice's note says what happened
("I've prepared the email draft: you can open it under Documents.") rather than the plan's ids.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._text import localize
from .catalog import marked, say, say_in, say_n
from .config import ChoiceSpec, ConversationConfig, FormQuestionSpec
from .units import measure_of, number_in, unit_word

# --- sentences put together -----------------------------------------------------------


def then(lang: str, *sentences: str) -> str:
    """Sentences one after another: a space between them, none in Chinese."""
    said = [sentence for sentence in sentences if sentence]
    return said[0] if len(said) == 1 else "" if not said else say(lang, "{first} {then}", first=said[0], then=then(lang, *said[1:]))


def quoted(text: str, lang: str) -> str:
    return say(lang, "“{text}”", text=text)


def aside(text: str, lang: str) -> str:
    """A remark in brackets after what it is about: ' (Mon–Fri)' / '（周一至周五）'."""
    return say(lang, " ({aside})", aside=text)


def lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def upper_first(text: str) -> str:
    return text[:1].upper() + text[1:]


# --- values in the conversation's language ------------------------------------------

# Choice labels a shipped plan gives in English only, said through the catalog in another language (the plan
# JSON is not ours to edit); listed here so that makemessages collects them.
_PLAN_CHOICE_LABELS = (marked("Group A - assembly"), marked("Group B - care or detention"), marked("Group C - residential"),
                       marked("Group D - business and personal services"), marked("Group E - mercantile"),
                       marked("Group F - industrial"))


def is_zh(lang: str) -> bool:
    return lang.lower().startswith("zh")


def _is_english(lang: str) -> bool:
    return lang.lower().startswith("en")


def choice_label(choice: ChoiceSpec, lang: str) -> str:
    """A choice as the person reads it: its label in their language, else its English label from the catalog."""
    if lang in choice.label or _is_english(lang):
        return localize(choice.label, lang) or choice.value
    english = localize(choice.label, "en") or choice.value
    return say(lang, english)


def _number_shown(answer: str, unit: str | None, lang: str) -> str:
    """'3 storeys' -> '3层' / '3 этажа' (English, and a unit the catalog has no words for, keep the recorded form)."""
    number = re.match(r"\s*([\d.,]+)", answer)
    if _is_english(lang) or number is None:
        return answer
    return _number_said(number.group(1), unit or "", lang) or answer


def _number_said(number: str, unit: str, lang: str) -> str | None:
    try:
        count = round(float(number.replace(",", "")))  # the plural form: a fraction takes its nearest whole number's
    except ValueError:
        return None
    return number_in(unit, number, count, lang)


def answer_shown(spec: FormQuestionSpec, answer: str, lang: str) -> str:
    """A recorded answer in the conversation's language. English keeps the plan's own values ("residential"),
    which are English words; another language gets the choice's label, the unit's word, 是 / 否."""
    if spec.answer_type == "choice" and (not _is_english(lang) or not _WORDS.fullmatch(answer)):
        choice = next((c for c in spec.choices if c.value == answer), None)  # "e_bike" is said as its label, "E-bike"
        return choice_label(choice, lang) if choice is not None else answer
    if spec.answer_type == "number" and spec.unit_words and (number := re.match(r"\s*([\d.,]+)", answer)):
        return _plan_unit(spec, number.group(1), lang)  # the plan's words for its unit: "3 boxes", "3箱"
    if spec.answer_type == "number":
        return _number_shown(answer, spec.unit, lang)
    if spec.answer_type == "yes_no" and answer in ("yes", "no"):
        return say_in(lang, "answer", "yes") if answer == "yes" else say_in(lang, "answer", "no")
    if spec.answer_type in ("date", "datetime") and _ISO_DAY.match(answer):  # "Friday 11 December", "12月11日（周五）"
        from .action_prefs import describe_when  # the day words live with the actions' sentences

        day, _, clock = answer.partition(" ")
        return describe_when(day, clock or None, lang)
    return answer


_WORDS = re.compile(r"[A-Za-z][A-Za-z' -]*")  # a value that reads as English words ("residential", "Group C")
_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}(?: \d{2}:\d{2})?$")


def slot_shown(extractor: str, value: str, lang: str) -> str:
    """A slot's value as a person reads it: a day and a time in words ("Sunday 6 December at 10:00"), not ISO."""
    from .action_prefs import describe_when  # the day words live with the actions' sentences

    if extractor == "date" and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        return describe_when(value, None, lang)
    if extractor in ("at_time", "until_time") and (moment := re.fullmatch(r"(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}).*", value)):
        return describe_when(moment.group(1), moment.group(2), lang)
    return value


def details_shown(names: Sequence[str], slots: Mapping[str, Any], config: ConversationConfig, lang: str) -> list[tuple[str, str]]:
    """(label, value) of a request's details as a person reads them; a time on a day said beside it is the time alone."""
    from .slots import slot_label  # the slots' own names ("licence plate number")

    days = {slots[n].value for n in (*names, *config.slots) if n in slots and config.slot_spec(n).extractor == "date"}
    return [(slot_label(config.slot_spec(n), lang),
             slots[n].value[11:16] if config.slot_spec(n).extractor == "at_time" and slots[n].value[:10] in days
             else slot_shown(config.slot_spec(n).extractor, slots[n].value, lang)) for n in names]


def question_label(spec: FormQuestionSpec, lang: str) -> str:
    """The question's short name for replies: the plan's label, else (not in English) what its unit measures."""
    if spec.label:
        return localize(spec.label, lang)
    # English needs none: its unit already says what is counted ("3 storeys")
    return "" if _is_english(lang) else measure_of(spec.unit, lang)


def unit_said(unit: str | None, lang: str, spec: FormQuestionSpec | None = None) -> str:
    """A unit named in a hint ("(sq ft)" / "（平方英尺）", or the plan's own word for its unit); "" without one."""
    if spec is not None and spec.unit_words:
        return aside(_plan_unit(spec, "", lang).strip(), lang)
    return aside(unit_word(unit, lang), lang) if unit else ""


def _plan_unit(spec: FormQuestionSpec, number: str, lang: str) -> str:
    """A number with the unit the plan names ("{n} boxes"), singular for one when the plan says it."""
    one = number in ("1", "1.0") and "one" in spec.unit_words
    template = localize(spec.unit_words["one" if one else "many"], lang) or "{n}"
    return template.replace("{n}", number)


# --- a yes or a no, said with its question's meaning ------------------------------------

# English questions turned round: "Have you already tried to contact them?" -> "you've already tried to contact them"
# / "you haven't tried to contact them yet". Each: the question's opening, the yes form, the no form.
_EN_TURNS: tuple[tuple[str, str, str], ...] = (
    (r"have\s+you", "you've", "you haven't"),
    (r"has\s+(he|she|it|this|that|anyone|anybody|someone)", "{0} has", "{0} hasn't"),
    (r"will\s+there\s+be\s+(?:any\s+)?", "there will be ", "there won't be any "),
    (r"is\s+there\s+(?:any|an?)\s+", "there is a ", "there is no "),
    (r"are\s+there\s+(?:any\s+)?", "there are ", "there aren't any "),
    (r"do\s+you", "you", "you don't"),
    (r"did\s+you", "you did", "you didn't"),
    (r"will\s+you", "you will", "you won't"),
    (r"can\s+you", "you can", "you can't"),
    (r"are\s+you", "you're", "you aren't"),
    (r"is\s+(it|this|that)", "{0} is", "{0} isn't"),
    (r"was\s+(it|this|that)", "{0} was", "{0} wasn't"),
    (r"does\s+(it|this|that|he|she)", "{0} does", "{0} doesn't"),
)


def _en_yes_no(question: str, yes: bool) -> str | None:
    """The English question said back as a statement, or None when its shape is not one of the known ones."""
    body = _first_question(question)
    for opening, said_yes, said_no in _EN_TURNS:
        found = re.match(rf"(?i){opening}\s*", body)
        if found is None:
            continue
        rest = body[found.end():].strip()
        if not rest:
            return None
        subject = found.groups()[0].lower() if found.groups() else ""
        rest = re.sub(r"(?i)\b(any)\b\s*", "", rest) if yes and "there" in opening else rest
        if yes:
            return f"{said_yes.format(subject)} {rest}".replace("  ", " ").strip()
        ever = re.search(r"(?i)\balready\s+", rest)
        rest = rest[: ever.start()] + rest[ever.end():] + " yet" if ever else rest  # "already" -> "... yet"
        return f"{said_no.format(subject)} {rest}".replace("  ", " ").strip()
    return None


def _first_question(question: str) -> str:
    """The first asking clause of a question ("Has this happened before, and is ...?" -> "Has this happened before")."""
    text = " ".join(question.split()).strip()
    text = re.split(r"\?|？|,\s*(?:and|or)\s+", text)[0]
    return text.strip(" ?？.")


# Chinese: a leading subject, then the asking part: 已经…了吗 / 是否… / 有没有… / 有…吗 / A不A.
_ZH_SUBJECT = r"(?P<who>您|你|对方|他|她|它|这栋建筑|建筑|楼里|这里)?"
_ZH_NEGATION = {"有": "没有", "是": "不是", "会": "不会", "能": "不能", "要": "不要", "需要": "不需要", "可以": "不可以", "打算": "不打算"}


def _zh_yes_no(question: str, yes: bool) -> str | None:
    """The Chinese question said back as a statement, or None when its shape is not one of the known ones."""
    body = re.split(r"[？?]", question.strip())[0].strip()
    body = re.sub(r"(?:了)?吗$", "", body)
    who = re.match(_ZH_SUBJECT, body).group("who") or ""  # every part optional: it always matches
    rest = body[len(who):]
    if rest.startswith("已经"):  # 已经联系过对方 -> 已经联系过对方了 / 还没有联系过对方
        done = rest[2:]
        return f"{who}已经{done}了" if yes else f"{who}还没有{done}"
    if rest.startswith("是否"):
        rest = rest[2:]
    elif pair := re.match(r"(.{1,2})[不没]\1", rest):  # 有没有 / 会不会 / 需不需要
        rest = pair.group(1) + rest[pair.end():]
    elif not rest.startswith(tuple(_ZH_NEGATION)):
        return None
    if yes:
        return who + rest
    verb = next((v for v in sorted(_ZH_NEGATION, key=len, reverse=True) if rest.startswith(v)), None)
    return who + (_ZH_NEGATION[verb] + rest[len(verb):] if verb else "不" + rest)


def yes_no_said(spec: FormQuestionSpec, value: str, lang: str) -> str:
    """A yes / no answer said as a sentence: the question's meaning turned into a statement ("OK, you haven't
    tried to contact them yet." / "好的，您还没有尝试联系过对方。"), a choice's own wording when the plan gives
    one, else a plain acknowledgement. Never the bare value ("Noted: no.")."""
    if value not in ("yes", "no"):
        return ""
    choice = next((c for c in spec.choices if c.value == value), None)
    worded = localize(choice.label, lang) if choice is not None and (lang in choice.label or not is_zh(lang)) else ""
    if worded and worded.lower() not in ("yes", "no", "是", "否", "有", "没有"):
        return say(lang, "OK: {answer}.", answer=worded)  # the plan's own words for this answer
    # the question turned into a statement: a grammar of its own per language, English and Chinese so far
    turned = _zh_yes_no if is_zh(lang) else _en_yes_no if _is_english(lang) else None
    if turned is None:
        return ""
    said = turned(localize(spec.question, lang), value == "yes")
    return say(lang, "OK, {statement}.", statement=said) if said else say(lang, "Got it, thanks.")


# --- acknowledging an account -------------------------------------------------------

_ACKS = (marked("Thanks, that helps."), marked("Got it, thank you."), marked("Thanks for explaining."))


def acknowledgement(turn: int, lang: str) -> str:
    """A short thanks for an account (varied from turn to turn, so it does not read like a stamp)."""
    return say(lang, _ACKS[turn % len(_ACKS)])


def is_account(answer: str, message: str) -> bool:
    """The answer is a sentence of the person's own, most of their message: saying it back would be an echo.
    A value ("efficiency", "wood frame", "老人", "没有预算限制") is short and is confirmed instead, and so is an
    answer that gathers this message with earlier ones ("budget 15k; must launch before June")."""
    answer, message = " ".join(answer.split()), " ".join(message.split())
    tokens = _tokens(answer)
    if len(tokens) < 6:
        return False
    said = set(_tokens(message))
    return len(answer) >= 0.6 * len(message) and sum(token in said for token in tokens) >= 0.8 * len(tokens)


def _tokens(text: str) -> list[str]:
    """Words, a Chinese character pair counting as one (a Chinese word is about two characters)."""
    lowered = text.lower()
    cjk = re.findall(r"[\u3400-\u9fff]", lowered)
    return re.findall(r"[a-z0-9'’]+", lowered) + ["".join(cjk[i:i + 2]) for i in range(0, len(cjk) - 1, 2)]


# --- the greeting --------------------------------------------------------------------

_ROLE_WORDS_EN = ("assistant", "concierge", "agent", "helper", "bot", "advisor", "adviser")
_ROLE_WORDS_ZH = ("助手", "客服", "助理", "顾问", "专员", "管家", "机器人")


def introduces(name: str, lang: str) -> str:
    """Who the concierge says it is: the workflow's name, with "concierge" / 助手 only when the name does not
    already end in a word for one ("经理助手", not "经理助手助手")."""
    name = name.strip()
    named = name.endswith(_ROLE_WORDS_ZH) if is_zh(lang) else (name.split() or [""])[-1].lower() in _ROLE_WORDS_EN
    # the Russian and Spanish greetings say "помощник «…»" / "el asistente de …" around the bare name
    return name if named else say(lang, "{name} concierge", name=name)


# --- a choice's note -------------------------------------------------------------------


@dataclass(frozen=True)
class ChoiceTaken:
    """What taking an option did, as plain data (labels already in the conversation's language)."""

    ended: bool = False  # the run reached an end step
    end_label: str = ""
    waiting_review: bool = False
    step_label: str = ""  # the step the run is at now
    moved: bool = True  # False for an option that keeps the step ("Keep talking")
    documents: Sequence[str] = ()  # labels of the documents the choice produced
    then_asks: bool = False  # a question follows the note (which answer to change ...)


def _document_name(label: str) -> str:
    """'Email draft (.eml)' -> 'email draft'; '邮件草稿（.eml）' -> '邮件草稿'."""
    return lower_first(re.sub(r"\s*[（(][^）)]*[）)]\s*$", "", label).strip())


def _documents_said(documents: Sequence[str], lang: str) -> str:
    names = say_in(lang, "and", " and ").join(say(lang, "the {label}", label=_document_name(label)) for label in documents)
    return say_n(lang, "I've prepared {names}: you can open it under Documents.", "I've prepared {names}: you can open them under Documents.",
                 len(documents), names=names)


def choice_note(taken: ChoiceTaken, lang: str) -> str:
    """What a person would write after an option was taken: what came of it, then where things go next.
    Never the option's id, its effects summary or the step's internal name."""
    parts = [_documents_said(taken.documents, lang)] if taken.documents else []
    if taken.waiting_review:
        parts.append(say(lang, "A supervisor will review this now; I'll post their decision here."))
    elif taken.ended:
        if not taken.documents and taken.end_label:
            parts.append(say(lang, "{sentence}.", sentence=taken.end_label.rstrip(".")))
        parts.append(say(lang, "Thank you — if you need anything else, you can start a new conversation from the start page."))
    elif taken.then_asks:
        parts.append(say(lang, "OK."))
    elif not taken.moved:
        parts.append(say(lang, "OK — go ahead, I'm listening."))
    elif not taken.documents and taken.step_label:
        parts.append(say(lang, "OK — next: {step}.", step=lower_first(taken.step_label)))
    return then(lang, *parts) or say(lang, "OK.")


__all__ = ["ChoiceTaken", "acknowledgement", "answer_shown", "aside", "choice_label", "choice_note", "introduces", "is_account",
           "lower_first", "question_label", "quoted", "then", "unit_said", "yes_no_said"]


def stay_length(minutes: int, lang: str) -> str:
    """A length of time in words: "2 hours", "90 minutes", "2 个小时" (hours when it is whole hours)."""
    if minutes and minutes % 60 == 0:
        return say_n(lang, "{n} hour", "{n} hours", minutes // 60)
    return say_n(lang, "{n} minute", "{n} minutes", minutes)
