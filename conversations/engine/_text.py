"""Text helpers shared by the router, extractors and rules: language, locale, patterns."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from .lexicon import entry, words_of
from .negation import negated, opens_a_request

LANGUAGES = ("en", "ru", "es", "zh")
DEFAULT_LOCALE = "en"

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_CN_PLATE = re.compile(r"[\u4e00-\u9fff][A-Za-z][A-Za-z0-9]{4,6}")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_LATIN_WORD = re.compile(r"[A-Za-zÀ-ÿ]{2,}")
_SPANISH_MARKS = re.compile(r"[ñ¿¡áéíóú]", re.IGNORECASE)
_SPANISH_WORDS = re.compile(
    r"\b(?:el|la|los|las|que|qu[eé]|del|est[aá]|por|para|c[oó]mo|d[oó]nde|mi|mis|una|"
    r"pero|con|hay|puedo|tengo|es|son|y|no|s[ií]|ayer|hoy|ma[ñn]ana|cu[aá]nto)\b",
    re.IGNORECASE,
)
_ENGLISH_WORDS = re.compile(
    r"\b(?:the|is|are|what|where|how|i|my|you|it|this|that|and|to|of|do|does|can|"
    r"for|with|in|on|was|yes|no|please|check|order)\b",
    re.IGNORECASE,
)

_CLAUSE_SPLIT = re.compile(
    r"(?:(?<!\d)\.|\.(?!\d)|[;!?\n。；！？])+|,\s*(?:but|however|although|though)\b|\b(?:but|however)\s*,?\s|"
    r"但是|不过|可是|但|，\s*(?:но|pero)\b|(?<!\w)(?:но|однако|pero|sin embargo)(?!\w)",
    re.IGNORECASE,
)

# Messages that carry no answer at all: fillers, "I don't know", a bare "?", and a greeting,
# thanks or plea for help on its own (none of them answers a form question).
_NON_ANSWER = re.compile(
    r"^(?:h+m+|u+m+|u+h+|e+r+m*|a+h+|o+h+|idk|dunno|no idea|not sure|i'?m not sure|"
    r"i don'?t know|don'?t know|no clue|what|huh|sorry|pardon|eh|"
    r"(?:hi|hello|hey|good (?:morning|afternoon|evening))(?: there)?|(?:ok(?:ay)? )?(?:thanks|thank you|thx)(?: a lot| so much)?|"
    r"(?:i need |please |can you |could you )?help(?: me)?(?: please)?|"
    r"你好|您好|嗨|哈喽|谢谢(?:你|您)?|多谢|感谢|帮帮我|我需要帮助|请帮帮我|"
    r"привет|здравствуйте|спасибо|помогите|hola|buenos d[ií]as|gracias|ayuda|"
    r"не знаю|не уверен[а]?|без понятия|хз|что|э+|м+|"
    r"no s[eé]|ni idea|no estoy segur[oa]|qu[eé]|"
    r"不知道|不清楚|不确定|不晓得|啥|什么|嗯+|啊+|呃+|额+|哦+)?$",
    re.IGNORECASE,
)
_STRIP_PUNCT = re.compile(r"[\s.,;:!?…。，；：！？、\"`()\[\]{}<>«»“”~\-]+")


def language_signal(text: str) -> str | None:
    """The language a message is written in (en, ru, es, zh), or None when it has no words."""
    stripped = _CN_PLATE.sub(" ", text)  # a Chinese plate inside an English sentence is not Chinese
    cjk = len(_CJK.findall(stripped))
    latin_words = len(_LATIN_WORD.findall(stripped))
    if cjk and (latin_words == 0 or cjk >= 2 and cjk >= latin_words):
        return "zh"
    cyrillic = len(_CYRILLIC.findall(stripped))
    if cyrillic and cyrillic >= len(re.findall(r"[A-Za-z]", stripped)):
        return "ru"
    if latin_words == 0:
        return None
    spanish = len(_SPANISH_WORDS.findall(stripped)) + 2 * len(_SPANISH_MARKS.findall(stripped))
    english = len(_ENGLISH_WORDS.findall(stripped))
    if spanish > english:
        return "es"
    if english == spanish:
        return None  # codes ("SCN-020") or words both share ("no"): the conversation's language stands
    return "en"


def detect_language(text: str, default: str = DEFAULT_LOCALE) -> str:
    """Best-guess language of a message (en, ru, es, zh); `default` when there is no signal."""
    return language_signal(text) or (default if default in LANGUAGES else DEFAULT_LOCALE)


def localize(value: Any, locale: str, default: str = DEFAULT_LOCALE) -> str:
    """Pick the text for `locale` from a plain string or a {locale: text} mapping."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        for key in (locale, default, DEFAULT_LOCALE):
            if value.get(key):
                return str(value[key])
        for text in value.values():
            if text:
                return str(text)
        return ""
    return str(value)


