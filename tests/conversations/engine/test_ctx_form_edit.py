"""Changing a final answer at the permit form's review (issue 14: "Change an answer" did not go back)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from conversations.engine import ConversationConfig
from conversations.engine.forms import (
    edit_target,
    evaluate_answer,
    number_value,
    wants_edit,
)
from conversations.engine.simulate import Dialogue
from conversations.engine.timeparse import zh_number
from conversations.engine.turn import opening_question, record_reply

PLAN = Path(__file__).resolve().parents[3] / "workflows" / "plans" / "permit_form.json"
PERMIT = ConversationConfig.from_dict(json.loads(PLAN.read_text())["conversation"])
NOW = datetime(2026, 2, 12, 2, tzinfo=UTC)
ANSWERS = ["residential", "2 storeys", "1450 sq ft", "just our family", "group c", "no", "8 people", "wood frame", "sprinklers and smoke alarms"]


def at_review() -> Dialogue:
    d = Dialogue(PERMIT, NOW)
    question, action = opening_question(d.state, PERMIT)  # as the service greets: with the first question
    d.state = record_reply(d.state, text=question, action=action)
    for text in ANSWERS:
        out = d.say(text)
    assert out.form_complete and d.state.form_editing is None
    return d


def answer(d: Dialogue, question_id: str) -> str:
    return d.state.finalized(question_id).answer


def test_asked_which_then_the_value_goes_through_the_checks() -> None:
    d = at_review()
    out = d.say("I want to change an answer")
    assert out.reply_action == "form_edit" and not out.form_complete and d.state.form_editing == "?"
    assert "2. How many storeys will the building have: 2 storeys" in out.question
    out = d.say("the second one")
    assert d.state.form_editing == "3.1.2" and not out.form_complete
    out = d.say("not sure")  # never final: the old answer stays
    assert answer(d, "3.1.2") == "2 storeys" and d.state.form_editing == "3.1.2" and not out.form_complete
    out = d.say("1,600 sq ft")  # another question's unit: refused
    assert answer(d, "3.1.2") == "2 storeys" and answer(d, "3.1.3") == "1450 sq ft" and not out.form_complete
    out = d.say("3 floors")
    assert answer(d, "3.1.2") == "3 storeys" and out.form_changed_from == "2 storeys" and out.form_complete
    assert d.state.form_editing is None and out.reply_action == "form_complete"


@pytest.mark.parametrize(("text", "question_id", "value"), [
    ("change the number of storeys to 3", "3.1.2", "3 storeys"),
    ("actually the floor area is 1,600 sq ft", "3.1.3", "1600 sq ft"),
    ("1.600 square feet", "3.1.3", "1600 sq ft"),  # a bare value in one question's unit
    ("不对，应该是三层", "3.1.2", "3 storeys"),
    ("改成A组", "3.2.1", "Group A"),
])
def test_a_change_in_one_message_returns_to_the_review(text, question_id, value) -> None:  # noqa: ANN001
    d = at_review()
    out = d.say(text)
    assert answer(d, question_id) == value and out.form_changed_question == question_id and out.form_complete


def test_named_without_a_value_asks_for_it_and_a_side_question_comes_back() -> None:
    d = at_review()
    out = d.say("我想改一下楼层数")
    assert d.state.form_editing == "3.1.2" and "2层" in out.question and answer(d, "3.1.2") == "2 storeys"
    out = d.say("what counts as a storey?")
    assert out.side_question is not None and d.state.form_editing == "3.1.2" and "2 storeys" in out.next_step_question
    out = d.say("never mind")  # dropped: the answer is as it was, back to the review
    assert d.state.form_editing is None and answer(d, "3.1.2") == "2 storeys" and out.form_complete


def test_a_negated_choice_is_not_the_new_value() -> None:
    d = at_review()
    d.say("can I change the occupancy classification")
    assert d.state.form_editing == "3.2.1"
    d.say("no retail, it stays residential")
    assert answer(d, "3.2.1") == "Group C" and d.state.form_editing is None  # the same answer: nothing changed


@pytest.mark.parametrize(("text", "wanted"), [
    ("I want to change an answer", True), ("can I fix the floor area", True), ("修改答案", True), ("I need to go back", True),
    ("no changes, submit it", False), ("don't change anything", False), ("that's correct", False), ("不用修改", False),
])
def test_asking_to_change(text, wanted) -> None:  # noqa: ANN001
    assert wants_edit(text) is wanted


def test_the_answer_named_by_words_unit_or_place() -> None:
    d = at_review()
    assert edit_target(d.state, PERMIT.form, "the floor area").id == "3.1.3"
    assert edit_target(d.state, PERMIT.form, "楼层数").id == "3.1.2"
    assert edit_target(d.state, PERMIT.form, "第三个", listed=True).id == "3.1.3"
    assert edit_target(d.state, PERMIT.form, "the last one", listed=True).id == "3.4.1"
    assert edit_target(d.state, PERMIT.form, "something") is None


@pytest.mark.parametrize(("token", "value"), [("三", 3), ("十二", 12), ("两百", 200), ("两百五", 250), ("一千四百五十", 1450),
                                              ("一千零五", 1005), ("一万二", 12000)])
def test_chinese_numerals(token, value) -> None:  # noqa: ANN001
    assert zh_number(token) == value


def test_numbers_and_units_as_written() -> None:
    spec = PERMIT.form.question("3.1.3")
    assert number_value("1.450 square feet") == "1450"
    converted = evaluate_answer("两百平米", spec, "zh")  # square metres for square feet: converted, both said
    assert (converted.accepted, converted.value, converted.converted_from) == (True, "2153 sq ft", "两百平米")
    assert evaluate_answer("2 storeys", spec, "en").reason == "wrong_unit"  # storeys are no floor area
    assert evaluate_answer("木结构", PERMIT.form.question("3.3.1"), "zh").accepted  # three characters say enough
