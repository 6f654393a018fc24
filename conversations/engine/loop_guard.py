"""Anti-loop rules: never two fallbacks in a row, never ask a completed step
again, at most `max_step_repeats` asks in a row of one check or form question (counted from the replies
that put it, whatever words come before it: `asked_in_a_row`), and a cool-down before raising the same
topic again. Violations are returned as reason strings, not a bare bool."""

from __future__ import annotations

from dataclasses import dataclass

from ._serde import Serializable
from .config import LoopGuardConfig
from .state import AgentAction, ContextState, with_key

FALLBACK = "fallback"
QUESTION = "question"
MAX_REMEMBERED_ACTIONS = 12


@dataclass(frozen=True)
class ProposedAction(Serializable):
    """What the next reply is about to do."""

    type: str  # question | clarification | fallback | side_answer | transition | statement | return
    step_id: str | None = None
    topic: str | None = None


def check_loop(
    state: ContextState, action: ProposedAction, guard: LoopGuardConfig
) -> tuple[str, ...]:
    """Reasons the proposed action would make the conversation loop; empty when it is fine."""
    violations: list[str] = []
    if action.type == FALLBACK and _consecutive_fallbacks(state) >= guard.max_consecutive_fallbacks:
        violations.append("consecutive_fallback")
    if action.type in (QUESTION, "clarification") and action.step_id:
        if action.step_id in state.completed_steps:
            violations.append(f"step_completed:{action.step_id}")
        if asked_enough(state, action.step_id, guard):
            violations.append(f"step_repeat_limit:{action.step_id}")
    if action.type == QUESTION and action.topic and action.step_id != state.current_step_id:
        last = state.cooldowns.get(action.topic)
        if last is not None and state.turn_index - last < guard.topic_cooldown_turns:
            violations.append(f"topic_cooldown:{action.topic}")
    return tuple(violations)


def asked_in_a_row(state: ContextState, question_id: str) -> int:
    """How many replies in a row have put this check or form question, whatever words led to it (a fallback, a
    "no problem, it stays open", a clarification); 0 when the last reply asked something else."""
    return state.same_question_asks if state.same_question == question_id else 0


def asked_enough(state: ContextState, question_id: str, guard: LoopGuardConfig) -> bool:
    """The question was put as often in a row as the guard allows: another non-answer leaves it open."""
    return asked_in_a_row(state, question_id) >= guard.max_step_repeats


def _consecutive_fallbacks(state: ContextState) -> int:
    count = 0
    for action in reversed(state.last_actions):
        if action.type != FALLBACK:
            break
        count += 1
    return max(count, 1 if state.last_reply_fallback else 0)


def may_fallback(state: ContextState, guard: LoopGuardConfig) -> bool:
    """Whether a generic 'tell me more' reply is allowed now."""
    return not check_loop(state, ProposedAction(FALLBACK), guard)


def record_action(state: ContextState, action: ProposedAction) -> ContextState:
    """Remember what a reply did: repeat counts, cool-downs, fallback flag, recent actions."""
    entry = AgentAction(
        type=action.type, turn=state.turn_index, step_id=action.step_id, topic=action.topic
    )
    counts = state.step_repeat_counts
    cooldowns = state.cooldowns
    if action.type == QUESTION and action.step_id:
        counts = with_key(counts, action.step_id, counts.get(action.step_id, 0) + 1)
    if action.type in (QUESTION, "side_answer") and action.topic:
        cooldowns = with_key(cooldowns, action.topic, state.turn_index)
    return state.evolve(
        last_actions=(state.last_actions + (entry,))[-MAX_REMEMBERED_ACTIONS:],
        step_repeat_counts=counts,
        cooldowns=cooldowns,
        last_reply_fallback=action.type == FALLBACK,
    )
