"""The per-language words the understanding reads by, as data (`lexicon/<language>.json`).

One file per language holds the negation cues (before and after what they negate), the phrases
that look like a negation and are none ("not sure", "no problem", "won't stay lit"), the words
and punctuation that end a negation's scope, hedges (doubt) and approximators (a rough value),
correction markers, fillers, the words that join two alternatives and the words a request opens with. A new language or a new
cue is a data change, not a pattern patch.

`negation_cue` and `hedge_near` (module `negation`) are what reads them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

LEXICON_DIR = Path(__file__).resolve().parent / "lexicon"
LANGUAGES = ("en", "zh", "ru", "es")


@dataclass(frozen=True)
class Lexicon:
    """One language's words, each list compiled once into a pattern (longest phrase first)."""

    language: str
    spaced: bool  # words are separated by spaces (en, ru, es); zh counts characters
    scope: int  # how far a cue reaches: words, or characters where words are not spaced
    negation_before: re.Pattern[str]
    negation_after: re.Pattern[str]
    pseudo_negation: re.Pattern[str]
    boundary: re.Pattern[str]
    hedges: re.Pattern[str]  # doubt: "maybe", "I think", "可能", "наверное", "quizás"
    approximators: re.Pattern[str]  # a rough value, no doubt about what: "about", "左右", "примерно", "unos"
    corrections: re.Pattern[str]
    fillers: re.Pattern[str]
    alternatives: re.Pattern[str]
    request_openers: re.Pattern[str]  # what a request to the concierge opens with ("can I", "我想", "хочу", "quiero")
    pronouns: re.Pattern[str]  # what stands for the thing asked about ("it", "它", "он", "eso")


def phrases(words: list[str], *, spaced: bool) -> re.Pattern[str]:
    """One pattern for a list of phrases: longest first, whole words where words are spaced."""
    alternatives = "|".join(_phrase(w) for w in sorted(set(words), key=len, reverse=True))
    if not spaced or not alternatives:
        return re.compile(alternatives or r"(?!x)x", re.IGNORECASE)
    return re.compile(rf"(?<![\w'’])(?:{alternatives})(?![\w'’])", re.IGNORECASE)


def _phrase(word: str) -> str:
    # a straight apostrophe also matches a curly one; spaces match any run of spaces
    return r"\s+".join(re.escape(part).replace("'", "['’]") for part in word.split())


@cache
def _data(language: str) -> dict[str, Any]:
    """A language's data file, read once."""
    return json.loads((LEXICON_DIR / f"{language}.json").read_text(encoding="utf-8"))


def entry(language: str, key: str) -> Any:  # noqa: ANN401 - an entry is a list or a table, as its file has it
    """One entry of a language's file as written there (the recognizers' `numbers`, `names`, `time_words`)."""
    return _data(language)[key]


@cache
def words_of(language: str, key: str, part: str | None = None) -> re.Pattern[str]:
    """One pattern for a list of a language's file (`key`, or the list `part` of the table `key`), compiled once;
    English's for a language the lexicon does not have."""
    language = language if language in LANGUAGES else "en"
    words = entry(language, key) if part is None else entry(language, key)[part]
    return phrases(list(words), spaced="char_scope" not in _data(language))


@cache
def lexicon(language: str) -> Lexicon:
    """The lexicon of a language (en, zh, ru, es), loaded from its data file once."""
    data = _data(language)
    spaced = "char_scope" not in data
    negation = data["negation"]

    def compiled(words: list[str]) -> re.Pattern[str]:
        return phrases(words, spaced=spaced)

    return Lexicon(
        language=language,
        spaced=spaced,
        scope=int(data.get("word_scope") or data.get("char_scope")),
        negation_before=compiled(negation["before"]),
        negation_after=compiled(negation["after"]),
        pseudo_negation=compiled(negation["pseudo"]),
        boundary=compiled(negation["boundary"]),
        hedges=compiled(data["hedges"]),
        approximators=compiled(data["approximators"]),
        corrections=compiled(data["corrections"]),
        fillers=compiled(data["fillers"]),
        alternatives=compiled(data["alternatives"]),
        request_openers=compiled(data["request_openers"]),
        pronouns=compiled(data["pronouns"]),
    )


@cache
def word_list(language: str, key: str) -> tuple[str, ...]:
    """Another list a language's file keeps for a recognizer (the Chinese surnames), empty when it has none."""
    return tuple(_data(language).get(key, ()))


_SCRIPTS = (("en", re.compile(r"[A-Za-z]")), ("es", re.compile(r"[A-Za-z]")), ("zh", re.compile(r"[\u3400-\u9fff]")),
            ("ru", re.compile(r"[\u0400-\u04ff]")))


def lexicons_for(text: str) -> tuple[Lexicon, ...]:
    """The lexicons whose script the text is written in: a message may mix languages, each reads its own
    words, and a message without Chinese needs no Chinese cues."""
    return _lexicons_of(tuple(language for language, script in _SCRIPTS if script.search(text)))


@cache
def _lexicons_of(languages: tuple[str, ...]) -> tuple[Lexicon, ...]:
    return tuple(lexicon(language) for language in languages)
