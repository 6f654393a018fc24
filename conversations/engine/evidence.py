"""Facts, hypotheses, contradictions, isolation and replan, as pure functions.

- Evidence rules turn a clause of the message into a `Fact` (a measured value when the
  pattern captures one). A newer fact that excludes an older one, or re-measures it with
  another value, supersedes it and records a `Contradiction`.
- Hypotheses are re-derived from the current facts: any current eliminating fact
  eliminates (and elimination beats confirmation), a confirming fact confirms, a
  supporting fact raises confidence. Recommendations only ever come from hypotheses that
  are not eliminated, which is what keeps "the motor runs on direct power" from ever
  ending in "replace the motor", without a special case.
- Isolation completes when a hypothesis becomes confirmed; a finding fact records it.
- Replan happens only when new evidence arrives after isolation was complete: the
  finding is superseded by the new evidence, isolation and the draft estimate roll back.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace

from ._serde import FrozenDict, Serializable
from ._text import (
    clauses,
    compile_pattern,
    first_match,
    iter_patterns,
    localize,
    normalize_patterns,
    unnegated_hits,
)
from .config import EvidenceRule, HypothesisSpec
from .intents import DISPUTE, NEW_EVIDENCE
from .lexicon import Lexicon, lexicons_for
from .negation import doubt_over, negated, pattern_as_words
from .state import (
    ACTIVE,
    CONFIRMED,
    ELIMINATED,
    ContextState,
    Contradiction,
    Estimate,
    Fact,
    Hypothesis,
)

# The phrases that make a diagnosis start again ("that can't be it"), in English, Russian, Spanish and Chinese.
DEFAULT_REPLAN_TRIGGERS = normalize_patterns(
    {
        "en": [
            r"(?:found|discovered|noticed|see|saw)\s+(?:a|the)?\s*(?:hole|leak|crack|burn|damage|corrosion|loose|broken)",
            r"(?:actually|wait|but)\s+(?:there'?s|i\s+see|i\s+found)",
            r"(?:that'?s\s+not|can'?t\s+be|doesn'?t\s+make\s+sense|are\s+you\s+sure)",
            r"(?:now|but\s+now)\s+(?:it'?s|i\s+(?:get|see|measure))",
        ],
        "ru": [
            r"(?:наш[её]л|обнаружил|заметил)\s+(?:дыр|утечк|трещин)",
            r"на\s+самом\s+деле",
            r"не\s+может\s+быть",
            r"теперь\s+(?:показывает|вижу)",
        ],
        "es": [
            r"(?:encontr[eé]|descubr[ií]|not[eé])\s+(?:un[a]?\s+)?(?:agujero|fuga|grieta)",
            r"en\s+realidad",
            r"no\s+puede\s+ser",
            r"ahora\s+(?:marca|mide)",
        ],
        "zh": [
            r"(?:发现|看到)[^。]{0,8}(?:漏|裂|烧|洞)",
            r"其实",
            r"不可能",
            r"不对",
            r"现在(?:测|量|显示)",
        ],
    }
)


@dataclass(frozen=True)
class EvidenceMatch(Serializable):
    """One evidence rule that matched a clause of the message."""

    rule_id: str
    type: str
    value: str
    raw: str
    hedge: str | None = None  # "I think", "可能", "наверное": the person is not sure of it (never recorded as sure)


@dataclass(frozen=True)
class EvidenceUpdate(Serializable):
    """What one turn's evidence changed."""

    added: tuple[str, ...] = ()
    superseded: tuple[str, ...] = ()
    contradictions: tuple[str, ...] = ()
    eliminated: tuple[str, ...] = ()
    confirmed: tuple[str, ...] = ()
    reopened: tuple[str, ...] = ()


