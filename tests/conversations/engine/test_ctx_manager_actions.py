"""Issue 17, manager assistant: yes / no as managers say it, the action offered follows what the
manager asked for, then what the guidance recommends (the seed's email-before-calendar only breaks
a tie), a refused action never holds back the other, and the call's details are corrected in words."""

from __future__ import annotations

import pytest

from conversations.engine import ConversationConfig, load_example
from conversations.engine.action_prefs import read_actions, read_length
from conversations.engine.ask_then_act import (
    ACTIVE,
    ActionContext,
    action_order,
    allowed_action,
    evaluate_actions,
)
from conversations.engine.forms import evaluate_answer

CONFIG = ConversationConfig.from_dict(load_example("manager_assistant"))
CONTACTED = CONFIG.form.question("contacted")


@pytest.mark.parametrize(("text", "lang", "value"), [
    ("Called him twice, straight to voicemail", "en", "yes"),
    ("Left him a voicemail this morning", "en", "yes"),
    ("texted, nothing back", "en", "yes"),
    ("Just emailed him, no reply yet", "en", "yes"),
    ("sent a slack msg", "en", "yes"),
    ("no luck reaching him, phone seems off", "en", "yes"),
    ("he didn't pick up", "en", "yes"),
    ("we spoke briefly yesterday", "en", "yes"),
    ("yes", "en", "yes"),
    ("Not yet, I haven't talked to her about it", "en", "no"),
    ("I was going to but havent yet", "en", "no"),
    ("I'll call him later today", "en", "no"),
    ("havent reached out yet tbh", "en", "no"),
    ("didn't get a chance to call", "en", "no"),
    ("nope", "en", "no"),
    ("还没有，之前没找他聊过", "zh", "no"),
    ("还没联系", "zh", "no"),
    ("打算明天找他谈谈", "zh", "no"),
    ("没有", "zh", "no"),
    ("打了两次电话，没人接", "zh", "yes"),
    ("发了微信，他没回", "zh", "yes"),
    ("联系不上，手机关机", "zh", "yes"),
    ("联系过了", "zh", "yes"),
    ("是的，打过电话", "zh", "yes"),
])
def test_have_you_tried_to_reach_them(text: str, lang: str, value: str) -> None:
    evaluation = evaluate_answer(text, CONTACTED, lang)
    assert evaluation.accepted and evaluation.value == value, evaluation


@pytest.mark.parametrize(("text", "lang", "wanted", "declined"), [
    ("I'd rather talk to her face to face than send an email", "en", "schedule_call", ("draft_email",)),
    ("I prefer a call over an email", "en", "schedule_call", ("draft_email",)),
    ("can you talk to him over the phone", "en", "schedule_call", ()),
    ("Send him an email first, then we'll set up a call", "en", "draft_email", ()),
    ("我更想当面跟她谈，不想发邮件", "zh", "schedule_call", ("draft_email",)),
    ("与其发邮件，不如直接打个电话", "zh", "schedule_call", ("draft_email",)),
    ("他当面跟我说过", "zh", None, ()),
])
def test_the_wish_is_the_one_not_refused(text: str, lang: str, wanted: str | None, declined: tuple[str, ...]) -> None:
    assert read_actions(text, lang, CONFIG.actions) == (wanted, declined)


def _ctx(**values) -> ActionContext:  # noqa: ANN003
    base = {"history_length": 6, "reply_asks_question": False, "situation": ACTIVE}
    return ActionContext(**(base | values))


def test_guidance_recommends_a_conversation_first_when_nobody_talked_yet() -> None:
    ctx = _ctx(answers=(("contacted", "no"),))
    assert [a.id for a in action_order(CONFIG.actions, ctx)] == ["schedule_call", "draft_email"]
    assert allowed_action(evaluate_actions(CONFIG.actions, ctx)) == "schedule_call"


def test_guidance_recommends_writing_when_they_could_not_be_reached() -> None:
    ctx = _ctx(answers=(("contacted", "yes"),))
    assert allowed_action(evaluate_actions(CONFIG.actions, ctx)) == "draft_email"


def test_the_seed_priority_only_breaks_a_tie() -> None:
    assert allowed_action(evaluate_actions(CONFIG.actions, _ctx())) == "draft_email"


def test_the_managers_word_goes_before_the_guidance() -> None:
    ctx = _ctx(answers=(("contacted", "yes"),), preferred_action="schedule_call")
    assert allowed_action(evaluate_actions(CONFIG.actions, ctx)) == "schedule_call"


def test_a_refused_action_never_holds_back_the_other() -> None:
    decisions = {d.action_id: d for d in evaluate_actions(CONFIG.actions, _ctx(declined_actions=("draft_email",)))}
    assert decisions["schedule_call"].allowed and decisions["draft_email"].blockers == ("declined",)
    assert not any(b.startswith("one_action_per_turn") for b in decisions["schedule_call"].blockers)


@pytest.mark.parametrize(("text", "lang", "minutes"), [
    ("make it 45 minutes", "en", "45"), ("half an hour is enough", "en", "30"), ("an hour", "en", "60"),
    ("a 20-min call", "en", "20"), ("an hour and a half", "en", "90"), ("late 4 times in 30 days", "en", None),
    ("改成四十五分钟", "zh", "45"), ("一个小时吧", "zh", "60"), ("半小时", "zh", "30"), ("20分钟", "zh", "20"),
])
def test_the_calls_length(text: str, lang: str, minutes: str | None) -> None:
    assert read_length(text, lang) == minutes
