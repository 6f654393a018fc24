"""The step engine: the legal options at a decision point, selection rules, and choosing.

Nothing advances a run except choosing an eligible option from the list computed here,
whoever chooses. A choice outside the list is refused and changes nothing.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .conditions import ConditionView, blockers_for
from .documents import stale_documents
from .gates import GATE_SIGNALS, GateEvaluation, evaluate_gate
from .plan import Edge, Plan, localize
from .state import ACTIVE, COMPLETED, RunState

ELIGIBLE, BLOCKED = "eligible", "blocked"
SUPERVISOR = "supervisor"
SELECTION_MODES = ("auto", "recommended", "user_confirmed", "supervisor_override")

MAX_PATH = 50  # recent steps only: the audit trail keeps the whole history, the state stays small

# choose() outcomes
ADVANCED = "advanced"
NON_ADVANCING = "non_advancing"
NEEDS_CONSENT = "needs_consent"
REFUSED = "refused"
NEEDS_SYSTEM_INTERVENTION = "needs_system_intervention"


@dataclass(frozen=True)
class Option:
    """One entry of available_options[]: the options contract plus a few display hints."""

    option_id: str
    label: str
    description: str
    target_step_id: str | None
    eligibility: str
    blockers: tuple[str, ...]
    kind: str
    requires_consent: bool
    effects_summary: str
    non_advancing: bool = False
    outcome: str | None = None
    recommended: bool = False
    escalation: bool = False
    automatic: bool = False  # taken by the engine when its conditions hold, not by a person

    @property
    def eligible(self) -> bool:
        return self.eligibility == ELIGIBLE

    def to_dict(self) -> dict[str, Any]:
        return {
            "option_id": self.option_id,
            "label": self.label,
            "description": self.description,
            "target_step_id": self.target_step_id,
            "eligibility": self.eligibility,
            "blockers": list(self.blockers),
            "kind": self.kind,
            "requires_consent": self.requires_consent,
            "effects_summary": self.effects_summary,
            "non_advancing": self.non_advancing,
            "outcome": self.outcome,
            "recommended": self.recommended,
            "escalation": self.escalation,
            "automatic": self.automatic,
        }


@dataclass(frozen=True)
class Selection:
    """What the selection rules table says to do with an option list."""

    mode: str  # auto | present | blocked | none
    option_id: str | None = None  # the option to take when mode == auto
    recommended_option_id: str | None = None
    reasons: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "option_id": self.option_id,
            "recommended_option_id": self.recommended_option_id,
            "reasons": list(self.reasons),
        }


@dataclass(frozen=True)
class BreakerStatus:
    generating_node: str
    failures: int
    max_retries: int

    @property
    def tripped(self) -> bool:
        return self.failures >= self.max_retries

    def to_dict(self) -> dict[str, Any]:
        return {
            "generating_node": self.generating_node,
            "consecutive_failures": self.failures,
            "max_retries": self.max_retries,
            "tripped": self.tripped,
        }


@dataclass(frozen=True)
class DecisionPoint:
    """Everything the engine decided about the current step, for choosing and for the audit."""

    step_id: str
    options: tuple[Option, ...]
    selection: Selection
    gate: GateEvaluation | None = None
    breaker: BreakerStatus | None = None
    stale: Mapping[str, str] = field(default_factory=dict)
    needs_review: bool = False
    signals: Mapping[str, Any] = field(default_factory=dict)
    used_signals: Mapping[str, Any] = field(default_factory=dict)  # what shaped eligibility (for the audit)

    def option(self, option_id: str) -> Option | None:
        return next((o for o in self.options if o.option_id == option_id), None)

    def snapshot(self) -> list[dict[str, Any]]:
        return [o.to_dict() for o in self.options]


@dataclass(frozen=True)
class Choice:
    """The result of choosing: the outcome, the new state, and what the audit must keep."""

    outcome: str
    state: RunState
    decision: DecisionPoint
    option: Option | None = None
    reason: str = ""
    closest: tuple[str, ...] = ()
    change_workflow: str | None = None
    breaker_tripped: bool = False
    completed: bool = False

    @property
    def moved(self) -> bool:
        return self.outcome == ADVANCED


def _view(state: RunState, signals: Mapping[str, Any], locale: str = "en") -> ConditionView:
    return ConditionView(values={**state.signals, **signals}, completed_steps=frozenset(state.completed_steps), locale=locale)


def _staleness_blockers(plan: Plan, edge: Edge, stale: Mapping[str, str]) -> list[str]:
    if not edge.target or not stale:
        return []
    target = plan.node(edge.target)
    inputs = (*target.consumes, *target.depends_on)
    return [f"stale input: {stale[key]}" for key in inputs if key in stale]


def _breaker(plan: Plan, state: RunState, node_id: str) -> BreakerStatus | None:
    node = plan.node(node_id)
    if node.type != "qa" or not node.checks:
        return None
    return BreakerStatus(node.checks, int(state.qa_failures.get(node.checks, 0)), plan.governance.max_retries)


def _edge_kind(edge: Edge, gate: GateEvaluation | None, node_gate_auto: str | None) -> str:
    if gate is None:
        return edge.kind
    return "auto" if gate.kind == "auto" and edge.outcome == node_gate_auto else "user_choice"


def _build_option(
    plan: Plan,
    edge: Edge,
    blockers: list[str],
    warnings: list[str],
    kind: str,
    recommended: bool,
    locale: str,
) -> Option:
    effects = localize(edge.effects_summary, locale)
    if warnings:
        effects = f"{effects} Warning: " + "; ".join(warnings)
    return Option(
        option_id=edge.option_id,
        label=localize(edge.label, locale),
        description=localize(edge.description, locale),
        target_step_id=None if edge.non_advancing else edge.target,
        eligibility=BLOCKED if blockers else ELIGIBLE,
        blockers=tuple(blockers),
        kind="blocked" if blockers else kind,
        requires_consent=edge.requires_consent,
        effects_summary=effects,
        non_advancing=edge.non_advancing,
        outcome=edge.outcome,
        recommended=recommended and not blockers,
        escalation=edge.escalation,
        automatic=edge.kind == "auto",
    )


def decision_point(
    plan: Plan,
    state: RunState,
    signals: Mapping[str, Any] | None = None,
    *,
    actor: str = "participant",
    locale: str = "en",
) -> DecisionPoint:
    """Compute the legal options at the run's current step and what the selection rules say."""
    signals = dict(signals or {})
    node = plan.node(state.current_step)
    view = _view(state, signals, locale)
    merged = dict(view.values)
    if state.status == COMPLETED or node.type == "end":
        return DecisionPoint(node.id, (), Selection("none"), signals=merged)
    gate = evaluate_gate(node.gate, merged) if node.gate else None
    breaker = _breaker(plan, state, node.id)
    stale = stale_documents(state.documents)
    needs_review = bool(gate and gate.kind == "user_choice" and node.gate.reviewer == SUPERVISOR)
    options = []
    for edge in plan.edges_from(node.id):
        if edge.escalation and not (breaker and breaker.tripped):
            continue  # escalation routes exist only once the breaker has tripped
        if breaker and breaker.tripped and not edge.escalation:
            continue  # a tripped breaker leaves only escalation options
        blockers = blockers_for(edge.conditions, view)
        stale_reasons = _staleness_blockers(plan, edge, stale)
        policy = edge.on_stale or plan.governance.staleness
        warnings = stale_reasons if policy == "warn" else []
        if policy == "block":
            blockers += stale_reasons
        if needs_review and actor != SUPERVISOR and not edge.non_advancing:
            blockers.append("awaiting supervisor review: a supervisor decides this gate")
        recommended = edge.outcome == gate.recommended_outcome if gate else edge.recommended
        options.append(
            _build_option(plan, edge, blockers, warnings, _edge_kind(edge, gate, node.gate.auto_outcome if node.gate else None), recommended, locale)
        )
    selection = select(tuple(options), gate)
    used = {key: merged[key] for key in _signal_keys(plan, node.id) if key in merged}
    return DecisionPoint(node.id, tuple(options), selection, gate, breaker, stale, needs_review, merged, used)


