"""The chat page as hands on a keyboard find it (issue 35, the page): a message is never lost silently, a second
Enter queues no ghost, a closed conversation closes its box, a blocked option stays reachable with its reasons,
options go while staff answer, and the browser's own validation speaks the page's language."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def _sent(text: str) -> int:
    from conversations.models import Message

    return Message.objects.filter(role="user", text=text).count()


def test_a_send_that_never_arrives_says_so_keeps_the_words_and_sends_once_again(person_factory) -> None:  # noqa: ANN001
    person = person_factory()
    person.start("parking_help_desk")
    page = person.page
    words = "what does SH-PD-001 charge for two hours tomorrow from 10am"
    page.route(re.compile(r".*/send$"), lambda route: route.abort("connectionrefused"))  # the server is down
    page.locator("#message-text").fill(words)
    page.keyboard.press("Enter")
    bubble = page.locator("#transcript li.msg-unsent")
    bubble.wait_for()
    assert "Not sent" in bubble.inner_text() and page.locator("#message-text").input_value() == words
    assert _sent(words) == 0
    person.shot("page-unsent")
    page.unroute(re.compile(r".*/send$"))
    count = page.locator("#transcript li.msg-assistant").count()
    bubble.get_by_role("button", name="Send again").click()
    page.wait_for_function("c => document.querySelectorAll('#transcript li.msg-assistant').length > c", arg=count)
    assert page.locator("#transcript li.msg-unsent").count() == 0 and _sent(words) == 1
    # the console tells of the refused request (htmx and Chromium log it), and of nothing else
    assert not [e for e in person.errors if not re.search(r"htmx:(afterRequest|sendError)|ERR_CONNECTION_REFUSED", e)]


def test_an_answer_lost_on_the_way_back_is_not_a_second_message(person_factory) -> None:  # noqa: ANN001
    person = person_factory()
    person.start("parking_help_desk")
    page = person.page
    words = "is anything unpaid for plate 沪A12345"

    def lose_the_answer(route) -> None:  # noqa: ANN001
        route.fetch()  # the server gets it and answers; the answer never reaches the page
        route.abort("connectionreset")

    page.route(re.compile(r".*/send$"), lose_the_answer)
    page.locator("#message-text").fill(words)
    page.keyboard.press("Enter")
    page.locator("#transcript li.msg-unsent").wait_for()
    page.unroute(re.compile(r".*/send$"))
    page.locator("#transcript li.msg-unsent").get_by_role("button", name="Send again").click()
    page.locator("#transcript li.msg-user", has_text=words).last.wait_for()
    page.wait_for_function("() => !document.querySelector('#transcript li.msg-unsent, #transcript li.msg-sending')")
    assert _sent(words) == 1  # the same key: the copy the server already had, shown once with its reply
    page.reload()
    assert page.locator("#transcript li.msg-user", has_text=words).count() == 1


def test_a_second_enter_while_sending_queues_no_ghost(person_factory) -> None:  # noqa: ANN001
    person = person_factory()
    person.start("parking_help_desk")
    page = person.page
    words = "how much for 3 hours at SH-PD-001 today from 2pm"
    page.locator("#message-text").fill(words)
    count = page.locator("#transcript li.msg-assistant").count()
    page.keyboard.press("Enter")
    page.keyboard.press("Enter")
    page.wait_for_function("c => document.querySelectorAll('#transcript li.msg-assistant').length > c", arg=count)
    page.wait_for_timeout(500)
    assert _sent(words) == 1 and page.locator("#transcript li.msg-user").count() == 1


def test_an_ended_conversation_closes_its_box_and_says_how_to_start_again(person_factory) -> None:  # noqa: ANN001
    from conversations.models import Conversation

    person = person_factory()
    person.start("permit_form", "zh-hans")
    page = person.page
    Conversation.objects.filter(owner__username="alice").update(status=Conversation.Status.COMPLETED)
    page.reload()
    assert page.locator("#message-text").is_disabled()
    closed = page.locator("#composer-closed")
    assert "已结束" in closed.inner_text() and closed.get_by_role("link").get_attribute("href") == "/"
    person.shot("page-closed")


def test_the_browsers_own_validation_speaks_the_pages_language(person_factory) -> None:  # noqa: ANN001
    person = person_factory()
    person.start("manager_assistant", "zh-hans")
    page = person.page
    page.locator("#composer button[type=submit]").click()  # nothing typed
    message = page.evaluate("() => document.getElementById('message-text').validationMessage")
    assert message == "请先输入消息。"


def test_blocked_options_stay_reachable_with_their_reasons_and_go_while_staff_answer(person_factory) -> None:  # noqa: ANN001
    person = person_factory()
    person.start("manager_assistant")
    page = person.page
    person.say("one of my team, Marco Bianchi, keeps turning up 30 minutes late")
    blocked = page.locator(".option-blocked button[aria-disabled='true']")
    assert blocked.count()  # the email waits for the contact question
    first = blocked.first
    assert first.get_attribute("disabled") is None  # reachable by Tab, read with its reasons
    reasons = page.locator("#" + first.get_attribute("aria-describedby")).inner_text()
    assert reasons.strip()
    count = page.locator("#transcript li").count()
    first.focus()
    assert page.evaluate("() => document.activeElement.getAttribute('aria-disabled')") == "true"
    page.keyboard.press("Enter")  # as a keyboard user would
    page.wait_for_timeout(400)
    assert page.locator("#transcript li").count() == count  # nothing was sent
    person.say("I'd like to talk to a real person from your staff about this")
    page.locator(".banner", has_text="member of staff").wait_for()
    assert page.locator("#options .option").count() == 0
    assert not person.errors, person.errors