@lru_cache(maxsize=4096)
def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def compile_pattern(pattern: str) -> re.Pattern[str]:
    """Compile a case-insensitive pattern once (cached)."""
    return _compile(pattern)


def normalize_patterns(value: Any) -> dict[str, tuple[str, ...]]:
    """Accept a list (any language) or a {lang: [patterns]} mapping; return {lang: tuple}."""
    if value is None:
        return {}
    if isinstance(value, str):
        return {"any": (value,)}
    if isinstance(value, Mapping):
        return {
            str(k): tuple(str(p) for p in (v if not isinstance(v, str) else [v]))
            for k, v in value.items()
        }
    return {"any": tuple(str(p) for p in value)}


def iter_patterns(patterns: Mapping[str, Iterable[str]], language: str | None = None):
    """Yield (language, pattern) pairs, the detected language first, then the rest."""
    order = sorted(patterns, key=lambda lang: (lang != language, lang != "any", lang))
    for lang in order:
        for pattern in patterns[lang]:
            yield lang, pattern


_BACKREFERENCE = re.compile(r"\\[1-9]|\(\?P=|\(\?\(")  # \1, (?P=name), (?(1)yes|no)


@lru_cache(maxsize=2048)
def _any_of(groups: tuple[tuple[str, ...], ...]) -> re.Pattern[str] | None:
    """One alternation of all the patterns: a message most pattern sets do not match is
    ruled out in one scan instead of one per pattern. None when they cannot be combined."""
    patterns = [p for group in groups for p in group]
    if any(_BACKREFERENCE.search(p) for p in patterns):
        return None  # group numbers shift once patterns are joined
    try:
        return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)
    except re.error:  # e.g. a pattern with its own global flags, or numbered backreferences
        return None


# The combined pattern of a plan's pattern mapping, by the mapping's identity: a plan's mappings live as long as
# its config and are never changed, and hashing every pattern of a large plan on each call cost more than the
# scan it saves. The mapping is kept beside its pattern so an id is never taken for another mapping's.
_COMBINED: dict[int, tuple[Mapping[str, Iterable[str]], re.Pattern[str] | None]] = {}


def _none_can_match(text: str, patterns: Mapping[str, Iterable[str]]) -> bool:
    held = _COMBINED.get(id(patterns))
    if held is None or held[0] is not patterns:
        try:
            combined = _any_of(tuple(patterns.values()))
        except TypeError:  # unhashable pattern lists (not normalized): no shortcut
            return False
        if len(_COMBINED) >= 4096:
            _COMBINED.clear()
        _COMBINED[id(patterns)] = held = (patterns, combined)
    return held[1] is not None and held[1].search(text) is None


def may_match(text: str, patterns: Mapping[str, Iterable[str]]) -> bool:
    """Whether any of the patterns may match text (False: none does, found in one scan)."""
    return not _none_can_match(text, patterns)


def first_match(
    text: str, patterns: Mapping[str, Iterable[str]], language: str | None = None
) -> tuple[str, str, re.Match[str]] | None:
    """The first (language, pattern, match) found in text, detected language first."""
    if _none_can_match(text, patterns):
        return None
    for lang, pattern in iter_patterns(patterns, language):
        match = compile_pattern(pattern).search(text)
        if match:
            return lang, pattern, match
    return None


def count_matches(text: str, patterns: Mapping[str, Iterable[str]]) -> int:
    """How many of the patterns match text."""
    if _none_can_match(text, patterns):
        return 0
    return sum(1 for _, p in iter_patterns(patterns) if compile_pattern(p).search(text))


def clauses(text: str) -> list[str]:
    """Split a message into clauses so that a negation in one does not leak into another."""
    parts = [p.strip() for p in _CLAUSE_SPLIT.split(text) if p and p.strip()]
    return parts or [text.strip()]


