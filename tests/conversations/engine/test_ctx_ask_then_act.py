"""Ask, then act (seed 002): every row of the test matrix, plus the rules around it, end to end."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from conversations.engine import ConversationConfig, load_example
from conversations.engine.ask_then_act import (
    ActionContext,
    action_blockers,
    allowed_action,
    close_action_flow,
    detect_situation,
    evaluate_actions,
    open_action_flow,
)
from conversations.engine.config import ActionSpec
from conversations.engine.simulate import Dialogue

CONFIG = ConversationConfig.from_dict(load_example("manager_assistant"))
EMAIL, CALENDAR = CONFIG.actions  # sorted by priority: email before calendar
NOW = datetime(2026, 2, 12, 2, tzinfo=UTC)
ACTIVE_TEXT = "My employee didn't show up for his shift today."
HYPOTHETICAL_TEXT = "What should I do if an employee doesn't show up?"

# Seed 002 "Test Matrix": scenario, history length, ERA reply has "?", manager answered
# (None = N/A: no question pending), state, situation text, should trigger, expected blocker.
MATRIX = [
    (
        "first_response",
        1,
        "You should call the employee.",
        None,
        None,
        ACTIVE_TEXT,
        False,
        "too_early",
    ),
    (
        "clarifying",
        2,
        "Have you tried calling them?",
        False,
        None,
        ACTIVE_TEXT,
        False,
        "reply_asks_question",
    ),
    (
        "post_clarification",
        4,
        "Thanks for clarifying. You should schedule a call with them.",
        True,
        None,
        ACTIVE_TEXT,
        True,
        None,
    ),
    (
        "already_in_flow",
        4,
        "Thanks. You should schedule a call with them.",
        True,
        "calendar",
        ACTIVE_TEXT,
        False,
        "action_flow_open:calendar",
    ),
    (
        "hypothetical",
        2,
        "You should call the employee and document it.",
        None,
        None,
        HYPOTHETICAL_TEXT,
        False,
        "hypothetical_situation",
    ),
]


@pytest.mark.parametrize(
    ("name", "history", "reply", "answered", "flow", "user_text", "should_trigger", "blocker"),
    MATRIX,
    ids=[row[0] for row in MATRIX],
)
def test_seed_002_matrix(
    name, history, reply, answered, flow, user_text, should_trigger, blocker
) -> None:
    ctx = ActionContext(
        history_length=history,
        reply_text=reply,
        reply_asks_question="?" in reply,
        last_question_pending=answered is False,
        open_action_flow=flow,
        situation=detect_situation(user_text),
    )
    blockers = action_blockers(CALENDAR, ctx)
    assert (not blockers) is should_trigger, blockers
    if blocker:
        assert blocker in blockers


def test_hypothetical_and_active_detection_en_and_zh() -> None:
    assert detect_situation(HYPOTHETICAL_TEXT) == "hypothetical"
    assert detect_situation("In general, how should managers handle lateness?") == "hypothetical"
    assert detect_situation(ACTIVE_TEXT) == "active"
    assert detect_situation("Yesterday Maria missed the morning shift again.") == "active"
    assert detect_situation("如果员工不来上班，我应该怎么办？") == "hypothetical"
    assert detect_situation("我的员工今天没来上班。") == "active"
    assert detect_situation("Thanks") == "unknown"


def test_email_before_calendar_only_one_action_per_turn() -> None:
    ctx = ActionContext(
        history_length=4,
        reply_text="Document this by email, then call them.",
        reply_asks_question=False,
        situation="active",
    )
    decisions = evaluate_actions([CALENDAR, EMAIL], ctx)
    assert allowed_action(decisions) == "draft_email"
    calendar = next(d for d in decisions if d.action_id == "schedule_call")
    assert not calendar.allowed and calendar.blockers == ("one_action_per_turn:draft_email",)


def test_never_twice_and_state_guards() -> None:
    ctx = ActionContext(
        history_length=6,
        reply_asks_question=False,
        situation="active",
        executed_actions=("draft_email",),
    )
    assert action_blockers(EMAIL, ctx) == ["already_executed"]
    guarded = ActionSpec.from_dict(
        {
            "id": "send_warning",
            "flow": "email",
            "requires_slots": ["employee_name"],
            "requires_completed_steps": ["contacted"],
        }
    )
    assert action_blockers(guarded, ctx) == [
        "missing_slot:employee_name",
        "step_not_completed:contacted",
    ]
    unknown = ActionContext(history_length=6, reply_asks_question=False)
    assert action_blockers(EMAIL, unknown) == ["situation_not_established"]


def test_clarification_phrase_without_question_mark_counts_as_asking() -> None:
    ctx = ActionContext.from_state(
        Dialogue(CONFIG, NOW).state, reply_text="Just to confirm, you already called twice."
    )
    assert ctx.reply_asks_question


def test_recommendation_keywords_when_required() -> None:
    strict = ActionSpec.from_dict(
        {
            "id": "schedule_call",
            "flow": "calendar",
            "require_recommendation": True,
            "keywords": {"en": [r"\bcall\b"]},
        }
    )
    base = {"history_length": 4, "reply_asks_question": False, "situation": "active"}
    assert action_blockers(strict, ActionContext(reply_text="Document the absence.", **base)) == [
        "not_recommended_in_reply"
    ]
    assert (
        action_blockers(strict, ActionContext(reply_text="You should call them today.", **base))
        == []
    )


def test_end_to_end_with_the_manager_assistant() -> None:
    d = Dialogue(CONFIG, NOW)
    first = d.say("My employee Tom didn't show up for his shift today.")
    assert (
        first.form_answer_finalized.question_id == "situation" and first.next_step_id == "contacted"
    )
    assert d.state.slots["employee_name"].value == "Tom" and d.state.situation == "active"
    # the reply asked "Have you already tried to contact them?"; before the manager answers:
    waiting = ActionContext.from_state(d.state, reply_text="Noted.")
    assert "awaiting_answer" in action_blockers(EMAIL, waiting)
    second = d.say("Yes, I called him twice")
    assert second.form_answer_finalized.answer == "yes"
    asking = ActionContext.from_state(second.state, reply_text=second.next_step_question)
    assert "reply_asks_question" in action_blockers(EMAIL, asking)
    third = d.say("It's the first time, nothing documented yet")
    assert third.form_complete and third.reply_action == "form_complete"
    guidance = "Document the no-show by email today, then talk to Tom."
    decisions = evaluate_actions(
        CONFIG.actions, ActionContext.from_state(third.state, reply_text=guidance)
    )
    assert allowed_action(decisions) == "draft_email"
    # the email flow opens: nothing else may start, and the email never runs twice
    state = open_action_flow(third.state, EMAIL)
    assert all(
        not d.allowed
        for d in evaluate_actions(
            CONFIG.actions, ActionContext.from_state(state, reply_text=guidance)
        )
    )
    state = close_action_flow(state, EMAIL, executed=True)
    decisions = evaluate_actions(
        CONFIG.actions, ActionContext.from_state(state, reply_text=guidance)
    )
    assert allowed_action(decisions) == "schedule_call"
    assert next(d for d in decisions if d.action_id == "draft_email").blockers == (
        "already_executed",
    )


def test_hypothetical_conversation_never_unlocks_actions() -> None:
    d = Dialogue(CONFIG, NOW)
    d.say("What should I do if an employee doesn't show up?")
    d.say("no")
    d.say("never happened")
    ctx = ActionContext.from_state(d.state, reply_text="Usually you call them and document it.")
    assert "hypothetical_situation" in action_blockers(EMAIL, ctx)


def test_side_question_does_not_count_as_an_answer() -> None:
    d = Dialogue(CONFIG, NOW)
    d.say("My report Anna missed two shifts this week")
    out = d.say("What is a written warning?")
    assert out.meaning == "side_question" and out.side_question.answer
    assert out.state.last_question is not None and out.state.last_question_answered is False
    ctx = ActionContext.from_state(out.state, reply_text="A written warning documents the issue.")
    assert "awaiting_answer" in action_blockers(EMAIL, ctx)
