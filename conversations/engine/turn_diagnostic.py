"""Diagnostic stages of a turn: the system, evidence and replan, isolation, estimate, report, next step."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import replace

from ._serde import FrozenDict
from ._text import (
    acknowledges_only,
    asks_to_skip_check,
    chitchat_kind,
    clauses,
    compile_pattern,
    count_matches,
    defers_answer,
    first_match,
    iter_patterns,
    localize,
    stated_beside_question,
)
from .catalog import marked, say, say_in
from .certainty import GUESS
from .commands import Command
from .config import ConversationConfig, DiagnosticSpec, EvidenceRule, ProcedureSpec, StepSpec
from .estimate import (
    asks_for_report,
    confirm_estimate,
    draft_estimate,
    estimate_request,
    skip_estimate,
)
from .evidence import (
    EvidenceMatch,
    add_facts,
    add_note,
    apply_replan,
    assess,
    complete_isolation,
    kind_unit,
    last_measurement,
    match_elided,
    match_evidence,
    read_against_rating,
    read_measurement,
    reassess_hypotheses,
    replan_reason,
)
from .intents import DISPUTE
from .loop_guard import FALLBACK, QUESTION, ProposedAction, asked_enough, check_loop, may_fallback
from .negation import (
    after_correction,
    may_negate,
    only_fillers,
    pattern_as_words,
    rough,
    says_it_corrects,
    unread_parts,
)
from .procedure import (
    asks_to_switch,
    detect_procedure,
    named_other_system,
    named_systems,
    next_step,
    remaining_steps,
    step_available,
    steps_answered_by,
)
from .slots import ABORT, has_content
from .state import (
    ACTIVE,
    CONFIRMED,
    EST_NONE,
    ContextState,
    Estimate,
    PendingClarification,
    with_key,
)
from .turn_work import (
    ALSO_TEXT,
    ANSWER,
    BACK_TO_CHECK_TEXT,
    CANCEL_MEANING,
    CONFIRM,
    DEFERRED_TEXT,
    DISPUTE_MEANING,
    ESTIMATE,
    ESTIMATE_CONFIRMED_TEXT,
    EVIDENCE,
    FALLBACK_TEXT,
    HANDOFF_MEANING,
    LEFT_OPEN_TEXT,
    NEED_ANSWER_TEXT,
    NEED_READING_TEXT,
    NEXT_STEP_MEANING,
    NEXT_STEP_TEXT,
    NO_MORE_STEPS_TEXT,
    NOT_AN_ANSWER,
    NOT_RULED_OUT_TEXT,
    NOTHING_LEFT_TEXT,
    READING_KINDS,
    READING_WAY_OUT_TEXT,
    REPORT,
    REPORT_NOT_YET_TEXT,
    REPORT_READY_TEXT,
    SIDE_QUESTION,
    STILL_SUSPECTED_TEXT,
    SWITCHED_TEXT,
    TWO_SYSTEMS_TEXT,
    UNCLEAR_MEANING,
    WHICH_SYSTEM_TEXT,
    WRONG_READING_TEXT,
    TurnWork,
)


def _procedure(state: ContextState, work: TurnWork, config: ConversationConfig) -> ContextState:
    """Pick the system being diagnosed; ask which one when it cannot be told."""
    diag = config.diagnostic
    assert diag is not None
    if state.primary_system is not None:
        return state
    found = detect_procedure(work.text, diag.procedures, work.language)
    other = named_other_system(work.text, diag, found, work.language)
    named = named_systems(work.text, diag, work.language)
    classified = _classified_by_model(work, diag)
    if classified is not None and len(named) < 2:
        # the model said which system the complaint is about (validated against the plan's systems)
        found, other = (classified, None) if isinstance(classified, ProcedureSpec) else (None, classified)
        work.trace.append(f"system classified by the model: {classified.id}")
    pending = state.pending_clarification
    if pending is not None and pending.kind == "systems" and (chosen := _system_chosen(work.text, diag, pending.missing)):
        # "fan first, then the ac" answering which to start with: the first one named
        found, other = (chosen, None) if isinstance(chosen, ProcedureSpec) else (None, chosen)
    elif len(named) >= 2:
        # two systems at once: one at a time, and the person says which first (never one silently dropped)
        lang = work.language
        labels = [_system_label(s, lang) for s in named]
        text = say(lang, TWO_SYSTEMS_TEXT, systems=", ".join(labels[:-1]) + say_in(lang, "and", " and ") + labels[-1])
        work.ask(text, "systems")
        work.reply_action = "ask_system"
        work.trace.append("several systems named: " + ", ".join(s.id for s in named))
        pending = PendingClarification(intent=None, missing=tuple(s.id for s in named), rounds=1, last_question=text,
                                       asked_turn=work.turn, kind="systems")
        return state.evolve(pending_clarification=pending, complaint=work.text.strip())
    if other is not None:
        # No procedure for the system named: say so plainly, never another system's checks.
        text = no_procedure_text(config, other.label, work.language)
        work.ask(text, "system")
        work.reply_action = "no_procedure"
        work.trace.append(f"no procedure for {other.id}")
        rounds = state.pending_clarification.rounds if state.pending_clarification else 0
        pending = PendingClarification(intent=None, missing=("system",), rounds=rounds, last_question=text,
                                       asked_turn=work.turn, kind="system")
        return state.evolve(pending_clarification=pending, complaint=None)
    found = found or (diag.procedures[0] if len(diag.procedures) == 1 else None)
    if found is None:
        question = system_question(config, work.language)
        rounds = (state.pending_clarification.rounds if state.pending_clarification else 0) + 1
        if rounds > config.max_clarify_rounds:
            work.decision, work.reply_action = ABORT, "abort"
            return state.evolve(pending_clarification=None)
        work.ask(question, "system")
        work.reply_action = "ask_system"
        pending = PendingClarification(
            intent=None,
            missing=("system",),
            rounds=rounds,
            last_question=question,
            asked_turn=work.turn,
            kind="system",
        )
        return state.evolve(pending_clarification=pending)
    kept = tuple(f for f in state.facts if f.system == found.id)  # back to a system: its facts count again
    hypotheses = tuple(assess(h, kept, work.language) for h in found.hypotheses)
    work.trace.append(f"procedure {found.id}")
    return state.evolve(
        primary_system=found.id,
        hypotheses=hypotheses,
        pending_clarification=None,
        mode=diagnostic_mode(config),
    )


def _classified_by_model(work: TurnWork, diag):  # noqa: ANN001, ANN202
    """The system a validated `answer(question_id="system")` command names, if any."""
    said = next((c.value for c in work.commands if c.kind == "answer" and c.question_id == "system"), None)
    return next((s for s in (*diag.procedures, *diag.other_systems) if s.id == said), None) if said else None


def _system_label(system, lang: str) -> str:  # noqa: ANN001
    label = localize(system.label, lang)
    if lang == "zh" or not isinstance(system, ProcedureSpec):
        return label
    return ("the " if lang == "en" else "") + label[0].lower() + label[1:]


def _label_words(system) -> set[str]:  # noqa: ANN001
    labels = system.label.values() if isinstance(system.label, Mapping) else [system.label]
    return {w for label in labels for w in re.findall(r"[^\W\d_]{3,}", label.lower()) if not re.match(r"[\u4e00-\u9fff]", w) and w not in _ARTICLES}


_ARTICLES = frozenset({"the", "and", "los", "las", "del", "una", "uno"})


def _system_chosen(text: str, diag, candidates: tuple[str, ...]):  # noqa: ANN001, ANN202
    """Which of the systems offered a reply picks: the first named, by name, pattern or a word of its label
    that the others' labels do not share ("fan first", "el aire primero")."""
    systems = [s for s in (*diag.procedures, *diag.other_systems) if s.id in candidates]
    words = {s.id: _label_words(s) for s in systems}
    lowered, best = text.lower(), None
    for s in systems:
        own = words[s.id] - set().union(*(w for i, w in words.items() if i != s.id))
        at = [m.start() for w in own if (m := re.search(rf"(?<!\w){re.escape(w)}", lowered))]
        hit = first_match(text, getattr(s, "name_patterns", s.patterns)) or first_match(text, s.patterns)
        if hit is not None:
            at.append(hit[2].start())
        if at and (best is None or min(at) < best[0]):
            best = (min(at), s)
    return best[1] if best else None


