"""Project intake (issue 17): answers in their own field, vacuous intakes kept from the gate, the plan
drafted from the intake and marked out of date when the intake changes, the intake in the review page."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from workflows.models import Review, RunDocument

CLEAR_EN = [
    "We want a web portal where our customers can track their parcel deliveries",
    "The goal is to cut calls to our support desk by half",
    "our customers and the support team, roughly 4,000 people",
    "budget is 60k euros, must be live by the end of March",
]


@pytest.fixture
def browser(person) -> Client:  # noqa: ANN001
    client = Client()
    client.force_login(person)
    return client


def _download(browser: Client, conversation_id: int, key: str) -> tuple[str, str]:
    response = browser.get(f"/c/{conversation_id}/documents/{key}")
    assert response.status_code == 200, response.status_code
    return response.content.decode(), response["Content-Disposition"]


def test_a_clear_intake_qualifies_by_itself_and_its_plan_is_a_real_plan(chat, browser) -> None:  # noqa: ANN001
    # given a clear intake
    c = chat("project_intake", "en")
    for text in CLEAR_EN:
        body = c.say(text)
    # then the gate qualified it without a supervisor, on its signals
    assert body["current_step"] == "review_plan" and body["review"] is None
    assert body["gate_signals"]["missing_critical"] is False and body["gate_signals"]["qa_pass"] is True
    assert body["gate_signals"]["intent_class"] == "web_app" and body["gate_signals"]["confidence"] >= 0.8
    assert body["stale_documents"] == {}
    # and the downloaded plan has phases, milestones, risks and open questions drawn from the intake
    plan, disposition = _download(browser, c.id, "project_plan")
    assert disposition.endswith('-project_plan-v1.md"')
    for heading in ("# Project plan", "## Phases", "## Milestones", "## Risks", "## Open questions"):
        assert heading in plan
    assert "Built from intake document v1." in plan
    assert "1. **Discovery** (weeks 1–2)" in plan
    # the launch milestone takes the deadline given, read as the day it is (the next end of March)
    assert re.search(r"Live — 20\d\d-03-31", plan), plan
    assert "Budget (60k euros)" in plan and re.search(r"Deadline 20\d\d-03-31: \d+ weeks", plan)
    assert "Load: about 4,000 users" in plan
    assert "Out of date" not in plan


def test_a_changed_answer_makes_the_plan_stale_until_it_is_regenerated(chat, browser) -> None:  # noqa: ANN001
    c = chat("project_intake", "en")
    for text in CLEAR_EN:
        c.say(text)
    # when an answer changes at the plan's review
    body = c.say("actually the users are only our business customers")
    # then the intake has a new version and the plan is out of date: in the API, the reply, the page and the download
    assert body["stale_documents"].keys() == {"project_plan"}
    assert "out of date until you regenerate it" in body["reply"]["text"]
    blocked = next(o for o in body["options"] if o["option_id"] == "accept_plan")
    assert blocked["eligibility"] == "blocked" and any("stale input" in b for b in blocked["blockers"])
    intake, _ = _download(browser, c.id, "intake_document")
    assert "only our business customers" in intake
    plan, _ = _download(browser, c.id, "project_plan")
    assert "Out of date:" in plan and "intake document v1; the intake is now v2" in plan
    assert "out of date: regenerate" in browser.get(f"/c/{c.id}/").content.decode()
    # when the plan is regenerated it is current again, built on the new intake
    c.choose("regenerate_plan")
    state = c.get()
    assert state["stale_documents"] == {} and "accept_plan" in c.option_ids()
    plan, disposition = _download(browser, c.id, "project_plan")
    assert disposition.endswith('-project_plan-v2.md"')
    assert "Out of date" not in plan and "Built from intake document v2." in plan and "business customers" in plan
    assert "out of date: regenerate" not in browser.get(f"/c/{c.id}/").content.decode()


def test_a_chinese_plan_is_written_in_chinese(chat, browser) -> None:  # noqa: ANN001
    c = chat("project_intake", "zh-hans")
    for text in ("做一个社区团购小程序，居民在手机上下单", "目标是团长每天少跑一半的路", "小区居民和团长，大约两千人", "预算大概20万元，明年三月前上线"):
        body = c.say(text)
    assert body["current_step"] == "review_plan"
    plan, _ = _download(browser, c.id, "project_plan")
    for heading in ("# 项目计划", "## 阶段", "## 里程碑", "## 风险", "## 待确认问题"):
        assert heading in plan
    assert "预算（预算大概20万" in plan and "明年三月前上线" in plan


@pytest.mark.parametrize(("locale", "messages"), [
    ("en", ["no idea yet", "whatever", "dunno, anything really", "Whatever you think"]),
    ("zh-hans", ["不知道，随便", "随便吧", "都行", "你们定吧"]),
])
def test_a_vacuous_intake_is_missing_critical_and_never_reaches_the_supervisor(chat, locale, messages) -> None:  # noqa: ANN001
    c = chat("project_intake", locale)
    for text in messages:
        body = c.say(text)
        assert body["form"]["finalized_answers"] == [], text
    assert body["gate_signals"]["missing_critical"] is True
    assert body["current_step"] == "intake" and body["review"] is None and body["documents"] == []
    submit = next(o for o in body["options"] if o["option_id"] == "submit_intake")
    missing = "关键信息缺失或太含糊，无法据此制定计划" if locale == "zh-hans" else "critical information is missing or too vague to plan from"
    assert submit["eligibility"] == "blocked" and missing in submit["blockers"]  # the plan's message in the conversation's language
    assert not Review.objects.filter(run__conversation__pk=c.id).exists()


def test_the_review_page_shows_the_intake_document(chat, supervisor) -> None:  # noqa: ANN001
    # given an intake the signals cannot qualify (no recognised kind of project): a supervisor decides
    c = chat("project_intake", "en")
    for text in ("We want to renovate the staff kitchen on the second floor", "a nicer place for lunch breaks", "all 40 office staff", "none"):
        body = c.say(text)
    assert body["review"]["status"] == "pending"
    review = Review.objects.get(pk=body["review"]["id"])
    assert review.title == "Intake gate: We want to renovate the staff kitchen on the second floor"
    admin = Client()
    admin.force_login(supervisor)
    for url in (f"/admin/workflows/review/{review.pk}/change/", f"/admin/workflows/review/{review.pk}/decide/"):
        html = admin.get(url).content.decode()
        assert "Intake document" in html and "v1" in html
        for value in ("We want to renovate the staff kitchen on the second floor", "a nicer place for lunch breaks", "all 40 office staff"):
            assert value in html, (url, value)
    assert RunDocument.objects.filter(run=review.run, key="intake_document").count() == 1
