"""Gate kind from signals: auto only when every signal is unambiguous."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .plan import GateSpec

# Engine policy, not plan data: the amendment forbids workflow-defined thresholds.
CONFIDENCE_THRESHOLD = 0.8
UNRECOGNISED_INTENTS = frozenset({"unknown", "mixed", ""})
GATE_SIGNALS = ("qa_pass", "confidence", "missing_critical", "intent_class", "policy_risk", "semantic_uncertainty")


@dataclass(frozen=True)
class GateEvaluation:
    kind: str  # auto | user_choice
    recommended_outcome: str
    reasons: tuple[str, ...]
    signals: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "recommended_outcome": self.recommended_outcome,
            "reasons": list(self.reasons),
            "signals": dict(self.signals),
        }


def _confidence(signals: Mapping[str, Any]) -> float | None:
    value = signals.get("confidence")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _problems(spec: GateSpec, signals: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(hard problems that argue against the auto outcome, soft ones that only need a person)."""
    hard, soft = [], []
    if signals.get("qa_pass") is not True:
        hard.append("QA did not pass" if signals.get("qa_pass") is False else "no QA result")
    if signals.get("missing_critical") is not False:
        hard.append("critical information is missing" if signals.get("missing_critical") else "completeness unknown")
    intent = signals.get("intent_class")
    if not isinstance(intent, str) or intent.lower() in UNRECOGNISED_INTENTS:
        hard.append(f"intent class is {intent or 'unknown'!s}")
    confidence = _confidence(signals)
    if confidence is None or confidence < CONFIDENCE_THRESHOLD:
        hard.append(f"intent confidence {confidence if confidence is not None else 'unknown'} is below {CONFIDENCE_THRESHOLD}")
    if spec.high_cost:
        soft.append("the next step is high-cost")
    if signals.get("policy_risk"):
        soft.append("policy risk indicators are present")
    if signals.get("semantic_uncertainty"):
        soft.append("QA flagged semantic uncertainty")
    return hard, soft


def evaluate_gate(spec: GateSpec, signals: Mapping[str, Any]) -> GateEvaluation:
    """Compute the gate's kind and recommendation, keeping the signal values for the audit."""
    recorded = {name: signals.get(name) for name in GATE_SIGNALS}
    hard, soft = _problems(spec, signals)
    if not hard:
        confidence = _confidence(signals)
        support = ("QA passed", f"intent confidence {confidence:.2f}; required fields present")
        kind = "user_choice" if soft else "auto"
        reasons = (soft[0], *support[:1]) if soft else support
        return GateEvaluation(kind, spec.auto_outcome, tuple(reasons), recorded)
    summary = signals.get("check_summary")  # a task's own account of what it found
    reasons = ((str(summary),) if summary else ()) + tuple(hard)
    return GateEvaluation("user_choice", spec.fallback_outcome, reasons[:2], recorded)
