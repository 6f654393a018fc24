"""ContextState JSON round-trip and immutability; ConversationConfig shape, examples and validation."""

from __future__ import annotations

import copy
import json
import pickle
from datetime import UTC, datetime
from pathlib import Path

import pytest

from conversations.engine import (
    ConfigError,
    ContextState,
    ConversationConfig,
    load_example,
    validate_config,
)
from conversations.engine._serde import FrozenDict
from conversations.engine.simulate import Dialogue
from conversations.engine.state import (
    ClarifyingQA,
    ClarifyingThread,
    Estimate,
    EstimateLine,
    Fact,
    FinalizedAnswer,
    Hypothesis,
    PendingClarification,
    SlotValue,
    TopicEntry,
)

# The shipped plans (workflows/plans/<name>.json, or a folder for the RV desk), read by `load_example` as the
# product runs them
PLANS = Path(__file__).resolve().parents[3] / "workflows" / "plans"
EXAMPLES = sorted(p.stem for p in PLANS.iterdir() if p.suffix == ".json" or (p / "plan.json").is_file())
NOW = datetime(2026, 2, 12, 2, tzinfo=UTC)


def test_all_five_examples_exist() -> None:
    assert EXAMPLES == [
        "manager_assistant",
        "parking_help_desk",
        "permit_form",
        "project_intake",
        "rv_diagnostic",
    ]


@pytest.mark.parametrize("name", EXAMPLES)
def test_examples_validate_and_round_trip(name: str) -> None:
    raw = load_example(name)
    assert validate_config(raw) == []
    config = ConversationConfig.from_dict(raw)
    again = ConversationConfig.from_dict(json.loads(json.dumps(config.to_dict())))
    assert again == config


def test_validation_lists_every_problem_with_its_path() -> None:
    bad = {
        "surprise": 1,
        "intents": [
            {"name": "x", "patterns": {"en": ["(unclosed"]}, "required_slots": ["nope"]},
            {"name": "x"},
        ],
        "slots": {"odd": {"extractor": "telepathy"}},
        "modes": {"submodes": ["main", "dance"]},
        "diagnostic": {
            "procedures": [
                {
                    "id": "p",
                    "steps": [{"id": "s", "branch": "ghost", "answered_by": ["e0"]}],
                    "hypotheses": [{"id": "h", "confirmed_by": ["e9"]}],
                }
            ]
        },
        "form": {"questions": [{"id": "q", "answer_type": "choice"}]},
        "loop_guard": {"max_loops": 3},
    }
    paths = {path for path, _ in validate_config(bad)}
    assert {
        "$.surprise",
        "$.intents[0].patterns.en[0]",
        "$.intents[0].required_slots",
        "$.intents[1].name",
        "$.slots.odd.extractor",
        "$.modes.submodes[1]",  # the very entry that is wrong
        "$.diagnostic.procedures[0].steps[0].branch",
        "$.diagnostic.procedures[0].steps[0].answered_by",
        "$.diagnostic.procedures[0].hypotheses[0].confirmed_by",
        "$.form.questions[0].choices",
        "$.loop_guard.max_loops",
    } <= paths
    with pytest.raises(ConfigError) as err:
        ConversationConfig.from_dict(bad)
    assert err.value.problems


def test_a_wrong_type_is_a_problem_at_its_path_not_a_failure_later() -> None:
    bad = {
        "form": {"questions": [{"id": "q", "min_chars": "many", "required": "perhaps"}]},
        "slots": {"s": {"extractor": "text", "label": 5, "patterns": 7}},
        "actions": [{"id": "a", "flow": "email"}, {"id": "a", "flow": "calendar", "priority": 1}],
    }
    problems = dict(validate_config(bad))
    assert problems["$.form.questions[0].min_chars"] == "must be an integer"
    assert problems["$.form.questions[0].required"] == "must be true or false"
    assert problems["$.slots.s.label"].startswith("must be a string or a {")
    assert problems["$.slots.s.patterns"].startswith("must be a list of regexes")
    assert problems["$.actions[1].id"] == "duplicate id 'a'"  # checked in the document's order
    with pytest.raises(ConfigError):
        ConversationConfig.from_dict(bad)


def test_empty_config_is_a_plain_conversation() -> None:
    config = ConversationConfig.from_dict({})
    assert (
        config.modes.initial == "conversation"
        and not config.diagnostic_enabled
        and config.form is None
    )


def _rich_state() -> ContextState:
    return ContextState(
        locale="zh",
        turn_index=4,
        message_count=8,
        mode="diagnostic",
        submode="locate",
        current_step_id="s2",
        topic_stack=(TopicEntry("capacitor", "locate", "s2", 4),),
        facts=(
            Fact("f1", "volts", "measurement", "user", "122", 2, "s1", superseded_by="f2"),
            Fact("f2", "volts", "measurement", "user", "0", 3),
        ),
        hypotheses=(Hypothesis("h", "desc", "eliminated", "low", ("f1",), ("f2",)),),
        completed_steps=("s1",),
        step_repeat_counts={"s2": 2},
        cooldowns={"side:capacitor:locate": 4},
        estimate=Estimate("draft", (EstimateLine("Replace capacitor", 0.5, "h"),), drafted_turn=3),
        slots={"order_no": SlotValue("order_no", "SCN-020", 2, "SCN-020", "valid", "lookup", 2)},
        slot_candidates={"order_no": ("SCN-009", "SCN-010")},
        pending_clarification=PendingClarification(
            "fee_verify", ("order_no",), 2, "Which order?", 3
        ),
        active_thread=ClarifyingThread("3.1.1", (ClarifyingQA("Residential?", "3.1.1", None, 4),)),
        archived_threads=(ClarifyingThread("1.1", (ClarifyingQA("Q", "1.1", "A", 1, 2),)),),
        finalized_answers=(FinalizedAnswer("1.1", "Type?", "office", 2, "1"),),
        open_action_flow="email",
        executed_actions=("schedule_call",),
        situation="active",
    )


def test_state_round_trips_through_json() -> None:
    state = _rich_state()
    data = json.loads(json.dumps(state.to_dict(), ensure_ascii=False))
    assert ContextState.from_dict(data) == state
    assert data["slots"]["order_no"]["source_turn"] == 2
    assert data["facts"][0]["superseded_by"] == "f2"


def test_state_is_immutable_but_copyable_and_picklable() -> None:
    state = _rich_state()
    with pytest.raises(TypeError):
        state.step_repeat_counts["s2"] = 3  # type: ignore[index]
    with pytest.raises(AttributeError):
        state.mode = "x"  # type: ignore[misc]
    assert isinstance(state.slots, FrozenDict)
    assert pickle.loads(pickle.dumps(state)) == state
    assert copy.deepcopy(state) == state


def test_old_rows_with_missing_keys_still_load() -> None:
    state = ContextState.from_dict({"mode": "diagnostic", "unknown_future_key": 1})
    assert state.mode == "diagnostic" and state.facts == () and state.estimate.status == "none"


@pytest.mark.parametrize("name", EXAMPLES)
def test_state_after_real_turns_round_trips(name: str) -> None:
    dialogue = Dialogue(ConversationConfig.from_dict(load_example(name)), NOW)
    for text in ("Hello, my AC and fan are broken, order SCN-020", "where is it?", "yes", "hmm"):
        dialogue.say(text)
        data = json.loads(json.dumps(dialogue.state.to_dict(), ensure_ascii=False))
        assert ContextState.from_dict(data) == dialogue.state
        assert json.loads(json.dumps(dialogue.outcomes[-1].summary(), ensure_ascii=False))