def system_question(config: ConversationConfig, language: str) -> str:
    """'Which system are we working on?', with the systems the plan can guide where it says {systems}."""
    diag = config.diagnostic
    assert diag is not None
    systems = ", ".join(localize(p.label, language) for p in diag.procedures)
    template = localize(diag.system_question, language) or "Which system are we working on? I can guide: {systems}."
    return template.replace("{systems}", systems)


def no_procedure_text(config: ConversationConfig, label, language: str) -> str:  # noqa: ANN001
    """'No guided procedure for {system}; I can guide {systems}' in the person's language."""
    diag = config.diagnostic
    assert diag is not None
    systems = ", ".join(localize(p.label, language) for p in diag.procedures)
    template = localize(diag.no_procedure, language) or (
        "I don't have a guided procedure for {system}. I can guide you through: {systems}. "
        "Say “talk to a person” if you'd like a member of staff."
    )
    return template.replace("{system}", localize(label, language)).replace("{systems}", systems)


# "not the AC", "it isn't the fridge", 不是空调, это не кондиционер, no es el aire: the system said to be wrong
_NEGATION_BEFORE = re.compile(
    r"(?:\bnot|n't|\bno|\bnothing\s+to\s+do\s+with|\bwrong|(?<!\w)не|\bno\s+es|\bni|不是|并非|不关|不是说)"
    r"\s*(?:(?:the|my|our|that|el|la|los|las|это|с)\s+)?(?:(?:roof|rooftop|propane|gas|lp)\s+)?$",
    re.IGNORECASE,
)
# "the slide is stuck too", 还有热水器, ещё и генератор, también la nevera: another fault, not a switch
_ALSO = re.compile(r"\b(?:also|too|as\s+well|another|besides)\b|还有|也|另外|тоже|также|ещ[её]\s+и|(?<!\w)а\s+ещ[её](?!\w)|кроме\s+того|tambi[eé]n|adem[aá]s",
                   re.IGNORECASE)
_WRONG_SYSTEM = re.compile(
    r"\b(?:wrong|different|another|other)\s+(?:system|unit|appliance)\b|\bnot\s+(?:that|this)\s+(?:system|one)\b"
    r"|换(?:个|一个)?系统|不是这个系统|другая\s+система|не\s+та\s+система|otro\s+sistema|sistema\s+equivocado",
    re.IGNORECASE,
)


def negates_system(text: str, system: ProcedureSpec) -> bool:
    """The message says the system being diagnosed is not the one ("not the AC, it's the fridge")."""
    patterns = [compile_pattern(p) for _, p in iter_patterns(system.name_patterns)]
    return any(_NEGATION_BEFORE.search(text[max(0, m.start() - 24):m.start()])
               for pattern in patterns for m in pattern.finditer(text))


def _switch_to(state: ContextState, work: TurnWork, config: ConversationConfig, target: ProcedureSpec) -> ContextState:
    """Diagnose another system: its own facts (kept from before, if any) re-derive its hypotheses; the
    facts of the system left stay with it, as do its completed checks."""
    facts = tuple(f for f in state.facts if f.system in (None, target.id))
    hypotheses = tuple(assess(h, facts, work.language) for h in target.hypotheses)
    work.notice = say(work.language, SWITCHED_TEXT, system=_system_label(target, work.language).removeprefix("the "))
    work.trace.append(f"switched procedure {state.primary_system} -> {target.id}")
    work.evidence_seen = None  # what was read was the other system's evidence
    own = {step.id for step in target.steps}  # its checks are asked afresh (the loop guard counts per visit)
    counts = FrozenDict({k: v for k, v in state.step_repeat_counts.items() if k not in own})
    complaints = dict(state.complaints)
    if state.primary_system and state.complaint:
        complaints.setdefault(state.primary_system, state.complaint)  # the system left keeps its own words
    complaint = complaints.get(target.id) or work.text.strip()  # "switch to the water heater" is no complaint of it
    complaints[target.id] = complaint
    state = state.evolve(primary_system=target.id, hypotheses=hypotheses, current_step_id=None, complaint=complaint,
                         complaints=FrozenDict(complaints),
                         step_repeat_counts=counts,
                         isolation_complete=False, isolation_finding=None, isolation_invalidated=False,
                         estimate=Estimate(), mode=diagnostic_mode(config))
    # back to a system whose cause its own facts confirm: isolated again (not a finding set aside by a replan)
    return _isolation(state, work, config, tuple(h.id for h in hypotheses
                                              if h.status == CONFIRMED and h.id not in state.previous_findings))


def _other_fault(state: ContextState, work: TurnWork, config: ConversationConfig) -> ContextState:
    """Mid-diagnosis, a message about another system: "not the AC, it's the fridge" switches (at any
    point, facts staying with their system); "not the AC" alone asks which system; another fault
    mentioned "as well" is noted while this one is finished; a system with no procedure is said
    plainly (the check in progress stays); another procedure named more strongly than this one's
    words is switched to while the cause is not isolated yet."""
    diag = config.diagnostic
    procedure = config.procedure(state.primary_system)
    if diag is None or procedure is None or work.meaning in (REPORT, ESTIMATE):
        return state
    if work.meaning == SIDE_QUESTION and not asks_to_switch(work.text, diag, procedure.id, work.language):
        return state  # a question about this system's parts; "different problem now: the water heater…?" is a switch
    negated, wrong = negates_system(work.text, procedure), _WRONG_SYSTEM.search(work.text)
    others = [s for s in named_systems(work.text, diag, work.language) if s.id != procedure.id] if negated or wrong else []
    if negated and not others and (said := detect_procedure(work.text, [p for p in diag.procedures if p.id != procedure.id], work.language)):
        others = [said]  # "不是热水器，是暖风不出热风": the other system told by its symptoms
    if negated or (wrong and not others):
        if others and isinstance(others[0], ProcedureSpec):
            return _switch_to(state, work, config, others[0])
        said = say(work.language, WHICH_SYSTEM_TEXT, system=_system_label(procedure, work.language).removeprefix("the "))
        dropped = state.evolve(primary_system=None, hypotheses=(), current_step_id=None, complaint=None,
                               isolation_complete=False, isolation_finding=None, estimate=Estimate(),
                               mode=diagnostic_mode(config))
        if others:  # a system with no procedure: said plainly
            work.notice = said + " " + no_procedure_text(config, others[0].label, work.language)
            work.reply_action = "no_procedure"
            work.ask(work.notice, "system")
        else:
            work.ask(said + " " + system_question(config, work.language), "system")
            work.reply_action = "ask_system"
        work.trace.append(f"not {procedure.id}: the system is asked again, its facts stay with it")
        return dropped.evolve(pending_clarification=PendingClarification(
            intent=None, missing=("system",), rounds=0, last_question=work.question or "", asked_turn=work.turn, kind="system"))
    seen = match_evidence(work.text, config.all_evidence(state.primary_system), work.language, work.language)
    work.evidence_seen = seen  # read once, found or not: the evidence stage takes it as it is
    others = [s for s in named_systems(work.text, diag, work.language) if s.id != procedure.id]
    if others and isinstance(others[0], ProcedureSpec) and asks_to_switch(work.text, diag, procedure.id, work.language):
        # "ok forget that, the roof a/c ...", "switch to the fridge"; "fuses are fine. now lets do the slide": what
        # this system's check read is kept, then the switch is made
        # what the sentence naming the other system says is that system's ("our water heater won't light either" is
        # no fridge flame)
        seen = [m for m in seen if not _said_of(work.text, m.raw, others[0], diag, work.language)]
        if seen:
            state, _ = add_facts(state, seen, rules=config.all_evidence(state.primary_system), turn=work.turn,
                                 step_id=state.current_step_id)
            work.trace.append(f"{', '.join(m.rule_id for m in seen)} kept for {procedure.id} before the switch")
            work.evidence_seen = None
        work.evidence_from = _where_named(work.text, others[0], diag, work.language)  # the other system's words only
        return _switch_to(state, work, config, others[0])
    also = bool(others) and isinstance(others[0], ProcedureSpec) and bool(_ALSO.search(work.text))
    if also and seen:
        # "the roof vent fan also doesn't work now": another fault's words, said in a sentence that names that system
        # and not this one, are no reading of this one ("the stove lights too" still answers the fridge's gas check)
        seen = [m for m in seen if not _said_of(work.text, m.raw, others[0], diag, work.language)
                or _said_of(work.text, m.raw, procedure, diag, work.language)]
        work.evidence_seen = seen
    if seen:
        return state  # evidence of this system: an answer, not another fault
    if not others:
        return state  # no other system named: nothing below applies
    if also:
        work.notice = say(work.language, ALSO_TEXT, other=_system_label(others[0], work.language).removeprefix("the "),
                          system=_system_label(procedure, work.language).removeprefix("the "))
        work.trace.append(f"{others[0].id} noted; {procedure.id} first")
        work.reply_action = "no_procedure"  # answered like a fault with no procedure: the check in progress stays
        if others[0].id not in state.complaints:  # its complaint, for when it is diagnosed
            state = state.evolve(complaints=with_key(state.complaints, others[0].id, work.text.strip()))
        return state
    other = named_other_system(work.text, diag, procedure, work.language)
    if other is not None:
        work.notice = no_procedure_text(config, other.label, work.language)
        work.reply_action = "no_procedure"
        work.trace.append(f"no procedure for {other.id}; the check in progress stays")
        return state
    found = detect_procedure(work.text, [p for p in diag.procedures if p.id != procedure.id], work.language)
    if found is None:
        return state
    if state.isolation_complete or count_matches(work.text, found.patterns) <= count_matches(work.text, procedure.patterns):
        return state
    if found.id not in {s.id for s in others}:
        return state  # a part word another system shares ("the pump" of a generator) is no switch: only its name is
    return _switch_to(state, work, config, found)