def match_evidence(
    text: str, rules: Iterable[EvidenceRule], language: str, locale: str = "en"
) -> list[EvidenceMatch]:
    """Evidence rules matching the message, checked clause by clause so negations stay local.

    A reading whose words run across a "but" ("the burner lights but goes out", "enciende pero se
    apaga") is then looked for in the whole message, and taken when nothing negates its first words
    and its rule's `unless` does not hold there ("it doesn't light, but the fan goes out" is no
    flame going out)."""
    rules = list(rules)
    by_id = {rule.id: rule for rule in rules}
    found: dict[str, EvidenceMatch] = {}
    spans: dict[str, tuple[int, int, int]] = {}  # rule -> (clause, start, end) of its words
    parts = clauses(text)
    cursor = 0
    for index, clause in enumerate(parts):
        offset = max(0, text.find(clause, cursor))  # where the clause stands in the message (doubt may be said after it)
        cursor = offset + len(clause)
        for rule in rules:
            if rule.id in found:
                continue
            hit = _word_match(clause, rule.patterns, language)
            if hit is None or _unless_said(clause, rule, language):
                continue
            said = rule
            if negated(clause, hit[2].start(), hit[2].end(), pattern=hit[1]):
                if (later := _later_unnegated(clause, hit)) is not None:
                    hit = later  # "风扇不转，插头上量到12.5伏": the words after the 不转 say the 12.5 V
                else:
                    # a negated observation is never recorded as its positive ("no rattling", "не горит"): it records
                    # the negative finding its rule names ("el ventilador nunca arranca": the blower is dead), or nothing
                    said = by_id.get(rule.negated or "")
                    if said is None or said.id in found:
                        continue
            found[said.id] = replace(_evidence_match(said, hit[2], locale),
                                     hedge=doubt_over(text, offset + hit[2].start(), offset + hit[2].end()))
            spans[said.id] = (index, hit[2].start(), hit[2].end())
    # "stopped cooling on propane" holds "cooling on propane": a reading inside the words of one it
    # excludes is a piece of that one, not a second thing said
    for piece in [a for a in spans for b in spans if a != b and _within(spans[a], spans[b])
                  and (_excludes(by_id, a, b) or _reading_of_a_part(by_id, a, b, spans))]:
        found.pop(piece, None)
    if len(parts) > 1:
        for rule in rules:
            if rule.id in spans or (hit := _word_match(text, rule.patterns, language)) is None:
                continue  # read in a clause already (taken, or a piece of a longer reading)
            if any(_excludes(by_id, rule.id, other) for other in spans):
                continue  # "motor runs but the room doesnt move" is no silent motor: a clause said the motor runs
            if not negated(text, hit[2].start(), hit[2].end(), pattern=hit[1]) and not _unless_said(text, rule, language):
                found[rule.id] = _evidence_match(rule, hit[2], locale)
    return list(found.values())


def _word_match(text: str, patterns: Mapping[str, Iterable[str]], language: str) -> tuple[str, str, re.Match[str]] | None:
    """The first (language, pattern, match) of a rule whose negation word is a word of the message: "нет аммиак" is
    not read inside "пахнет аммиаком", nor "no power" inside "piano power" (a pattern may begin inside a word on
    purpose: `n't` of "won't")."""
    if first_match(text, patterns, language) is None:
        return None
    for lang, pattern in iter_patterns(patterns, language):
        for hit in compile_pattern(pattern).finditer(text):
            if not _cue_inside_a_word(text, hit.start()):
                return lang, pattern, hit
    return None


def _later_unnegated(text: str, hit: tuple[str, str, re.Match[str]]) -> tuple[str, str, re.Match[str]] | None:
    """The pattern's match that begins after a negation cue inside its first match and is not negated, if any:
    the first match reached back over another clause's negation. A cue after the words ("запаха аммиака нет, жёлтого
    налёта тоже") reaches the later ones too."""
    language, pattern, match = hit
    compiled = compile_pattern(pattern)
    inside = [cue for lex in lexicons_for(match.group(0)) for cue in lex.negation_before.finditer(match.group(0))]
    if not inside:
        return None
    at = match.start() + max(cue.end() for cue in inside)
    while at < len(text) and (later := compiled.search(text, at)) is not None:
        if not negated(text, later.start(), later.end(), pattern=pattern) and not _cue_inside_a_word(text, later.start()):
            return language, pattern, later
        at = later.start() + 1
    return None