# Putting the answer off: never a final answer, wherever it appears in the message.
_DEFERRAL = re.compile(
    r"\b(?:not\s+sure|unsure|no\s+idea|no\s+clue|not\s+a\s+clue|(?:i\s+)?dunno|idk|don'?t\s+know(?:\s+yet)?|(?:need|have|got)\s+to\s+(?:check|ask|look|confirm|find\s+out)|"
    r"let\s+me\s+(?:check|ask|look|think|find\s+out)|i'?ll\s+(?:check|ask|find\s+out|get\s+back|confirm)|"
    r"haven'?t\s+(?:decided|checked)|not\s+(?:decided|known)\s+yet|tbd|to\s+be\s+(?:decided|confirmed))\b"
    # a check not done yet (the diagnostic's "haven't measured it", 还没测, ещё не мерил, aún no lo he medido)
    r"|\b(?:haven'?t|have\s+not|didn'?t|did\s+not)\s+(?:\w+\s+)?(?:checked|check|measured|measure|tested|test|looked)\b|\bnot\s+(?:checked|measured|tested)\s+yet\b"
    r"|还没(?:有)?(?:测|查|检查|量|看|试)"
    r"|(?:ещё|еще)\s+не\s+\w+|не\s+(?:проверял|мерил|замерял|смотрел)\w*"
    r"|(?:todav[ií]a|a[uú]n)\s+no\b|no\s+(?:lo\s+)?he\s+(?:revisado|medido|comprobado|mirado)"
    r"|haven'?t\s+(?:thought|figured)|still\s+(?:thinking|deciding|working\s+(?:it|that)\s+out)|no\s+idea\s+yet|not\s+yet\s+(?:sure|decided|known)"
    r"|不确定|不清楚|不知道|还没(?:定|决定|确定|想好|想清楚|考虑)|没想好|没想过|说不好|说不准|还在考虑|待定|(?:我|得|要)(?:再)?(?:查|问|确认|核实)一下|回头(?:再)?(?:告诉|确认)"
    r"|\b(?:give\s+me\s+a\s+(?:sec(?:ond)?|minute|moment)|one\s+(?:sec(?:ond)?|moment|minute))\b|^\W*(?:hang|hold)\s+on\b"
    r"|(?:让我|我)(?:再)?想(?:一)?想|想一想|容我想想|等我(?:看|查)一下"
    r"|^\W*(?:稍)?等(?:一下|等)\W*$|(?:稍)?等(?:一下|等)[，,\s]*(?:我|让我)?(?:再)?(?:看|查|问|想|确认)"  # "等一下，楼下还是要开个小店" corrects"
    r"|(?<!\w)(?:секунд(?:у|очку)|минутку|погоди(?:те)?)(?!\w)|\b(?:un\s+momento|un\s+segundo|dame\s+un\s+(?:momento|segundo|minuto))\b"
    r"|дай(?:те)?\s+подумать|надо\s+подумать|(?:я\s+)?подумаю|"
    r"d[eé]jame\s+pensar(?:lo)?|tengo\s+que\s+pensarlo"
    r"|не\s+знаю|не\s+уверен\w*|надо\s+(?:проверить|уточнить)|уточню|"
    r"\bno\s+s[eé]\b|no\s+estoy\s+segur[oa]|tengo\s+que\s+(?:revisar|comprobar|consultar|preguntar)",
    re.IGNORECASE,
)


# A sentence ends at its mark (a decimal point is none): "cap reads 31.5 µF. where's the coil?"
_SENTENCE_BREAK = re.compile(r"(?<=[!?。！？；;…])|(?<=\.)(?!\d)")


def stated_beside_question(text: str) -> tuple[str, str] | None:
    """A message that says something and asks something in sentences of their own ("blower didn't come on. how do
    I jumper the thermostat wires?", "искры нет… соедините меня с мастером"): (what it states, what it asks), or
    None when it only states or only asks. A wish for a person is asked too."""
    sentences = [s.strip() for s in _SENTENCE_BREAK.split(text) if s.strip()]
    asked = [s for s in sentences if asks_question(s) or asks_for_human(s)]
    stated = [s for s in sentences if s not in asked and not is_non_answer(s) and chitchat_kind(s) is None]
    return (" ".join(stated), " ".join(asked)) if asked and stated else None


