"""Non-blocking labor estimate and the final report (the labor estimate never holds the diagnosis up).

A draft is offered once isolation is complete; diagnostics go on without confirming it;
the person may confirm (optionally with other hours) or skip whenever they like; the
final report uses the confirmed estimate, else the draft.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from ._serde import Serializable
from ._text import clauses, first_match, localize, normalize_patterns
from .config import DiagnosticSpec, HypothesisSpec
from .evidence import assess, recommendations
from .lexicon import words_of
from .negation import message_parts, negation_cue
from .recognizers.times import length_minutes
from .state import (
    ACTIVE,
    CONFIRMED,
    ELIMINATED,
    EST_CONFIRMED,
    EST_DRAFT,
    EST_NONE,
    EST_SKIPPED,
    ContextState,
    Estimate,
    EstimateLine,
)

CONFIRM_PATTERNS = normalize_patterns(
    {
        "en": [
            r"\b(?:confirm\w*|approv\w*|accept\w*|ok|okay|agree\w*|go\s+with)\b[^.?!]{0,30}\b(?:estimate|labou?r|hours?|quote)\b",
            r"\b(?:estimate|labou?r|quote)\b[^.?!]{0,20}\b(?:confirmed|approved|accepted|is\s+fine|looks\s+good|ok|okay|works)\b",
            r"^\s*\d+(?:[.,]\d+)?\s*(?:h|hrs?|hours?)\b",
        ],
        "zh": [
            r"确认(?:一下)?(?:工时|估价|报价|预估|估算)",
            r"(?:工时|估价|报价|预估|估算)(?:没问题|可以|确认|同意)",
        ],
        "ru": [
            r"подтвер(?:жда|ди)\w*\s+(?:оценк|смет|час|работ)",
            r"(?:оценк|смет)\w*\s+(?:подходит|устраивает|подтвержда|(?:ок|окей|норм\w*)(?!\w))",
            r"соглас\w*\s+(?:со?\s+)?(?:оценк|смет)",
        ],
        "es": [
            r"confirm\w*\s+(?:la\s+|el\s+|las\s+)?(?:estimaci|presupuesto|horas|mano\s+de\s+obra)",
            r"(?:presupuesto|estimaci\w+)\s+(?:est[aá]\s+bien|de\s+acuerdo|confirmad)",
        ],
    }
)
SKIP_PATTERNS = normalize_patterns(
    {
        "en": [
            r"\bskip\b[^.?!]{0,20}\b(?:estimate|labou?r|quote)\b",
            r"\b(?:no|without(?:\s+the)?|leave\s+out\s+the|don'?t\s+(?:need|want)\s+the)\s+(?:labou?r|estimate)\b",
            r"\b(?:estimate|labou?r)\s+later\b",
            r"\bconfirm\s+(?:labou?r|it|the\s+estimate)\s+later\b",
        ],
        "zh": [r"跳过(?:工时|估价|报价|预估|估算)", r"(?:工时|估价|报价|估算)?稍后(?:再)?确认", r"先不确认",
               r"(?:不要|不用|不需要|别)(?:写|算|加)?(?:工时|估算|报价)"],
        "ru": [r"пропуст\w*\s+(?:оценк|смет)", r"(?:оценк|смет)\w*\s+потом", r"без\s+(?:оценк|смет|час)\w*",
               r"(?:оценк|смет)\w*\s+не\s+(?:надо|нужн\w*)"],
        "es": [
            r"(?:omitir|saltar)\s+(?:la\s+|el\s+)?(?:estimaci|presupuesto)",
            r"(?:presupuesto|estimaci\w+)\s+despu[eé]s",
            r"sin\s+(?:el\s+)?(?:presupuesto|estimaci\w+|mano\s+de\s+obra)",
            r"(?:omite|s[aá]lta(?:te)?|quita|olv[ií]da(?:te\s+de)?)\s+(?:el\s+|la\s+)?(?:presupuesto|estimaci)",
            r"no\s+(?:hace\s+falta|necesito|quiero)\s+(?:el\s+|un\s+)?(?:presupuesto|estimaci)",
        ],
    }
)
REPORT_PATTERNS = normalize_patterns(
    {
        "en": [
            r"\b(?:final|the)\s+report\b",
            r"\bwrite[\s-]*up\b",
            r"\bwrap\s+(?:it\s+|this\s+)?up\b",
            r"\b(?:generate|create|make|give\s+me)\s+(?:the\s+|a\s+)?(?:report|summary)\b",
            r"\bcomplaint[\s,/]+cause[\s,/]+(?:and\s+)?correction\b",
            r"\b(?:write|do|send|draft|prepare)\s+(?:up\s+)?(?:the\s+|a\s+|my\s+)?(?:report|summary)\b",
            r"\breport\s*,?\s*(?:please|pls|plz)\b|^\W*report\W*$",
            r"\bwrite\s+(?:it|this|that|everything)\s+up\b",
            r"\b(?:i'?m|we'?re)\s+(?:all\s+)?done(?:\s+here)?\W*$",
        ],
        "zh": [r"(?:生成|出|写|给我|要|做)(?:一份|个|一下)?(?:最终|诊断)?(?:报告|总结)", r"最终报告", r"结束诊断",
               r"报告(?:写|出|生成)(?:一下|吧|出来)"],
        "ru": [r"(?:итоговый|финальный)\s+отч[её]т", r"(?:сделай|составь|сформируй|напиши|пришли|подготовь|давай|оформи|дай)\w*\s+отч[её]т",
               r"отч[её]т\s+(?:давай|оформи)|^\W*отч[её]т\W*$",
               r"отч[её]т\s*,?\s*пожалуйста"],
        "es": [
            r"informe\s+final",
            r"(?:genera|haz|crea|dame|escrib|redact|prepar)\w*\s+(?:el\s+|un\s+)?(?:informe|reporte)",
            r"(?:informe|reporte)\s*,?\s*por\s+favor",
            r"(?:p[aá]same|m[aá]ndame|env[ií]ame)\s+(?:el\s+)?(?:informe|reporte)",
        ],
    }
)


def asks_for_report(text: str, diagnostic: DiagnosticSpec | None, language: str) -> bool:
    """Whether the message asks for the final report, in the plan's own words or the built-in ones."""
    return first_match(text, (diagnostic.report_patterns if diagnostic else None) or REPORT_PATTERNS, language) is not None