def _cue_inside_a_word(text: str, at: int) -> bool:
    """Whether the words at `at` begin inside a longer word with what is a negation cue on its own ("нет" of
    "пахнет"); Chinese, written without spaces, has no inside of a word."""
    if at == 0 or not (text[at - 1].isalpha() and text[at].isalpha()) or _CJK.match(text[at]):
        return False
    piece = _PIECE.match(text, at)
    return piece is not None and any(lex.negation_before.fullmatch(piece.group(0)) for lex in lexicons_for(piece.group(0)))


_CJK = re.compile(r"[\u3400-\u9fff]")
_PIECE = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")


def _unless_said(text: str, rule: EvidenceRule, language: str) -> bool:
    """Whether the words that rule a reading out are said: denied ("sin zumbido", "никакого гула"), they are not."""
    if first_match(text, rule.unless, language) is None:
        return False
    return any(not _cue_inside_a_word(text, hit.start()) for hit in unnegated_hits(text, rule.unless, language))


def match_elided(text: str, rules: Iterable[EvidenceRule], language: str, locale: str = "en") -> list[EvidenceMatch]:
    """The evidence of a check's own rules in an answer that leaves out what it is about: "it starts and runs" or
    "arranca y funciona" to "does the compressor start?".

    A clause opening with a pronoun ("it", "它", "он"), or straight with one of a rule's own words, is read as if it
    opened with the rule's subject (the first word its pattern reads); a clause naming something else ("the fan
    runs") is not. Negation, `unless` and doubt are read as for any clause."""
    found: dict[str, EvidenceMatch] = {}
    for clause in clauses(text):
        for lex in lexicons_for(clause):
            rest = _without_opening(lex, clause)
            if lex.negation_before.match(rest):
                continue  # "no zumba, no arranca": a subject put before the cue would take it out of the cue's scope
            for rule in rules:
                if rule.id in found:
                    continue
                for pattern in rule.patterns.get(lex.language, ()):  # the words of the language they are said in
                    words = _WORDS.findall(pattern_as_words(pattern))
                    if len(words) < 2 or lex.negation_before.fullmatch(words[0]) or not _opens_with_any(lex, rest, words[1:]):
                        continue
                    if _names_its_subject(lex, rest, pattern):
                        continue  # "it's only out on gas": the words name what the pattern opens with; nothing is left out
                    said = f"{words[0]} {rest}"
                    if compile_pattern(pattern).match(said) is not None and (read := match_evidence(said, [rule], language, locale)):
                        found[rule.id] = replace(read[0], raw=clause)
                        break
    return list(found.values())


_WORDS = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")


def _without_opening(lex: Lexicon, clause: str) -> str:
    """The clause without the fillers and the pronoun it opens with ("yeah it starts" -> "starts")."""
    position = 0
    while True:
        gap = re.match(r"[\s,，、]*", clause[position:])
        position += gap.end() if gap else 0
        opening = lex.fillers.match(clause, position) or lex.pronouns.match(clause, position)
        if opening is None or opening.end() == position:
            return clause[position:]
        position = opening.end()


def _names_its_subject(lex: Lexicon, rest: str, pattern: str) -> bool:
    """Whether the clause itself says one of the words the pattern opens with (its first group's alternatives,
    `(?:lp|gas|propane)`): then that is not what the clause leaves out, and putting it before the clause would
    read it twice ("gas only out on gas")."""
    opening = _FIRST_GROUP.match(pattern)
    if opening is None:
        return False
    depth, end = 0, None
    for i in range(opening.end() - 3, len(pattern)):
        depth += {"(": 1, ")": -1}.get(pattern[i], 0) if pattern[i - 1] != "\\" else 0
        if depth == 0:
            end = i
            break
    if end is None:
        return False
    said = {w.lower() for w in _WORDS.findall(pattern_as_words(pattern[opening.end():end]))}
    found = (w.group(0).lower() for w in _WORDS.finditer(rest)) if lex.spaced else ()
    return any(w in said for w in found) if lex.spaced else any(w and w in rest for w in said)


_FIRST_GROUP = re.compile(r"(?:\\b|\^)?\(\?:")


def _reading_of_a_part(by_id: dict[str, EvidenceRule], piece: str, whole: str, spans: dict[str, tuple[int, int, int]]) -> bool:
    """"across herm and c i get 0 volts": a bare reading (no supply at the unit) inside the words of a reading that
    says what it was taken at (none at the compressor) is that one's value, not a second measurement."""
    return (by_id[piece].type == by_id[whole].type == "measurement"
            and spans[piece][2] - spans[piece][1] < spans[whole][2] - spans[whole][1])