_SENTENCE = re.compile(r"[^\s.!?。！？][^.!?。！？]*[.!?。！？]*")  # from its first word to its end mark


def _naming(text: str, system: ProcedureSpec, diag: DiagnosticSpec, language: str) -> Iterable[tuple[re.Match[str], bool]]:
    """Each sentence of the message, and whether it names this system."""
    return ((m, any(s.id == system.id for s in named_systems(m.group(0), diag, language))) for m in _SENTENCE.finditer(text))


def _where_named(text: str, system: ProcedureSpec, diag: DiagnosticSpec, language: str) -> int:
    """Where the sentence that names a system begins (0 when none does alone)."""
    return next((m.start() for m, names in _naming(text, system, diag, language) if names), 0)


def _said_of(text: str, words: str, system: ProcedureSpec, diag: DiagnosticSpec, language: str) -> bool:
    """Whether an evidence reading's words lie in a sentence that names this system."""
    return next((names for m, names in _naming(text, system, diag, language) if words and words in m.group(0)), False)


def _start_over(state: ContextState, work: TurnWork, config: ConversationConfig) -> ContextState:
    """Cancel / start over before the cause is isolated: the system is asked again (facts stay)."""
    procedure = config.procedure(state.primary_system)
    if procedure is None or state.isolation_complete or config.diagnostic is None:
        return state
    ids = {s.id for s in procedure.steps}
    work.ask(system_question(config, work.language), "system")
    work.reply_action = "ask_system"
    work.trace.append(f"diagnosis of {procedure.id} dropped")
    return state.evolve(primary_system=None, hypotheses=(), current_step_id=None, complaint=None,
                        completed_steps=tuple(s for s in state.completed_steps if s not in ids),
                        skipped_steps=tuple(s for s in state.skipped_steps if s not in ids))


_YES = {
    "en": r"^\W*(?:yes|yep|yeah|yup|ya|sure|it\s+(?:does|did|is|runs|ran|spins|works))\b",
    "zh": r"^\W*(?:是|对|能|可以|会|有|转了|能转|动了)",
    "ru": r"^\W*(?:да|ага|угу)(?!\w)",
    "es": r"^\W*(?:s[ií]|claro)\b",
}
_NO = {
    "en": r"^\W*(?:no|nope|nah|not\s+at\s+all|nothing|negative|it\s+(?:doesn'?t|does\s+not|didn'?t|won'?t|isn'?t))\b",
    "zh": r"^\W*(?:不|没|否)",
    "ru": r"^\W*(?:нет|неа|не\s+(?:работает|крутится|запускается))(?!\w)",
    "es": r"^\W*(?:no|nada)\b",
}


def _yes_no_evidence(state: ContextState, work: TurnWork, config: ConversationConfig, text: str | None = None) -> str | None:
    """The evidence a bare yes / no records for the check in progress, when the check says
    (`text`: the words to read it in, the whole message by default)."""
    procedure = config.procedure(state.primary_system)
    step = procedure.step(state.current_step_id) if procedure else None
    if step is None or work.meaning not in (ANSWER, CONFIRM, DISPUTE_MEANING, EVIDENCE):
        return None
    text = work.text if text is None else text
    if state.isolation_complete and _DISPUTES.search(text):
        return None  # "不可能是减压阀", "no way, it's not a fuel problem": about the conclusion, not this check
    language = work.language if work.language in _YES else "en"
    if step.no and re.search(_NO[language], text.lower()):
        return step.no
    if step.yes and re.search(_YES[language], text.lower()):
        return step.yes
    if language == "zh" and step.yes and _echoes_predicate(text, localize(step.question, "zh")):
        return step.yes  # "水泵转吗？" — "转的，出水很顺", "转啊": Chinese says yes with the question's own verb
    return None


_ZH_PREDICATE = re.compile(r"([\u4e00-\u9fff]{1,2})了?吗[？?]?\s*$")


def _echoes_predicate(text: str, question: str) -> bool:
    """Whether a Chinese answer opens with the verb its yes/no question ends on ("转吗？" — "转的", "在转"), not
    negated ("不转", "没转")."""
    asked = _ZH_PREDICATE.search(question.strip())
    if asked is None:
        return False
    verb = asked.group(1)[-1]
    said = text.strip().lstrip("嗯啊哦，, ")
    return bool(re.match(rf"(?:在|会|能|还|也|是)?{re.escape(verb)}", said)) and not re.match(r"[不没别]", said)


def _leading_yes_no(state: ContextState, work: TurnWork, config: ConversationConfig, matches: list[EvidenceMatch]) -> str | None:
    """"yes the burner lights but goes out": a yes / no opening the message answers the yes/no check in
    progress, beside the evidence the rest of it volunteers (read in the first clause only, and only
    when that clause says nothing else the plan knows)."""
    procedure = config.procedure(state.primary_system)
    step = procedure.step(state.current_step_id) if procedure else None
    if (step is None or step.expects != "yes_no" or step.id in state.completed_steps or work.deferred
            or any(m.rule_id in (*step.answered_by, step.yes, step.no) for m in matches)):
        return None
    first = clauses(work.text)[0]
    if match_evidence(first, config.all_evidence(state.primary_system), work.language, work.language):
        return None
    return _yes_no_evidence(state, work, config, text=first)


