"""One user turn through the deterministic context pipeline, and the reply bookkeeping.

`advance_context(state, text, now=..., timezone=..., config=..., lookups=...)` routes the
intent, extracts and merges slots, updates facts / hypotheses / contradictions, pushes or
pops the topic stack, checks for replan, applies the loop guard and decides continue /
ask / abort. It returns a `TurnOutcome` that says what the turn means; it never writes
the reply. After the reply is written, `record_reply(state, text=..., action=...)` tells
the engine what the reply did (asked a question, fell back, asked a step...), which the
loop guard and ask-then-act rely on.

Pipeline order: start (counters, language, situation) -> meaning -> slots -> domain intent
-> topic stack -> diagnostic (procedure, evidence, replan, isolation, estimate, report,
next step, loop guard) -> form (clarifying thread, finalize, next question) -> slot
clarify decision -> outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from ._serde import FrozenDict, Serializable
from ._text import asks_question as text_asks_question
from ._text import first_match, language_signal, localize
from .ask_then_act import update_situation
from .commands import Command
from .config import ConversationConfig, FormQuestionSpec
from .estimate import (
    REPORT_PATTERNS,
    FinalReport,
    build_final_report,
    confirm_estimate,
    draft_estimate,
    estimate_request,
    skip_estimate,
)
from .evidence import (
    add_facts,
    add_note,
    apply_replan,
    assess,
    complete_isolation,
    match_evidence,
    reassess_hypotheses,
    replan_reason,
)
from .forms import (
    FormEvaluation,
    add_clarifying_question,
    answer_clarifying_question,
    clarify_prompt,
    current_question,
    evaluate_answer,
    finalize_answer,
    find_correction,
    form_complete,
    open_thread,
    prefill_from_slots,
)
from .intents import (
    CONFIRMATION,
    DISPUTE,
    EXPLAIN,
    HOWTO,
    LOCATE,
    NEW_EVIDENCE,
    DomainIntent,
    IntentResult,
    route_intent,
)
from .loop_guard import FALLBACK, QUESTION, ProposedAction, check_loop, may_fallback, record_action
from .procedure import (
    detect_procedure,
    next_step,
    remaining_steps,
    step_available,
    steps_answered_by,
)
from .slots import (
    ABORT,
    ASK,
    CONTINUE,
    ExtractContext,
    Extraction,
    decide_clarify,
    extract_slots,
    has_content,
    identifier_candidates,
    intent_question,
    lookup_identifier,
    merge_slots,
    resolve_reference,
    validate_slots,
)
from .state import (
    CONFIRMED,
    EST_NONE,
    INVALID,
    VALID,
    ContextState,
    FinalizedAnswer,
    PendingClarification,
    with_key,
)
from .topics import SideQuestion, detect_topic, pop_all, push_topic, side_answer, submode_for

Lookups = Mapping[str, Callable[..., Any]]

# What a turn means (TurnOutcome.meaning).
ANSWER, SIDE_QUESTION, REQUEST, FOLLOW_UP = "answer", "side_question", "request", "follow_up"
EVIDENCE, DISPUTE_MEANING, CONFIRM, ESTIMATE, REPORT, UNCLEAR_MEANING = (
    "new_evidence",
    "dispute",
    "confirmation",
    "estimate",
    "report",
    "unclear",
)

_FALLBACK_TEXT = {
    "en": "Could you tell me a bit more about what you see?",
    "zh": "能再具体说说您看到的情况吗？",
    "ru": "Расскажите, пожалуйста, чуть подробнее, что вы видите?",
    "es": "¿Podría contarme un poco más de lo que ve?",
}


@dataclass(frozen=True)
class TurnOutcome(Serializable):
    """What one user turn means, plus the new state. It does not contain the reply.

    `meaning`: answer | side_question | request | follow_up | new_evidence | dispute |
    confirmation | estimate | report | unclear.
    `reply_action` (what the reply should do): side_answer (brief answer, then back to
    `next_step_question` or the open `question`) | ask_slot | ask_intent | ask_system |
    ask_step | fallback | present_results (run the intent's tools / show the findings) |
    no_more_steps | estimate_confirmed | estimate_skipped | final_report | form_next |
    form_clarify | form_complete | abort | acknowledge.
    `proposed_action` is what to pass to `record_reply` once the reply is written.
    """

    state: ContextState
    turn_index: int
    language: str
    intent: str
    intent_confidence: float
    matched_pattern: str | None
    intent_kind: str
    meaning: str
    mode: str
    submode: str
    decision: str  # continue | ask | abort
    reply_action: str
    proposed_action: ProposedAction
    resolved_intent: str | None = None
    intent_source: str | None = None
    question: str | None = None
    question_kind: str | None = None  # slot | intent | system | form_clarify | fallback
    missing_slots: tuple[str, ...] = ()
    invalid_slots: tuple[str, ...] = ()
    slots_changed: tuple[str, ...] = ()
    slots_corrected: tuple[str, ...] = ()  # of those, the ones that replaced an earlier value
    usable_slots: Mapping[str, str] = field(default_factory=FrozenDict)
    side_question: SideQuestion | None = None
    returned_to_step: str | None = None
    completed_steps: tuple[str, ...] = ()
    next_step_id: str | None = None
    next_step_question: str | None = None
    loop_violations: tuple[str, ...] = ()
    replan: bool = False
    replan_reason: str | None = None
    facts_added: tuple[str, ...] = ()
    facts_superseded: tuple[str, ...] = ()
    contradictions_added: tuple[str, ...] = ()
    hypotheses_eliminated: tuple[str, ...] = ()
    hypotheses_confirmed: tuple[str, ...] = ()
    isolation_completed: bool = False
    estimate_status: str = EST_NONE
    estimate_drafted: bool = False
    estimate_changed: bool = False
    ready_for_report: bool = False
    report_blockers: tuple[str, ...] = ()
    form_question_id: str | None = None
    form_answer_finalized: FinalizedAnswer | None = None
    clarify_form_question_id: str | None = None
    form_complete: bool = False
    form_changed_question: str | None = None  # a final answer corrected this turn: which, from, to
    form_changed_from: str | None = None
    form_changed_to: str | None = None
    situation: str = "unknown"
    trace: tuple[str, ...] = ()

    @property
    def facts_changed(self) -> bool:
        return bool(self.facts_added or self.facts_superseded)

    def summary(self) -> dict[str, Any]:
        """The outcome without the state (for the reply payload and the audit row)."""
        data = self.to_dict()
        data.pop("state")
        return data


@dataclass
class _Turn:
    """Working memory of one pipeline run (internal, mutable by design, never returned)."""

    text: str
    turn: int
    routed: IntentResult
    language: str
    meaning: str = ANSWER
    decision: str = CONTINUE
    reply_action: str = "acknowledge"
    action: ProposedAction = field(default_factory=lambda: ProposedAction("statement"))
    values: dict[str, Any] = field(default_factory=dict)
    trace: list[str] = field(default_factory=list)
    commands: tuple[Command, ...] = ()  # validated commands from a generator (the model)

    def command(self, *kinds: str) -> Command | None:
        """The first given command of one of these kinds."""
        return next((c for c in self.commands if c.kind in kinds), None)

    def set(self, **values: Any) -> None:
        self.values.update(values)

    def ask(self, question: str | None, kind: str) -> None:
        self.decision = ASK
        self.values.update(question=question, question_kind=kind)


# -- public entry points -------------------------------------------------------------------
def initial_state(config: ConversationConfig, *, locale: str | None = None) -> ContextState:
    """A fresh state for a conversation on this plan."""
    return ContextState(locale=locale or config.locale, mode=config.modes.initial, submode="main")


def advance_context(
    state: ContextState,
    text: str,
    *,
    now: datetime,
    timezone: str,
    config: ConversationConfig,
    lookups: Lookups | None = None,
    commands: Sequence[Command] = (),
) -> TurnOutcome:
    """Run the deterministic pipeline for one user turn.

    `commands` are what a command generator (the model) understood, already validated
    (`commands.validate_commands`): they take precedence over the rules' own reading where
    they speak (the intent, a slot's value, the answer to the pending form question, a side
    question, evidence, cancelling); the rules fill in the rest.
    """
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    routed = route_intent(text, domain_intents=config.intents, default_language=state.locale)
    t = _Turn(text=text, turn=state.turn_index + 1, routed=routed, language=routed.language, commands=tuple(commands))
    t.routed = _routed_by_commands(t, config)
    t.trace.extend(f"command {c.describe()}" for c in t.commands)
    state = _start(state, t, config)
    state = _cancel(state, t)
    t.meaning = _meaning(state, t, config)
    state = _slots(state, t, config, lookups, now=now, timezone=timezone)
    state = _domain_intent(state, t, config)
    state = _topic_stack(state, t, config)
    if config.diagnostic_enabled:
        state = _diagnostic(state, t, config)
    if config.form is not None:
        state = _form(state, t, config)
    state = _clarify(state, t, config)
    state = _finish_mode(state, t, config)
    return _outcome(state, t, config)


def record_reply(
    state: ContextState,
    *,
    text: str,
    action: ProposedAction | None = None,
    asks_question: bool | None = None,
    clarifying_question_id: str | None = None,
) -> ContextState:
    """Book-keep the assistant's reply: question asked, fallback, step repeat, cool-down."""
    asks = text_asks_question(text) if asks_question is None else asks_question
    state = state.evolve(message_count=state.message_count + 1)
    if asks:
        state = state.evolve(
            last_question=text.strip()[:500],
            last_question_turn=state.turn_index,
            last_question_answered=False,
        )
    state = record_action(state, action or ProposedAction("statement"))
    if action is not None and action.type == QUESTION and action.step_id:
        state = state.evolve(current_step_id=action.step_id)
    if clarifying_question_id:
        state = add_clarifying_question(
            state, text.strip(), turn=state.turn_index, question_id=clarifying_question_id
        )
    return state


def opening_question(
    state: ContextState, config: ConversationConfig
) -> tuple[str, ProposedAction] | None:
    """For a form plan, the first question to greet with (record it with `record_reply`)."""
    if config.form is None or config.form.kind != "form":
        return None
    spec = current_question(state, config.form)
    if spec is None:
        return None
    return localize(spec.question, state.locale), ProposedAction(QUESTION, spec.id, spec.id)


def final_report_for(
    state: ContextState, config: ConversationConfig, *, locale: str | None = None
) -> FinalReport | None:
    """The final report of a diagnostic conversation (None before a system was identified)."""
    procedure = config.procedure(state.primary_system)
    if procedure is None:
        return None
    return build_final_report(state, procedure.hypotheses, locale=locale or state.locale)


def with_slot_candidates(
    state: ContextState, name: str, values: tuple[str, ...] | list[str]
) -> ContextState:
    """Remember values a tool listed (e.g. arrears orders) so 'this order' / '第一笔' can resolve."""
    return state.evolve(
        slot_candidates=with_key(state.slot_candidates, name, tuple(values) or None)
    )


def set_slot_status(
    state: ContextState, name: str, *, valid: bool, value: str | None = None
) -> ContextState:
    """Mark a slot valid or invalid after a lookup made outside a turn (e.g. by a tool)."""
    slot = state.slots.get(name)
    if slot is None:
        return state
    updated = replace(
        slot,
        value=value or slot.value,
        status=VALID if valid else INVALID,
        validated_by="lookup",
        validated_turn=state.turn_index,
    )
    return state.evolve(slots=with_key(state.slots, name, updated))


# -- commands from a generator ---------------------------------------------------------------
_SIDE_INTENT = {"locate": LOCATE, "explain": EXPLAIN, "howto": HOWTO, "knowledge": EXPLAIN}


def _routed_by_commands(t: _Turn, config: ConversationConfig) -> IntentResult:
    """The router's reading, overridden by an explicit intent or side question command."""
    routed = t.routed
    if (start := t.command("start_intent")) and config.intent(start.intent):
        return replace(routed, intent=start.intent, kind="domain", confidence=1.0, candidates=(start.intent,),
                       ambiguous=False, pattern=None)
    if side := t.command("side_question"):
        return replace(routed, intent=_SIDE_INTENT[side.side_kind], kind="builtin", confidence=1.0, pattern=None)
    return routed


def _cancel(state: ContextState, t: _Turn) -> ContextState:
    """`cancel`: drop the request in progress and its open clarification (facts stay)."""
    if t.command("cancel") is None:
        return state
    t.trace.append("cancelled: active intent and pending clarification dropped")
    t.set(cancelled=True)
    return state.evolve(active_intent=None, pending_clarification=None, clarify_rounds=0)


def _command_answer(t: _Turn, spec: FormQuestionSpec) -> str | None:
    """The value an `answer` command gives this form question, in the form's own format."""
    answer = next((c for c in t.commands if c.kind == "answer" and c.question_id == spec.id), None)
    if answer is None or answer.value is None:
        return None
    if spec.answer_type == "number" and spec.unit:
        return f"{answer.value} {spec.unit}"
    return answer.value


# -- stages ----------------------------------------------------------------------------------
def _start(state: ContextState, t: _Turn, config: ConversationConfig) -> ContextState:
    """Counters, locale, latest text, situation, and whether the last question got an answer."""
    side = t.routed.is_side_question and t.routed.kind == "builtin"
    answered = state.last_question_answered or (not side and has_content(t.text))
    # keep the locale on bare ids/numbers
    locale = t.language if language_signal(t.text) else state.locale
    t.language = locale
    return state.evolve(
        turn_index=t.turn,
        message_count=state.message_count + 1,
        latest_user_text=t.text,
        locale=locale,
        last_question_answered=answered,
        situation=update_situation(state.situation, t.text),
        complaint=state.complaint
        or (t.text.strip() if config.diagnostic_enabled and has_content(t.text) else None),
    )


def _meaning(state: ContextState, t: _Turn, config: ConversationConfig) -> str:
    """What the message is, in the conversation's terms."""
    routed = t.routed
    if (
        config.estimate_enabled
        and state.estimate.status != EST_NONE
        and estimate_request(t.text, t.language)
    ):
        return ESTIMATE
    if config.diagnostic_enabled:
        patterns = (
            config.diagnostic.report_patterns if config.diagnostic else None
        ) or REPORT_PATTERNS
        if first_match(t.text, patterns, t.language):
            return REPORT
    if routed.kind == "domain":
        return REQUEST
    if routed.kind == "builtin":
        if routed.is_side_question:
            return SIDE_QUESTION
        return {NEW_EVIDENCE: EVIDENCE, DISPUTE: DISPUTE_MEANING, CONFIRMATION: CONFIRM}[
            routed.intent
        ]
    if not has_content(t.text):
        return UNCLEAR_MEANING
    return FOLLOW_UP if routed.follow_up and state.active_intent else ANSWER


def _slot_names(config: ConversationConfig) -> list[str]:
    names = list(config.slots)
    for intent in config.intents:
        names += [n for n in intent.required_slots + intent.optional_slots if n not in names]
    return names


def _slots(
    state: ContextState,
    t: _Turn,
    config: ConversationConfig,
    lookups: Lookups | None,
    *,
    now: datetime,
    timezone: str,
) -> ContextState:
    """Extract, resolve references, merge into memory and validate the new values."""
    names = _slot_names(config)
    if not names:
        return state
    known_entry = state.slots.get("at_time")
    entry = _aware(known_entry.value) if known_entry is not None else None
    ctx = ExtractContext(now=now, timezone=timezone, language=t.language, entry=entry)
    found = extract_slots(t.text, [config.slot_spec(n) for n in names], ctx)
    for name, candidates in state.slot_candidates.items():
        if name not in found and (value := resolve_reference(t.text, candidates)):
            found[name] = Extraction(value=value, raw="reference")
            t.trace.append(f"slot {name} resolved from reference")
    for command in t.commands:
        if command.kind in ("set_slot", "correct_slot") and command.slot in names and command.value:
            found[command.slot] = Extraction(value=command.value, raw=command.kind)
    _identifiers_by_lookup(state, t, config, found, lookups or {})
    merged, changed = merge_slots(state.slots, found, t.turn)
    t.set(slots_corrected=tuple(n for n in changed if n in state.slots))  # replaced an earlier value
    merged = validate_slots(merged, changed, lookups, t.turn)
    t.set(slots_changed=changed, slots_mentioned=tuple(found))
    if changed:
        t.trace.append("slots changed: " + ", ".join(changed))
    return state.evolve(slots=merged)


def _aware(value: str) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def _identifiers_by_lookup(state: ContextState, t: _Turn, config: ConversationConfig,
                           found: dict[str, Extraction], lookups: Lookups) -> None:
    """A needed identifier the patterns missed is looked up among the message's tokens.

    Needed: asked for by the pending clarification, or required by the intent the message
    asks for. When the person answers "which order?" with a token no one knows, that token
    is taken so that validation says plainly it was not found.
    """
    pending = state.pending_clarification
    asked = set(pending.missing) if pending is not None and pending.kind == "slot" else set()
    requested = config.intent(t.routed.intent) if t.routed.kind == "domain" else None
    needed = [n for n in (*sorted(asked), *(requested.required_slots if requested else ())) if n in lookups and n not in found]
    taken = [e.raw for e in found.values()] + [e.value for e in found.values()]
    known = {k: v.value for k, v in state.slots.items()}
    for name in dict.fromkeys(needed):
        tokens = identifier_candidates(t.text, taken)
        hit = lookup_identifier(lookups[name], tokens, known)
        if hit is not None:
            found[name] = Extraction(value=hit[0], raw=hit[1])
        elif name in asked and len(tokens) == 1:
            found[name] = Extraction(value=tokens[0], raw=tokens[0])  # validation will say it was not found
        else:
            continue
        taken.append(found[name].raw)
        t.trace.append(f"slot {name} resolved by lookup")


def _pick_ambiguous(state: ContextState, t: _Turn, config: ConversationConfig) -> str | None:
    """Among equally matched domain intents, the single one whose required slots are all valid;
    if several are, the single one whose slot this very message gave (fresh evidence wins)."""
    domain = [config.intent(name) for name in t.routed.candidates if config.intent(name)]
    usable = state.usable_slots()
    complete = [i for i in domain if i and _has_required_slots(i, usable)]
    if len(complete) == 1:
        return complete[0].name
    mentioned = set(t.values.get("slots_mentioned", ()))  # given in this message, new or restated
    fresh = [i.name for i in complete if mentioned & set(i.required_slots)]
    return fresh[0] if len(fresh) == 1 else None


def _switched_by_slot(state: ContextState, t: _Turn, config: ConversationConfig) -> tuple[str, str] | None:
    """A follow-up that gives a detail only another intent uses ("check order SCN-019" while a
    rule was being explained) moves to that intent, when it is the only one and is complete."""
    active = config.intent(state.active_intent)
    if active is None:
        return None
    used = set(active.required_slots) | set(active.optional_slots)
    new = set(t.values.get("slots_mentioned", ())) - used
    usable = state.usable_slots()
    takers = [i.name for i in config.intents if i.name != active.name and new & set(i.required_slots)
              and _has_required_slots(i, usable)]
    return (takers[0], "slots") if len(takers) == 1 else None


def _has_required_slots(intent: DomainIntent, usable: Mapping[str, str]) -> bool:
    return all(name in usable for name in intent.required_slots)


def _domain_intent(state: ContextState, t: _Turn, config: ConversationConfig) -> ContextState:
    """Which domain intent this turn serves: explicit, pending clarification, or follow-up."""
    pending = state.pending_clarification
    resolved, source = None, None
    if t.routed.kind == "domain":
        resolved, source = t.routed.intent, "explicit"
        if t.routed.ambiguous:
            resolved = _pick_ambiguous(state, t, config)
            source = "slots" if resolved else None
    elif (
        pending is not None
        and pending.kind == "slot"
        and t.meaning in (ANSWER, CONFIRM, FOLLOW_UP, UNCLEAR_MEANING)
    ):
        resolved, source = pending.intent, "pending_clarification"
    elif state.active_intent and (
        t.meaning == FOLLOW_UP
        # a new value for the request in progress, however it is phrased: an answer, a correction
        # ("不对，…"), or words that read like evidence ("我其实是下午五点才开走的")
        or (t.meaning not in (SIDE_QUESTION, REQUEST) and t.values.get("slots_changed"))
    ):
        resolved, source = _switched_by_slot(state, t, config) or (state.active_intent, "follow_up")
    t.set(resolved_intent=resolved, intent_source=source)
    if resolved:
        t.trace.append(f"intent {resolved} ({source})")
        return state.evolve(active_intent=resolved)
    return state


def _topic_stack(state: ContextState, t: _Turn, config: ConversationConfig) -> ContextState:
    """Push a side question (answered briefly); any other message returns to the interrupted step."""
    if t.meaning != SIDE_QUESTION:
        state, returned = pop_all(state)
        t.set(returned_to_step=returned)
        return state
    topic = detect_topic(t.text, t.routed.intent, config.side_topics, t.language, state.topic_stack)
    submode = submode_for(t.routed.intent, config.modes.submodes)
    key = f"side:{topic}:{submode}"
    last = state.cooldowns.get(key)
    repeat = last is not None and state.turn_index - last <= config.loop_guard.topic_cooldown_turns
    return_step = state.current_step_id
    state = push_topic(state, topic=topic, submode=submode, return_step_id=return_step, turn=t.turn)
    answer = side_answer(topic, submode, config.side_topics, t.language)
    t.set(
        side_question=SideQuestion(
            topic, submode, answer, state.topic_stack[0].return_step_id, repeat
        )
    )
    t.reply_action = "side_answer"
    t.action = ProposedAction("side_answer", step_id=return_step, topic=key)
    t.trace.append(f"side question {topic} ({submode}) pushed")
    return state


# -- diagnostic --------------------------------------------------------------------------------
def _procedure(state: ContextState, t: _Turn, config: ConversationConfig) -> ContextState:
    """Pick the system being diagnosed; ask which one when it cannot be told."""
    diag = config.diagnostic
    assert diag is not None
    if state.primary_system is not None:
        return state
    found = detect_procedure(t.text, diag.procedures) or (
        diag.procedures[0] if len(diag.procedures) == 1 else None
    )
    if found is None:
        question = localize(diag.system_question, t.language) or "Which system are we working on?"
        rounds = (state.pending_clarification.rounds if state.pending_clarification else 0) + 1
        if rounds > config.max_clarify_rounds:
            t.decision, t.reply_action = ABORT, "abort"
            return state.evolve(pending_clarification=None)
        t.ask(question, "system")
        t.reply_action = "ask_system"
        pending = PendingClarification(
            intent=None,
            missing=("system",),
            rounds=rounds,
            last_question=question,
            asked_turn=t.turn,
            kind="system",
        )
        return state.evolve(pending_clarification=pending)
    hypotheses = tuple(assess(h, (), t.language) for h in found.hypotheses)
    t.trace.append(f"procedure {found.id}")
    return state.evolve(
        primary_system=found.id,
        hypotheses=hypotheses,
        pending_clarification=None,
        mode=_diag_mode(config),
    )


def _diag_mode(config: ConversationConfig) -> str:
    return "diagnostic" if "diagnostic" in config.modes.enabled else config.modes.initial


def _evidence(state: ContextState, t: _Turn, config: ConversationConfig) -> ContextState:
    """Facts from the message, hypotheses re-derived, replan if isolation is contradicted."""
    procedure = config.procedure(state.primary_system)
    rules = config.all_evidence(state.primary_system)
    before = state
    reported = " ".join(c.text for c in t.commands if c.kind == "report_evidence" and c.text)
    matches = match_evidence(f"{t.text}\n{reported}" if reported else t.text, rules, t.language, t.language)
    state, update = add_facts(
        state, matches, rules=rules, turn=t.turn, step_id=state.current_step_id
    )
    added = list(update.added)
    noteworthy = t.meaning in (EVIDENCE, DISPUTE_MEANING) or (
        t.meaning == ANSWER and state.current_step_id
    )
    if not added and noteworthy and has_content(t.text):
        state, note = add_note(state, t.text, turn=t.turn, step_id=state.current_step_id)
        added.append(note)
    state, changes = reassess_hypotheses(
        state, procedure.hypotheses if procedure else (), t.language
    )
    t.set(
        facts_added=tuple(added),
        facts_superseded=update.superseded,
        contradictions_added=update.contradictions,
        hypotheses_eliminated=changes.eliminated,
        hypotheses_confirmed=changes.confirmed,
    )
    reason = replan_reason(
        before,
        state,
        text=t.text,
        intent=t.routed.intent,
        new_fact_ids=update.added,
        specs=procedure.hypotheses if procedure else (),
        triggers=config.diagnostic.replan_triggers if config.diagnostic else {},
        language=t.language,
    )
    if reason and added:
        state = apply_replan(state, reason=reason, evidence_fact_id=added[0], turn=t.turn)
        t.set(replan=True, replan_reason=reason)
        t.trace.append(f"replan: {reason}")
    return _isolation(state, t, config, changes.confirmed)


def _isolation(
    state: ContextState, t: _Turn, config: ConversationConfig, newly_confirmed: tuple[str, ...]
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
    state = complete_isolation(state, candidates[0], turn=t.turn)
    t.set(isolation_completed=True)
    t.trace.append(f"isolation complete: {candidates[0].id}")
    if config.estimate_enabled and state.estimate.status == EST_NONE:
        state = draft_estimate(state, procedure.hypotheses, turn=t.turn, locale=t.language)
        t.set(estimate_drafted=True, estimate_changed=True)
    return state


def _complete_steps(state: ContextState, t: _Turn, config: ConversationConfig) -> ContextState:
    """Steps answered this turn: by evidence anywhere in the procedure, or the current one by a real answer."""
    procedure = config.procedure(state.primary_system)
    if procedure is None:
        return state
    new_keys = [f.key for f in state.facts if f.id in t.values.get("facts_added", ())]
    done = list(steps_answered_by(procedure, new_keys))
    current = state.current_step_id
    # A plain answer completes the current step, unless its evidence answered other steps instead
    # (the person skipped ahead: the skipped check stays open). Volunteered evidence only
    # completes the steps it answers.
    answering = t.meaning in (ANSWER, CONFIRM) and not done
    if current and answering and has_content(t.text) and procedure.step(current):
        done.append(current)
    done = [s for s in dict.fromkeys(done) if s not in state.completed_steps]
    if done:
        t.set(completed_steps=tuple(done))
    return state.evolve(completed_steps=state.completed_steps + tuple(done))


def _estimate_and_report(state: ContextState, t: _Turn, config: ConversationConfig) -> ContextState:
    """Confirm or skip the estimate when asked; enter the final report when requested."""
    if t.meaning == ESTIMATE:
        request = estimate_request(t.text, t.language)
        state = (
            confirm_estimate(state, t.text, turn=t.turn)
            if request == "confirm"
            else skip_estimate(state, turn=t.turn)
        )
        t.set(estimate_changed=True)
        t.reply_action = "estimate_" + ("confirmed" if request == "confirm" else "skipped")
        if "authorization" in config.modes.enabled:
            state = state.evolve(mode="authorization")
    if t.meaning == REPORT:
        if state.isolation_complete:
            t.reply_action = "final_report"
            if "final_report" in config.modes.enabled:
                state = state.evolve(mode="final_report")
        else:
            t.set(report_blockers=("isolation_incomplete",))
    return state


def _next_step(state: ContextState, t: _Turn, config: ConversationConfig) -> ContextState:
    """Choose the check to ask next under the loop guard (fallback at most once in a row)."""
    procedure = config.procedure(state.primary_system)
    guard = config.loop_guard
    if procedure is None:
        return state
    current = procedure.step(state.current_step_id)
    violations: list[str] = []
    if (
        t.meaning == UNCLEAR_MEANING
        and current is not None
        and current.id not in state.completed_steps
    ):
        if may_fallback(state, guard):
            t.reply_action, t.action = "fallback", ProposedAction(FALLBACK, step_id=current.id)
            t.ask(_FALLBACK_TEXT.get(t.language, _FALLBACK_TEXT["en"]), "fallback")
            t.set(
                next_step_id=current.id, next_step_question=localize(current.question, t.language)
            )
            return state
        violations.append("consecutive_fallback")
        if not step_available(state, current, guard):
            violations.append(f"step_repeat_limit:{current.id}")
            state = state.evolve(skipped_steps=state.skipped_steps + (current.id,))
    keep = (
        current is not None and not t.values.get("replan") and step_available(state, current, guard)
    )
    step = current if keep else next_step(state, procedure, guard)
    if step is not None:
        violations += check_loop(state, ProposedAction(QUESTION, step.id, step.topic), guard)
    t.set(loop_violations=tuple(violations))
    if step is None:
        t.set(ready_for_report=state.isolation_complete)
        if t.reply_action == "acknowledge":
            t.reply_action = "present_results" if state.isolation_complete else "no_more_steps"
        return state.evolve(current_step_id=None)
    t.set(next_step_id=step.id, next_step_question=localize(step.question, t.language))
    t.set(ready_for_report=state.isolation_complete)
    if t.reply_action == "acknowledge":
        t.reply_action = "ask_step"
    if t.reply_action in ("ask_step", "estimate_confirmed", "estimate_skipped"):
        # The estimate is non-blocking: its reply goes on with the next check.
        t.action = ProposedAction(QUESTION, step.id, step.topic)
    return state.evolve(current_step_id=step.id)


def _diagnostic(state: ContextState, t: _Turn, config: ConversationConfig) -> ContextState:
    """Seed 000 behaviours for plans with diagnostic procedures."""
    if t.meaning == SIDE_QUESTION:
        procedure = config.procedure(state.primary_system)
        step = procedure.step(state.current_step_id) if procedure else None
        if step is not None:
            t.set(next_step_id=step.id, next_step_question=localize(step.question, t.language))
        return state
    state = _procedure(state, t, config)
    if state.primary_system is None:
        return state
    if state.mode in ("authorization",) and t.meaning not in (ESTIMATE, REPORT):
        state = state.evolve(mode=_diag_mode(config))
    state = _evidence(state, t, config)
    state = _complete_steps(state, t, config)
    state = _estimate_and_report(state, t, config)
    # A procedure with nothing left to ask settles on what is confirmed.
    state = _isolation(state, t, config, ())
    return _next_step(state, t, config)


# -- form ----------------------------------------------------------------------------------------
def _form(state: ContextState, t: _Turn, config: ConversationConfig) -> ContextState:
    """Answer the clarifying thread, finalize when the answer is good enough, else clarify."""
    form = config.form
    assert form is not None
    asked = form.question(state.current_step_id)  # the question put to the person before this turn
    state, prefilled = prefill_from_slots(state, form, turn=t.turn, locale=t.language)
    if prefilled:
        t.trace.append("prefilled: " + ", ".join(prefilled))
    if t.meaning == SIDE_QUESTION:
        return _form_next(state, t, config, form.question(state.current_step_id), returning=True)
    if (corrected := find_correction(state, form, t.text, t.language)) is not None:
        target, value = corrected
        before = state.finalized(target.id).answer
        state = finalize_answer(state, target, value, turn=t.turn, locale=t.language, form=form)
        t.set(form_changed_question=target.id, form_changed_from=before, form_changed_to=value)
        t.trace.append(f"form answer {target.id} corrected: {before} -> {value}")
        return _form_next(state, t, config, current_question(state, form))
    spec = asked if asked is not None and state.finalized(asked.id) is None else None
    if asked is None and form.kind == "interview" and has_content(t.text):
        # an interview's opening message answers its first question
        spec = current_question(state, form)
    if spec is None:
        return _form_next(state, t, config, current_question(state, form))
    state = open_thread(state, spec.id)
    state = answer_clarifying_question(state, t.text, turn=t.turn)
    given = _command_answer(t, spec)
    verdict = FormEvaluation(True, given) if given else evaluate_answer(t.text, spec, t.language, state.active_thread)
    if verdict.accepted:
        state = finalize_answer(
            state, spec, verdict.value or t.text, turn=t.turn, locale=t.language, form=form
        )
        t.set(form_answer_finalized=state.finalized(spec.id))
        return _form_next(state, t, config, current_question(state, form))
    asked = len(state.active_thread.entries) if state.active_thread else 0
    prompt = clarify_prompt(spec, asked, t.language) if asked < form.max_clarify else None
    if prompt is not None:
        t.ask(prompt, "form_clarify")
        t.reply_action = "form_clarify"
        t.action = ProposedAction("clarification", step_id=spec.id, topic=spec.id)
        t.set(form_question_id=spec.id, clarify_form_question_id=spec.id)
        return state
    if has_content(t.text):  # out of clarifying questions: take the answer, flag it for review
        state = finalize_answer(
            state,
            spec,
            t.text.strip(),
            turn=t.turn,
            locale=t.language,
            form=form,
            needs_review=True,
        )
        t.set(form_answer_finalized=state.finalized(spec.id))
        return _form_next(state, t, config, current_question(state, form))
    return _form_reask(state, t, config, spec)


def _form_reask(
    state: ContextState, t: _Turn, config: ConversationConfig, spec: FormQuestionSpec
) -> ContextState:
    """Nothing usable and nothing left to clarify: fall back once, then re-ask, never loop."""
    guard = config.loop_guard
    if may_fallback(state, guard):
        t.ask(_FALLBACK_TEXT.get(t.language, _FALLBACK_TEXT["en"]), "fallback")
        t.reply_action, t.action = "fallback", ProposedAction(FALLBACK, step_id=spec.id)
        return state.evolve(current_step_id=spec.id)
    if state.step_repeat_counts.get(spec.id, 0) >= guard.max_step_repeats:
        t.decision, t.reply_action = ABORT, "abort"
        t.set(loop_violations=(f"step_repeat_limit:{spec.id}",))
        return state
    return _form_next(state, t, config, spec)


def _form_next(
    state: ContextState,
    t: _Turn,
    config: ConversationConfig,
    spec: FormQuestionSpec | None,
    returning: bool = False,
) -> ContextState:
    """Point at the next form question (or say the form is complete)."""
    form = config.form
    assert form is not None
    done = form_complete(state, form)
    t.set(form_complete=done)
    if spec is None:
        if not returning:
            t.reply_action = "form_complete" if done else t.reply_action
        return state.evolve(current_step_id=None)
    t.set(
        form_question_id=spec.id,
        next_step_id=spec.id,
        next_step_question=localize(spec.question, t.language),
    )
    if not returning:
        t.reply_action = "form_next"
        t.action = ProposedAction(QUESTION, step_id=spec.id, topic=spec.id)
    return state.evolve(current_step_id=spec.id)


# -- slot clarification and finishing -------------------------------------------------------------
def _clarify(state: ContextState, t: _Turn, config: ConversationConfig) -> ContextState:
    """Continue / ask / abort for the domain intent's required slots (RAG-010/011/012)."""
    if t.decision == ABORT:
        return state
    if t.routed.kind == "domain" and t.routed.ambiguous and not t.values.get("resolved_intent"):
        return _ask_intent(state, t, config)
    intent = config.intent(t.values.get("resolved_intent"))
    if t.meaning == SIDE_QUESTION:
        pending = state.pending_clarification
        if pending is not None and pending.last_question:
            # the side answer comes back to the open question
            t.ask(pending.last_question, pending.kind)
        return state
    if intent is None:
        return state
    verdict = decide_clarify(
        intent=intent.name,
        required=intent.required_slots,
        memory=state.slots,
        specs=config.slots,
        pending=state.pending_clarification
        if state.pending_clarification and state.pending_clarification.intent == intent.name
        else None,
        progressed=bool(t.values.get("slots_changed")),
        locale=t.language,
        turn=t.turn,
        max_rounds=config.max_clarify_rounds,
    )
    t.set(missing_slots=verdict.missing, invalid_slots=verdict.invalid)
    if verdict.decision == CONTINUE:
        if t.reply_action == "acknowledge":
            t.reply_action = "present_results"
        return state.evolve(pending_clarification=None, clarify_rounds=0)
    if verdict.decision == ABORT:
        t.decision, t.reply_action = ABORT, "abort"
        t.trace.append(f"clarify aborted after {verdict.rounds} rounds")
        return state.evolve(pending_clarification=None, clarify_rounds=0)
    t.ask(verdict.question, "slot")
    t.reply_action = "ask_slot"
    t.action = ProposedAction("clarification", topic=f"slot:{verdict.slot}")
    return state.evolve(pending_clarification=verdict.pending, clarify_rounds=verdict.rounds)


def _ask_intent(state: ContextState, t: _Turn, config: ConversationConfig) -> ContextState:
    """Two workflow intents fit equally: ask which one, within the clarify round limit."""
    names = [n for n in t.routed.candidates if config.intent(n)]
    pending = state.pending_clarification
    rounds = pending.rounds + 1 if pending is not None and pending.kind == "intent" else 1
    if rounds > config.max_clarify_rounds:
        t.decision, t.reply_action = ABORT, "abort"
        return state.evolve(pending_clarification=None, clarify_rounds=0)
    labels = [
        localize(intent.label, t.language) or intent.name
        for intent in filter(None, map(config.intent, names))
    ]
    question = intent_question(labels, t.language)
    t.ask(question, "intent")
    t.reply_action = "ask_intent"
    t.action = ProposedAction("clarification", topic="intent")
    pending = PendingClarification(
        intent=None,
        missing=tuple(names),
        rounds=rounds,
        last_question=question,
        asked_turn=t.turn,
        kind="intent",
    )
    return state.evolve(pending_clarification=pending, clarify_rounds=rounds)


def _finish_mode(state: ContextState, t: _Turn, config: ConversationConfig) -> ContextState:
    """Submode for the turn: a side question's, replan, or back to main."""
    if t.meaning == SIDE_QUESTION:
        return state
    submode = "replan" if t.values.get("replan") and "replan" in config.modes.submodes else "main"
    mode = state.mode
    if t.values.get("replan") and mode == "final_report":
        mode = _diag_mode(config)  # new evidence reopens the diagnosis
    return state.evolve(submode=submode, mode=mode)


def _outcome(state: ContextState, t: _Turn, config: ConversationConfig) -> TurnOutcome:
    """Assemble the outcome from the working memory."""
    v = t.values
    return TurnOutcome(
        state=state,
        turn_index=t.turn,
        language=t.language,
        intent=t.routed.intent,
        intent_confidence=t.routed.confidence,
        matched_pattern=t.routed.pattern,
        intent_kind=t.routed.kind,
        meaning=t.meaning,
        mode=state.mode,
        submode=state.submode,
        decision=t.decision,
        reply_action=t.reply_action,
        proposed_action=t.action,
        resolved_intent=v.get("resolved_intent"),
        intent_source=v.get("intent_source"),
        question=v.get("question"),
        question_kind=v.get("question_kind"),
        missing_slots=v.get("missing_slots", ()),
        invalid_slots=v.get("invalid_slots", ()),
        slots_changed=v.get("slots_changed", ()),
        slots_corrected=v.get("slots_corrected", ()),
        usable_slots=FrozenDict(state.usable_slots()),
        side_question=v.get("side_question"),
        returned_to_step=v.get("returned_to_step"),
        completed_steps=v.get("completed_steps", ()),
        next_step_id=v.get("next_step_id"),
        next_step_question=v.get("next_step_question"),
        loop_violations=v.get("loop_violations", ()),
        replan=v.get("replan", False),
        replan_reason=v.get("replan_reason"),
        facts_added=v.get("facts_added", ()),
        facts_superseded=v.get("facts_superseded", ()),
        contradictions_added=v.get("contradictions_added", ()),
        hypotheses_eliminated=v.get("hypotheses_eliminated", ()),
        hypotheses_confirmed=v.get("hypotheses_confirmed", ()),
        isolation_completed=v.get("isolation_completed", False),
        estimate_status=state.estimate.status,
        estimate_drafted=v.get("estimate_drafted", False),
        estimate_changed=v.get("estimate_changed", False),
        ready_for_report=v.get("ready_for_report", False),
        report_blockers=v.get("report_blockers", ()),
        form_question_id=v.get("form_question_id"),
        form_answer_finalized=v.get("form_answer_finalized"),
        clarify_form_question_id=v.get("clarify_form_question_id"),
        form_complete=v.get("form_complete", False),
        form_changed_question=v.get("form_changed_question"),
        form_changed_from=v.get("form_changed_from"),
        form_changed_to=v.get("form_changed_to"),
        situation=state.situation,
        trace=tuple(t.trace),
    )


def commands_understood(outcome: TurnOutcome) -> tuple[Command, ...]:
    """What the turn understood, as commands (the rules' reading, or the model's once applied).

    The same vocabulary the model generates: a dialogue test states its expectations in it.
    """
    state = outcome.state
    commands: list[Command] = []
    if outcome.intent_source == "explicit" and outcome.resolved_intent:
        commands.append(Command("start_intent", intent=outcome.resolved_intent))
    for name in outcome.slots_changed:
        slot = state.slots.get(name)
        if slot is not None:
            kind = "correct_slot" if name in outcome.slots_corrected else "set_slot"
            commands.append(Command(kind, slot=name, value=slot.value))
    if outcome.form_changed_question:  # a final answer given again, corrected
        commands.append(Command("answer", question_id=outcome.form_changed_question, value=outcome.form_changed_to))
    if outcome.form_answer_finalized is not None:
        answer = outcome.form_answer_finalized
        commands.append(Command("answer", question_id=answer.question_id, value=answer.answer))
    if outcome.side_question is not None:
        kind = {"locate": "locate", "explain": "explain", "howto": "howto"}.get(outcome.side_question.submode, "knowledge")
        commands.append(Command("side_question", side_kind=kind, topic=outcome.side_question.topic))
    if outcome.facts_added or outcome.meaning == EVIDENCE:
        commands.append(Command("report_evidence", text=", ".join(outcome.facts_added) or state.latest_user_text))
    if outcome.meaning == CONFIRM:
        commands.append(Command("confirm"))
    if outcome.meaning == DISPUTE_MEANING:
        commands.append(Command("deny"))
    if not commands and outcome.meaning == UNCLEAR_MEANING:
        commands.append(Command("cannot_handle"))
    return tuple(commands)


__all__ = [
    "commands_understood",
    "TurnOutcome",
    "final_report_for",
    "opening_question",
    "advance_context",
    "initial_state",
    "record_reply",
    "set_slot_status",
    "with_slot_candidates",
]
