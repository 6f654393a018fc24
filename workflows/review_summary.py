"""What a supervisor reads on a review: its subject in words and its signals beside the gate's thresholds.

Plain Python (no Django): the admin renders what these functions return. The thresholds are the
engine's own constants (workflows/engine/gates.py), so the page cannot drift from the policy
that computed the gate's kind.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from workflows.engine.gates import CONFIDENCE_THRESHOLD, GATE_SIGNALS, UNRECOGNISED_INTENTS

# Keys whose plain-words label is not just the key with spaces.
LABELS = {
    "order_no": "Order", "plate_no": "Plate", "city_code": "City", "lot_code": "Lot",
    "entry_time": "Entry", "exit_time": "Exit",
    "order_total_amount": "Recorded amount", "simulated_total_amount": "Simulated amount",
    "rule_code": "Rule", "version_no": "Rule version", "verification_id": "Verification",
    "run_id": "Run", "conversation_id": "Conversation",
    "amount_check_result": "Amount check", "qa_pass": "QA check", "missing_critical": "Critical information",
    "intent_class": "Intent class", "policy_risk": "Policy risk", "semantic_uncertainty": "Semantic uncertainty",
}
# The fee subject's facts about the order, in reading order (times come from the order itself).
FEE_ORDER_KEYS = ("order_no", "plate_no", "city_code", "lot_code", "entry_time", "exit_time")
# Shown as links beside the summary, not as numbers in it.
LINKED_KEYS = frozenset({"run_id", "conversation_id", "verification_id"})
_QA_WORDING = re.compile(r"\bQA\b")


def label_for(key: str) -> str:
    """A key as a person reads it: 'order_total_amount' → 'Recorded amount', 'goal_date' → 'Goal date'."""
    return LABELS.get(key) or key.replace("_", " ").strip().capitalize()


def readable(value: Any) -> str:
    """Any stored value in words: no braces, brackets, quotes or snake_case keys."""
    if value is None or value == "" or value == [] or value == {}:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list | tuple):
        return ", ".join(readable(item) for item in value)
    if isinstance(value, Mapping):
        return "; ".join(f"{label_for(str(k))}: {readable(v)}" for k, v in value.items() if v not in (None, ""))
    return str(value)


def readable_rows(mapping: Mapping[str, Any], *, skip: Iterable[str] = ()) -> list[tuple[str, str]]:
    """(label, value) for each key of a mapping, for a plain two-column table."""
    skipped = set(skip)
    return [(label_for(key), readable(value)) for key, value in mapping.items() if key not in skipped]


def is_fee_subject(subject: Mapping[str, Any]) -> bool:
    """A fee mismatch names an order and the amount the rule gives (gate or billing review alike)."""
    return bool(subject.get("order_no")) and "simulated_total_amount" in subject


@dataclass(frozen=True)
class FeeSummary:
    order: list[tuple[str, str]]
    recorded: str
    simulated: str
    rule: str
    difference: str


def _difference(recorded: str, simulated: str) -> str:
    try:
        delta = Decimal(simulated) - Decimal(recorded)
    except (InvalidOperation, TypeError):
        return ""
    if delta == 0:
        return "The rule gives the amount the order records."
    direction = "less" if delta < 0 else "more"
    return f"The rule gives {abs(delta):.2f} {direction} than the order records."


def fee_summary(subject: Mapping[str, Any], order_facts: Mapping[str, Any] | None = None) -> FeeSummary:
    """The order (number, plate, lot, times) and its two amounts with the rule that gave the second."""
    facts = {**subject, **(order_facts or {})}
    recorded, simulated = str(subject.get("order_total_amount", "")), str(subject.get("simulated_total_amount", ""))
    rule = str(subject.get("rule_code") or "—")
    if subject.get("version_no") is not None:
        rule = f"{rule}, version {subject['version_no']}"
    return FeeSummary(
        order=[(label_for(key), readable(facts.get(key))) for key in FEE_ORDER_KEYS],
        recorded=recorded or "—", simulated=simulated or "—", rule=rule, difference=_difference(recorded, simulated),
    )


def step_label(plan_definition: Mapping[str, Any], step_id: str, locale: str = "en") -> str:
    """A plan node's own label (English unless asked), or its id in words when the plan has no such node."""
    node = next((n for n in plan_definition.get("nodes", ()) if n.get("id") == step_id), None)
    label = (node or {}).get("label")
    if isinstance(label, Mapping):
        label = label.get(locale) or next(iter(label.values()), None)
    return str(label) if label else step_id.replace("_", " ").capitalize()