def word_at(text: str, words: str) -> int | None:
    """Where the words stand in a text, as whole words (characters where words are not spaced), or None."""
    found = re.search(rf"(?<!\w){re.escape(words)}(?!\w)" if words.isascii() else re.escape(words), text, re.IGNORECASE)
    return found.start() if found is not None else None


def clause_before(text: str, start: int) -> str:
    """The words of `text` from the start of the clause `start` is in, up to `start`."""
    return _CLAUSE_SPLIT.split(text[:start])[-1] if text[:start] else ""


def negated_at(text: str, start: int, end: int | None = None) -> bool:
    """Whether a negation cue has the words `text[start:end]` in its scope (the lexicon's NegEx reading)."""
    return negated(text, start, start if end is None else end)


def unnegated_hits(text: str, patterns: Mapping[str, Iterable[str]], language: str | None = None) -> list[re.Match[str]]:
    """Every match of the patterns in text that no negation cue has in its scope (a pattern that says its own
    negation is read as said)."""
    return [hit for _, pattern in iter_patterns(patterns, language) for hit in compile_pattern(pattern).finditer(text)
            if not negated(text, hit.start(), hit.end(), pattern=pattern)]


# "ok", "hmm", "got it", 好的, понял, vale: heard, not an answer to the check
_ACK_WORD = (r"(?:ok(?:ay)?|k+|hm+|uh+|um+|mm+|ah+|oh+|got\s+it|alright|all\s+right|i\s+see|understood|cool|thanks?|then|so|"
             r"好的?|嗯+|哦+|噢+|行吧?|知道了|明白了?|收到|ок(?:ей)?|окей|понял[аио]?|ясно|хорошо|ладно|"
             r"vale|bueno|entendido|de\s+acuerdo|ya\s+veo)")
_ACKNOWLEDGED = re.compile(rf"^\W*{_ACK_WORD}(?:[\s,.!…，。]+{_ACK_WORD})*\W*$", re.IGNORECASE)


def acknowledges_only(text: str) -> bool:
    """The message only acknowledges ("ok", "hmm", 好的): it answers no check and no question."""
    return bool(_ACKNOWLEDGED.match(text))


def defers_answer(text: str) -> bool:
    """The person puts the answer off or is unsure ("not sure", "I need to check the drawings", "待定"); "hold on"
    before a correction ("hold on, it actually does blow") corrects, it puts nothing off."""
    text = text.replace("’", "'")
    found = _DEFERRAL.search(text)
    if found is None:
        return False
    if _HOLD_ON.match(found.group(0)) and words_of("en", "corrections").search(text, found.end()):
        return _DEFERRAL.search(text, found.end()) is not None
    return True


_HOLD_ON = re.compile(r"\W*(?:hang|hold)\s+on\b", re.IGNORECASE)


def without_deferral(text: str) -> str:
    """What the message says beside putting the answer off ("maybe 2 or 3, still deciding" -> "maybe 2 or 3, ")."""
    return _DEFERRAL.sub(" ", text.replace("’", "'"))


_SMALL_TALK_KINDS = ("goodbye", "thanks", "greeting")  # several at once: the word that closes wins
_LETTER_AFTER = r"(?![a-z0-9\u00c0-\u024f\u0400-\u04ff'’])"  # a Latin or Cyrillic word goes on; Chinese needs no space


@lru_cache(maxsize=1)
def _small_talk() -> tuple[re.Pattern[str], dict[str, str]]:
    """One pattern for every language's small-talk phrases and the words said around them (lexicon
    `small_talk`), longest first, and what kind each phrase is (a filler has none)."""
    kinds: dict[str, str] = {}
    for language in LANGUAGES:
        table = entry(language, "small_talk")
        for kind in ("fillers", *_SMALL_TALK_KINDS):
            for phrase in table[kind]:
                kinds.setdefault(" ".join(phrase.casefold().split()), "" if kind == "fillers" else kind)
    alternatives = "|".join(re.escape(p).replace("\\ ", " ").replace("'", "['’]")
                            + (_LETTER_AFTER if re.search(r"[a-z0-9\u00c0-\u024f\u0400-\u04ff]$", p) else "")
                            for p in sorted(kinds, key=len, reverse=True))
    return re.compile(f"(?:{alternatives})"), kinds


