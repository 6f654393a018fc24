"""Values people name in words, found by a domain's finder, and the ambiguities they leave.

A finder (given by the shell, e.g. billing's lots and cities) reads a message and returns
hits: each hit is the slot values one named thing gives ("浦东一号停车场" gives a lot code
and its city code) with a label per slot for asking about it. The engine stays ignorant of
what the things are: it keeps the hits that agree with what the message (or, failing that,
memory) already says, takes the slots on which they agree, and reports the slots on which
they do not (one lot code in two cities) as an ambiguity to ask about, never to resolve.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .catalog import say, say_in

# finder(text, language) -> hits; a hit is {"slots": {slot: value}, "raw": words, "labels": {slot: label}}
Finder = Callable[[str, str], Sequence[Mapping]]


@dataclass(frozen=True)
class NamedValues:
    """What the finders settled (slot -> (value, raw)) and what they left open (slot -> (value, label)...)."""

    settled: dict[str, tuple[str, str]] = field(default_factory=dict)
    ambiguous: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)


def find_named_values(
    text: str,
    language: str,
    finders: Iterable[Finder],
    *,
    names: Iterable[str],
    stated: Mapping[str, str],
    remembered: Mapping[str, str],
    denied: Callable[[str], bool] | None = None,
) -> NamedValues:
    """Read the message with every finder; `stated` are values this message gives otherwise,
    `remembered` the conversation's earlier ones (used only to choose among hits); `denied` tells the
    words said not to be the thing ("not kunming"), which choose nothing while something else is named."""
    wanted = set(names)
    hits = [h for finder in finders for h in finder(text, language) if set(h["slots"]) <= wanted]
    if denied is not None:
        hits = [h for h in hits if not denied(str(h["raw"]))] or hits
    if not hits:
        return NamedValues()
    # A thing named alone (a city) constrains the others named with it (a lot in that city); so do words that name
    # one thing only ("钟楼" is the P2 in Xi'an: "钟楼那个P2" is not the P2 in Chongqing), where they agree
    for hit in hits:
        if len(hit["slots"]) == 1:
            stated = {**dict(hit["slots"]), **stated}
    readings: dict[str, list[Mapping]] = {}
    for hit in hits:
        readings.setdefault(str(hit["raw"]).casefold(), []).append(hit)
    sure = [only[0] for only in readings.values() if len(only) == 1]
    for slot in {s for h in sure for s in h["slots"]}:
        said = {h["slots"][slot] for h in sure if slot in h["slots"]}
        if len(said) == 1 and slot not in stated:
            stated = {**stated, slot: next(iter(said))}
    # what the message says otherwise chooses among the readings of words that name several things; where it
    # contradicts them all, the records win over a pattern's reading of the same words. Words that name one thing
    # only are never dropped for another place said beside them ("not kunming, changsha south station"): where
    # the two disagree, the slot is asked about
    several = [h for h in hits if len(readings[str(h["raw"]).casefold()]) > 1]
    chosen = _agreeing(several, stated) or several
    chosen = _agreeing(chosen, remembered) or chosen
    hits = [h for h in hits if h not in several] + chosen
    settled: dict[str, tuple[str, str]] = {}
    ambiguous: dict[str, tuple[tuple[str, str], ...]] = {}
    for slot in sorted({s for h in hits for s in h["slots"]}):
        values = {h["slots"][slot]: (h["labels"].get(slot) or h["slots"][slot], h["raw"]) for h in hits if slot in h["slots"]}
        if len(values) == 1:
            value, (_, raw) = next(iter(values.items()))
            settled[slot] = (value, raw)
        else:
            ambiguous[slot] = tuple((value, label) for value, (label, _) in sorted(values.items()))
    return NamedValues(settled, ambiguous)


def _agreeing(hits: list[Mapping], values: Mapping[str, str]) -> list[Mapping] | None:
    """The hits that contradict none of these values (None when none is left)."""
    kept = [h for h in hits if all(values.get(s, v).casefold() == v.casefold() for s, v in h["slots"].items())]
    return kept or None


def which_value_question(labels: Sequence[str], language: str) -> str:
    """'Which one do you mean: A or B?'"""
    return say(language, "Which one do you mean: {options}?", options=say_in(language, "which value", " or ").join(labels))
