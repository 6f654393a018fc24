"""Unit tests of the seed 000 building blocks: evidence, hypotheses, replan, loop guard, topic stack, estimate."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from conversations.engine import ContextState, ConversationConfig, load_example
from conversations.engine.config import EvidenceRule, HypothesisSpec, LoopGuardConfig
from conversations.engine.estimate import (
    build_final_report,
    confirm_estimate,
    draft_estimate,
    estimate_request,
)
from conversations.engine.evidence import (
    add_facts,
    apply_replan,
    complete_isolation,
    match_evidence,
    reassess_hypotheses,
    recommendations,
    replan_reason,
)
from conversations.engine.loop_guard import ProposedAction, check_loop, may_fallback, record_action
from conversations.engine.simulate import Dialogue
from conversations.engine.topics import detect_topic, pop_all, push_topic

RULES = (
    EvidenceRule.from_dict(
        {
            "id": "hot",
            "type": "measurement",
            "patterns": {"en": [r"reads\s+(\d+)\s*degrees"]},
            "label": "Temperature",
        }
    ),
    EvidenceRule.from_dict(
        {
            "id": "runs",
            "patterns": {"en": [r"\bmotor\s+runs\b"]},
            "unless": {"en": [r"\bnot\b"]},
            "excludes": ["dead"],
        }
    ),
    EvidenceRule.from_dict(
        {
            "id": "dead",
            "patterns": {"en": [r"\bmotor\s+(?:is\s+)?dead\b", r"\bmotor\s+(?:does\s+)?not\s+run"]},
        }
    ),
)
SPECS = (
    HypothesisSpec.from_dict(
        {
            "id": "motor",
            "supported_by": ["hot"],
            "confirmed_by": ["dead"],
            "eliminated_by": ["runs"],
            "recommendation": "Replace motor",
            "estimate": [{"label": "Motor", "hours": 1.5}],
        }
    ),
    HypothesisSpec.from_dict(
        {
            "id": "supply",
            "confirmed_by": ["runs"],
            "recommendation": "Fix supply",
            "estimate": [{"label": "Supply", "hours": 1}],
        }
    ),
)
GUARD = LoopGuardConfig()


def facts_from(state: ContextState, text: str, turn: int):
    return add_facts(state, match_evidence(text, RULES, "en"), rules=RULES, turn=turn, step_id="s1")


def test_evidence_matching_is_clause_local_and_captures_values() -> None:
    matches = match_evidence(
        "the motor does not run, but the motor runs on the bench. It reads 80 degrees", RULES, "en"
    )
    # "not" in the first clause does not leak into the second: both observations are recorded
    assert {m.rule_id for m in matches} == {"dead", "runs", "hot"}
    assert {m.rule_id for m in match_evidence("the motor does not run", RULES, "en")} == {"dead"}
    assert next(m for m in matches if m.rule_id == "hot").value == "Temperature: 80 degrees"  # with the unit said
    assert {
        m.rule_id for m in match_evidence("motor is dead; now the motor runs", RULES, "en")
    } == {"dead", "runs"}


def test_newer_fact_supersedes_contradicting_and_remeasured_facts() -> None:
    state, first = facts_from(ContextState(), "the motor is dead. it reads 80 degrees", 1)
    assert len(first.added) == 2
    state, second = facts_from(state, "motor runs now and it reads 95 degrees", 2)
    dead = next(f for f in state.facts if f.key == "dead")
    old_temp = next(f for f in state.facts if f.key == "hot" and f.turn == 1)
    assert (
        dead.superseded_by
        and old_temp.superseded_by
        and set(second.superseded) == {dead.id, old_temp.id}
    )
    assert len(state.contradictions) == 2 and all(
        c.resolution == "superseded_by_newer" for c in state.contradictions
    )
    state, third = facts_from(state, "motor runs", 3)
    assert third.added == ()  # a repeated fact is not new evidence


def test_hypotheses_are_derived_and_elimination_beats_confirmation() -> None:
    state, _ = facts_from(ContextState(), "the motor is dead", 1)
    state, changes = reassess_hypotheses(state, SPECS, "en")
    assert changes.confirmed == ("motor",) and recommendations(state, SPECS, "en") == [
        "Replace motor"
    ]
    state, _ = facts_from(state, "the motor runs", 2)
    state, changes = reassess_hypotheses(state, SPECS, "en")
    assert changes.eliminated == ("motor",) and changes.confirmed == ("supply",)
    assert recommendations(state, SPECS, "en") == ["Fix supply"]


def test_replan_only_after_isolation_and_rolls_back() -> None:
    state, _ = facts_from(ContextState(), "the motor is dead", 1)
    state, _ = reassess_hypotheses(state, SPECS, "en")
    before = state
    assert (
        replan_reason(
            before,
            state,
            text="actually I found a leak",
            intent="NEW_EVIDENCE",
            new_fact_ids=(),
            specs=SPECS,
            triggers={},
            language="en",
        )
        is None
    )
    state = complete_isolation(state, state.hypothesis("motor"), turn=1)
    state = draft_estimate(state, SPECS, turn=1, locale="en")
    isolated = state
    state, update = facts_from(state, "now the motor runs", 2)
    state, _ = reassess_hypotheses(state, SPECS, "en")
    reason = replan_reason(
        isolated,
        state,
        text="now the motor runs",
        intent="UNCLEAR",
        new_fact_ids=update.added,
        specs=SPECS,
        triggers={},
        language="en",
    )
    assert reason == "finding motor eliminated by new evidence"
    state = apply_replan(state, reason=reason, evidence_fact_id=update.added[0], turn=2)
    finding = next(f for f in state.facts if f.key == "finding:motor")
    assert (
        finding.superseded_by == update.added[0]
        and not state.isolation_complete
        and state.estimate.status == "none"
    )
    assert state.replan_count == 1 and state.previous_findings == ("motor",)
    trigger_only = replan_reason(
        isolated,
        isolated,
        text="wait, I found a crack",
        intent="UNCLEAR",
        new_fact_ids=(),
        specs=SPECS,
        triggers={},
        language="en",
    )
    assert trigger_only and trigger_only.startswith("new evidence after isolation")


def test_loop_guard_rules() -> None:
    state = ContextState(
        turn_index=5,
        completed_steps=("s1",),
        same_question="s2",  # put twice in a row, whatever the words before it (issue 37)
        same_question_asks=2,
        cooldowns={"power": 4},
        current_step_id="s3",
    )
    assert check_loop(state, ProposedAction("question", "s1"), GUARD) == ("step_completed:s1",)
    assert check_loop(state, ProposedAction("question", "s2"), GUARD) == ("step_repeat_limit:s2",)
    assert check_loop(state, ProposedAction("question", "s4", "power"), GUARD) == (
        "topic_cooldown:power",
    )
    # re-asking the current step is the repeat rule's job
    assert check_loop(state, ProposedAction("question", "s3", "power"), GUARD) == ()
    assert may_fallback(state, GUARD)
    after = record_action(state, ProposedAction("fallback", "s3"))
    assert not may_fallback(after, GUARD) and check_loop(
        after, ProposedAction("fallback"), GUARD
    ) == ("consecutive_fallback",)
    asked = record_action(after, ProposedAction("question", "s3", "s3"))
    assert may_fallback(asked, GUARD) and asked.step_repeat_counts["s3"] == 1


def test_topic_stack_push_pop_and_pronouns() -> None:
    state = ContextState(current_step_id="s2")
    assert detect_topic("where is the run capacitor?", "LOCATE", (), "en", ()) == "run_capacitor"
    assert detect_topic("电容在哪里？", "LOCATE", (), "zh", ()) == "电容"
    state = push_topic(state, topic="run_capacitor", submode="locate", return_step_id="s2", turn=3)
    assert (
        detect_topic("how do I test it?", "HOWTO", (), "en", state.topic_stack) == "run_capacitor"
    )
    state = push_topic(state, topic="run_capacitor", submode="howto", return_step_id="s9", turn=4)
    state = push_topic(state, topic="contactor", submode="explain", return_step_id="s9", turn=5)
    assert [e.topic for e in state.topic_stack] == ["run_capacitor", "contactor"]
    assert all(e.return_step_id == "s2" for e in state.topic_stack) and state.submode == "explain"
    state, back = pop_all(state)
    assert back == "s2" and state.topic_stack == () and state.submode == "main"


def test_estimate_requests_and_confirmed_hours() -> None:
    assert estimate_request("I confirm the labor estimate", "en") == "confirm"
    assert estimate_request("确认工时", "zh") == "confirm"
    assert estimate_request("skip the estimate", "en") == "skip"
    assert estimate_request("the fan runs", "en") is None
    state, _ = facts_from(ContextState(), "the motor is dead", 1)
    state, _ = reassess_hypotheses(state, SPECS, "en")
    state = draft_estimate(state, SPECS, turn=1, locale="en")
    assert state.estimate.total_hours == 1.5
    state = confirm_estimate(state, "approve the labor at 2 hours", turn=2)
    report = build_final_report(state, SPECS, locale="en")
    assert report.estimate_status == "confirmed" and report.total_hours == 2.0


MESSAGES = st.sampled_from(
    [
        "AC not cooling",
        "verify order SCN-020",
        "check arrears for 沪A12345",
        "what about tomorrow?",
        "where is it?",
        "how do I test it?",
        "hmm",
        "yes",
        "no",
        "I found a leak at the coil",
        "that can't be right",
        "offices",
        "3 floors",
        "My employee Tom didn't show up",
        "final report",
        "confirm the estimate",
        "什么意思",
        "明天上午9点呢",
    ]
)


@settings(max_examples=30, deadline=None)
@given(
    st.sampled_from(
        ["parking_help_desk", "rv_diagnostic", "manager_assistant", "permit_form", "project_intake"]
    ),
    st.lists(MESSAGES, max_size=8),
)
def test_any_conversation_round_trips_and_decides(name: str, script: list[str]) -> None:
    d = Dialogue(
        ConversationConfig.from_dict(load_example(name)), datetime(2026, 2, 12, 2, tzinfo=UTC)
    )
    for text in script:
        out = d.say(text)
        assert out.decision in ("continue", "ask", "abort")
        assert out.decision != "ask" or out.question
        assert ContextState.from_dict(json.loads(json.dumps(d.state.to_dict()))) == d.state