def chitchat_kind(text: str) -> str | None:
    """greeting / thanks / goodbye for a message that is only that (small talk, no request), with the words
    said around it ("great, thanks!", "好的谢谢啦", "ok bye"); several at once ("cheers, bye", "thank you, bye")
    are the word that closes: goodbye, then thanks."""
    core = re.sub(r"\s+", " ", _STRIP_PUNCT.sub(" ", text.casefold().replace("’", "'"))).strip()
    pattern, kinds = _small_talk()
    said: set[str] = set()
    while core:
        piece = pattern.match(core)
        if piece is None:
            return None
        said.add(kinds.get(" ".join(piece.group(0).replace("’", "'").split()), ""))
        core = core[piece.end():].lstrip(" ,，")
    return next((kind for kind in _SMALL_TALK_KINDS if kind in said), None)


# Asking for a human being (the rules' human_handoff) and dropping the request (the rules' cancel).
# A wish for a person: a verb of reaching someone, then a person (a staff member of any trade: the RV desk's
# technician, a mechanic, 师傅, мастер, técnico), or the words people use for one on their own ("转人工")
_PERSON = (r"(?:(?:a\s+|an\s+|the\s+|some\s+|your\s+)?(?:real\s+|actual\s+|live\s+|human\s+)*"
           r"(?:person|people|human|agent|operator|some\s*one|somebody|any\s*one|anybody|staff|manager|supervisor|"
           r"representative|rep|technician|tech|mechanic|advisor|specialist|service\s+writer|writer)\b"
           # "one of the service writers", "one of your techs"
           r"|one\s+of\s+(?:the|your)\s+(?:\w+\s+)?(?:writers|techs|technicians|mechanics|people|staff|guys|advisors|agents|folks)\b)")
_HUMAN = re.compile(
    rf"\b(?:talk|speak|chat)\s+(?:to|with)\s+{_PERSON}|"
    rf"\b(?:get|want)\s+(?:me\s+)?{_PERSON}(?!\s+(?:to\b|count|who|that))|"
    rf"\b(?:connect|put|transfer|pass)\s+me\s+(?:through\s+|over\s+)?(?:to|with)\s+{_PERSON}|"
    rf"\bis\s+there\s+{_PERSON}\s+(?:i|we)\s+(?:can|could)\s+(?:talk|speak|call|phone|ring)\b|"
    r"\b(?:a|an)\s+(?:real\s+|actual\s+|live\s+)?(?:human|person|agent)(?:\s*,?\s*(?:please|pls))?\s*[.!?]*$|\bhuman\s+agent\b|"
    r"\bin\s+person\b|"
    r"转人工|人工客服|人工服务|找人工|真人|找客服|联系客服|客服人员|转接人工|"
    r"找(?:个|一个|位)?(?:懂行的|专业的|真正的)?(?:师傅|技师|技术员|维修师傅|工作人员|人)(?:来|跟我|和我)|找(?:个|一个|位)?(?:师傅|技师|技术员|维修师傅|工作人员)|"
    r"(?:позов\w*|позвать|пригласи\w*)\s+(?:мне\s+|сюда\s+)?(?:живого\s+)?(?:мастер|человек|оператор|сотрудник|менеджер|техник|специалист)\w*|"
    r"(?:поговорить|связаться|говорить|соедините|соедини|свяжите|переключите)(?:\s+меня)?\s+с\s+(?:живым\s+)?"
    r"(?:человеком|оператором|живым|сотрудником|менеджером|мастером|техником|специалистом)|\bоператор\w*\b|"
    r"(?:hablar|comunicarme|p[aá]same|pasarme|me\s+pasas?|me\s+pase|me\s+comunicas?|ponerme\s+en\s+contacto)\s+con\s+(?:una\s+persona|un\s+humano|alguien|"
    r"un\s+agente|un\s+operador|un\s+t[eé]cnico|un\s+mec[aá]nico)|\bagente\s+humano\b|"
    r"\b(?:me\s+)?(?:puede|podr[ií]a|pueda)\s+atender\s+(?:una\s+persona|un\s+humano|alguien|un\s+t[eé]cnico|un\s+mec[aá]nico)",
    re.IGNORECASE,
)
_CANCEL_PHRASE = (
    r"(?:cancel(?:\s+(?:that|it|this|the\s+request))?|forget\s+(?:it|that|about\s+it)|"
    r"never\s*mind|nvm|start\s+over|stop(?:\s+(?:that|this|it))?|drop\s+it|scrap\s+that|"
    r"算了|不用了|取消|重新开始|重来|不查了|不要了|不核对了|不核验了|"
    r"отмена|отмени(?:те)?|забудь(?:те)?|не\s+надо|начн[её]м\s+сначала|"
    r"cancela(?:r)?|olv[ií]d(?:alo|elo|ate)|d[eé]jalo|empecemos\s+de\s+nuevo)"
)
# one phrase or several ("算了，不查了", "never mind, forget it")
_CANCEL = re.compile(
    rf"^\W*(?:(?:ok(?:ay)?|oh|well|hmm|actually|no)\W+)?{_CANCEL_PHRASE}(?:吧?[\s\W]*{_CANCEL_PHRASE})*[\s\W]*"
    r"(?:please|pls|thanks|吧|了|пожалуйста|por\s+favor)?[\s\W]*$",
    re.IGNORECASE,
)


