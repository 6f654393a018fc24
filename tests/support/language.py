"""What of a page is not in the page's language: English words left in a Chinese page.

Identifiers (anything with a digit, an @ or a code's hyphen and capitals: SH-PD-001, 沪A10019,
v1, tom@example.com), a few abbreviations people use in Chinese too, and data an operator typed
(names of rules, lots and cities, user names) are not words to translate.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_ASCII_RUN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/@'’+#-]*")
# Abbreviations and key names Chinese text uses as they are.
ABBREVIATIONS = frozenset({"HR", "LP", "AC", "DC", "RV", "ID", "PDF", "Email", "Shift", "Enter", "ics", "eml", "V", "A",
                           "h", "min", "Tab", "OK", "QR", "WC", "in", "psi", "Hz", "kW", "W", "ft", "sq",
                           "C", "F"})  # °C, °F


# An engine's code in front of a person: a snake_case key (lot_code, at_time) or a code with its
# argument (too_early:, one_action_per_turn:draft_email).
_INTERNAL_CODE = re.compile(r"(?<![\w@./-])(?:[a-z][a-z0-9]*_[a-z0-9_]*[a-z0-9]|[a-z][a-z_]*:[a-z_]+)(?![\w@/-])")


def internal_codes(text: str, allowed: Iterable[str] = ()) -> list[str]:
    """The engine's codes a page shows (in any language), in order, each once; operator data is not one."""
    for value in sorted({a for a in allowed if a}, key=len, reverse=True):
        text = text.replace(value, " ")
    return list(dict.fromkeys(_INTERNAL_CODE.findall(text)))


def foreign_words(text: str, allowed: Iterable[str] = ()) -> list[str]:
    """The English words of a text meant to be in another language, in order, each once."""
    for value in sorted({a for a in allowed if a}, key=len, reverse=True):
        text = text.replace(value, " ")
    found: list[str] = []
    for token in _ASCII_RUN.findall(text):
        word = token.strip(".:/'’+#-")
        if not word or any(ch.isdigit() for ch in word) or "@" in word or word in ABBREVIATIONS:
            continue
        if re.fullmatch(r"[A-Z]{1,5}(?:-[A-Z0-9]+)+", word):  # a code such as SH-PD-DAY
            continue
        if word not in found:
            found.append(word)
    return found