# a dispute of the conclusion, in the words a technician uses (the router's DISPUTE covers the rest)
_DISPUTES = re.compile(
    r"\b(?:can'?t|cannot|couldn'?t)\s+be\b|\bno\s+way\b|\bthat'?s\s+not\s+it\b|\bnot\s+(?:a|the)\s+\w+\s+(?:problem|issue|fault)\b"
    r"|\bi\s+(?:just\s+)?(?:replaced|changed|swapped)\b|不可能|不是[^，。,]{0,8}(?:的)?(?:问题|原因)|不对吧|刚换|新换"
    r"|не\s+может\s+быть|не\s+в\s+\w+\s+дело|(?<!\w)не\s+то(?!\w)|только\s+что\s+(?:поменял|заменил)"
    r"|no\s+puede\s+ser|imposible|no\s+es\s+(?:eso|el\s+problema)|acabo\s+de\s+cambiar",
    re.IGNORECASE,
)


def _asks_back(text: str) -> bool:
    """A question back, even typed without its question mark or with a typo ("wher do i find the regulater")."""
    stripped = text.strip()
    return stripped.endswith(("?", "？")) or stripped.startswith("¿") or bool(_QUESTION_START.search(stripped))


_QUESTION_START = re.compile(
    r"^(?:so\s+|and\s+|but\s+|ok(?:ay)?,?\s+)?(?:wh?ere'?s?|wher|whre|were\s+(?:is|are|do)|wh?at'?s?|waht|wat\s+(?:is|does)|how|hwo|hw\s+do|why|"
    r"which|can\s+(?:i|you|u)\b|could\s+(?:i|you|u)|should\s+i|do\s+(?:i|you|u)\b|does\s+(?:it|that|the)|is\s+(?:it|there|that)\b|"
    r"are\s+(?:they|there)\b)\b"
    r"|^(?:а\s+)?(?:где|как|что\s+(?:такое|это|делать)|зачем|почему|какой|какая|какое)(?![\w-])"
    r"|^(?:y\s+)?(?:d[oó]nde|c[oó]mo\s+(?:se|puedo|hago|compruebo|reviso)|qu[eé]\s+(?:es|hago|significa)|por\s+qu[eé])\b"
    r"|怎么|哪里|哪儿|在哪|什么是|是什么|为什么|如何|吗\s*$|呢\s*$",
    re.IGNORECASE,
)
def _reading_for_step(
    state: ContextState, work: TurnWork, config: ConversationConfig, matches: list[EvidenceMatch]
) -> list[EvidenceMatch]:
    """A check that expects a measurement is answered by its own evidence or a reading of its kind
    ("12,4 V", "no power at all" = 0 V, "about 118" to a voltage question), read as the plan's
    evidence when a rule of the check knows that value; anything else ("2 amps", "yes", "the ac i
    guess") leaves it open (a non-answer never completes the step)."""
    procedure = config.procedure(state.primary_system)
    step = procedure.step(state.current_step_id) if procedure else None
    if (step is not None and step.id not in state.completed_steps and not matches and not work.deferred
            and acknowledges_only(work.text)):
        work.step_unanswered = True
        work.reading_needed, work.reading_got = ("answer" if step.expects == "any" else step.expects), None
        work.trace.append(f"an acknowledgement, not an answer: {step.id} stays open")
        return matches
    if state.isolation_complete and work.meaning in (DISPUTE_MEANING, EVIDENCE) and not read_measurement(work.text):
        return matches  # "that can't be it": about the conclusion, not the check in progress (a replan)
    if (step is None or step.expects == "any" or step.id in state.completed_steps or work.deferred
            or work.meaning not in (ANSWER, CONFIRM, EVIDENCE, DISPUTE_MEANING) or _asks_back(work.text)
            or any(m.rule_id in (*step.answered_by, step.yes, step.no) for m in matches)):
        return matches
    if step.expects == "yes_no":  # only a yes, a no or the check's own evidence answers it
        work.step_unanswered = True
        if not matches:
            work.reading_needed, work.reading_got = step.expects, None
        return matches
    if (found := _step_reading(state, work, config, step)) is not None:
        return matches + [found]
    reading = read_measurement(work.text, step.expects)
    if reading is not None and reading.kind == step.expects:
        return matches  # a reading of its kind no rule of the check knows: it stays as said
    if reading is not None and not matches and _says_what_was_measured(work.text):
        # a reading another check needs, said with what it is of ("cap reads 31 µF, label says 45" while the supply
        # voltage is asked): that check's evidence, noted; this check stays open. A bare "about 3 amps" is no answer.
        for other in procedure.steps if procedure else ():
            if (other.expects == reading.kind and other.id not in state.completed_steps
                    and (found := _step_reading(state, work, config, other)) is not None):
                work.trace.append(f"a reading for {other.id} given while {step.id} is asked")
                return [found]
    work.step_unanswered = True
    if not matches:
        work.reading_needed, work.reading_got = step.expects, reading
        work.trace.append(f"no {step.expects} reading for {step.id}: the check stays open")
    return matches


def _says_what_was_measured(text: str) -> bool:
    """Whether a message says more than a value: a word of what was measured ("cap", "converter", "电容"), beyond
    numbers, units, fillers and approximators ("it's about 3 amps" says nothing more)."""
    words = re.findall(r"[^\W\d_]{3,}", re.sub(r"\d[\d.,]*\s*\S{0,3}", " ", text))
    cjk = re.findall(r"[\u3400-\u9fff]", text)
    plain = [w for w in words if not only_fillers(w) and not rough(w) and w.casefold() not in _READING_WORDS]
    return bool(plain) or len(cjk) >= 2


# Words that only carry a value ("it reads", "shows", "got"): what was measured is said by another word
_READING_WORDS = frozenset({"it's", "its", "reads", "read", "reading", "shows", "got", "get", "getting", "measure",
                            "measured", "about", "around", "amps", "volts", "ohms", "the", "and", "was", "is", "i'm"})


def _against_rating(work: TurnWork, rules: list[EvidenceRule], step: StepSpec) -> EvidenceMatch | None:
    """A measurement said with its rating ("31 µF, rated 45", "44 мкф при номинале 45") judged by the step's
    rating: below its tolerance or within it; None when the message gives no such pair."""
    if not step.rating or (pair := read_against_rating(work.text, step.expects)) is None or pair[1] <= 0:
        return None
    measured, rated = pair
    below = measured < rated * (1 - float(step.rating.get("tolerance", 0.1)))
    rule_id = step.rating["below"] if below else step.rating["within"]
    rule = next((r for r in rules if r.id == rule_id), None)
    if rule is None:
        return None
    work.trace.append(f"reading {measured:g} against rating {rated:g} for {step.id}: {rule_id}")
    unit = kind_unit(step.expects)
    value = f"{localize(rule.label, work.language)}: {measured:g} / {rated:g}" + (f" {unit}" if unit else "")
    return EvidenceMatch(rule.id, rule.type, value, work.text.strip()[:80])


def _judged_by_rating(state: ContextState, work: TurnWork, config: ConversationConfig,
                      matches: list[EvidenceMatch]) -> list[EvidenceMatch]:
    """A reading said with its rating is judged by the rating whichever check is asked: "44 мкф при номинале 45"
    is within it, never out of spec because the words name a rating."""
    procedure = config.procedure(state.primary_system)
    rules = config.all_evidence(state.primary_system)
    for step in procedure.steps if procedure is not None else ():
        judged = {step.rating["below"], step.rating["within"]} if step.rating else set()
        if judged & {m.rule_id for m in matches} and (rated := _against_rating(work, rules, step)) is not None:
            return [rated, *(m for m in matches if m.rule_id not in judged)]
    return matches


