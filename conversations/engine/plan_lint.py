"""What a plan's author should look at: evidence rules whose patterns overlap.

Two rules of one system overlap when the words one of them reads (a pattern with its syntax dropped)
are read by the other as well: a message saying them would record both, unless one excludes the
other. Each overlap is reported once per pair, with the words that showed it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._text import first_match, iter_patterns
from .config import ConversationConfig, EvidenceRule
from .negation import pattern_as_words


@dataclass(frozen=True)
class Overlap:
    system: str
    rule: str
    other: str
    words: str  # what the rule reads that the other reads too


def overlapping_evidence(config: ConversationConfig) -> list[Overlap]:
    """Pairs of evidence rules of one system (with the plan-wide ones) whose patterns read the same words."""
    found: dict[tuple[str, str, str], Overlap] = {}
    procedures = config.diagnostic.procedures if config.diagnostic else ()
    for procedure in procedures:
        rules = config.all_evidence(procedure.id)
        for rule in rules:
            for _, pattern in iter_patterns(rule.patterns):
                words = pattern_as_words(pattern)
                if len(words) < 3:
                    continue
                for other in rules:
                    pair = (procedure.id, *sorted((rule.id, other.id)))
                    if other.id == rule.id or pair in found or _exclusive(rule, other):
                        continue
                    if first_match(words, other.patterns) is not None:
                        found[pair] = Overlap(procedure.id, rule.id, other.id, words[:80])
    return list(found.values())


def _exclusive(rule: EvidenceRule, other: EvidenceRule) -> bool:
    return other.id in rule.excludes or rule.id in other.excludes
