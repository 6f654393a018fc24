"""A scripted conversation driver: the engine plus a minimal deterministic reply.

Used by the engine's scenario tests and handy as a reference for a rules backend: it
turns a `TurnOutcome` into a plain reply (side answer, targeted question, next step)
and books it with `record_reply`, exactly as the concierge must.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .catalog import say
from .config import ConversationConfig
from .state import ContextState
from .turn import TurnOutcome, advance_context, initial_state, record_reply

_STEP_ACTIONS = (
    "ask_step",
    "form_next",
    "side_answer",
    "fallback",
    "estimate_confirmed",
    "estimate_skipped",
)


def compose_reply(outcome: TurnOutcome) -> str:
    """A minimal reply that does what the outcome says (no model involved)."""
    parts: list[str] = []
    side = outcome.side_question
    if side is not None:
        parts.append(side.answer or "")
    if outcome.question:
        parts.append(outcome.question)
    elif outcome.next_step_question and outcome.reply_action in _STEP_ACTIONS:
        parts.append(outcome.next_step_question)
    text = " ".join(p for p in parts if p).strip()
    return text or say(outcome.language, "Noted.")


@dataclass
class Dialogue:
    """Drive one conversation turn by turn (test and demo helper; mutable on purpose)."""

    config: ConversationConfig
    now: datetime
    timezone: str = "Asia/Shanghai"
    lookups: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    locale: str | None = None
    state: ContextState | None = None
    outcomes: list[TurnOutcome] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.state is None:
            self.state = initial_state(self.config, locale=self.locale)

    def say(self, text: str, *, reply: str | None = None) -> TurnOutcome:
        """One user message, then the reply (composed unless given) is recorded."""
        assert self.state is not None
        outcome = advance_context(
            self.state,
            text,
            now=self.now,
            timezone=self.timezone,
            config=self.config,
            lookups=self.lookups,
        )
        reply_text = reply if reply is not None else compose_reply(outcome)
        self.state = record_reply(
            outcome.state,
            text=reply_text,
            action=outcome.proposed_action,
            clarifying_question_id=outcome.clarify_form_question_id,
        )
        self.outcomes.append(outcome)
        self.replies.append(reply_text)
        return outcome