def _opens_with_any(lex: Lexicon, rest: str, words: list[str]) -> bool:
    """Whether the words left begin with one of the pattern's own words (its predicate, not another subject)."""
    if lex.spaced:
        first = _WORDS.match(rest)
        return first is not None and first.group(0).lower() in {w.lower() for w in words}
    return any(rest.startswith(word) for word in words)


def _evidence_match(rule: EvidenceRule, match: re.Match[str], locale: str) -> EvidenceMatch:
    group = next((i for i, g in enumerate(match.groups(), 1) if g), None)
    captured = match.group(group).strip() if group else None
    if captured and _BARE_NUMBER.fullmatch(captured):
        # "20 millivolts", "8 mV": a reading keeps the unit its words gave it ("20" alone says nothing)
        unit = match.string[match.end(group):match.end()].strip()
        if unit and len(unit) <= 16 and re.search(r"[^\W\d_]", unit):
            captured = f"{captured}{'' if unit[0] in '.,' else ' '}{unit}"
    label = localize(rule.label, locale)
    return EvidenceMatch(rule.id, rule.type, f"{label}: {captured}" if captured else label, match.group(0))


_ON_THE_SCALE = re.compile(r"(?<![\w.,])(\d{1,5}(?:[.,]\d{1,3})?)\s+on\s+the\s+(?:\d+\s*)?([^\W\d_]{1,4})\s+(?:scale|range|setting)\b",
                           re.IGNORECASE)
_BARE_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")


def _within(inner: tuple[int, int, int], outer: tuple[int, int, int]) -> bool:
    """Whether words (clause, start, end) lie inside other words of the same clause, and are fewer."""
    return inner[0] == outer[0] and outer[1] <= inner[1] and inner[2] <= outer[2] and inner[1:] != outer[1:]


def _excludes(rules: Mapping[str, EvidenceRule], a: str, b: str) -> bool:
    rule_a, rule_b = rules.get(a), rules.get(b)
    return bool(rule_a and b in rule_a.excludes) or bool(rule_b and a in rule_b.excludes)


def add_facts(
    state: ContextState,
    matches: Iterable[EvidenceMatch],
    *,
    rules: Iterable[EvidenceRule],
    turn: int,
    step_id: str | None,
    source: str = "user",
) -> tuple[ContextState, EvidenceUpdate]:
    """Record matched evidence as facts; newer facts supersede the ones they contradict."""
    by_id = {rule.id: rule for rule in rules}
    facts = list(state.facts)
    contradictions = list(state.contradictions)
    added, superseded, new_contradictions = [], [], []
    for match in matches:
        current = [f for f in facts if f.current]
        if any(f.key == match.rule_id and f.value == match.value for f in current):
            continue  # already known: repeating a fact is not new evidence
        fact = Fact(
            id=f"f{len(facts) + 1}",
            key=match.rule_id,
            type=match.type,
            source=source,
            value=match.value,
            turn=turn,
            step_id=step_id,
            system=state.primary_system,
        )
        for old in current:
            if old.key == match.rule_id or _excludes(by_id, old.key, match.rule_id):
                facts[facts.index(old)] = replace(old, superseded_by=fact.id)
                contradiction = Contradiction(
                    id=f"c{len(contradictions) + 1}",
                    fact_a=old.id,
                    fact_b=fact.id,
                    resolution="superseded_by_newer",
                )
                contradictions.append(contradiction)
                superseded.append(old.id)
                new_contradictions.append(contradiction.id)
        facts.append(fact)
        added.append(fact.id)
    new_state = state.evolve(facts=tuple(facts), contradictions=tuple(contradictions))
    return new_state, EvidenceUpdate(
        added=tuple(added), superseded=tuple(superseded), contradictions=tuple(new_contradictions)
    )