_NO_NEED = re.compile(r"\b(?:don'?t|do\s+not|no\s+need|never)\b|不用|不需要|不要|не\s+надо|не\s+нужно|no\s+hace\s+falta|no\s+quiero", re.IGNORECASE)


# "someone in HR", "somebody from payroll": a third party of the person's own, not the concierge's staff
_THIRD_PARTY = re.compile(r"^\s+(?:in|from|at|on|of)\s+(?:the\s+|our\s+|my\s+)?[^\W\d_]", re.IGNORECASE)


def asks_for_human(text: str) -> bool:
    """The person asks for a human being ("talk to a person", "转人工"), not negated ("no need for a human"),
    not told of ("a customer asked to speak to a manager"), not a third party ("someone in HR")."""
    match = _HUMAN.search(text)
    if match is None or negated_at(text, match.start(), match.end()):
        return False
    lead = re.split(r"[,，;；:：.!?。！？…]|(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff])", text[:match.start()])[-1]  # a space pauses Chinese
    third_party = re.search(r"(?:some|any)\s*(?:one|body)$", match.group(0), re.IGNORECASE) and _THIRD_PARTY.match(text[match.end():])
    if not opens_a_request(lead) or third_party:
        return False  # "用户也能一键转人工客服" tells of a feature, not a wish
    sentence = _SENTENCE_BREAK.split(text[:match.start()])[-1]  # "I don't have a manometer. Is there someone…" needs one
    return not _NO_NEED.search(sentence[-24:])


_RESTART = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|actually|no|please|let'?s|let\s+us|can\s+we|i\s+want\s+to)\W+)*(?:start\s+(?:over|again|afresh|from\s+scratch)|"
    r"begin\s+again|restart|重新开始|重来|从头(?:开始|来)|推倒重来|начн[её]м\s+(?:сначала|заново)|empecemos\s+de\s+nuevo|"
    r"empezar\s+de\s+nuevo)[\s\W]*(?:please|pls|吧|了|пожалуйста|por\s+favor)?[\s\W]*$",
    re.IGNORECASE,
)


def asks_to_restart(text: str) -> bool:
    """The whole message asks to begin again from the start ("start over", "重新开始")."""
    return bool(_RESTART.match(text.strip().replace("’", "'")))


# the opening phrase alone, up to where its clause ends ("forget it, I'll deal with this another day")
_CANCEL_OPENS = re.compile(rf"^\W*(?:(?:ok(?:ay)?|oh|well|hmm|actually|no)\W+)?{_CANCEL_PHRASE}(?:吧?[\s\W]*{_CANCEL_PHRASE})*\s*[,，.。;；!！—–-]",
                           re.IGNORECASE)


def asks_to_cancel(text: str, language: str = "en") -> bool:
    """The whole message drops the request in progress ("forget it", "算了", "start over"), or opens so and
    only puts the matter off after it ("never mind, I'll deal with it another day", "算了，这件事先不聊了":
    lexicon `put_off`, with no number and no question in the rest)."""
    text = text.strip()
    if _CANCEL.match(text):
        return True
    opening = _CANCEL_OPENS.match(text)
    if opening is None:
        return False
    rest = text[opening.end():]
    return not re.search(r"[\d?？¿]", rest) and bool(words_of(language, "put_off").search(rest))


def asks_to_skip_check(text: str, language: str = "en") -> bool:
    """Whether the person asks to leave the check in progress and go on ("can we skip that one?", "sáltate esa
    comprobación", "没有压力表，跳过": lexicon `skip_check`)."""
    return bool(words_of(language, "skip_check").search(text))


