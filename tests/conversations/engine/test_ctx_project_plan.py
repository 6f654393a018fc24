"""The project plan drafted from an intake (templates, no model), vacuous answers and intake signals."""

from __future__ import annotations

from datetime import date

import pytest

from conversations.engine._text import is_vacuous
from conversations.packs.project_intake import classify_intake
from conversations.packs.project_plan import draft_project_plan, render_project_plan

INTAKE = {"summary": "A web portal where customers track parcels", "goal": "cut support calls by half",
          "users": "our customers, about 4,000 people", "constraints": "budget is 60k euros; must be live by the end of March"}


def test_the_plan_follows_the_intake() -> None:
    plan = draft_project_plan(INTAKE, intent_class="web_app", language="en", intake_version=3)
    assert [p["name"] for p in plan["phases"]] == ["Discovery", "Design", "Build", "Testing", "Launch"]
    assert plan["milestones"][-1] == {"week": "week 13", "name": "Live", "due": "by the end of March"}
    assert any(r.startswith("Budget (60k euros)") for r in plan["risks"])
    assert any(r.startswith("Load: about 4,000 users") for r in plan["risks"])
    assert plan["open_questions"] == [] and plan["intake_version"] == 3


def test_what_the_intake_leaves_out_becomes_open_questions() -> None:
    plan = draft_project_plan({"summary": "Renovate the staff kitchen", "goal": "a nicer lunch place", "users": "office staff"},
                              intent_class="unknown", language="en", intake_version=1)
    assert plan["open_questions"] == ["What budget is available?", "Is there a date it must be live by?",
                                      "About how many people will use it?", "How will you measure that the goal is reached?",
                                      "What kind of solution do you have in mind: a website, a mobile app, an internal tool, reports, an automation?"]


def test_a_chinese_plan_and_its_stale_banner() -> None:
    plan = draft_project_plan({"summary": "社区团购小程序", "goal": "团长少跑一半的路", "users": "小区居民和团长，大约两千人",
                               "constraints": "预算大概20万元，明年三月前上线"}, intent_class="mobile_app", language="zh-hans", intake_version=1)
    text = render_project_plan(plan, stale_reason="stale", current_intake=2)
    assert text.startswith("# 项目计划\n\n> **已过期：** 本计划依据受理文档第 1 版生成，受理信息已更新为第 2 版。")
    assert "负载：约 2,000 名用户" in text and "预算（预算大概20万元）" in text and "正式发布 — 明年三月前上线" in text


@pytest.mark.parametrize("text", ["不知道，随便", "no idea yet", "whatever", "dunno, anything really", "都行", "你们定吧", "idk, you decide"])
def test_vacuous(text: str) -> None:
    assert is_vacuous(text)


@pytest.mark.parametrize("text", ["not sure, maybe nurses", "none", "没有", "nurses", "A booking app", "无预算限制"])
def test_not_vacuous(text: str) -> None:
    assert not is_vacuous(text)


def test_a_vacuous_answer_counts_as_missing() -> None:
    signals = classify_intake({"summary": "随便", "goal": "不知道", "users": "都行"})
    assert signals.missing_critical and signals.intent_class == "unknown"
    assert not classify_intake({"summary": "a web shop for our bakery", "goal": "sell cakes online", "users": "customers"}).missing_critical


@pytest.mark.parametrize(("constraints", "due", "short"), [
    ("must be live by 1 March 2027, budget 40k", "2027-03-01", True),  # 13 weeks of phases, 12 left
    ("春节前必须上线", "2027-02-06", True),  # the Spring Festival of 2027, from the holidays package
    ("deadline is the end of Q1", "2027-03-31", False),
    ("a fin de mes", "2026-12-31", True),
    ("we need it by the end of june, budget is 25k max", "2027-06-30", False),  # a month's end named by the month
    ("6月底前上线", "2027-06-30", False),
])
def test_a_deadline_said_as_a_date_is_held_against_the_phases(constraints, due, short) -> None:  # noqa: ANN001
    plan = draft_project_plan({"summary": "A booking app", "goal": "fewer phone calls", "users": "patients",
                               "constraints": constraints}, intent_class="web_app", language="en", intake_version=1,
                              today=date(2026, 12, 2))
    launch = plan["milestones"][-1]["due"]
    assert launch.startswith(due) and ("not reachable with this scope" in launch) == short  # the milestone says what the risk does
    deadline = [risk for risk in plan["risks"] if risk.startswith(f"Deadline {due}")]
    assert len(deadline) == 1 and ("cut the first version" in deadline[0]) == short


@pytest.mark.parametrize("constraints", ["it has to be live by 30 September 2026", "must be ready by 2026-10-01", "2026年10月1日前上线"])
def test_a_deadline_that_has_passed_is_said_and_asked_never_moved_a_year(constraints: str) -> None:
    plan = draft_project_plan({"summary": "A booking app", "goal": "fewer phone calls", "users": "patients",
                               "constraints": constraints}, intent_class="web_app", language="en", intake_version=1,
                              today=date(2026, 12, 2))
    launch = plan["milestones"][-1]["due"]
    assert launch.startswith("2026-") and launch.endswith("which has passed") and "2027" not in " ".join(plan["risks"])
    assert any("has passed: which date must it be live by" in q for q in plan["open_questions"])


def test_a_deadline_read_unsure_is_asked_not_planned() -> None:
    plan = draft_project_plan({"summary": "A booking app", "goal": "fewer phone calls", "users": "patients",
                               "constraints": "go live by 3/1"}, intent_class="web_app", language="en", intake_version=1,
                              today=date(2026, 12, 2))
    assert not any(risk.startswith("Deadline 20") for risk in plan["risks"])
    assert any("is how I read it" in question for question in plan["open_questions"])
