"""Words typed the way people type: a word of a message within a small edit distance of a known word.

An index of known words (each with what it names) answers, for a word of a message, the known words it
is a slip of ("jiefangbai" of "jiefangbei"). Only Latin words long enough that a slip cannot turn one
real word into another are in reach: six letters or more at one edit, nine or more at two; short words,
codes (anything with a digit) and Chinese are matched exactly or not at all. The index holds each known
word's deletions (symmetric delete: two words within `d` edits share a string reached by at most `d`
deletions from each), so a message is read with a few dictionary lookups per word, whatever the number
of known words.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field

_LATIN_WORD = re.compile(r"(?<![0-9A-Za-z])[A-Za-z]+(?![0-9A-Za-z])")
MIN_LETTERS = 6  # a word shorter than this is never read as a slip of another
TWO_EDITS_LETTERS = 9  # from this many letters, a slip may be two edits away

# Words people type that are a letter or two away from many names (never read as a slip of one).
_COMMON = frozenset([
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "mondays", "tuesdays", "wednesdays",
    "thursdays", "fridays", "saturdays", "sundays", "weekend", "weekends", "weekday", "weekdays", "tomorrow",
    "tonight", "yesterday", "morning", "evening", "afternoon", "midnight", "overnight", "minute", "minutes", "second",
    "seconds", "nights", "daytime", "parked", "parking", "parker", "charge", "charged", "charges", "charging",
    "billed", "billing", "receipt", "refund", "refunds", "payment", "payments", "invoice", "invoices", "number",
    "numbers", "plates", "orders", "ticket", "tickets", "please", "thanks", "should", "around", "before", "during",
    "through", "rather", "instead", "another", "actually", "wanted", "change", "changed", "center", "centre",
    "street", "streets", "station", "stations", "garage", "garages", "public", "private", "little", "longer",
    "cheaper", "cheapest", "expensive",
])


def reach(word: str) -> int:
    """How many edits away a slip of this known word may be (0: matched exactly only)."""
    if not word.isascii() or not word.isalpha() or len(word) < MIN_LETTERS:
        return 0
    return 2 if len(word) >= TWO_EDITS_LETTERS else 1


def _deletions(word: str, depth: int) -> set[str]:
    """The word and every string `depth` deletions or fewer make of it."""
    out, edge = {word}, {word}
    for _ in range(depth):
        edge = {w[:i] + w[i + 1:] for w in edge for i in range(len(w))} - out
        out |= edge
    return out


def distance(a: str, b: str, limit: int) -> int:
    """Edit distance with adjacent transpositions (optimal string alignment), or `limit + 1` once beyond it."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    before: list[int] | None = None
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + cost)
            if before is not None and i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        before, row = row, current
    return min(row[-1], limit + 1)


@dataclass(frozen=True)
class NearWords:
    """Known words (casefolded) and what each names; `slips_of` finds the ones a typed word may be a slip of."""

    names: Mapping[str, frozenset[Hashable]]
    words: tuple[str, ...] = ()
    # the hash of a deletion -> the position in `words` of the known word it comes from (a tuple when several):
    # hashes take a fraction of the strings' memory, and a collision only costs the distance check that follows
    deleted: Mapping[int, int | tuple[int, ...]] = field(default_factory=dict)

    @classmethod
    def of(cls, pairs: Iterable[tuple[str, Hashable]]) -> NearWords:
        """An index of (word, what it names) pairs; words out of reach of any slip are left out."""
        names: dict[str, set[Hashable]] = {}
        for word, value in pairs:
            word = word.casefold()
            if reach(word):
                names.setdefault(word, set()).add(value)
        words = tuple(names)
        deleted: dict[int, int | tuple[int, ...]] = {}
        for position, word in enumerate(words):
            for gone in _deletions(word, reach(word)):
                key = hash(gone)
                before = deleted.get(key)
                deleted[key] = position if before is None else (*(before if isinstance(before, tuple) else (before,)), position)
        return cls({w: frozenset(v) for w, v in names.items()}, words, deleted)

    def slips_of(self, typed: str, *, depth: int | None = None) -> tuple[str, ...]:
        """The known words `typed` is a slip of (none when it is one of them, a common word, or too short);
        `depth=1` looks only for the known words one deletion from the typed word or sharing one with it (a
        letter dropped, added, changed or two swapped), a quick first look."""
        typed = typed.casefold()
        if not self.deleted or typed in self.names or typed in _COMMON or not typed.isascii() or len(typed) < MIN_LETTERS:
            return ()
        found: set[str] = set()
        for gone in _deletions(typed, depth or (2 if len(typed) >= TWO_EDITS_LETTERS - 2 else 1)):
            positions = self.deleted.get(hash(gone), ())
            for position in positions if isinstance(positions, tuple) else (positions,):
                known = self.words[position]
                if known not in found and distance(typed, known, reach(known)) <= reach(known):
                    found.add(known)
        return tuple(sorted(found))


def latin_words(text: str) -> list[re.Match[str]]:
    """The words of Latin letters in a text, not pieces of a code ("jfb01") nor of a longer word."""
    return list(_LATIN_WORD.finditer(text))