def _condition_keys(condition: Mapping[str, Any]) -> set[str]:
    keys = set()
    if "key" in condition:
        keys.add(str(condition["key"]).split(".")[0])
    if condition.get("type") == "action_allowed":
        keys.add("action_blockers")
    for inner in condition.get("conditions", ()) or ():
        keys |= _condition_keys(inner)
    if isinstance(condition.get("condition"), Mapping):
        keys |= _condition_keys(condition["condition"])
    return keys


def _signal_keys(plan: Plan, node_id: str) -> list[str]:
    """The signals an option at this step can depend on: its conditions' keys and the gate's."""
    keys: set[str] = set()
    for edge in plan.edges_from(node_id):
        for condition in edge.conditions:
            keys |= _condition_keys(condition)
    if plan.node(node_id).gate is not None:
        keys |= set(GATE_SIGNALS) | {"check_summary"}
    return sorted(keys)


def available_options(
    plan: Plan,
    run_state: RunState,
    signals: Mapping[str, Any] | None = None,
    *,
    actor: str = "participant",
    locale: str = "en",
) -> tuple[Option, ...]:
    """The options offered at the run's current step (available_options[])."""
    return decision_point(plan, run_state, signals, actor=actor, locale=locale).options


def select(options: tuple[Option, ...], gate: GateEvaluation | None = None) -> Selection:
    """Apply the selection rules table to an option list."""
    eligible = [o for o in options if o.eligible]
    if not options:
        return Selection("none")
    if not eligible:
        reasons = tuple(dict.fromkeys(b for o in options for b in o.blockers))
        return Selection("blocked", reasons=reasons[:3])
    auto = [o for o in eligible if o.kind == "auto" and not o.non_advancing]
    if len(auto) == 1 and not auto[0].requires_consent:
        reasons = gate.reasons if gate else (auto[0].description or auto[0].label,)
        return Selection("auto", auto[0].option_id, auto[0].option_id, tuple(reasons[:2]))
    advancing = [o for o in eligible if not o.non_advancing] or eligible
    recommended = next((o for o in advancing if o.recommended), advancing[0])
    reasons = gate.reasons if gate else (recommended.description or recommended.label,)
    return Selection("present", None, recommended.option_id, tuple(r for r in reasons[:2] if r))