def add_note(
    state: ContextState, text: str, *, turn: int, step_id: str | None, source: str = "user"
) -> tuple[ContextState, str]:
    """Record free text as an observation fact (evidence no rule recognised)."""
    fact = Fact(
        id=f"f{len(state.facts) + 1}",
        key="note",
        type="observation",
        source=source,
        value=text.strip()[:280],
        turn=turn,
        step_id=step_id,
        system=state.primary_system,
    )
    return state.evolve(facts=state.facts + (fact,)), fact.id


def assess(spec: HypothesisSpec, facts: Iterable[Fact], locale: str) -> Hypothesis:
    """A hypothesis's status and confidence from the current facts."""
    current = [f for f in facts if f.current]
    against = tuple(f.id for f in current if f.key in spec.eliminated_by)
    confirming = tuple(f.id for f in current if f.key in spec.confirmed_by)
    supporting = tuple(f.id for f in current if f.key in spec.supported_by) + confirming
    if against:
        status, confidence = ELIMINATED, "low"
    elif confirming:
        status, confidence = CONFIRMED, "high"
    else:
        status, confidence = ACTIVE, "medium" if supporting else "low"
    return Hypothesis(
        id=spec.id,
        description=localize(spec.description, locale),
        status=status,
        confidence=confidence,
        supporting_facts=supporting,
        contradicting_facts=against,
    )


def reassess_hypotheses(
    state: ContextState, specs: Iterable[HypothesisSpec], locale: str
) -> tuple[ContextState, EvidenceUpdate]:
    """Re-derive every hypothesis from the current facts; report what changed status."""
    before = {h.id: h.status for h in state.hypotheses}
    hypotheses = tuple(assess(spec, state.facts, locale) for spec in specs)
    eliminated = tuple(
        h.id for h in hypotheses if h.status == ELIMINATED and before.get(h.id) != ELIMINATED
    )
    confirmed = tuple(
        h.id for h in hypotheses if h.status == CONFIRMED and before.get(h.id) != CONFIRMED
    )
    reopened = tuple(
        h.id
        for h in hypotheses
        if h.status == ACTIVE and before.get(h.id) in (CONFIRMED, ELIMINATED)
    )
    update = EvidenceUpdate(eliminated=eliminated, confirmed=confirmed, reopened=reopened)
    return state.evolve(hypotheses=hypotheses), update


def _spec_keys(spec: HypothesisSpec) -> set[str]:
    return set(spec.supported_by) | set(spec.confirmed_by)


def replan_reason(
    state_before: ContextState,
    state_after: ContextState,
    *,
    text: str,
    intent: str,
    new_fact_ids: Iterable[str],
    specs: Iterable[HypothesisSpec],
    triggers: Mapping[str, Iterable[str]],
    language: str,
) -> str | None:
    """Why this turn invalidates the isolation, or None. Only after isolation was complete."""
    if not state_before.isolation_complete:
        return None
    finding = state_before.isolation_finding
    after = state_after.hypothesis(finding) if finding else None
    if after is not None and after.status == ELIMINATED:
        return f"finding {finding} eliminated by new evidence"
    new_keys = {f.key for f in state_after.facts if f.id in set(new_fact_ids)}
    for spec in specs:
        hyp = state_after.hypothesis(spec.id)
        if (
            spec.id != finding
            and hyp is not None
            and hyp.status != ELIMINATED
            and new_keys & _spec_keys(spec)
        ):
            return f"new evidence for {spec.id}"
    if intent in (NEW_EVIDENCE, DISPUTE):
        return f"{intent.lower()} after isolation: {text.strip()[:100]}"
    for _, pattern in iter_patterns(triggers or DEFAULT_REPLAN_TRIGGERS, language):
        if compile_pattern(pattern).search(text):
            return f"new evidence after isolation: {text.strip()[:100]}"
    return None