def _step_reading(state: ContextState, work: TurnWork, config: ConversationConfig, step: StepSpec,
                  text: str | None = None) -> EvidenceMatch | None:
    """The evidence a measurement in the message (or in `text`) gives a check that expects one: against its rating
    ("31 µF, rated 45"), in its bands ("12,4 V"), or its own evidence for that value; None when it gives none."""
    rules = config.all_evidence(state.primary_system)
    if text is None and (rated := _against_rating(work, rules, step)) is not None:
        return rated
    reading = read_measurement(work.text if text is None else text, step.expects)
    if reading is not None and reading.kind == step.expects and (band := _band(step, reading.canonical(work.language))):
        rule = next((r for r in rules if r.id == band), None)
        if rule is not None:
            work.trace.append(f"reading {reading.text} for {step.id}: {band}")
            return EvidenceMatch(rule.id, rule.type, f"{localize(rule.label, work.language)} ({reading.text})",
                                 work.text.strip()[:80])
    if reading is not None and reading.kind == step.expects:
        own = [r for r in rules if r.id in step.answered_by]
        found = match_evidence(reading.text, own, "en", work.language)
        work.trace.append(f"reading {reading.text} for {step.id}")
        return replace(found[0], raw=work.text.strip()[:80]) if found else None
    return None


def _own_reading(state: ContextState, work: TurnWork, config: ConversationConfig, matches: list[EvidenceMatch]) -> list[EvidenceMatch]:
    """A bare reading ("0 volts") answers the check in progress: when it matches the evidence of several
    checks (the board's 12 V and the outlet's 120 V), only the current check's own evidence is recorded."""
    procedure = config.procedure(state.primary_system)
    step = procedure.step(state.current_step_id) if procedure else None
    if step is None or step.expects in ("any", "yes_no") or len(matches) < 2:
        return matches
    reading = read_measurement(work.text, step.expects)
    if reading is None or reading.kind != step.expects or len(re.findall(r"[^\W\d_]{2,}", work.text)) > 4:
        return matches
    own = [m for m in matches if m.rule_id in step.answered_by]
    return own or matches


def _corrected_reading(state: ContextState, work: TurnWork, config: ConversationConfig,
                       matches: list[EvidenceMatch]) -> list[EvidenceMatch]:
    """"that 0 was wrong, had the probe on the wrong wire. it's 12.3 V", "mide 0 voltios … espera, tenía el tester
    en ohmios: 12,6 V": a reading said with a correction is the one said last, for the check it corrects (the one in
    progress when it reads that kind, else the one last answered with it); the evidence it gives supersedes the
    earlier reading's (the plan's `excludes`), and what the earlier reading isolated is replanned."""
    procedure = config.procedure(state.primary_system)
    if procedure is None or work.model_read or not says_it_corrects(work.text):
        return matches  # (with a model configured, its reading is the reading)
    reading = last_measurement(work.text)
    if reading is None:
        return matches
    step = _step_corrected(state, procedure, reading.kind)
    if step is None:
        return matches
    found = _step_reading(state, work, config, step, text=reading.text)
    if found is None:
        return matches
    work.trace.append(f"a corrected reading for {step.id}: {found.rule_id}")
    own = {*step.answered_by, step.yes, step.no, *(band["evidence"] for band in step.bands)}
    return [replace(found, raw=work.text.strip()[:80]), *(m for m in matches if m.rule_id not in own)]


def _said_otherwise(state: ContextState, work: TurnWork, config: ConversationConfig) -> list[EvidenceMatch]:
    """"哦不对，说错了，是不转" after "直接接电瓶能转", "sorry, my mistake: it does spin" after "doesn't spin on direct
    power": a correction that names nothing the plan reads turns the observation said last into its opposite (the
    plan's `negated` link, read both ways); the new finding supersedes it. Nothing when the last one has no opposite."""
    if work.model_read or not says_it_corrects(work.text) or _asks_back(work.text):
        return []  # (with a model configured, its reading is the reading: the rules add no fact it did not give)
    said = [f for f in state.facts if f.current and f.source == "user" and f.key != "note" and f.system == state.primary_system]
    if not said:
        return []
    last = said[-1]  # facts are kept in the order they were said
    rules = {r.id: r for r in config.all_evidence(state.primary_system)}
    rule = rules.get(last.key)
    if rule is None:
        return []
    said_now = after_correction(work.text)
    negative = may_negate(said_now)
    opposite = (rules.get(rule.negated or "") if negative
                else next((r for r in rules.values() if r.negated == rule.id), None))
    if opposite is None or not _same_predicate(said_now, (opposite,), work.language):
        return []  # "不对，我还没查保险" corrects nothing the last observation said
    work.trace.append(f"a correction of {last.key}: {opposite.id}")
    return [EvidenceMatch(opposite.id, opposite.type, localize(opposite.label, work.language), work.text.strip()[:80])]


def _same_predicate(words: str, rules: Iterable[EvidenceRule], language: str) -> bool:
    """Whether a correction's words say what one of these rules reads ("是不转" and `不转`, "it does spin" and
    `spins`): a word of four letters' stem, or two Chinese characters, in common with their patterns."""
    read = " ".join(pattern_as_words(p) for rule in rules for p in (*rule.patterns.get(language, ()),
                                                                       *rule.patterns.get("en", ())))
    cjk = re.findall(r"[\u3400-\u9fff]+", words)
    if any(chunk[i:i + 2] in read for chunk in cjk for i in range(len(chunk) - 1)):
        return True
    stems = {w.casefold()[:4] for w in re.findall(r"[^\W\d_]{4,}", read)}
    return any(w.casefold()[:4] in stems for w in re.findall(r"[^\W\d_]{3,}", words) if not only_fillers(w))


def _step_corrected(state: ContextState, procedure: ProcedureSpec, kind: str) -> StepSpec | None:
    """The check a corrected reading of this kind is for: the one asked now when it expects that kind, else one left
    open unanswered (the last), else the one whose answer of that kind was recorded last."""
    current = procedure.step(state.current_step_id)
    if current is not None and current.expects == kind and current.id not in state.completed_steps:
        return current
    said = {f.key: f.turn for f in state.facts if f.current}

    def answered_at(step: StepSpec) -> int:
        return max((said.get(rule, -1) for rule in (*step.answered_by, *(b["evidence"] for b in step.bands))), default=-1)

    left_open = [procedure.step(i) for i in state.skipped_steps]
    left_open = [s for s in left_open if s is not None and s.expects == kind and answered_at(s) < 0]
    if left_open:
        return left_open[-1]
    answered = [(answered_at(s), s) for s in procedure.steps if s.expects == kind and s.id in state.completed_steps]
    answered = [(turn, s) for turn, s in answered if turn >= 0]
    return max(answered, key=lambda pair: pair[0])[1] if answered else None


def _band(step, value: float) -> str | None:  # noqa: ANN001
    """The evidence of the step's band the value falls in (min inclusive, max exclusive)."""
    for band in step.bands:
        low, high = band.get("min"), band.get("max")
        if (low is None or value >= low) and (high is None or value < high):
            return band["evidence"]
    return None


def _reading_notice(work: TurnWork, asked_before: int, guard_repeats: int) -> str:
    """Say plainly what reading the check needs (and, from the third ask, the ways out)."""
    lang = work.language
    expected, what = (say(lang, text) for text in READING_KINDS.get(work.reading_needed or "", ("", "")))
    got = work.reading_got
    if work.reading_needed in ("answer", "yes_no"):
        text = say(lang, NEED_ANSWER_TEXT, what=what)
    elif got is not None and got.kind in READING_KINDS:
        text = say(lang, WRONG_READING_TEXT, value=got.text, got=say(lang, READING_KINDS[got.kind][0]), expected=expected, what=what)
    else:
        text = say(lang, NEED_READING_TEXT, what=what)
    if asked_before >= guard_repeats:  # never the same question a third time without a way out
        text += " " + say(lang, READING_WAY_OUT_TEXT)
    return text


# A message that only asks (it ends with a question mark): no observation to note
_ASKED = re.compile(r"[?？]\s*$")


