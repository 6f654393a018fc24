"""Recognizers: one per kind of value people say (times and dates, numbers and quantities, person names,
identifiers). Each returns `Span`s: the words it covers, the typed value and how sure the reading is
(`certain`, `likely`, `guess`, as in `certainty`). The rules generator reads values through them, and a
model's values are checked by them; nothing else in the engine parses a value by itself.

The words each language uses (number words, units, currencies) are data: the lexicon files and
`units.json` beside this module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..certainty import CERTAIN


@dataclass(frozen=True)
class Span:
    """A value found in a message: its kind, where it stands, the words, the value and how sure it is."""

    kind: str  # "quantity", "time", "name", "order", "plate", "lot", "city", "system"
    start: int
    end: int
    text: str
    value: Any
    certainty: str = CERTAIN
    why: str | None = None  # what makes it not certain: "alternatives", "hedged", "implausible", "either half of the day"…

    def overlaps(self, start: int, end: int) -> bool:
        return self.start < end and start < self.end


def trie_pattern(words: list[list[str]]) -> str:
    """One pattern for many words, each a list of pattern atoms (a letter, a gap, a boundary), with the
    atoms the words begin with shared: at each place of a message the pattern follows one path of letters
    instead of trying every word, as an alternation of thousands of names does. Longer words win over the
    words they begin with, as in an alternation sorted longest first."""
    trie: dict = {}
    for atoms in words:
        node = trie
        for atom in atoms:
            node = node.setdefault(atom, {})
        node[None] = {}
    return _rendered(trie)


def _rendered(node: dict) -> str:
    branches = [atom + _rendered(child) for atom, child in node.items() if atom is not None]
    if None in node:
        branches.append("")
    return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