_HOURS = normalize_patterns(
    {"any": [r"(\d+(?:[.,]\d+)?)\s*(?:h\b|hrs?\b|hours?\b|小时|час\w*|horas?\b)"]}
)


def draft_estimate(
    state: ContextState, specs: Iterable[HypothesisSpec], *, turn: int, locale: str
) -> ContextState:
    """Draft labor lines for every confirmed hypothesis (eliminated ones never price anything)."""
    by_id = {h.id: h for h in state.hypotheses}
    lines = []
    for spec in specs:
        hyp = by_id.get(spec.id)
        if hyp is None or hyp.status != CONFIRMED:
            continue
        lines.extend(
            EstimateLine(
                label=localize(line.label, locale), hours=line.hours, hypothesis_id=spec.id
            )
            for line in spec.estimate
        )
    estimate = Estimate(status=EST_DRAFT, lines=tuple(lines), drafted_turn=turn)
    return state.evolve(estimate=estimate)


def estimate_request(text: str, language: str) -> str | None:
    """'confirm' or 'skip' when the message addresses the estimate, else None: the built-in phrasings, or a clause
    naming the estimate (lexicon `estimate`) with a word that skips it or a negation of it ("we don't need a labor
    estimate", "смету пропускаем", "工时估算不用了"), else with a word that accepts it ("doy por buena esa hora")."""
    if first_match(text, SKIP_PATTERNS, language):
        return "skip"
    if first_match(text, CONFIRM_PATTERNS, language):
        return "confirm"
    if hours_said(text, language) is not None and any(
            words_of(language, "estimate", "names").search(c) or words_of(language, "estimate", "change").search(c)
            for c in clauses(text)):
        return "confirm"  # "改成1小时", "pon media hora", "bump the estimate up to 1.5 hours": the hours the person sets
    if first_match(text, REPORT_PATTERNS, language) and any(
            words_of(language, "estimate", "confirm").fullmatch(c.strip(" ,，。.!！")) for c in clauses(text)):
        return "confirm"  # "行吧，那就按1.5小时，确认，出报告": a bare "确认" beside the report is the estimate's
    for clause in clauses(text):
        named = words_of(language, "estimate", "names").search(clause)
        if named is None:
            continue
        if words_of(language, "estimate", "skip").search(clause) or negation_cue(clause, named.start(), named.end()) is not None:
            return "skip"
        accepted = words_of(language, "estimate", "confirm").search(clause)
        if accepted and negation_cue(clause, accepted.start(), accepted.end()) is None:
            return "confirm"
    return None


def hours_said(text: str, language: str) -> float | None:
    """The hours a message sets for the labor: the value in a clause that changes it ("pon media hora" after "0,3
    horas me parece poco"), else the first one said, never one said not to be ("1 hour, not 1.5", "不是1.5小时")."""
    found: list[tuple[bool, float]] = []
    for clause in message_parts(text, at_contrasts=False):
        hit = first_match(clause, _HOURS)
        if hit is not None:
            value, start, end = float(hit[2].group(1).replace(",", ".")), hit[2].start(), hit[2].end()
        elif (minutes := length_minutes(clause, language)) is not None:
            value, start, end = minutes / 60, 0, len(clause)
        else:
            continue
        if value <= 0 or negation_cue(clause, start, end) is not None:
            continue
        found.append((words_of(language, "estimate", "change").search(clause) is None, value))
    return min(found, key=lambda f: f[0])[1] if found else None


