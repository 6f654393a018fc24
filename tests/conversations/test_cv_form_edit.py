"""Changing an answer at the permit form's review over the API: back to the questions, audited, nothing half-written."""

from __future__ import annotations

import pytest

from workflows.models import AuditEvent

pytestmark = pytest.mark.django_db

ANSWERS = ["residential", "2 storeys", "1450 sqft", "a single family home", "group c", "no", "8 people", "wood frame", "sprinklers"]


def _at_review(chat):  # noqa: ANN001, ANN202
    c = chat("permit_form", "en")
    for text in ANSWERS:
        c.say(text)
    assert c.get()["current_step"] == "review_form"
    return c


def test_the_option_goes_back_and_the_review_returns_with_the_new_value(chat) -> None:  # noqa: ANN001
    c = _at_review(chat)
    c.choose("edit_answers")
    state = c.get()
    assert state["current_step"] == "collect_answers" and "submit_form" not in c.option_ids()
    c.say("the number of storeys")
    c.say("not sure")  # nothing half-written: the answer stays until a new value is accepted
    answers = {a["question_id"]: a["answer"] for a in c.get()["form"]["finalized_answers"]}
    assert answers["3.1.2"] == "2 storeys" and c.get()["current_step"] == "collect_answers"
    reply = c.say("3 storeys")["reply"]["text"]
    assert "from 2 storeys to 3 storeys" in reply and c.get()["current_step"] == "review_form"
    turn = AuditEvent.objects.filter(conversation_id=c.id, event_type="turn").order_by("-id").first()
    assert "answer(question_id=3.1.2, value=3 storeys)" in turn.payload["execution_path"]["commands"]["understood"]
    c.choose("submit_form", consent=True)
    assert c.get()["status"] == "completed"


def test_asking_in_words_takes_the_option_in_words(chat) -> None:  # noqa: ANN001
    c = _at_review(chat)
    reply = c.say("I want to change an answer")["reply"]["text"]
    assert "Which answer would you like to change?" in reply and c.get()["current_step"] == "collect_answers"
    chosen = AuditEvent.objects.filter(conversation_id=c.id, chosen_option_id="edit_answers").first()
    assert chosen is not None and chosen.selection_mode == "user_confirmed"