def _unsure_aside(work: TurnWork, matches: list[EvidenceMatch]) -> list[EvidenceMatch]:
    """An observation the person is not sure of ("I think it clicks", "可能是保险丝烧了") is never recorded as a
    finding: it is said back and the check stays open until they have looked (contract 10)."""
    unsure = [m for m in matches if m.hedge]
    if not unsure:
        return matches
    for match in unsure:
        work.unsure.append(Command("report_evidence", text=match.rule_id, certainty=GUESS, words=match.raw))
    work.deferred = True
    found = say_in(work.language, "list", ", ").join(f"“{m.value}”" for m in unsure)
    note = say(work.language, "You weren't sure of {found}, so I haven't noted it; tell me once you've checked.", found=found)
    work.add_notice(note)
    return [m for m in matches if not m.hedge]


def diagnostic_mode(config: ConversationConfig) -> str:
    return "diagnostic" if "diagnostic" in config.modes.enabled else config.modes.initial


def _evidence(state: ContextState, work: TurnWork, config: ConversationConfig) -> ContextState:
    """Facts from the message, hypotheses re-derived, replan if isolation is contradicted."""
    procedure = config.procedure(state.primary_system)
    rules = config.all_evidence(state.primary_system)
    before = state
    if state.isolation_complete and work.meaning in (ANSWER, CONFIRM, EVIDENCE) and _DISPUTES.search(work.text):
        work.meaning = DISPUTE_MEANING  # "no way, it's not a fuel problem": the conclusion is disputed
    by_id = {rule.id: rule for rule in rules}
    reports = [c.text for c in work.commands if c.kind == "report_evidence" and c.text]
    # a generator may name the plan's evidence by its id ("fridge_no_spark"), as it names slots; else it reports words
    ids = [[t.strip() for t in text.split(",")] for text in reports]
    named = [by_id[i] for listed in ids if all(i in by_id for i in listed) for i in listed]
    reported = " ".join(text for text, listed in zip(reports, ids, strict=True) if not all(i in by_id for i in listed)
                        and not 0 <= work.text.find(text) < work.evidence_from)  # words about the system left behind
    said = work.text[work.evidence_from:]
    matches = (list(work.evidence_seen) if work.evidence_seen is not None and not reported
               else match_evidence(f"{said}\n{reported}" if reported else said, rules, work.language, work.language))
    if named:  # in the order the generator gave them, with the value the words gave when they read it too
        read = {m.rule_id: m for m in matches}
        matches = [read.get(r.id) or EvidenceMatch(r.id, r.type, localize(r.label, work.language), work.text.strip()[:80])
                   for r in named] + [m for m in matches if m.rule_id not in {r.id for r in named}]
    step = procedure.step(state.current_step_id) if procedure is not None else None
    if not matches and not named and step is not None and step.expects in ("any", "yes_no"):
        # "it starts and runs" to "does the compressor start?": the answer leaves out what it is about (a check
        # that expects a reading is answered by the reading, not by "it's fine")
        matches = match_elided(f"{work.text}\n{reported}" if reported else work.text,
                               [r for r in rules if r.id in step.answered_by], work.language, work.language)
        work.trace.extend(f"{m.rule_id} said of {step.id}'s subject" for m in matches)
    # a bare yes / no, or one opening a message that volunteers more, answers the check in progress
    said = (_yes_no_evidence(state, work, config) if not matches and not work.deferred
            else _leading_yes_no(state, work, config, matches) if matches else None)
    if said:
        rule = next(r for r in rules if r.id == said)
        matches = [EvidenceMatch(rule.id, rule.type, localize(rule.label, work.language), work.text.strip()[:80]), *matches]
    matches = _unsure_aside(work, matches)
    if matches:
        work.deferred = False  # "not sure, but it reads 0 V": the reading counts
    matches = _corrected_reading(state, work, config, _own_reading(state, work, config, matches))
    matches = matches or _said_otherwise(state, work, config)
    matches = _reading_for_step(state, work, config, _judged_by_rating(state, work, config, matches))
    state, update = add_facts(
        state, matches, rules=rules, turn=work.turn, step_id=state.current_step_id
    )
    added = list(update.added)
    noteworthy = work.meaning in (EVIDENCE, DISPUTE_MEANING) or (
        work.meaning == ANSWER and state.current_step_id
    )
    asks = bool(_ASKED.search(work.text))  # "how long would the repair take?" asks; it observes nothing
    if not added and noteworthy and has_content(work.text) and not work.deferred and not work.step_unanswered and not asks:
        state, note = add_note(state, work.text, turn=work.turn, step_id=state.current_step_id)
        added.append(note)
    elif added and noteworthy and not work.model_read:
        # "pump runs but it only dribbles": what no rule read is kept as said and said so, never dropped
        for part in unread_parts(work.text, [m.raw for m in matches]):
            state, note = add_note(state, part, turn=work.turn, step_id=state.current_step_id)
            added.append(note)
            work.unread.append(part)
        if work.unread:
            words = say_in(work.language, "list", ", ").join(f"“{part}”" for part in work.unread)
            work.add_notice(say(work.language, "I've noted {words} in your own words: I couldn't match that to a check.",
                                words=words))
    state, changes = reassess_hypotheses(
        state, procedure.hypotheses if procedure else (), work.language
    )
    work.facts_added = tuple(added)
    work.facts_volunteered = _volunteered(before, procedure, update.added, state)
    work.facts_superseded = update.superseded
    work.contradictions_added = update.contradictions
    work.hypotheses_eliminated = changes.eliminated
    work.hypotheses_confirmed = changes.confirmed
    reason = replan_reason(
        before,
        state,
        text=work.text,
        intent=DISPUTE if work.meaning == DISPUTE_MEANING else work.routed.intent,
        new_fact_ids=update.added,
        specs=procedure.hypotheses if procedure else (),
        triggers=config.diagnostic.replan_triggers if config.diagnostic else {},
        language=work.language,
    )
    if reason and added:
        state = apply_replan(state, reason=reason, evidence_fact_id=added[0], turn=work.turn)
        work.replan = True
        work.replan_reason = reason
        work.trace.append(f"replan: {reason}")
    return _isolation(state, work, config, changes.confirmed)


def _volunteered(before: ContextState, procedure: ProcedureSpec | None, added: Iterable[str], state: ContextState) -> tuple[str, ...]:
    """The facts a message added that answer no check it was asked ("wait, I do hear clicking now" while the gas
    pressure is asked): said back, so the person knows they were heard. None before a check was asked."""
    asked = procedure.step(before.current_step_id) if procedure is not None and before.current_step_id else None
    if asked is None:
        return ()
    answers, added = {*asked.answered_by, asked.yes, asked.no}, set(added)
    return tuple(f.id for f in state.facts if f.id in added and f.key not in answers and f.key != "note")


def _isolation(
    state: ContextState, work: TurnWork, config: ConversationConfig, newly_confirmed: tuple[str, ...]
) -> ContextState:
    """Complete isolation on a newly confirmed hypothesis and draft the estimate (non-blocking)."""
    procedure = config.procedure(state.primary_system)
    if state.isolation_complete or procedure is None:
        return state
    candidates = [h for h in state.hypotheses if h.id in newly_confirmed]
    if not candidates and not remaining_steps(state, procedure, config.loop_guard):
        # Nothing left to ask: settle on what the evidence already confirms.
        candidates = [h for h in state.hypotheses if h.status == CONFIRMED]
    if not candidates:
        return state
    state = complete_isolation(state, candidates[0], turn=work.turn)
    work.isolation_completed = True
    work.trace.append(f"isolation complete: {candidates[0].id}")
    if config.estimate_enabled and state.estimate.status == EST_NONE:
        state = draft_estimate(state, procedure.hypotheses, turn=work.turn, locale=work.language)
        work.estimate_drafted = True
        work.estimate_changed = True
    return state