def confirm_estimate(state: ContextState, text: str, *, turn: int, language: str = "en") -> ContextState:
    """Confirm the draft, taking hours from the message when the person names them ("0,75 h", "一个半小时")."""
    hours = hours_said(text, language)
    lines = state.estimate.lines
    if hours is not None and lines and abs(hours - state.estimate.total_hours) > 1e-9:
        # the hours said are the estimate's: each line and the total say them ("make it 45 minutes"); several
        # lines become one, since nobody said how the new total divides between them
        lines = (replace(lines[0], hours=hours),) if len(lines) == 1 else (
            EstimateLine(label=" + ".join(line.label for line in lines), hours=hours),)
    estimate = Estimate(
        status=EST_CONFIRMED,
        lines=lines,
        confirmed_hours=hours,
        drafted_turn=state.estimate.drafted_turn,
        decided_turn=turn,
    )
    return state.evolve(estimate=estimate)


def skip_estimate(state: ContextState, *, turn: int) -> ContextState:
    """Skip labor confirmation; the draft stays as the report's fallback."""
    estimate = Estimate(
        status=EST_SKIPPED,
        lines=state.estimate.lines,
        drafted_turn=state.estimate.drafted_turn,
        decided_turn=turn,
    )
    return state.evolve(estimate=estimate)


@dataclass(frozen=True)
class SystemSection(Serializable):
    """Another system diagnosed in the same conversation: its complaint, cause, correction and findings."""

    system: str
    complaint: str
    cause: tuple[str, ...]
    correction: tuple[str, ...]
    facts: tuple[str, ...]


@dataclass(frozen=True)
class FinalReport(Serializable):
    """Complaint / cause / correction plus the labor the report carries, in the conversation's language.

    Before isolation it is the report so far: no cause, and what is still unknown (`suspected`,
    `unchecked`). A skipped estimate leaves labor out (`estimate_status` "skipped", no lines)."""

    complaint: str
    cause: tuple[str, ...]
    correction: tuple[str, ...]
    ruled_out: tuple[str, ...]
    estimate_status: str  # confirmed | draft | skipped | none
    estimate_lines: tuple[EstimateLine, ...]
    total_hours: float
    facts: tuple[str, ...]
    system: str = ""
    language: str = "en"
    isolated: bool = True
    suspected: tuple[str, ...] = ()
    unchecked: tuple[str, ...] = ()
    also: tuple[SystemSection, ...] = ()  # the other systems diagnosed, each in its own section


def system_section(state: ContextState, system_id: str, label: str, specs: Iterable[HypothesisSpec], locale: str) -> SystemSection | None:
    """The section of a system diagnosed before a switch, from its own facts (None when none were found)."""
    facts = tuple(f for f in state.facts if f.current and f.system == system_id)
    if not facts:
        return None
    specs = tuple(specs)
    confirmed = [spec for spec in specs if assess(spec, facts, locale).status == CONFIRMED]
    return SystemSection(system=label, complaint=state.complaints.get(system_id, ""),
                         cause=tuple(localize(s.description, locale) for s in confirmed),
                         correction=tuple(localize(s.recommendation, locale) for s in confirmed if s.recommendation),
                         facts=tuple(f.value for f in facts if f.type != "finding"))


def build_final_report(
    state: ContextState, specs: Iterable[HypothesisSpec], *, locale: str, system: str = "",
    unchecked: tuple[str, ...] = (), also: tuple[SystemSection, ...] = (),
) -> FinalReport:
    """The final report: never blocked on labor (the draft stands in for an unconfirmed estimate),
    never holding labor the technician skipped, and written at any time."""
    specs = tuple(specs)
    confirmed = [h for h in state.hypotheses if h.status == CONFIRMED]
    confirmed.sort(key=lambda h: h.id != state.isolation_finding)  # the isolation finding first
    estimate = state.estimate
    if estimate.status in (EST_CONFIRMED, EST_SKIPPED):
        status = estimate.status
    elif estimate.lines:
        status = EST_DRAFT  # confirmation is not required: the draft is the fallback
    else:
        status = EST_NONE
    hours = (
        estimate.confirmed_hours
        if estimate.status == EST_CONFIRMED and estimate.confirmed_hours
        else estimate.total_hours
    )
    lines = () if status == EST_SKIPPED else estimate.lines
    suspected = tuple(h.description for h in state.hypotheses
                      if h.status == ACTIVE and h.supporting_facts) if not state.isolation_complete else ()
    return FinalReport(
        complaint=state.complaint or "",
        cause=tuple(h.description for h in confirmed),
        correction=tuple(recommendations(state, specs, locale)),
        ruled_out=tuple(h.description for h in state.hypotheses if h.status == ELIMINATED),
        estimate_status=status,
        estimate_lines=lines,
        total_hours=0.0 if status == EST_SKIPPED else hours,
        facts=tuple(f.value for f in state.current_facts()
                    if f.type != "finding" and f.system in (None, state.primary_system)),
        system=system,
        language=locale,
        isolated=bool(state.isolation_complete),
        suspected=suspected,
        unchecked=() if state.isolation_complete else unchecked,
        also=also,
    )


def estimate_is_open(state: ContextState) -> bool:
    """A draft exists that has been neither confirmed nor skipped."""
    return state.estimate.status == EST_DRAFT