def is_non_answer(text: str) -> bool:
    """True for fillers and 'I don't know' replies that carry no information."""
    core = _STRIP_PUNCT.sub(" ", text.lower().replace("’", "'")).strip()
    core = re.sub(r"\s+", " ", core)
    return bool(_NON_ANSWER.match(core))


# Leaving it to someone else, or to chance: "whatever", "anything really", "up to you", 随便, 都行, 无所谓.
_INDIFFERENT = re.compile(
    r"^(?:(?:oh |well |um |uh |just |honestly |really )*(?:whatever|anything|any|something|whichever|"
    r"anything (?:is fine|works|goes|really|at all)|(?:it )?(?:doesn'?t|does not) matter|(?:i )?don'?t (?:really )?(?:care|mind)|"
    r"no preference|(?:it'?s |that'?s )?up to you|you (?:decide|choose|pick|tell me)|surprise me|(?:no|not) (?:a )?clue|"
    r"idk|dunno|no idea(?: yet)?|(?:i )?haven'?t (?:a clue|thought about it)|whatever you (?:think|want|like|say|prefer)|"
    r"(?:just )?something|stuff|things|honestly|frankly|to be honest|tbh|well|"
    r"随便|随便吧|随意|都行|都可以|都好|啥都行|什么都行|怎么都行|怎样都行|无所谓|没所谓|不在乎|看着办|(?:你|你们)?看着(?:办|来|弄|做)|你(?:们)?(?:定|决定)(?:吧)?|"
    r"没想法|没什么想法|没想过|说不上来|都一样|哪个都行)"
    r"(?: (?:really|then|i guess|i suppose|to be honest|tbh|for now|yet))?(?:吧|啊|呀|了|的)?)$",
    re.IGNORECASE,
)
_VACUOUS_SPLIT = re.compile(r"[,;.!?…，；。！？、\n]+|\s+(?:and|but|so|or)\s+|但是|不过|反正")


def is_vacuous(text: str) -> bool:
    """A message that gives nothing to go on: every part of it is a filler, an "I don't know" or a
    "whatever" ("不知道，随便", "dunno, anything really", "no idea yet"); "not sure, maybe nurses" is not."""
    parts = [p for p in (_STRIP_PUNCT.sub(" ", piece.lower().replace("’", "'")).strip() for piece in _VACUOUS_SPLIT.split(text)) if p]
    return bool(parts) and all(
        is_non_answer(p) or _INDIFFERENT.match(re.sub(r"\s+", " ", p)) or _DEFERRAL.fullmatch(p) for p in parts
    )


def asks_question(text: str) -> bool:
    """Conservative: a reply asks a question if it has a question mark or a clarification phrase."""
    if "?" in text or "？" in text or "¿" in text:
        return True
    return bool(_CLARIFY_PHRASES.search(text))


_CLARIFY_PHRASES = re.compile(
    r"\b(?:just to (?:make sure|confirm|clarify)|can you clarify|could you (?:clarify|provide|tell me)|"
    r"i need to know|need to know|please (?:tell|let) me|please confirm)\b|"
    r"请问|能否告诉|请确认|请提供|请说明|麻烦告诉|"
    r"уточните|подскажите|скажите,? пожалуйста|"
    r"podr[ií]a(?:s)? (?:aclarar|decirme|indicar)|conf[ií]rm(?:a|e)me",
    re.IGNORECASE,
)


def slugify(text: str, max_words: int = 4) -> str:
    """A short lowercase topic key from free text (keeps CJK characters)."""
    words = re.findall(r"[\w\u4e00-\u9fff]+", text.lower())
    return "_".join(words[:max_words])[:48]


# Number words people type instead of digits (English, Russian, Spanish): the lexicon's `numbers.words`, where the
# numbers recognizer reads them too ("a single storey"), up to ten (Spanish "once" is also English) and no word for a
# couple or a dozen (a rough count)
_ROUGH_COUNTS = frozenset({"dozen", "дюжина", "docena", "пара", "пару"})
NUMBER_WORDS = {word: int(value) for language in ("en", "ru", "es")
                for word, value in entry(language, "numbers")["words"].items()
                if 1 <= value <= (12 if language == "en" else 10) and value == int(value) and " " not in word
                and word not in _ROUGH_COUNTS}
