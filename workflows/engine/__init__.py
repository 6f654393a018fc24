"""The governed workflow engine: plans, legal options, gates, breaker, staleness. No Django."""

from .conditions import iter_conditions
from .documents import document_add_version, stale_documents
from .gates import CONFIDENCE_THRESHOLD, GateEvaluation, evaluate_gate
from .options import (
    ADVANCED,
    BLOCKED,
    ELIGIBLE,
    NEEDS_CONSENT,
    NEEDS_SYSTEM_INTERVENTION,
    NON_ADVANCING,
    REFUSED,
    SELECTION_MODES,
    Choice,
    DecisionPoint,
    Option,
    Selection,
    available_options,
    choose,
    closest_options,
    decision_point,
    select,
)
from .plan import (
    Edge,
    Node,
    Plan,
    PlanProblem,
    PlanValidationError,
    localize,
    parse_plan,
    validate_plan,
)
from .state import ACTIVE, COMPLETED, WAITING_REVIEW, DocumentState, RunState

__all__ = [
    "ACTIVE", "ADVANCED", "BLOCKED", "COMPLETED", "CONFIDENCE_THRESHOLD", "ELIGIBLE",
    "NEEDS_CONSENT", "NEEDS_SYSTEM_INTERVENTION", "NON_ADVANCING", "REFUSED", "SELECTION_MODES",
    "WAITING_REVIEW", "Choice", "DecisionPoint", "DocumentState", "GateEvaluation", "Option",
    "Edge", "Node", "Plan", "PlanProblem", "PlanValidationError", "RunState", "Selection", "available_options",
    "choose", "closest_options", "decision_point", "document_add_version", "evaluate_gate", "iter_conditions",
    "localize", "parse_plan", "select", "stale_documents", "validate_plan",
]
