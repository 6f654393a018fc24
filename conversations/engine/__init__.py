"""The context engine: pure Python, no Django, no clock, no settings.

Modules: `intents` (pattern router), `slots` (extraction, memory, clarify decision),
`state` (ContextState and its parts), `config` (ConversationConfig, the plan's
"conversation" JSON), `evidence` / `procedure` / `topics` / `loop_guard` / `estimate`
(the diagnostic's behaviours), `forms` (clarifying threads), `ask_then_act` (may an action
be offered yet), `context_package` (what a model is sent, and the response contract it must keep), `commands` (the
understanding vocabulary and its validation), `turn` (the per-turn pipeline and its
outcome) with its stages in `turn_understand` / `turn_diagnostic` / `turn_form` /
`turn_clarify`, sharing the typed working memory `turn_work.TurnWork`. `load_example(name)` reads a shipped plan's conversation section (`workflows/plans/`).
"""

from __future__ import annotations

from .ask_then_act import (
    ActionContext,
    ActionDecision,
    action_blockers,
    detect_situation,
    evaluate_actions,
)
from .config import ConfigError, ConversationConfig, validate_config
from .context_package import (
    ConciergeResponse,
    ResponseContext,
    ResponseValidation,
    apply_model_response,
    build_context_package,
    validate_response,
)
from .estimate import FinalReport, build_final_report
from .intents import BUILTIN_INTENTS, DomainIntent, IntentResult, route_intent
from .loop_guard import ProposedAction, check_loop
from .state import ContextState
from .turn import (
    TurnOutcome,
    advance_context,
    final_report_for,
    initial_state,
    learn_from_tool,
    opening_question,
    record_opening,
    record_reply,
    set_slot_status,
    with_slot_candidates,
)

__all__ = [
    "BUILTIN_INTENTS",
    "ActionContext",
    "ActionDecision",
    "ConciergeResponse",
    "ConfigError",
    "ContextState",
    "ConversationConfig",
    "DomainIntent",
    "FinalReport",
    "IntentResult",
    "ProposedAction",
    "ResponseContext",
    "ResponseValidation",
    "TurnOutcome",
    "action_blockers",
    "advance_context",
    "apply_model_response",
    "build_context_package",
    "build_final_report",
    "check_loop",
    "detect_situation",
    "evaluate_actions",
    "final_report_for",
    "opening_question",
    "record_opening",
    "initial_state",
    "learn_from_tool",
    "load_example",
    "record_reply",
    "route_intent",
    "set_slot_status",
    "validate_config",
    "validate_response",
    "with_slot_candidates",
]


def load_example(name: str) -> dict:
    """The conversation section of a shipped plan (e.g. "rv_diagnostic"), as the product runs it: the engine's
    tests read the plans themselves, never copies of them that drift."""
    from pathlib import Path

    from workflows.engine.plan_files import read_plan

    plans = Path(__file__).resolve().parents[2] / "workflows" / "plans"
    path = plans / name if (plans / name).is_dir() else plans / f"{name}.json"
    return read_plan(path)["conversation"]
