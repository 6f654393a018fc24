"""What a manager says about the actions: the one wanted goes first, a refused one is never offered,
and the call's day and time are understood (issue 14: "I don't want an email, please set up a call")."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from conversations.engine import ConversationConfig, load_example
from conversations.engine.action_prefs import describe_when, read_action_request, read_actions
from conversations.engine.ask_then_act import ActionContext, allowed_action, evaluate_actions

CONFIG = ConversationConfig.from_dict(load_example("manager_assistant"))
NOW = datetime(2026, 11, 24, 2, tzinfo=UTC)  # Tuesday 24 November 2026, 10:00 in Shanghai
TZ = "Asia/Shanghai"


@pytest.mark.parametrize(("text", "lang", "wanted", "declined"), [
    ("I don't want an email, please set up a call with her on Thursday at 2pm", "en", "schedule_call", ("draft_email",)),
    ("no email. a phone call instead", "en", "schedule_call", ("draft_email",)),
    ("I'd rather not send anything in writing, can we do a 1:1 friday", "en", "schedule_call", ("draft_email",)),
    ("please draft the email", "en", "draft_email", ()),
    ("skip the call", "en", None, ("schedule_call",)),
    ("Yes, I tried to call her twice", "en", None, ()),
    ("It was a no-call no-show", "en", None, ()),
    # what the employee did not do is a past event, neither a wish nor a refusal (found in the browser walk)
    ("my report Dana didn't show up for her shift this morning and didn't call", "en", None, ()),
    ("she did not even call or text", "en", None, ()),
    ("he never emailed back, so let's do a call", "en", "schedule_call", ()),
    ("不要发邮件，帮我约她周四下午两点通个电话", "zh", "schedule_call", ("draft_email",)),
    ("打过两次电话，她没接", "zh", None, ()),
    ("她今天没来，也没打电话请假", "zh", None, ()),
    ("还是发个邮件吧", "zh", "draft_email", ()),
])
def test_wanted_and_refused_actions(text: str, lang: str, wanted: str | None, declined: tuple[str, ...]) -> None:
    assert read_actions(text, lang, CONFIG.actions) == (wanted, declined)


@pytest.mark.parametrize(("text", "lang", "talked", "day", "at"), [
    ("set up a call with her on Thursday at 2pm", "en", False, "2026-11-26", "14:00"),
    ("book a call monday at 9:30am", "en", False, "2026-11-30", "09:30"),  # a bare weekday to come is the next one
    ("no, Friday not Thursday", "en", True, "2026-11-27", None),
    ("make it 3", "en", True, None, None),
    ("make it at 3:30", "en", True, None, "15:30"),  # a call at 3:30 is in the afternoon
    ("schedule a call tomorrow at 10am", "en", False, "2026-11-25", "10:00"),
    ("帮我约她周四下午两点通个电话", "zh", False, "2026-11-26", "14:00"),
    ("不是周四，是周五", "zh", True, "2026-11-27", None),
    ("改到下午三点半", "zh", True, None, "15:30"),
    ("She was late on Thursday at 9", "en", False, None, None),  # no call talked about: no time taken
])
def test_the_call_day_and_time(text: str, lang: str, talked: bool, day: str | None, at: str | None) -> None:
    request = read_action_request(text, lang, CONFIG.actions, now=NOW, timezone=TZ, call_talked_about=talked)
    assert (request.day, request.at) == (day, at)


def test_a_refused_action_is_never_offered_and_the_wanted_one_goes_first() -> None:
    ready = {"history_length": 6, "situation": "active", "reply_asks_question": False}
    assert allowed_action(evaluate_actions(CONFIG.actions, ActionContext(**ready))) == "draft_email"  # email before calendar
    ctx = ActionContext(**ready, declined_actions=("draft_email",))
    decisions = {d.action_id: d for d in evaluate_actions(CONFIG.actions, ctx)}
    assert decisions["draft_email"].blockers == ("declined",) and decisions["schedule_call"].allowed
    ctx = ActionContext(**ready, preferred_action="schedule_call")
    assert allowed_action(evaluate_actions(CONFIG.actions, ctx)) == "schedule_call"


def test_the_day_and_time_in_words() -> None:
    assert describe_when("2026-11-27", "14:00", "en") == "Friday 27 November at 14:00"
    assert describe_when("2026-11-27", "14:00", "zh-hans") == "11月27日（周五）14:00"


@pytest.mark.parametrize(("said", "day"), [
    ("sorry, not Tuesday, Wednesday", "2026-12-02"),  # within the week the call was in, not this Wednesday
    ("no, Friday", "2026-12-04"),
])
def test_a_moved_call_day_stays_in_the_week_it_was_in(said: str, day: str) -> None:
    from conversations.engine.simulate import Dialogue

    d = Dialogue(CONFIG, NOW, timezone=TZ)  # Tuesday 24 November 2026
    for text in ("Jenna keeps leaving early, third time this week", "yes, I messaged her on slack",
                 "hmm, maybe a call next Tuesday at 4pm"):
        d.say(text)
    assert d.state.slots["call_day"].value == "2026-12-01"
    d.say(said)
    assert d.state.slots["call_day"].value == day and d.state.slots["call_time"].value == "16:00"