def named(code: str, names: Mapping[str, str] | None, locale: str = "en") -> str:
    """A city or lot by its name with its code beside it: 'Shanghai (310100)'."""
    name = (names or {}).get(locale) or next(iter((names or {}).values()), "")
    return f"{name} ({code})" if name and name != code else code


def qa_step_ran(plan_definition: Mapping[str, Any], completed_steps: Iterable[str]) -> bool:
    """Whether the run went through one of its plan's QA nodes: only then may a page speak of QA."""
    qa_nodes = {node.get("id") for node in plan_definition.get("nodes", ()) if node.get("type") == "qa"}
    return bool(qa_nodes & set(completed_steps))


def reasons_shown(reasons: Iterable[str], *, qa_ran: bool) -> list[str]:
    """The recommendation's reasons, without QA wording when no QA step ran.

    A gate without QA (a fee check) still carries the engine's generic "QA did not pass"
    because its task reports its own check as qa_pass; that is not what happened.
    """
    return [reason for reason in reasons if qa_ran or not _QA_WORDING.search(reason)]


@dataclass(frozen=True)
class SignalRow:
    name: str
    value: str
    held_against: str
    met: bool | None  # None: no threshold applies to this signal


def _confidence_row(value: Any) -> SignalRow:
    threshold = f"≥ {CONFIDENCE_THRESHOLD:.2f}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return SignalRow("Confidence", "not reported", threshold, False)
    return SignalRow("Confidence", f"{value:.2f}", threshold, value >= CONFIDENCE_THRESHOLD)


def _intent_row(value: Any) -> SignalRow:
    unrecognised = " or ".join(sorted(i for i in UNRECOGNISED_INTENTS if i))
    recognised = isinstance(value, str) and value.lower() not in UNRECOGNISED_INTENTS
    shown = value.replace("_", " ") if isinstance(value, str) and value else "not reported"
    return SignalRow("Intent class", shown, f"a recognised class (not {unrecognised})", recognised)


def _check_row(value: Any, *, qa_ran: bool, fee: bool) -> SignalRow | None:
    """qa_pass in the words of the check that set it; None when nothing reported it."""
    if value is None and not qa_ran:
        return None
    if qa_ran:
        shown = {True: "passed", False: "did not pass"}.get(value, "no result")
        return SignalRow("QA check", shown, "must pass", value is True)
    if fee:
        return SignalRow("Amounts agree", "yes" if value else "no", "must agree for an automatic pass", value is True)
    return SignalRow("Step's check", "passed" if value else "did not pass", "must pass", value is True)


def _missing_row(value: Any) -> SignalRow:
    shown = {False: "nothing missing", True: "something is missing"}.get(value, "not reported")
    return SignalRow("Critical information", shown, "nothing critical missing", value is False)


def _flag_row(name: str, value: Any) -> SignalRow | None:
    if value is None:
        return None
    return SignalRow(name, "present" if value else "none", "none, or a person decides", not value)


def _other_row(key: str, value: Any) -> SignalRow:
    if key == "amount_check_result":
        return SignalRow("Amount check", readable(value), "match", value == "match")
    return SignalRow(label_for(key), readable(value), "—", None)


def signal_rows(signals: Mapping[str, Any], *, qa_ran: bool, fee: bool) -> list[SignalRow]:
    """Each signal with its value and what the gate held it against, gate signals first."""
    if not signals:
        return []
    gate_rows: list[SignalRow | None] = []
    if any(key in signals for key in GATE_SIGNALS):
        gate_rows = [
            _confidence_row(signals.get("confidence")),
            _check_row(signals.get("qa_pass"), qa_ran=qa_ran, fee=fee),
            _missing_row(signals.get("missing_critical")),
            _intent_row(signals.get("intent_class")),
            _flag_row("Policy risk", signals.get("policy_risk")),
            _flag_row("Semantic uncertainty" if qa_ran else "Uncertainty", signals.get("semantic_uncertainty")),
        ]
    others = [_other_row(key, value) for key, value in signals.items() if key not in GATE_SIGNALS]
    return [row for row in gate_rows if row is not None] + others
