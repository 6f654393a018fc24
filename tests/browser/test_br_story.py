"""The whole story in a real browser, and the two other flows the issue names."""

from __future__ import annotations

import re

import pytest

from billing.models import ParkingOrder

pytestmark = pytest.mark.browser


def test_fee_mismatch_story_person_and_supervisor(person_factory) -> None:  # noqa: ANN001
    person = person_factory()
    person.shot("01-home")
    person.start("parking_help_desk")
    person.say("Please verify order SCN-020, I think I was overcharged")
    page = person.page
    banner = page.locator(".banner-review")
    banner.wait_for()
    assert "supervisor is reviewing" in banner.inner_text().lower()
    assert "14.00" in page.locator("#transcript").inner_text()
    person.shot("02-chat-waiting-review")

    supervisor = person_factory("sam", "sam-supervisor-2026")
    admin = supervisor.page
    admin.goto(f"{supervisor.base}/admin/workflows/review/")
    assert "1 pending" in admin.content()
    supervisor.shot("03-admin-review-queue")
    admin.get_by_role("link", name="Decide").first.click()
    admin.wait_for_url(re.compile(r".*/decide/$"))
    admin.get_by_role("radio", name="Approve").check()
    admin.get_by_label("Reason").fill("The rule in force gives 14.00; adjust the order.")
    supervisor.shot("04-admin-decide")
    admin.get_by_role("button", name="Record decision").click()
    admin.wait_for_url(re.compile(r".*/admin/workflows/review/\d+/change/"))

    # The person's page updates by itself: no reload.
    page.locator(".banner-decided").wait_for(timeout=20000)
    page.wait_for_function("() => document.querySelector('#transcript').innerText.includes('Review decided')")
    assert "14.00" in page.locator("#transcript li").last.inner_text()
    person.shot("05-chat-after-decision")
    assert ParkingOrder.objects.get(order_no="SCN-020").total_amount == 14
    assert not person.errors and not supervisor.errors, person.errors + supervisor.errors


def test_side_question_in_rv_diagnostic_returns_to_its_step(person_factory) -> None:  # noqa: ANN001
    person = person_factory("bob", "bob-demo-2026")
    person.start("rv_diagnostic")
    person.say("Roof AC isn't cooling")
    person.say("118 V at the supply")
    step_question = person.page.locator("#transcript li.msg-assistant").last.inner_text()
    person.say("Where is the capacitor on this unit?")
    answer = person.page.locator("#transcript li.msg-assistant").last.inner_text()
    assert "electrical box" in answer
    assert "compressor" in answer.lower() and "Back to where we were" in answer
    assert "compressor" in step_question.lower()
    person.shot("06-rv-side-question")
    assert not person.errors, person.errors


def test_consent_is_asked_before_an_action_runs(person_factory) -> None:  # noqa: ANN001
    person = person_factory(width=390)  # a phone
    person.start("manager_assistant")
    for text in ("My employee Sam didn't show up for two shifts", "Yes, I called him twice, no answer", "No, first time, nothing documented yet"):
        person.say(text)
    page = person.page
    option = page.locator(".option", has_text="Draft an email")
    consent = option.get_by_label("I agree: go ahead")
    run = option.get_by_role("button", name="Confirm: Draft an email")
    run.click()  # the browser refuses: consent is required
    assert page.locator("#panel").inner_text().count("Email draft") == 0
    consent.check()
    run.click()
    page.locator("#panel a", has_text="Email draft").wait_for()
    page.locator(".option-blocked", has_text="Draft an email").wait_for()  # never twice
    person.shot("07-manager-consent-phone")
    assert not person.errors, person.errors


def test_chinese_chat_displays_and_no_js_fallback(person_factory, browser, demo_live) -> None:  # noqa: ANN001
    person = person_factory()
    person.start("parking_help_desk", "zh-hans")
    person.page.get_by_label("您的消息").fill("沪B88888在上海有没有欠费？")
    person.page.keyboard.press("Enter")
    person.page.wait_for_function("() => document.querySelector('#transcript').innerText.includes('13.00')")
    assert "欠费" in person.page.locator("#transcript").inner_text()
    person.shot("08-chat-chinese")
    # Without JavaScript the composer still works as a plain form.
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(f"{demo_live.url}/login/")
    page.get_by_label("Username").fill("bob")
    page.get_by_label("Password").fill("bob-demo-2026")
    page.get_by_role("button", name="Sign in").click()
    page.locator("button[data-workflow=permit_form]").click()
    page.get_by_label("Your message").fill("residential")
    page.get_by_role("button", name="Send").click()
    assert "Noted the building type: residential" in page.locator("#transcript").inner_text()
    context.close()
