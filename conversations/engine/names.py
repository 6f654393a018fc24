"""A person's name, read whole: a full name and not its first word, a Chinese name by its surname.

The plan's patterns find where a name is said ("my server priya raman didn't ...", "员工马超今天 ...");
`read_person_name` then reads the name itself: "Sean O'Neill" and not "Neill", "Wang Lei" and not "Wang",
"priya" and not "priya's"; and a Chinese name must begin with a surname (the lexicon's list of common
ones, a prefix such as 小 or 老 allowed), so that a verb phrase (老是, 新来, 里有个人) is no name.
"""

from __future__ import annotations

import re

from .lexicon import word_list

_CJK = re.compile(r"[\u3400-\u9fff]")
_UPPER, _LOWER = "A-ZÀ-ÖØ-Þ", "a-zß-öø-ÿ"
_TITLE_WORD = re.compile(rf"(?:[{_UPPER}][{_LOWER}]*['’])?[{_UPPER}][{_LOWER}]+(?:-[{_UPPER}]?[{_LOWER}]+)*")
# Capitalised words that are no part of a name (a sentence's first word, days, pronouns)
_NOT_NAME = frozenset(["i", "on", "in", "from", "and", "but", "is", "was", "has", "had", "did", "the", "a", "an", "at", "to", "today", "yesterday", "tomorrow", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "my", "our", "his", "her", "their", "she", "he", "they", "it", "we", "you", "this", "that", "there", "hi", "hello", "hey", "sorry", "so", "then", "also", "who", "which", "with", "for", "of", "or", "not", "no", "yes", "ok", "okay", "please", "can", "could", "would", "will", "just"])
# Words after a first name typed in lower case that end it ("priya didn't ...", "tom has ...")
_ENDS_NAME = _NOT_NAME | frozenset(["didn't", "didnt", "did", "doesn't", "does", "don't", "has", "hasn't", "hasnt", "have", "isn't", "isnt", "wasn't", "wasnt", "been", "keeps", "kept", "missed", "called", "came", "left", "showed", "turned", "never", "always", "again", "s", "shouted", "yelled", "quit", "refused", "said", "told", "asked", "clocked", "got", "skipped", "walked", "went", "is", "are", "be", "was", "were", "will", "won't", "can't", "cannot", "who's"])


def read_person_name(text: str, found: str) -> str | None:
    """The whole name `found` stands for in `text`, or None when it is no name."""
    found = re.sub(r"['’]s$", "", found.strip())  # "priya's timekeeping": the name is priya
    if not found:
        return None
    if _CJK.search(found):
        return found if _chinese_name(found) else None
    return _whole_name(text, found)


def _chinese_name(name: str) -> bool:
    surnames = word_list("zh", "surnames")
    for prefix in ("", *word_list("zh", "name_prefixes")):
        rest = name[len(prefix):] if name.startswith(prefix) else None
        if rest and any(rest.startswith(s) and len(rest) <= len(s) + 2 for s in surnames):
            return True
    return False


def _whole_name(text: str, found: str) -> str:
    at = re.search(rf"(?<!\w){re.escape(found)}(?![\w'’])", text, re.IGNORECASE)
    if at is None:
        return found
    start, end = at.start(), at.end()
    before = re.search(r"([A-Z][a-z]+\s+)?((?:O|D|Mc|Mac)['’]?)$", text[:start])  # "Sean O'" before "Neill"
    if before is not None:
        start = before.start(2)
        if before.group(1) and before.group(1).strip().lower() not in _NOT_NAME:
            start = before.start(1)
    elif (first := re.search(rf"({_TITLE_WORD.pattern})\s+$", text[:start])) and found[:1].isupper() \
            and first.group(1).lower() not in _NOT_NAME:
        start = first.start(1)  # "Sean O'Neill" found as "O'Neill", "Marc-André Lefebvre" as "Lefebvre"
    if joined := re.match(rf"(?:[-'’][{_UPPER}]?[{_LOWER}]+)+", text[end:]):  # "Marc" of "Marc-André"
        end += joined.end()
    follow = re.match(r"\s+(\S+)", text[end:])
    if follow is not None:
        word = follow.group(1).rstrip(".,;:!?")
        lowered = word.lower()
        title = found[:1].isupper() and _TITLE_WORD.fullmatch(word) and lowered not in _NOT_NAME
        lower = found.islower() and word.isalpha() and word.islower() and lowered not in _ENDS_NAME and text == text.lower()
        if title or lower:
            end += follow.start(1) + len(word)
    return text[start:end]