def _complete_steps(state: ContextState, work: TurnWork, config: ConversationConfig) -> ContextState:
    """Steps answered this turn: by evidence anywhere in the procedure, or the current one by a real answer."""
    procedure = config.procedure(state.primary_system)
    if procedure is None:
        return state
    new_keys = [f.key for f in state.facts if f.id in work.facts_added]
    done = list(steps_answered_by(procedure, new_keys))
    current = state.current_step_id
    # A plain answer completes the current step, unless its evidence answered other steps instead
    # (the person skipped ahead: the skipped check stays open). Volunteered evidence only
    # completes the steps it answers.
    # a question back ("is that the big one?") answers nothing, even when no side topic fits
    answering = work.meaning in (ANSWER, CONFIRM) and not done and not work.deferred and not _asks_back(work.text)
    answering = answering and not work.step_unanswered
    if current and answering and has_content(work.text) and procedure.step(current):
        done.append(current)
    done = [s for s in dict.fromkeys(done) if s not in state.completed_steps]
    if done:
        work.completed_steps = tuple(done)
    return state.evolve(completed_steps=state.completed_steps + tuple(done))


def _estimate_and_report(state: ContextState, work: TurnWork, config: ConversationConfig) -> ContextState:
    """Confirm or skip the estimate when asked; enter the final report when requested."""
    if work.meaning == ESTIMATE:
        request = estimate_request(work.text, work.language)
        state = (
            confirm_estimate(state, work.text, turn=work.turn, language=work.language)
            if request == "confirm"
            else skip_estimate(state, turn=work.turn)
        )
        work.estimate_changed = True
        work.reply_action = "estimate_" + ("confirmed" if request == "confirm" else "skipped")
        if "authorization" in config.modes.enabled:
            state = state.evolve(mode="authorization")
    if state.estimate.lines and _HOW_LONG.search(work.text) and work.meaning not in (REPORT, ESTIMATE):
        # "how long would the repair take?": the labor estimate answers it
        hours = state.estimate.confirmed_hours or sum(line.hours for line in state.estimate.lines)
        lines = "; ".join(f"{line.label} {line.hours:g} h" for line in state.estimate.lines)
        work.notice = say(work.language, HOW_LONG_TEXT, hours=f"{hours:g}", lines=lines)
        work.step_unanswered = True
    asked_too = work.meaning == ESTIMATE and asks_for_report(work.text, config.diagnostic, work.language)
    if work.meaning == REPORT or asked_too:  # "confirm the estimate at 1 h and write the report": both are done
        # Never a dead end: the report is written whenever asked; before isolation it says what is unknown.
        confirmed = asked_too and work.reply_action == "estimate_confirmed"
        work.reply_action = "final_report"
        work.notice = say(work.language, REPORT_READY_TEXT if state.isolation_complete else REPORT_NOT_YET_TEXT)
        if confirmed:  # the estimate confirmed in the same words is said too
            hours = state.estimate.confirmed_hours or state.estimate.total_hours
            work.notice = say(work.language, ESTIMATE_CONFIRMED_TEXT, hours=f"{hours:g}") + " " + work.notice
        if not state.isolation_complete:
            work.report_blockers = ("isolation_incomplete",)
        if "final_report" in config.modes.enabled:
            state = state.evolve(mode="final_report")
    return state


_HOW_LONG = re.compile(
    r"\bhow\s+(?:long|many\s+hours)\b|\blabou?r\s+(?:time|hours|estimate)\b|多久|多长时间|几个小时|工时"
    r"|сколько\s+(?:времени|часов)|cu[aá]nto\s+(?:tiempo|tardar|horas)",
    re.IGNORECASE,
)
HOW_LONG_TEXT = marked(
    "The labor estimate so far is {hours} h ({lines}); it doesn't hold anything up, and you can confirm or skip it when you like.")


def _next_step(state: ContextState, work: TurnWork, config: ConversationConfig) -> ContextState:
    """Choose the check to ask next under the loop guard (fallback at most once in a row)."""
    procedure = config.procedure(state.primary_system)
    guard = config.loop_guard
    if procedure is None:
        return state
    current = procedure.step(state.current_step_id)
    violations: list[str] = []
    left_open = False
    if work.isolation_completed:
        # "0 volts at the pump" or "drops to 8.9 volts while cranking" isolates the cause: the results are presented,
        # never another check after "Cause isolated" (more checks are the person's to ask for)
        work.ready_for_report = True
        if work.reply_action == "acknowledge":
            work.reply_action = "present_results"
        work.trace.append("cause isolated: no further check is asked now")
        return state.evolve(current_step_id=None)
    work.non_answer = (current is not None and not work.facts_added and not work.replan
                       and (work.deferred or bool(work.reading_needed) or work.meaning == UNCLEAR_MEANING))
    if (current is not None and not work.replan and current.id not in state.completed_steps
            and current.id not in state.skipped_steps and asked_enough(state, current.id, guard)
            and (work.non_answer or work.meaning in (ANSWER, EVIDENCE))):
        # put twice in a row, whatever came before it (a non-answer, facts that leave it open, the same fact said
        # again), and still no answer: never a third time, on to the next
        state = state.evolve(skipped_steps=state.skipped_steps + (current.id,))
        violations.append(f"step_repeat_limit:{current.id}")
        said = _reading_notice(work, 0, guard.max_step_repeats) if work.reading_needed and work.reading_got is not None else ""
        work.notice = (said + " " if said else "") + say(work.language, LEFT_OPEN_TEXT)
        work.reading_needed, left_open = None, True
        work.trace.append(f"{current.id} asked {guard.max_step_repeats} times in a row unanswered: left open, on to the next check")
    elif (current is not None and not work.facts_added and current.id not in state.completed_steps
            and current.id not in state.skipped_steps and (work.meaning != ESTIMATE or work.reply_action == "estimate_confirmed")
            and asks_to_skip_check(work.text, work.language)):
        # "can we skip that one?", "sáltate esa comprobación", "没有压力表，跳过": left open at once, never asked again now
        # ("温度就不用测了，跳过。工时改成1小时": the hours are set too, and said)
        state = state.evolve(skipped_steps=state.skipped_steps + (current.id,))
        work.notice = say(work.language, LEFT_OPEN_TEXT)  # the hours set beside it are said by the reply
        work.reading_needed = None
        work.trace.append(f"{current.id} skipped as asked: on to the next check")
    elif work.deferred and current is not None and not work.facts_added and not step_available(state, current, guard):
        # "not sure" to a check already asked as often as the guard allows: go on without it
        if current.id not in state.completed_steps and current.id not in state.skipped_steps:
            state = state.evolve(skipped_steps=state.skipped_steps + (current.id,))
            violations.append(f"step_repeat_limit:{current.id}")
            work.trace.append(f"{current.id} left unanswered: on to the next check")
    elif work.deferred and current is not None and step_available(state, current, guard) and not work.facts_added \
            and work.meaning != ESTIMATE:
        work.notice = say(work.language, DEFERRED_TEXT)
        work.reply_action = "ask_step"
        work.next_step_id, work.next_step_question = current.id, localize(current.question, work.language)
        return state
    if work.reading_needed and current is not None and current.id not in state.completed_steps and not work.replan:
        asked = state.step_repeat_counts.get(current.id, 0)
        work.notice = _reading_notice(work, asked, guard.max_step_repeats)
        work.reply_action = "ask_step"
        work.next_step_id, work.next_step_question = current.id, localize(current.question, work.language)
        work.action = ProposedAction(QUESTION, current.id, current.topic)
        return state
    if (
        work.meaning == UNCLEAR_MEANING
        and not left_open
        and not work.deferred  # "not sure" once the check was asked enough: on to the next one
        and not chitchat_kind(work.text)  # "thanks" mid-check is answered in kind, then the check again
        and current is not None
        and current.id not in state.completed_steps
    ):
        if may_fallback(state, guard):
            work.reply_action, work.action = "fallback", ProposedAction(FALLBACK, step_id=current.id)
            work.ask(say(work.language, FALLBACK_TEXT), "fallback")
            work.next_step_id = current.id
            work.next_step_question = localize(current.question, work.language)
            return state
        violations.append("consecutive_fallback")
        if not step_available(state, current, guard):
            violations.append(f"step_repeat_limit:{current.id}")
            state = state.evolve(skipped_steps=state.skipped_steps + (current.id,))
    keep = (
        current is not None and not work.replan and step_available(state, current, guard)
    )
    # once the cause is isolated no new check is put unasked: the results stand ("what's next?" asks for one)
    # a replan goes on with the causes its new evidence points at ("a leak at the coil" after the capacitor: the leak)
    following = [h.id for h in state.hypotheses if h.status == ACTIVE and set(h.supporting_facts) & set(work.facts_added)] \
        if work.replan else []
    step = current if keep else None if state.isolation_complete and not work.replan \
        else next_step(state, procedure, guard, following=following)
    if step is not None:
        violations += check_loop(state, ProposedAction(QUESTION, step.id, step.topic), guard)
    work.loop_violations = tuple(violations)
    if step is None and not state.isolation_complete and (back := _left_open_to_return_to(state, procedure, guard, current)):
        # nothing else to check: a check left open unanswered is put once more (never a third time in a row)
        state = state.evolve(skipped_steps=tuple(i for i in state.skipped_steps if i != back.id))
        work.notice = (work.notice + " " if work.notice else "") + say(work.language, BACK_TO_CHECK_TEXT)
        work.trace.append(f"nothing else to check: back to {back.id}, left open")
        step = back
    if step is None:
        work.ready_for_report = state.isolation_complete
        if work.reply_action == "acknowledge":
            work.reply_action = "present_results" if state.isolation_complete else "no_more_steps"
        if work.reply_action == "no_more_steps" and not work.notice:
            work.notice = _with_system(NO_MORE_STEPS_TEXT, procedure, work.language)
            suspected = [h.description for h in state.hypotheses if h.status == ACTIVE and h.supporting_facts]
            untested = [h.description for h in state.hypotheses if h.status == ACTIVE and not h.supporting_facts]
            items = say_in(work.language, "items", "; ")
            if suspected:  # what is left for the technician, not only in the report
                work.notice += " " + say(work.language, STILL_SUSPECTED_TEXT, causes=items.join(suspected))
            if untested:
                work.notice += " " + say(work.language, NOT_RULED_OUT_TEXT, causes=items.join(untested))
        return state.evolve(current_step_id=None)
    work.next_step_id = step.id
    work.next_step_question = localize(step.question, work.language)
    work.ready_for_report = state.isolation_complete
    if work.reply_action == "acknowledge":
        work.reply_action = "ask_step"
    if work.reply_action in ("ask_step", "estimate_confirmed", "estimate_skipped"):
        # The estimate is non-blocking: its reply goes on with the next check.
        work.action = ProposedAction(QUESTION, step.id, step.topic)
    return state.evolve(current_step_id=step.id)


