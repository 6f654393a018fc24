"""How sure a reading is: times, a call's time, a handoff told of rather than asked for (no database)."""

from __future__ import annotations

import pytest

from conversations.engine._text import asks_for_human
from conversations.engine.certainty import CERTAIN, GUESS, LIKELY, time_certainty


@pytest.mark.parametrize(("text", "kind", "value", "certainty"), [
    ("leaving at 6 or 7, not sure yet", "until_time", "2026-03-05T18:00:00+08:00", GUESS),
    ("上周一还是周二来着", "at_time", "2026-02-23T13:00:00+08:00", GUESS),
    ("六七点走吧", "until_time", "2026-03-05T18:00:00+08:00", GUESS),
    ("set up a call on Thursday late in the afternoon", "clock_time", "", GUESS),
    ("put a call in for Monday at 3am", "clock_time", "03:00", GUESS),
    ("ring him towards the end of the day on Tuesday", "clock_time", "", GUESS),  # parts of the day: the lexicon's
    ("周三下班之前跟她通个电话", "clock_time", "", GUESS),
    ("созвонимся в четверг ближе к концу дня", "clock_time", "", GUESS),
    ("llámala el viernes a última hora", "clock_time", "", GUESS),
    ("i'll be gone for 400 days lol", "duration_minutes", "576000", GUESS),
    ("from 3 to 6:15 today", "at_time", "2026-03-04T15:00:00+08:00", LIKELY),
    ("三点到六点一刻", "at_time", "2026-03-04T15:00:00+08:00", LIKELY),
    ("around 3pm", "at_time", "2026-03-04T15:00:00+08:00", LIKELY),
    ("how much in the morning?", "at_time", "2026-03-04T09:00:00+08:00", LIKELY),
    ("from 15:00 to 18:15", "at_time", "2026-03-04T15:00:00+08:00", CERTAIN),
    ("下午三点到六点", "at_time", "2026-03-04T15:00:00+08:00", CERTAIN),
    ("from 9am to 5pm", "at_time", "2026-03-04T09:00:00+08:00", CERTAIN),
    ("a call on Friday at 14:30", "clock_time", "14:30", CERTAIN),
    ("two hours", "duration_minutes", "120", CERTAIN),
])
def test_a_time_is_as_sure_as_its_words(text: str, kind: str, value: str, certainty: str) -> None:
    assert time_certainty(text, "", kind, value)[0] == certainty


@pytest.mark.parametrize("text", [
    "can I talk to a real person about this?", "this is confusing, can I talk to a real person?", "I want to speak to a human",
    "转人工", "quiero hablar con una persona", "хочу поговорить с оператором", "can I get a human on this please",
    "позовите мастера из сервиса", "¿me pasas con alguien del taller?", "this isnt going anywhere, can I get one of the service writers on here",
    "算了不想跟机器聊了 帮我找个真人客服",
])
def test_a_wish_for_a_person_is_a_handoff(text: str) -> None:
    assert asks_for_human(text)


@pytest.mark.parametrize("text", [
    "One of my servers, Kayla, refused to come get me when a customer asked to speak to a manager.",
    "I'll speak to someone in HR about it tomorrow.",
    "Bea asked to talk to someone in payroll and then never came back from lunch.",
    "An app where customers can cancel or change their bookings and talk to a real person if needed",
    "no need to talk to anyone",
])
def test_a_wish_told_of_is_no_handoff(text: str) -> None:
    assert not asks_for_human(text)


def test_a_clock_said_after_noon_is_the_time() -> None:
    from datetime import time

    from conversations.engine.timeparse import _time_of_day

    assert _time_of_day("上周五上午9:40到中午12:10")[0] == time(9, 40)
    assert _time_of_day("中午12:10")[0] == time(12, 10)
    assert _time_of_day("中午到")[0] == time(12, 0)


def test_a_generator_says_how_sure_each_command_is() -> None:
    from conversations.engine.commands import (
        CommandContext,
        command_from_dict,
        command_schema,
        command_to_dict,
    )

    guess = command_from_dict({"command": "answer", "question_id": "3.1.2", "value": "6", "certainty": "guess"})
    assert guess.certainty == GUESS and command_to_dict(guess)["certainty"] == GUESS
    assert command_from_dict({"command": "cancel"}).certainty == CERTAIN  # unsaid: certain
    assert command_from_dict({"command": "cancel", "certainty": "sure-ish"}) == "unknown_certainty:sure-ish"
    variants = command_schema(CommandContext())["properties"]["commands"]["items"]["anyOf"]
    assert all(v["properties"]["certainty"]["enum"] == ["certain", "likely", "guess"] and "certainty" in v["required"]
               for v in variants)


def test_a_guessed_answer_from_a_generator_is_asked_never_recorded() -> None:
    from datetime import UTC, datetime

    from conversations.engine.commands import Command
    from conversations.engine.config import ConversationConfig
    from conversations.engine.turn import advance_context, initial_state
    from tests.support.helpers import plan_document

    config = ConversationConfig.from_dict(plan_document("permit_form")["conversation"])
    state = initial_state(config)
    state = advance_context(state, "residential", now=datetime.now(UTC), timezone="Asia/Shanghai", config=config).state
    outcome = advance_context(state, "maybe six", now=datetime.now(UTC), timezone="Asia/Shanghai", config=config,
                              commands=[Command("answer", question_id="3.1.2", value="6", certainty=GUESS)], model_read=True)
    assert outcome.state.finalized("3.1.2") is None and outcome.decision == "ask"
    assert any(c.certainty == GUESS and c.question_id == "3.1.2" for c in outcome.unsure_commands)


@pytest.mark.parametrize(("answers", "text"), [
    (("residential", "2", "1500"), "change the storeys to 3, and the floor area is 1800 now"),
    (("住宅", "2层", "1500平方英尺"), "层数改成3，面积现在是1800"),
])
def test_a_message_with_two_changes_changes_each_question_it_names(answers: tuple[str, ...], text: str) -> None:
    from datetime import UTC, datetime

    from conversations.engine.config import ConversationConfig
    from conversations.engine.turn import (
        advance_context,
        commands_understood,
        initial_state,
        opening_question,
        record_reply,
    )
    from tests.support.helpers import plan_document

    config = ConversationConfig.from_dict(plan_document("permit_form")["conversation"])
    state = initial_state(config)
    question, action = opening_question(state, config)
    state = record_reply(state, text=question, action=action)
    for said in answers:  # each answer to the question put, as the conversation puts them
        turn = advance_context(state, said, now=datetime.now(UTC), timezone="Asia/Shanghai", config=config)
        state = record_reply(turn.state, text=turn.next_step_question or "", action=turn.proposed_action)
    outcome = advance_context(state, text, now=datetime.now(UTC), timezone="Asia/Shanghai", config=config)
    assert outcome.state.finalized("3.1.2").answer == "3 storeys" and outcome.state.finalized("3.1.3").answer == "1800 sq ft"
    assert {(c.question_id, c.value) for c in commands_understood(outcome)} >= {("3.1.2", "3 storeys"), ("3.1.3", "1800 sq ft")}


@pytest.mark.parametrize(("text", "kind"), [("不是假设，她真的连续三天没来", "active"), ("this is not hypothetical, Dana really walked out", "active"),
                                            ("what if an employee walks out?", "hypothetical")])
def test_a_denied_what_if_is_a_real_case(text: str, kind: str) -> None:
    from conversations.engine.ask_then_act import detect_situation

    assert detect_situation(text) == kind
