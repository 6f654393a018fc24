"""Each workflow walked in the browser as a person would, in English and in Chinese (the RV desk
also in Russian and Spanish): their own phrasing, a correction, a side question. Every page is checked with axe-core (no serious or
critical violation), and a Chinese or Russian page may show no English word that is not an identifier or
data an operator typed. Screenshots go to test-artifacts/walk-*.png."""

from __future__ import annotations

import pytest

from tests.support.language import foreign_words, internal_codes

WALKS = {
    ("parking_help_desk", "en"): ["hey, is there anything unpaid for 沪B88888?",
                                  "how much to park at pudong lot 1 tomorrow 9 to 11am",
                                  "sorry, I meant till noon", "and can you check order SCN-019 for me"],
    ("parking_help_desk", "zh-hans"): ["你好，沪B88888还欠多少钱", "浦东一号停车场明天上午九点到十一点停车多少钱",
                                       "不对，停到中午十二点", "帮我核对一下订单SCN-019"],
    ("manager_assistant", "en"): ["My report Tom missed two shifts without calling in", "yes I called him, no answer",
                                  "no it's the first time, nothing written down"],
    ("manager_assistant", "zh-hans"): ["我手下的刘洋这周两次没来上班，也没请假", "打过电话了，没人接", "以前没有过，也没有书面记录"],
    ("permit_form", "en"): ["hi there", "it's a house", "2 storeys", "no wait, 3 storeys", "about 1,450 sq ft"],
    ("permit_form", "zh-hans"): ["你好", "是住宅", "两层", "不对，应该是3层", "每层大约1450平方英尺"],
    ("project_intake", "en"): ["We want a booking app for our three dental clinics",
                               "patients should book and cancel appointments online without calling",
                               "patients and the front desk staff", "it has to be live before March and cost under 40k"],
    ("project_intake", "zh-hans"): ["我们想给三家牙科诊所做一个预约小程序", "让病人可以在线预约和取消，不用打电话",
                                    "病人和前台工作人员", "三月前上线，预算四万以内"],
    ("rv_diagnostic", "en"): ["the fridge stopped cooling on propane", "yes the burner lights but goes out after a few seconds",
                              "where is the thermocouple?"],
    ("rv_diagnostic", "zh-hans"): ["冰箱用燃气不制冷了", "能点着火，但几秒钟就灭了", "热电偶在哪里？"],
    ("rv_diagnostic", "ru"): ["холодильник не охлаждает на газу", "да, горелка зажигается, но через пару секунд гаснет",
                              "где находится термопара?"],
    ("rv_diagnostic", "es"): ["la nevera no enfría con gas", "sí, el quemador enciende pero se apaga a los pocos segundos",
                              "¿dónde está el termopar?"],
}
# Pages whose words are checked for English left in them (a Spanish page is in Latin letters too: axe only).
CHECKED_FOR_ENGLISH = ("zh-hans", "ru")
# Consent-free choices a person makes at the end of a walk when they are offered, and consent ones.
CHOICES = {("manager_assistant", "en"): ("draft_email", True), ("manager_assistant", "zh-hans"): ("draft_email", True),
           ("rv_diagnostic", "ru"): ("write_report", False), ("rv_diagnostic", "es"): ("write_report", False)}


def _operator_data() -> set[str]:
    """What operators and people typed: names of rules and their segments, lots and cities, user names."""
    from django.contrib.auth import get_user_model

    from billing.models import BillingRule, BillingRuleVersion, City, Lot

    values = set(BillingRule.objects.values_list("name", flat=True))
    for payload in BillingRuleVersion.objects.values_list("rule_payload", flat=True):
        values |= {str(segment.get("name") or "") for segment in payload or [] if isinstance(segment, dict)}
    for model in (City, Lot):
        for names, aliases in model.objects.values_list("names", "aliases"):
            values |= set(names.values()) | set(aliases)
    return values | set(get_user_model().objects.values_list("username", flat=True))


def _serious_violations(page) -> list[str]:  # noqa: ANN001
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    return [f"{v['id']} ({v['impact']}): {v['help']} - {[n['target'] for n in v['nodes']][:3]}"
            for v in results.response["violations"] if v.get("impact") in ("serious", "critical")]


@pytest.mark.parametrize(("workflow", "locale"), sorted(WALKS))
def test_a_walk_reads_in_its_language_and_passes_axe(person_factory, workflow: str, locale: str) -> None:  # noqa: ANN001
    person = person_factory()
    person.start(workflow, locale)
    for text in WALKS[(workflow, locale)]:
        person.say(text)
    page = person.page
    if (workflow, locale) in CHOICES:
        option_id, consent = CHOICES[(workflow, locale)]
        form = page.locator(f".option form:has(input[name=option_id][value={option_id}])")
        if consent:
            form.locator("input[name=consent]").check()
        form.locator("button[type=submit]").click()
        page.locator("#panel .docs a").first.wait_for()
    name = f"walk-{workflow}-{locale}"
    person.shot(name)
    problems = [f"axe: {v}" for v in _serious_violations(page)]
    problems += [f"internal code: {c}" for c in internal_codes(page.locator("body").inner_text(), _operator_data())]
    if locale in CHECKED_FOR_ENGLISH:
        problems += [f"untranslated: {w}" for w in foreign_words(page.locator("body").inner_text(), _operator_data())]
    documents = page.locator("#panel .docs li > a:first-child")
    for index in range(documents.count()):
        page.locator("#panel .docs li > a:first-child").nth(index).click()
        page.wait_for_selector("article.document")
        person.shot(f"{name}-document-{index + 1}")
        problems += [f"document axe: {v}" for v in _serious_violations(page)]
        problems += [f"document internal code: {c}" for c in internal_codes(page.locator("body").inner_text(), _operator_data())]
        if locale in CHECKED_FOR_ENGLISH:
            problems += [f"document untranslated: {w}" for w in foreign_words(page.locator("body").inner_text(), _operator_data())]
        page.go_back()
    assert not problems, problems
    assert not person.errors, person.errors


def test_the_chat_works_with_the_keyboard_alone_at_phone_width(person_factory) -> None:  # noqa: ANN001
    person = person_factory(width=390)
    person.start("parking_help_desk")
    page = person.page
    page.keyboard.press("Tab")  # the skip link comes first
    assert page.evaluate("() => document.activeElement.className") == "skip-link"
    page.locator("#message-text").focus()
    page.keyboard.type("how much at SH-PD-001 tomorrow 9 to 11am?")
    count = page.locator("#transcript li.msg-assistant").count()
    page.keyboard.press("Enter")
    page.wait_for_function("c => document.querySelectorAll('#transcript li.msg-assistant').length > c", arg=count)
    # Focus goes back to the message box, and Tab reaches the offered options' buttons.
    assert page.evaluate("() => document.activeElement.id") == "message-text"
    for _ in range(40):
        page.keyboard.press("Shift+Tab")
        if page.evaluate("() => document.activeElement.closest('.option') !== null"):
            break
    assert page.evaluate("() => document.activeElement.tagName") == "BUTTON"
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 390, f"the page scrolls sideways at phone width ({width}px)"
    person.shot("walk-keyboard-phone")
    assert not _serious_violations(page)