def _left_open_to_return_to(state: ContextState, procedure: ProcedureSpec, guard, current: StepSpec | None) -> StepSpec | None:  # noqa: ANN001
    """The first check left open that was put no more than the guard's number of times in all, other than the one
    put last (never again right after it was left): each is come back to once."""
    last = next((a.step_id for a in reversed(state.last_actions) if a.type == QUESTION), None)
    for step_id in state.skipped_steps:
        step = procedure.step(step_id)
        if (step is not None and step_id not in state.completed_steps and step_id not in (last, current and current.id)
                and state.step_repeat_counts.get(step_id, 0) <= guard.max_step_repeats
                and not check_loop(state, ProposedAction(QUESTION, step.id, step.topic), guard)):
            return step
    return None


def _with_system(text: str, procedure: ProcedureSpec, language: str) -> str:
    """A fixed phrase with the system named inside a sentence (lower case in English and Spanish)."""
    label = localize(procedure.label, language)
    return say(language, text, system=label.lower() if language in ("en", "es") else label)


def _tell_next_step(state: ContextState, work: TurnWork, config: ConversationConfig) -> ContextState:
    """'what's the next step?': the check to do now (the one in progress, else the next open one)."""
    procedure = config.procedure(state.primary_system)
    if procedure is None:
        return state
    current = procedure.step(state.current_step_id)
    open_now = current is not None and current.id not in state.completed_steps and current.id not in state.skipped_steps
    step = current if open_now else next_step(state, procedure, config.loop_guard)  # asking is not a repeat
    work.reply_action = "ask_step"
    if step is None:
        work.notice = _with_system(NOTHING_LEFT_TEXT if state.isolation_complete else NO_MORE_STEPS_TEXT, procedure, work.language)
        work.reply_action = "present_results" if state.isolation_complete else "no_more_steps"
        work.ready_for_report = state.isolation_complete
        return state.evolve(current_step_id=None)
    work.notice = say(work.language, NEXT_STEP_TEXT)
    work.next_step_id, work.next_step_question = step.id, localize(step.question, work.language)
    work.ready_for_report = state.isolation_complete
    work.trace.append(f"next step asked for: {step.id}")
    return state.evolve(current_step_id=step.id)


def _stated_beside(state: ContextState, work: TurnWork, config: ConversationConfig, stated: str) -> ContextState:
    """What a message states beside a side question or a wish for a person ("blower didn't come on. how do I
    jumper the thermostat wires?", "只有燃气不制冷。能转人工吗？") is read as evidence too, never dropped: the
    facts are recorded (and the check they answer done) while the question is answered or a person takes over."""
    meaning, text = work.meaning, work.text
    work.meaning, work.text = EVIDENCE, stated
    try:
        if meaning == HANDOFF_MEANING:  # the staff take over with the facts recorded; no check is asked now
            return _evidence(state, work, config)
        state = _evidence(state, work, config)
        state = _complete_steps(state, work, config)
        state = _isolation(state, work, config, ())
        state = _next_step(state, work, config)
        work.facts_volunteered = tuple(f for f in work.facts_added if f not in work.facts_volunteered) + work.facts_volunteered
        return state
    finally:
        work.meaning, work.text = meaning, text


def diagnose(state: ContextState, work: TurnWork, config: ConversationConfig) -> ContextState:
    """The diagnostic stages, for plans with diagnostic procedures."""
    if work.meaning == CANCEL_MEANING:
        state = _start_over(state, work, config)
    if work.meaning == NEXT_STEP_MEANING and state.primary_system is not None:
        return _tell_next_step(state, work, config)
    if work.meaning in (SIDE_QUESTION, HANDOFF_MEANING) and state.primary_system is not None and (
            said := stated_beside_question(work.text)) is not None:
        return _stated_beside(state, work, config, said[0])
    if work.meaning in (SIDE_QUESTION, *NOT_AN_ANSWER):  # the step in progress stays where it was
        procedure = config.procedure(state.primary_system)
        step = procedure.step(state.current_step_id) if procedure else None
        if step is not None:
            work.next_step_id = step.id
            work.next_step_question = localize(step.question, work.language)
        return state
    work.deferred = bool(state.current_step_id) and (defers_answer(work.text) or asks_to_skip_check(work.text, work.language))
    before = state.primary_system
    state = _procedure(state, work, config)
    if state.primary_system is None:
        return state
    if before is not None:
        state = _other_fault(state, work, config)
        if state.primary_system is None:
            return state  # "not the AC": which system, then
        if work.reply_action == "no_procedure":
            procedure = config.procedure(state.primary_system)
            step = procedure.step(state.current_step_id) if procedure else None
            if step is not None and step.id not in state.completed_steps:
                work.next_step_id, work.next_step_question = step.id, localize(step.question, work.language)
            return state
    if state.mode in ("authorization",) and work.meaning not in (ESTIMATE, REPORT):
        state = state.evolve(mode=diagnostic_mode(config))
    state = _evidence(state, work, config)
    state = _complete_steps(state, work, config)
    state = _estimate_and_report(state, work, config)
    # A procedure with nothing left to ask settles on what is confirmed.
    state = _isolation(state, work, config, ())
    if work.reply_action == "final_report":
        return state  # the report is written now: no further check is asked
    return _next_step(state, work, config)
