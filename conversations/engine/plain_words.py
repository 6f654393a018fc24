"""Replies in plain words, in the conversation's language: answers said as people say them.

A form records values as the plan defines them ("residential", "3 storeys", "no"); a reply says
them in the person's language ("住宅", "3层"), a yes or no as a sentence built from its question
("OK, you haven't tried to contact them yet."), and a free-text account is acknowledged, never
repeated back. The greeting names the concierge once, and a choice's note says what happened
("I've prepared the email draft: you can open it under Documents.") rather than the plan's ids.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ._text import localize
from .config import ChoiceSpec, FormQuestionSpec

# --- values in the conversation's language ------------------------------------------

# A number answer's unit in Chinese: the label the question goes by when the plan gives it none, and the
# measure word said after the number. English needs no label: its unit already says what is counted ("3 storeys").
_UNITS_ZH = {
    "storeys": ("层数", "层"), "storey": ("层数", "层"),
    "sq ft": ("面积", "平方英尺"),
    "m2": ("面积", "平方米"),
    "persons": ("人数", "人"), "person": ("人数", "人"),
}

# Choice labels a shipped plan gives in English only (permit_form's occupancy groups), in Chinese; the plan
# JSON is not ours to edit, so the translation lives here until the plan carries its own `zh` labels.
CHOICE_LABELS_ZH = {
    "Group A - assembly": "A组（集会场所）",
    "Group B - care or detention": "B组（护理或羁押）",
    "Group C - residential": "C组（住宅）",
    "Group D - business and personal services": "D组（办公及个人服务）",
    "Group E - mercantile": "E组（商业零售）",
    "Group F - industrial": "F组（工业）",
}

_YES_NO_ZH = {"yes": "是", "no": "否"}


def is_zh(lang: str) -> bool:
    return lang.lower().startswith("zh")


def choice_label(choice: ChoiceSpec, lang: str) -> str:
    """A choice as the person reads it: its label in their language, else the translation kept here, else its label."""
    if lang in choice.label or not is_zh(lang):
        return localize(choice.label, lang) or choice.value
    english = localize(choice.label, "en")
    return CHOICE_LABELS_ZH.get(english) or CHOICE_LABELS_ZH.get(choice.value) or english or choice.value


def _number_shown(answer: str, unit: str | None, lang: str) -> str:
    """'3 storeys' -> '3层' in Chinese (any language without its own unit words keeps the recorded form)."""
    if not is_zh(lang) or not unit or unit not in _UNITS_ZH:
        return answer
    number = re.match(r"\s*([\d.,]+)", answer)
    return f"{number.group(1)}{_UNITS_ZH[unit][1]}" if number else answer


def answer_shown(spec: FormQuestionSpec, answer: str, lang: str) -> str:
    """A recorded answer in the conversation's language. English keeps the plan's own values ("residential"),
    which are English words; another language gets the choice's label, the unit's word, 是 / 否."""
    if spec.answer_type == "choice" and not lang.startswith("en"):
        choice = next((c for c in spec.choices if c.value == answer), None)
        return choice_label(choice, lang) if choice is not None else answer
    if spec.answer_type == "number":
        return _number_shown(answer, spec.unit, lang)
    if spec.answer_type == "yes_no" and is_zh(lang):
        return _YES_NO_ZH.get(answer, answer)
    return answer


def question_label(spec: FormQuestionSpec, lang: str) -> str:
    """The question's short name for replies: the plan's label, else (Chinese) what its unit measures."""
    if spec.label:
        return localize(spec.label, lang)
    if is_zh(lang) and spec.unit in _UNITS_ZH:
        return _UNITS_ZH[spec.unit][0]
    return ""


def unit_said(unit: str | None, lang: str) -> str:
    """A unit named in a hint ("(sq ft)" / "（平方英尺）"); "" without one."""
    if not unit:
        return ""
    if is_zh(lang):
        return f"（{_UNITS_ZH[unit][1]}）" if unit in _UNITS_ZH else ""
    return f" ({unit})"


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
        return f"好的：{worded}。" if is_zh(lang) else f"OK: {worded}."  # the plan's own words for this answer
    question = localize(spec.question, lang)
    if is_zh(lang):
        said = _zh_yes_no(question, value == "yes")
        return f"好的，{said}。" if said else "好的，明白了。"
    if lang.startswith("en"):
        said = _en_yes_no(question, value == "yes")
        return f"OK, {said}." if said else "Got it, thanks."
    return ""


# --- acknowledging an account -------------------------------------------------------

_ACKS = (("Thanks, that helps.", "明白了。"), ("Got it, thank you.", "好的，了解了。"), ("Thanks for explaining.", "谢谢您的说明。"))


def acknowledgement(turn: int, lang: str) -> str:
    """A short thanks for an account (varied from turn to turn, so it does not read like a stamp)."""
    en, zh = _ACKS[turn % len(_ACKS)]
    return zh if is_zh(lang) else en


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
    if is_zh(lang):
        return name if name.endswith(_ROLE_WORDS_ZH) else f"{name}助手"
    if not lang.startswith("en"):
        return name  # the Russian and Spanish greetings say "помощник «…»" / "el asistente de …" around it
    last = (name.split() or [""])[-1].lower()
    return name if last in _ROLE_WORDS_EN else f"{name} concierge"


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


def _document_name(label: str, lang: str) -> str:
    """'Email draft (.eml)' -> 'email draft'; '邮件草稿（.eml）' -> '邮件草稿'."""
    name = re.sub(r"\s*[（(][^）)]*[）)]\s*$", "", label).strip()
    return name if is_zh(lang) else name[:1].lower() + name[1:]


# What a choice's note says, per language (English for any other).
_NOTE_WORDS: dict[str, dict[str, str]] = {
    "en": {"prepared": "I've prepared {names}: you can open {them} under Documents.", "and": " and ", "the": "the {name}",
           "it": "it", "them": "them",
           "review": "A supervisor will review this now; I'll post their decision here.",
           "thanks": "Thank you — if you need anything else, you can start a new conversation from the start page.",
           "ok": "OK.", "listening": "OK — go ahead, I'm listening.", "next": "OK — next: {step}.", "sep": " "},
    "zh": {"prepared": "已为您准备好{names}，可以在“文档”中打开。", "and": "和", "the": "{name}", "it": "", "them": "",
           "review": "现在交由主管复核，结果出来后我会在这里告诉您。", "thanks": "谢谢您！如有其他需要，可以在首页开始新的对话。",
           "ok": "好的。", "listening": "好的，请继续说。", "next": "好的，下一步：{step}。", "sep": ""},
    "ru": {"prepared": "Готово: {names}. {Them} можно открыть в разделе «Документы».", "and": " и ", "the": "{name}",
           "it": "его", "them": "их",
           "review": "Сейчас это проверит руководитель; его решение я напишу здесь.",
           "thanks": "Спасибо! Если понадобится что-то ещё, начните новый разговор на стартовой странице.",
           "ok": "Хорошо.", "listening": "Хорошо, слушаю вас.", "next": "Хорошо, дальше: {step}.", "sep": " "},
    "es": {"prepared": "Listo: {names}. Puede abrir{them} en Documentos.", "and": " y ", "the": "{name}",
           "it": "lo", "them": "los",
           "review": "Un supervisor lo revisará ahora; publicaré aquí su decisión.",
           "thanks": "Gracias. Si necesita algo más, puede empezar una conversación nueva desde la página de inicio.",
           "ok": "De acuerdo.", "listening": "De acuerdo, le escucho.", "next": "De acuerdo. Siguiente paso: {step}.", "sep": " "},
}


def _note_words(lang: str) -> dict[str, str]:
    key = lang.lower().split("-")[0]
    return _NOTE_WORDS.get(key, _NOTE_WORDS["en"])


def _documents_said(documents: Sequence[str], lang: str) -> str:
    words = _note_words(lang)
    names = words["and"].join(words["the"].format(name=_document_name(label, lang)) for label in documents)
    them = words["it" if len(documents) == 1 else "them"]
    return words["prepared"].format(names=names, them=them, Them=them[:1].upper() + them[1:])


def choice_note(taken: ChoiceTaken, lang: str) -> str:
    """What a person would write after an option was taken: what came of it, then where things go next.
    Never the option's id, its effects summary or the step's internal name."""
    words = _note_words(lang)
    parts = [_documents_said(taken.documents, lang)] if taken.documents else []
    if taken.waiting_review:
        parts.append(words["review"])
    elif taken.ended:
        if not taken.documents and taken.end_label:
            parts.append(f"{taken.end_label}。" if is_zh(lang) else f"{taken.end_label.rstrip('.')}.")
        parts.append(words["thanks"])
    elif taken.then_asks or not taken.moved:
        parts.append(words["ok" if taken.then_asks else "listening"])
    elif not taken.documents and taken.step_label:
        step = taken.step_label if is_zh(lang) else taken.step_label[:1].lower() + taken.step_label[1:]
        parts.append(words["next"].format(step=step))
    return words["sep"].join(parts) or words["ok"]


__all__ = ["CHOICE_LABELS_ZH", "ChoiceTaken", "acknowledgement", "answer_shown", "choice_label", "choice_note", "introduces",
           "is_account", "question_label", "unit_said", "yes_no_said"]
