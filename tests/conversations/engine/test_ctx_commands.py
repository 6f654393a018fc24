"""The command vocabulary: parsing a generator's answer, validation, and the model's schema."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conversations.engine._serde import FrozenDict
from conversations.engine.commands import (
    ARGUMENTS,
    Command,
    CommandContext,
    QuestionRef,
    command_from_dict,
    command_schema,
    command_to_dict,
    commands_from_json,
    normalise_answer,
    normalise_value,
    validate_commands,
)

ORDERS = {"7734412": "7734412", "P2026-000871": "P2026-000871"}


def order_lookup(value: str, known=None):  # noqa: ANN001, ANN201
    return ORDERS.get(value.strip().upper(), False)


CTX = CommandContext(
    intents=frozenset({"fee_verify", "arrears_check", "rule_explain"}),
    slot_types=FrozenDict({"order_no": "order_no", "storeys": "number", "at_time": "at_time", "email": "email"}),
    questions=FrozenDict({
        "storeys": QuestionRef("storeys", "number", unit="storeys"),
        "occupancy": QuestionRef("occupancy", "choice", ("R-3", "E", "B")),
        "sprinklers": QuestionRef("sprinklers", "yes_no"),
        "floor_area": QuestionRef("floor_area", "number", unit="sq ft", final=True),
    }),
    pending_question_id="storeys",
    options=frozenset({"finish", "ask_more"}),
    consent_options=frozenset({"draft_email"}),
    known_actions=frozenset({"draft_email", "schedule_call"}),
    actions=frozenset({"schedule_call"}),
    lookups=FrozenDict({"order_no": order_lookup}),
)


def check(*commands: Command):  # noqa: ANN201
    result = validate_commands(commands, CTX)
    return [c.describe() for c in result.accepted], [r.reason for r in result.refused]


def test_known_names_and_valid_values_are_accepted_and_normalised() -> None:
    accepted, refused = check(
        Command("start_intent", intent="fee_verify"),
        Command("set_slot", slot="order_no", value="p2026-000871"),
        Command("answer", question_id="storeys", value="2"),
        Command("choose_option", option_id="finish"),
    )
    assert refused == []
    assert accepted == ["start_intent(intent=fee_verify)", "set_slot(slot=order_no, value=P2026-000871)",
                        "answer(question_id=storeys, value=2)", "choose_option(option_id=finish)"]


@pytest.mark.parametrize(("command", "reason"), [
    (Command("start_intent", intent="teleport"), "unknown_intent:teleport"),
    (Command("set_slot", slot="password", value="x"), "unknown_slot:password"),
    (Command("set_slot", slot="order_no", value="SCN-999"), "not_found:order_no:SCN-999"),
    (Command("set_slot", slot="storeys", value="1,450 sq ft"), "invalid_value:storeys:number"),
    (Command("set_slot", slot="at_time", value="2026-03-02T10:00"), "invalid_value:at_time:at_time"),  # no offset
    (Command("set_slot", slot="at_time", value="9999-12-31T10:00+08:00"), "invalid_value:at_time:at_time"),
    (Command("set_slot", slot="email", value="not an email"), "invalid_value:email:email"),
    (Command("answer", question_id="occupancy", value="R-3"), "not_the_pending_question:storeys"),
    (Command("answer", question_id="nope", value="1"), "unknown_question:nope"),
    (Command("answer", question_id="storeys", value="not sure"), "invalid_answer:storeys:number"),
    (Command("choose_option", option_id="waive_fee"), "option_not_offered:waive_fee"),
    (Command("choose_option", option_id="draft_email"), "needs_consent:draft_email"),
    (Command("request_action", action_id="wire_money"), "unknown_action:wire_money"),
    (Command("request_action", action_id="draft_email"), "action_not_allowed:draft_email"),
    (Command("answer", question_id="storeys", value="2 sq ft"), "invalid_answer:storeys:number"),  # another unit
    (Command("answer", question_id="floor_area", value="3 storeys"), "invalid_answer:floor_area:number"),
    (Command("side_question", side_kind="gossip", topic="x"), "unknown_side_question_kind:gossip"),
    (Command("clarify", candidates=("a",)), "clarify_needs_two_candidates"),
])
def test_what_the_plan_or_the_turn_does_not_allow_is_refused_with_a_reason(command, reason) -> None:  # noqa: ANN001
    accepted, refused = check(command)
    assert accepted == [] and refused == [reason]


def test_a_number_in_its_own_unit_answers_and_a_final_answer_may_be_corrected() -> None:
    accepted, refused = check(Command("answer", question_id="storeys", value="2 storeys"))
    assert (accepted, refused) == (["answer(question_id=storeys, value=2)"], [])
    accepted, refused = check(Command("answer", question_id="floor_area", value="1,450 sq ft"))
    assert (accepted, refused) == (["answer(question_id=floor_area, value=1450)"], [])
    accepted, refused = check(Command("request_action", action_id="schedule_call"))
    assert (accepted, refused) == (["request_action(action_id=schedule_call)"], [])


def test_contradictions_and_repeats_in_one_answer_are_refused() -> None:
    accepted, refused = check(
        Command("confirm"), Command("deny"), Command("confirm"),
        Command("set_slot", slot="storeys", value="2"), Command("correct_slot", slot="storeys", value="3"),
    )
    assert accepted == ["confirm()", "set_slot(slot=storeys, value=2)"]
    assert refused == ["conflicts_with:confirm", "duplicate_command", "slot_given_twice:storeys"]


def test_at_most_eight_commands_count() -> None:
    many = [Command("report_evidence", text=f"fact {i}") for i in range(12)]
    result = validate_commands(many, CTX)
    assert len(result.accepted) == 8 and {r.reason for r in result.refused} == {"too_many_commands"}


@pytest.mark.parametrize(("raw", "problem"), [
    ("not an object", "not_an_object"),
    ({"command": "rm -rf"}, "unknown_command:rm -rf"),
    ({"command": "set_slot", "slot": "order_no"}, "missing_argument:value"),
    ({"command": "set_slot", "slot": "order_no", "value": True}, "missing_argument:value"),
    ({"command": "set_slot", "slot": "storeys", "value": float("inf")}, "missing_argument:value"),
    ({"command": "set_slot", "slot": "order_no", "value": "x" * 5000}, "argument_too_long:value"),
    ({"command": "clarify", "candidates": "a,b"}, "candidates_must_be_a_list_of_strings"),
])
def test_malformed_generator_output_is_refused_not_trusted(raw, problem) -> None:  # noqa: ANN001
    assert command_from_dict(raw) == problem


def test_a_generator_answer_round_trips_and_keeps_the_good_commands() -> None:
    commands, refused = commands_from_json({"commands": [
        {"command": "correct_slot", "slot": "storeys", "value": 3},
        {"command": "side_question", "side_kind": "locate", "topic": "capacitor"},
        {"command": "hack"},
    ]})
    assert [command_to_dict(c) for c in commands] == [
        {"command": "correct_slot", "slot": "storeys", "value": "3"},
        {"command": "side_question", "side_kind": "locate", "topic": "capacitor"},
    ]
    assert [r.reason for r in refused] == ["unknown_command:hack"]
    assert commands_from_json({"reply": "hi"})[1][0].reason == "no_command_list"


@pytest.mark.parametrize(("value", "answer_type", "choices", "expected"), [
    ("1,450", "number", (), "1450"),
    ("2", "number", (), "2"),
    ("2.5", "number", (), "2.5"),
    ("two", "number", (), "2"),  # a number in words is read by the quantity recognizer
    ("两个半", "number", (), "2.5"),
    ("6 or 7", "number", (), None),  # two numbers are no value: the person is asked which
    ("about 20", "number", (), None),  # a hedged value is no fact
    ("r-3", "choice", ("R-3", "E"), "R-3"),
    ("Group Q", "choice", ("R-3", "E"), None),
    ("Да", "yes_no", (), "yes"),
    ("没有", "yes_no", (), "no"),
    ("not sure", "yes_no", (), None),
])
def test_answers_are_typed(value, answer_type, choices, expected) -> None:  # noqa: ANN001
    assert normalise_answer(value, QuestionRef("q", answer_type, choices)) == expected


@given(st.text(max_size=40), st.sampled_from(["number", "duration_minutes", "email", "at_time", "date", "order_no"]))
def test_normalising_any_text_never_raises_and_is_idempotent(text, slot_type) -> None:  # noqa: ANN001
    once = normalise_value(text, slot_type)
    if once is not None:
        assert normalise_value(once, slot_type) == once


def test_the_schema_names_only_what_this_turn_allows() -> None:
    schema = command_schema(CTX)
    json.dumps(schema)  # plain JSON
    variants = {v["properties"]["command"]["enum"][0]: v for v in schema["properties"]["commands"]["items"]["anyOf"]}
    assert set(variants) == set(ARGUMENTS)
    assert variants["set_slot"]["properties"]["slot"]["enum"] == ["at_time", "email", "order_no", "storeys"]
    assert variants["choose_option"]["properties"]["option_id"]["enum"] == ["ask_more", "draft_email", "finish"]
    for variant in variants.values():  # strict mode: every property required, nothing else allowed
        assert variant["additionalProperties"] is False and set(variant["required"]) == set(variant["properties"])
    bare = command_schema(CommandContext())
    assert "start_intent" not in {v["properties"]["command"]["enum"][0] for v in bare["properties"]["commands"]["items"]["anyOf"]}


def test_a_generators_yes_or_no_counts_where_the_rules_read_none() -> None:
    from datetime import UTC, datetime

    from conversations.engine import ConversationConfig, load_example
    from conversations.engine.turn import CONFIRM, DISPUTE_MEANING, advance_context, initial_state

    config = ConversationConfig.from_dict(load_example("manager_assistant"))
    state = initial_state(config)
    now = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    read = advance_context(state, "let's roll with that", now=now, timezone="Asia/Shanghai", config=config)
    assert read.meaning not in (CONFIRM, DISPUTE_MEANING)
    for command, meaning in ((Command("confirm"), CONFIRM), (Command("deny"), DISPUTE_MEANING)):
        outcome = advance_context(state, "let's roll with that", now=now, timezone="Asia/Shanghai", config=config, commands=[command])
        assert outcome.meaning == meaning