def closest_options(options: tuple[Option, ...], requested: str, limit: int = 2) -> tuple[str, ...]:
    """Eligible options nearest to an unavailable request, by id and label similarity."""
    eligible = [o for o in options if o.eligible]

    def score(o: Option) -> float:
        return max(
            difflib.SequenceMatcher(None, requested.lower(), o.option_id).ratio(),
            difflib.SequenceMatcher(None, requested.lower(), o.label.lower()).ratio(),
        )

    ranked = sorted(eligible, key=lambda o: (-score(o), o.option_id))
    return tuple(o.option_id for o in ranked[:limit])


def _advance(plan: Plan, state: RunState, edge: Edge, consented: bool) -> tuple[RunState, bool]:
    """Move the run along an edge; returns the new state and whether a breaker tripped."""
    node = plan.node(state.current_step)
    failures = dict(state.qa_failures)
    tripped = False
    if node.type == "qa" and node.checks:
        if edge.outcome == "fail":
            failures[node.checks] = failures.get(node.checks, 0) + 1
            tripped = failures[node.checks] >= plan.governance.max_retries
        elif edge.outcome == "pass":
            failures[node.checks] = 0
    consents = state.consents + ((f"{node.id}:{edge.option_id}",) if consented else ())
    target = edge.target or state.current_step
    completed = tuple(s for s in state.completed_steps if s != target)
    if node.id not in completed:
        completed += (node.id,)
    target_node = plan.node(target)
    signals = {k: v for k, v in state.signals.items() if k not in edge.clears}
    return (
        replace(
            state,
            signals=signals,
            current_step=target,
            status=COMPLETED if target_node.type == "end" else ACTIVE,
            completed_steps=completed + ((target,) if target_node.type == "end" else ()),
            visits={**state.visits, target: state.visits.get(target, 0) + 1},
            qa_failures=failures,
            consents=consents,
            path=(state.path + (target,))[-MAX_PATH:],
        ),
        tripped,
    )


def choose(
    plan: Plan,
    state: RunState,
    option_id: str,
    signals: Mapping[str, Any] | None = None,
    *,
    consent: bool = False,
    actor: str = "participant",
    locale: str = "en",
    decision: DecisionPoint | None = None,
) -> Choice:
    """Choose an option: advanced, non_advancing, needs_consent, refused or needs_system_intervention.

    `decision` is the decision point the caller just computed for the same plan, state,
    signals, actor and locale (it is not computed again).
    """
    dp = decision if decision is not None else decision_point(plan, state, signals, actor=actor, locale=locale)
    option = dp.option(option_id)
    if option is None or not option.eligible:
        if not any(o.eligible for o in dp.options):
            reason = "; ".join(dp.selection.reasons) or "no valid option exists at this step"
            return Choice(NEEDS_SYSTEM_INTERVENTION, state, dp, option, reason)
        reason = (
            f"option '{option_id}' is blocked: " + "; ".join(option.blockers)
            if option
            else f"option '{option_id}' is not available at step '{dp.step_id}'"
        )
        return Choice(REFUSED, state, dp, option, reason, closest_options(dp.options, option_id))
    if option.requires_consent and not consent:
        return Choice(NEEDS_CONSENT, state, dp, option, f"option '{option_id}' requires explicit consent")
    edge = next(e for e in plan.edges_from(dp.step_id) if e.option_id == option_id)
    if edge.non_advancing:
        consents = state.consents + ((f"{dp.step_id}:{option_id}",) if option.requires_consent else ())
        return Choice(NON_ADVANCING, replace(state, consents=consents), dp, option)
    new_state, tripped = _advance(plan, state, edge, consented=option.requires_consent)
    return Choice(
        ADVANCED,
        new_state,
        dp,
        option,
        change_workflow=edge.change_workflow,
        breaker_tripped=tripped,
        completed=new_state.status == COMPLETED,
    )
