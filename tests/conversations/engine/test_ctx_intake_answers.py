"""Project intake answers as people give them (issue 14): briefly acknowledged, corrected in place,
never 'not sure', never a question, never another question's words."""

from __future__ import annotations

from datetime import UTC, datetime

from conversations.engine import load_example
from conversations.engine.config import ConversationConfig
from conversations.engine.replies import brief
from conversations.engine.turn import advance_context, initial_state

CONFIG = ConversationConfig.from_dict(load_example("project_intake"))
NOW = datetime(2026, 5, 12, 9, 0, tzinfo=UTC)


def _talk(*messages: str, locale: str = "en"):
    state, outcome = initial_state(CONFIG, locale=locale), None
    for message in messages:
        outcome = advance_context(state, message, now=NOW, timezone="Asia/Shanghai", config=CONFIG)
        state = outcome.state
    return outcome


def _answers(outcome) -> dict[str, str]:
    return {a.question_id: a.answer for a in outcome.state.finalized_answers}


def test_brief_says_a_long_answer_shortly_and_a_short_one_whole() -> None:
    long = ("So basically, um, we run three bakeries and I've been thinking for a while that customers should "
            "pre-order cakes online. The phone rings all weekend.")
    said = brief(long, "en")
    assert said.endswith("…") and len(said) < 80 and not said.lower().startswith("so")
    assert brief("fewer lost returns", "en") == "fewer lost returns"
    assert brief("我们想做一个社区团购的小程序，让居民可以在手机上下单，团长负责配送，还要能在线付款和开发票", "zh").endswith("…")


def test_other_questions_clauses_leave_the_summary_and_negated_tails_leave_values() -> None:
    outcome = _talk("We lose cake orders written on paper. The goal is to take 80% of orders online. "
                    "Users are our customers, not the shop staff.")
    answers = _answers(outcome)
    assert answers["goal"] == "take 80% of orders online"
    assert answers["users"] == "our customers"
    assert answers["summary"] == "We lose cake orders written on paper."


def test_a_corrected_slot_changes_its_answer_and_does_not_answer_the_pending_question() -> None:
    outcome = _talk("An app to hand over patients between shifts", "safer handovers", "doctors",
                    "actually the users are nurses, not doctors")
    assert _answers(outcome)["users"] == "nurses" and "constraints" not in _answers(outcome)
    assert outcome.form_changed_question == "users" and outcome.next_step_question.startswith("Any constraints")
    zh = _talk("我想给医院做一个交接班系统，目标是减少交接遗漏，用户是医生", "不对，用户是护士，不是医生", locale="zh-hans")
    assert _answers(zh)["users"] == "护士" and _answers(zh)["summary"] == "我想给医院做一个交接班系统"


def test_an_answer_to_another_question_is_not_taken_for_the_pending_one() -> None:
    outcome = _talk("做一个内部报表系统，每周一自动出上周销售报表", "让管理层周一就能看到数据", "预算大概20万元，年底前上线", locale="zh-hans")
    assert _answers(outcome).get("constraints") == "预算大概20万元，年底前上线" and "users" not in _answers(outcome)
    assert outcome.next_step_question == "谁会使用它？"


def test_not_sure_is_never_an_answer_even_for_an_optional_question() -> None:
    for messages, locale in ((("A booking app for our physio clinic", "not sure yet"), "en"),
                             (("我们想做一个社区团购的小程序", "还没想好"), "zh-hans"),
                             (("A booking app for our physio clinic", "fewer calls", "patients", "haven't decided yet"), "en")):
        outcome = _talk(*messages, locale=locale)
        assert len(_answers(outcome)) == len(messages) - 1 and outcome.decision == "ask"


def test_start_over_clears_the_interview_and_cancel_keeps_it() -> None:
    restarted = _talk("A CRM for our sales team of 40 people", "start over")
    assert restarted.restarted and _answers(restarted) == {} and "users" not in restarted.state.slots
    kept = _talk("A CRM for our sales team of 40 people", "never mind")
    assert not kept.restarted and _answers(kept)["summary"] == "A CRM for our sales team of 40 people"


def test_a_side_question_about_a_field_fills_no_field() -> None:
    outcome = _talk("做一个员工请假审批的小程序", "你说的约束是什么意思？", locale="zh-hans")
    assert "constraints" not in outcome.state.slots and outcome.side_question.answer


def test_a_long_statement_while_a_question_waits_is_an_answer_not_a_side_question() -> None:
    outcome = _talk("Our firm chases clients for receipts by email and things get lost, so we would like a portal "
                    "where clients upload documents and our accountants see at a glance what is still missing.")
    assert outcome.side_question is None and _answers(outcome)["summary"].startswith("Our firm")
    asked = _talk("A booking app for our physio clinic", "what is the intake gate?")
    assert asked.side_question is not None and "goal" not in _answers(asked)