def apply_replan(
    state: ContextState, *, reason: str, evidence_fact_id: str, turn: int
) -> ContextState:
    """Roll back the isolation: supersede the finding with the evidence, drop the draft estimate."""
    facts = list(state.facts)
    contradictions = list(state.contradictions)
    key = f"finding:{state.isolation_finding}"
    for i, fact in enumerate(facts):
        if fact.key == key and fact.current:
            facts[i] = replace(fact, superseded_by=evidence_fact_id)
            contradictions.append(
                Contradiction(
                    id=f"c{len(contradictions) + 1}",
                    fact_a=fact.id,
                    fact_b=evidence_fact_id,
                    resolution=f"replan: {reason}",
                )
            )
    estimate = state.estimate
    if estimate.status != "none":
        # The estimate priced the old conclusion; it is redrafted when isolation completes again.
        estimate = Estimate()
    return state.evolve(
        facts=tuple(facts),
        contradictions=tuple(contradictions),
        isolation_complete=False,
        isolation_invalidated=True,
        isolation_finding=None,
        previous_findings=state.previous_findings
        + ((state.isolation_finding,) if state.isolation_finding else ()),
        replan_count=state.replan_count + 1,
        estimate=estimate,
        step_repeat_counts=FrozenDict(),  # the checks after a replan are asked afresh
    )


def complete_isolation(state: ContextState, hypothesis: Hypothesis, *, turn: int) -> ContextState:
    """Mark isolation complete on a confirmed hypothesis and record the finding as a fact."""
    finding = Fact(
        id=f"f{len(state.facts) + 1}",
        key=f"finding:{hypothesis.id}",
        type="finding",
        source="inference",
        value=hypothesis.description,
        turn=turn,
        system=state.primary_system,
    )
    return state.evolve(
        facts=state.facts + (finding,),
        isolation_complete=True,
        isolation_finding=hypothesis.id,
        isolation_invalidated=False,
    )


def recommendations(state: ContextState, specs: Iterable[HypothesisSpec], locale: str) -> list[str]:
    """Corrections to recommend: confirmed hypotheses only, never eliminated ones."""
    by_id = {h.id: h for h in state.hypotheses}
    out = []
    # The isolation finding's correction comes first, the rest in declaration order.
    for spec in sorted(specs, key=lambda s: s.id != state.isolation_finding):
        hyp = by_id.get(spec.id)
        if hyp is not None and hyp.status == CONFIRMED and spec.recommendation:
            out.append(localize(spec.recommendation, locale))
    return out


# -- readings: what a check that expects a measurement accepts ---------------------------------
@dataclass(frozen=True)
class Reading(Serializable):
    """A measured value in a message: its kind (voltage, current, resistance, capacitance) and unit."""

    kind: str
    value: float
    unit: str

    @property
    def text(self) -> str:
        """The reading written plainly ("12.4 V", "11 in. WC", "38 °F"): what the plan's evidence patterns read."""
        if math.isinf(self.value):
            return "OL (open circuit)"
        number = f"{self.value:g}"
        return f"{number} {self.unit}"

    def canonical(self, language: str = "en") -> float:
        """The value in the unit a step's bands are written in: pressure in inches of water column,
        temperature in °F (a bare "degrees" is °F in English, °C elsewhere), others as read."""
        unit = self.unit if self.unit != "°" else ("°F" if language == "en" else "°C")
        convert = _TO_CANONICAL.get(unit)
        return convert(self.value) if convert else self.value


