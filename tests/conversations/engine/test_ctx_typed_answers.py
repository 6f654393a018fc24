"""Form answers typed and read as people write them: negation, several choices, units, putting off."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conversations.engine._text import defers_answer, negated_at
from conversations.engine.config import ConversationConfig
from conversations.engine.forms import evaluate_answer

PLAN = Path(__file__).resolve().parents[3] / "workflows" / "plans" / "permit_form.json"
QUESTIONS = {q.id: q for q in ConversationConfig.from_dict(json.loads(PLAN.read_text())["conversation"]).form.questions}


def judge(question_id: str, text: str) -> tuple[bool, str | None]:
    verdict = evaluate_answer(text, QUESTIONS[question_id], "en" if text.isascii() else "zh")
    return verdict.accepted, verdict.value if verdict.accepted else verdict.reason


@pytest.mark.parametrize(("question_id", "text", "expected"), [
    # a negated choice is not chosen (this was recorded as Group E, mercantile); the residence is Group C
    ("3.2.1", "No retail, no public access. Private residence only.", (True, "Group C")),
    ("3.2.1", "No retail, no public access.", (False, "no_choice_matched")),
    ("3.2.1", "not a shop, it's offices upstairs", (True, "Group D")),
    ("3.1.1", "不是商业，是住宅", (True, "residential")),
    ("3.1.1", "it will be a warehouse", (True, "industrial")),
    # two choices named: ask, never take the first
    ("3.1.1", "a house with a shop downstairs", (False, "several_choices")),
    # a number in another question's unit does not answer this one (this became "2 sq ft")
    ("3.1.3", "Let's say 2 storeys", (False, "wrong_unit")),
    ("3.1.2", "1,450 sq ft", (False, "wrong_unit")),
    ("3.1.3", "roughly 1,450 square feet", (True, "1450 sq ft")),
    ("3.1.2", "three", (True, "3 storeys")),
    ("3.2.3", "about 40 people", (True, "40 persons")),
    ("3.1.3", "1,2000 sq ft", (False, "no_number")),  # a typo, not 1.2 sq ft
    # unsure or putting it off is never final, whatever the question's type
    ("3.3.1", "hmm, I need to check the drawings", (False, "non_answer")),
    ("3.3.1", "not sure yet, TBD", (False, "non_answer")),
    ("3.2.2", "我得查一下", (False, "non_answer")),
    ("3.1.2", "не знаю", (False, "non_answer")),
    ("3.4.1", "Sprinklers throughout and smoke alarms", (True, "Sprinklers throughout and smoke alarms")),
])
def test_answers_are_read_by_their_type(question_id, text, expected) -> None:  # noqa: ANN001
    assert judge(question_id, text) == expected


@pytest.mark.parametrize(("text", "word", "negated"), [
    ("no retail here", "retail", True),
    ("there is not any retail", "retail", True),
    ("retail on the ground floor", "retail", False),
    ("no problems, it's retail", "retail", False),
    ("我们没有商铺", "商铺", True),
    ("без магазинов", "магазинов", True),
    ("sin tiendas", "tiendas", True),
    ("The answer is no. It is retail.", "retail", False),  # another clause
])
def test_negation_stays_in_its_clause(text, word, negated) -> None:  # noqa: ANN001
    assert negated_at(text, text.index(word)) is negated


@pytest.mark.parametrize(("text", "defers"), [
    ("I'll get back to you on that", True), ("let me check with the architect", True), ("待定", True),
    ("no estoy segura", True), ("tengo que revisar los planos", True), ("надо уточнить", True),
    ("brick and steel", False), ("2 storeys", False), ("yes", False),
])
def test_putting_an_answer_off(text, defers) -> None:  # noqa: ANN001
    assert defers_answer(text) is defers