_NUMBER = r"(?<![A-Za-z0-9.,])(-?\d{1,5}(?:[.,]\d{1,3})?|zero|cero|ноль|零)"
# unit words per kind, any language; a unit must end where a word ends
_UNITS = (
    ("voltage", "V", r"v|vac|vdc|vca|volts?|voltios?|вольт\w*|в|伏特?"),
    ("voltage", "mV", r"mv|millivolts?|milivoltios?|милливольт\w*|мв|毫伏"),  # a thermocouple's few millivolts
    ("current", "A", r"a|amps?|amperes?|amperios?|ампер\w*|а|安培?"),
    ("resistance", "Ω", r"ω|ohms?|ohmios?|ом\w*|欧姆?"),
    ("capacitance", "µF", r"[uµμ]f|mfd|microfarads?|microfaradios?|мк?ф|微法"),
    ("pressure", "in. WC", r"(?:inch(?:es)?|pulgadas?|дюйм\w*|英寸)(?:\s*(?:of\s+)?(?:w\.?\s?c\.?|water(?:\s+column)?|h2o|de\s+(?:columna\s+de\s+)?agua|вод\w*(?:\s+ст\w*)?|水柱))?"
                           r"|(?:in\.?|\")\s*(?:of\s+)?(?:w\.?\s?c\.?|water(?:\s+column)?|h2o)|in\.|w\.?\s?c\.?|英寸水柱|水柱"),
    ("pressure", "psi", r"psi"),
    ("pressure", "kPa", r"kpa|кпа|千帕"),
    ("pressure", "mbar", r"mbar|мбар|毫巴"),
    ("temperature", "°F", r"°\s*f|℉|f|fahrenheit|degrees?\s+f(?:ahrenheit)?|deg\s+f|华氏度?"),
    ("temperature", "°C", r"°\s*c|℃|c|celsius|degrees?\s+c(?:elsius)?|deg\s+c|grados?(?:\s+c(?:elsius)?)?|градус\w*(?:\s+цельси\w*)?|摄氏度|度"),
    ("temperature", "°", r"°|degrees?|deg"),
    ("frequency", "Hz", r"hz|hertz|герц\w*|гц|赫兹?|hercios?"),
)
# the unit each kind is held in when a step's bands compare a reading ("0.4 psi" is 11.1 in. WC)
_TO_CANONICAL = {"psi": lambda v: v * 27.68, "kPa": lambda v: v * 4.015, "mbar": lambda v: v * 0.4015,
                 "°C": lambda v: v * 9 / 5 + 32, "mV": lambda v: v / 1000}
_READING = re.compile(
    _NUMBER + r"\s*(?:(" + "|".join(f"(?:{u})" for _, _, u in _UNITS) + r")(?![a-zа-яё]))",
    re.IGNORECASE,
)
# "no power at all", "нет напряжения", "no hay voltaje", "没电": a voltage of 0
_NO_VOLTAGE = re.compile(
    r"\bno\s+(?:power|voltage|volts?)\b|\bzero\s+volts?\b|\bdead\s+(?:at\s+the\s+\w+|no\s+power)\b"
    r"|(?<!\w)нет\s+(?:напряжения|питания)|(?:напряжения|питания)\s+нет"
    r"|\bno\s+(?:hay|tiene|llega)\s+(?:voltaje|corriente|tensi[oó]n)|\bsin\s+(?:voltaje|corriente|tensi[oó]n)"
    r"|没电|没有电|无电压|没有电压|电压为零",
    re.IGNORECASE,
)
# a part named by its voltage or rated by its current: "12v fuse panel", "30 amp fuse", "50a service", "12 伏保险丝"
_PART_AFTER = re.compile(
    r"[\s-]*(?:fuses?|breakers?|panel|system|batter(?:y|ies)|circuits?|outlets?|sockets?|receptacles?|plugs?|cords?|service|"
    r"pedestal|lights?|bulbs?|wires?|wiring|relay|предохранител\w*|автомат\w*|розетк\w*|fusibles?|"
    r"enchufe|toma|保险丝?|插座|空开|熔断)(?![a-zа-яё])",
    re.IGNORECASE,
)
# a meter's "OL", an open circuit: a resistance with no end ("reads OL", 万用表显示OL, обрыв, circuito abierto)
_OPEN_CIRCUIT = re.compile(
    r"(?<![A-Za-z])(?:OL|O\.L\.)(?![A-Za-z])|(?i:\bopen\s+(?:circuit|line|loop)\b|\binfinit[ey]\b|\bno\s+continuity\b"
    r"|开路|断路|无穷大|(?<!\w)обрыв|бесконечн\w*|circuito\s+abierto|\binfinit[ao]\b|sin\s+continuidad)",
)
_BARE_NUMBER = re.compile(r"(?<![A-Za-z0-9.,])(\d{1,5}(?:[.,]\d{1,3})?)(?![\w.,]|[.,]\d)")
_FEW_WORDS = 3
_FEW_WORDS_DECIMAL = 7


def kind_unit(kind: str) -> str | None:
    """The unit a reading of this kind is written in ("V", "µF", "in. WC"), None for a kind with no unit."""
    return next((symbol for k, symbol, _ in _UNITS if k == kind), None)


def _unit_kind(unit: str) -> tuple[str, str]:
    for kind, symbol, pattern in _UNITS:
        if re.fullmatch(pattern, unit.strip(), re.IGNORECASE):
            return kind, symbol
    return "", unit


def _number_value(raw: str) -> float:
    return 0.0 if raw.lower() in ("zero", "cero", "ноль", "零") else float(raw.replace(",", "."))


_RATED_WORD = re.compile(r"\b(?:rated|rating|label\w*|nominal|spec\w*|should\s+be|says?)\b|额定|标称|标签|标的|номинал\w*|должн\w*|nominal|etiqueta",
                         re.IGNORECASE)


_RATING_NUMBER = re.compile(r"(?<![A-Za-z0-9.])(\d{1,5}(?:[.,]\d{1,3})?)(?![A-Za-z0-9]|[.,]\d)")


def read_against_rating(text: str, kind: str) -> tuple[float, float] | None:
    """(measured, rated) when a message gives both ("reads 28 uF, label says 45", "30微法，额定45"):
    the number after a rating word is the rating, the other the measurement; else the first two in order."""
    numbers = [(m.start(), _number_value(m.group(1))) for m in _READING.finditer(text) if _unit_kind(m.group(2))[0] == kind]
    taken = {at for at, _ in numbers}
    numbers += [(m.start(), _number_value(m.group(1))) for m in _RATING_NUMBER.finditer(text)
                if not any(abs(m.start() - at) < 2 for at in taken)]
    numbers.sort()
    if len(numbers) != 2:
        return None
    rated_word = _RATED_WORD.search(text)
    if rated_word is not None and numbers[0][0] > rated_word.start():
        return numbers[1][1], numbers[0][1]  # "rated 45, it reads 28"
    return numbers[0][1], numbers[1][1]


def _unit_readings(text: str) -> Iterator[Reading]:
    """Each number written with a unit the plan's checks read ("12,4 V", "118v", "2 amps"), in the message's order."""
    for match in _READING.finditer(text):
        unit = match.group(2)
        if unit in ("a", "а") and match.end(1) < match.start(2):
            continue  # "12 a bit low": a lower-case "a" after a space is a word, not amps
        if _PART_AFTER.match(text, match.end()):
            continue  # "the 12v fuse panel", "a new 30 amp fuse": a part's name or rating, not a reading
        kind, symbol = _unit_kind(unit)
        if kind:
            yield Reading(kind, _number_value(match.group(1)), symbol)


def last_measurement(text: str) -> Reading | None:
    """The last number said with its unit: after "mide 0 voltios … espera, tenía el tester en ohmios: 12,6 V" the
    reading meant is the one said last."""
    readings = list(_unit_readings(text))
    return readings[-1] if readings else None


def read_measurement(text: str, expected: str | None = None) -> Reading | None:
    """The reading a message gives: a number with its unit ("12,4 V", "118v", "2 amps", "0 volts"),
    "no power at all" / "нет напряжения" / "没电" as 0 V, or, answering a check that `expected` one
    kind, a short message with a bare number ("about 118"). None when it gives no reading."""
    if (reading := next(_unit_readings(text), None)) is not None:
        return reading
    for match in _ON_THE_SCALE.finditer(text):  # "4 on the mV scale", "reads 12 on the 20 V range"
        kind, symbol = _unit_kind(match.group(2))
        if kind:
            return Reading(kind, _number_value(match.group(1)), symbol)
    if _NO_VOLTAGE.search(text):
        return Reading("voltage", 0.0, "V")
    if _OPEN_CIRCUIT.search(text):
        return Reading("resistance", math.inf, "Ω")  # the meter shows OL: an open circuit, infinite ohms
    bare = _BARE_NUMBER.findall(text)
    rest = _BARE_NUMBER.sub(" ", text)
    words = re.findall(r"[^\W\d_]+", rest)
    cjk = len(re.findall(r"[\u4e00-\u9fff]", rest))
    # "about 118", or with a decimal part in a longer answer ("marca 12,6 con el botón apretado")
    few = _FEW_WORDS if not bare or not re.search(r"[.,]\d", bare[0]) else _FEW_WORDS_DECIMAL
    if expected and len(bare) == 1 and len(words) <= few and cjk <= 8:
        symbol = kind_unit(expected)
        if symbol is None:
            return None
        return Reading(expected, _number_value(bare[0]), symbol)
    return None
