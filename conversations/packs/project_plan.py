"""The project intake's pack: a project plan drafted from an intake document, from templates.

Deterministic and model-free: the phases follow the kind of project the intake was classified
as, the milestones close each phase (the launch takes the deadline the person gave), the risks
and open questions come from what the intake says and what it leaves out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, date, datetime, time
from typing import Any

from ..engine._text import is_vacuous
from ..engine.catalog import marked, say, say_in
from ..engine.certainty import CERTAIN
from ..engine.recognizers.times import read_time

# (phase key, weeks) per kind of project; names and purposes per language below
PHASES: dict[str, tuple[tuple[str, int], ...]] = {
    "web_app": (("discovery", 2), ("design", 2), ("build", 6), ("test", 2), ("launch", 1)),
    "mobile_app": (("discovery", 2), ("prototype", 3), ("build", 6), ("beta", 2), ("release", 1)),
    "data_pipeline": (("discovery", 2), ("model", 2), ("build", 4), ("validate", 2), ("rollout", 1)),
    "internal_tool": (("discovery", 2), ("design", 2), ("build", 5), ("pilot", 2), ("rollout", 1)),
    "automation": (("map", 2), ("design", 1), ("build", 4), ("parallel", 2), ("switch", 1)),
    "other": (("discovery", 2), ("design", 2), ("build", 6), ("test", 2), ("launch", 1)),
}

# What each phase is called and does, the milestone that closes it ({users}, {goal} filled in), in the catalog.
_PHASES = {
    "discovery": (marked("Discovery"), marked("Confirm the goal ({goal}) with {users} and agree what the first version must do."),
                  marked("Scope of the first version agreed")),
    "map": (marked("Map the process"), marked("Walk through today's process with {users} and mark the steps to automate."),
            marked("Process mapped")),
    "design": (marked("Design"), marked("Sketch the screens and flows {users} will use and review them with a few of them."),
               marked("Design approved")),
    "prototype": (marked("Prototype"), marked("Build a clickable prototype and try it with a few of {users}."), marked("Prototype tested")),
    "model": (marked("Data model"), marked("List the sources and the figures that show progress on the goal; agree their definitions."),
              marked("Data model agreed")),
    "build": (marked("Build"), marked("Build the first version in short iterations, showing progress every two weeks."),
              marked("First version complete")),
    "test": (marked("Testing"), marked("Test with real tasks from {users}; fix what blocks them."), marked("Acceptance tests passed")),
    "beta": (marked("Beta"), marked("Hand a beta to a small group of {users} and collect their feedback."), marked("Beta feedback addressed")),
    "validate": (marked("Validation"), marked("Check the results against figures known to be right."), marked("Results validated")),
    "pilot": (marked("Pilot"), marked("Run it with one team of {users} before everyone."), marked("Pilot signed off")),
    "parallel": (marked("Parallel run"), marked("Run the automation next to the current process and compare the outcomes."),
                 marked("Parallel run matches")),
    "launch": (marked("Launch"), marked("Go live, train {users} and watch the first weeks closely."), marked("Live")),
    "release": (marked("Release"), marked("Publish the app and support {users} through the first weeks."), marked("Released")),
    "rollout": (marked("Rollout"), marked("Roll out to all {users}, with training and a contact for questions."), marked("Rolled out")),
    "switch": (marked("Switch-over"), marked("Switch to the automation and retire the manual steps."), marked("Switched over")),
}

# The intake's fields as the plan heads them.
_FIELDS = {"summary": marked("Summary"), "goal": marked("Goal"), "users": marked("Users"), "constraints": marked("Constraints")}

_MONEY = re.compile(
    r"(?:[$€£¥]\s?\d[\d,.]*\s*(?:k|m|grand|thousand|million)?|\d[\d,.]*\s*(?:k|m)?\s*(?:grand|thousand|million)?\s*"
    r"(?:dollars|usd|euros?|eur|pounds|gbp|rmb|yuan|chf|bucks)\b|\d[\d,.]*\s*(?:k|grand)\b(?!\s*(?:users|people))"
    r"|(?:\d[\d,.]*|[〇一二两三四五六七八九十百千]+)\s*(?:万|千)?\s*(?:元|块|人民币|美元|欧元|美金)"
    r"|(?:预算|经费|费用|成本)[^。；，,]{0,8}?(?:\d[\d,.]*|[一二两三四五六七八九十百千]+)\s*(?:万|千)?\s*(?:元|块|人民币|美元|欧元)?)",
    re.IGNORECASE,
)
_NO_BUDGET = re.compile(r"\bno\s+(?:\w+\s+)?budget|没有?(?:什么)?预算|不设预算|预算不限", re.IGNORECASE)
_DEADLINE = re.compile(
    r"(?:\b(?:by|before|until|no\s+later\s+than|in|within)\s+(?:the\s+)?(?:end\s+of\s+)?"
    r"(?:q[1-4]|spring|summer|autumn|fall|winter|january|february|march|april|may|june|july|august|september|october|"
    r"november|december|next\s+(?:week|month|year|quarter)|this\s+(?:month|year|quarter)|\d{4}|\d+\s+(?:weeks?|months?)|"
    r"(?:two|three|four|five|six|nine|twelve)\s+(?:weeks?|months?))\b[^.;,]*)"
    r"|(?:今年|明年|后年|下个?月|本月|这个月|年底|年中|月底|下季度|本季度|[一二三四五六七八九十\d]{1,3}月|"
    r"(?:\d+|[一二两三四五六七八九十半]+)\s*个?(?:月|周|星期)(?:之内|以内|内))[^。；，,]{0,12}",
    re.IGNORECASE,
)
_COUNT = re.compile(r"(\d[\d,]*)\s*(?:k\b)?|([一二两三四五六七八九十百千万]+)\s*(?:人|名|位|个)")
_RULES = re.compile(r"\b(gdpr|hipaa|pci(?:[\s-]dss)?|sox|data\s+protection|privacy)\b|(个人信息|隐私|等保|合规|数据安全)", re.IGNORECASE)
_MEASURE = re.compile(r"\d|%|\bhalf\b|\bdouble\b|\btwice\b|\bthird\b|\bquarter\b|一半|翻倍|成|百分|[一二两三四五六七八九十]倍", re.IGNORECASE)
_CN_DIGIT = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}


def _cn_number(token: str) -> int:
    """A simple Chinese numeral (三百, 两千, 一万二 is read as 10000): enough to tell a large group."""
    total, digit = 0, 0
    for ch in token:
        if ch in _CN_DIGIT:
            digit = _CN_DIGIT[ch]
        elif ch in "十百千万":
            total += (digit or 1) * {"十": 10, "百": 100, "千": 1000, "万": 10000}[ch]
            digit = 0
    return total + digit


def _user_count(users: str) -> int | None:
    match = _COUNT.search(users)
    if match is None:
        return None
    if match.group(1):
        value = int(match.group(1).replace(",", ""))
        return value * 1000 if re.match(r"\d[\d,]*\s*k\b", match.group(0), re.IGNORECASE) else value
    return _cn_number(match.group(2))


def _said(value: Any) -> str:
    text = str(value or "").strip()
    return "" if not text or is_vacuous(text) else text


def _plan_language(language: str) -> str:
    """The language a plan is written in: the conversation's, English when the catalog has no other."""
    code = language.lower()
    return "zh" if code.startswith("zh") else code[:2] if code[:2] in ("ru", "es") else "en"


def _span(lang: str, start: int, end: int) -> str:
    return say(lang, "weeks {start}–{end}", start=start, end=end) if end > start else say(lang, "week {n}", n=start)


def _deadline_day(constraints: str, today: date | None) -> tuple[date | None, bool]:
    """The day the constraints say it must be live by ("by 1 March 2027", "before the Spring Festival", "月底前"),
    read by the time recognizer, and whether that reading is certain."""
    if not constraints or today is None:
        return None, False
    found = read_time(constraints, now=datetime.combine(today, time(12), tzinfo=UTC))
    if found is None:
        return None, False
    day = found.value.by or found.value.date or (found.value.at.date() if found.value.at else None)
    return (day, found.certainty == CERTAIN) if day is not None else (None, False)


def draft_project_plan(intake: Mapping[str, Any], *, intent_class: str, language: str, intake_version: int | None,
                       today: date | None = None) -> dict[str, Any]:
    """The plan's content (phases, milestones, risks, open questions) for an intake document's fields; with
    `today`, a deadline said as a date, a festival or a period's end is held against the phases' weeks."""
    lang = _plan_language(language)
    fields = {key: _said(intake.get(key)) for key in ("summary", "goal", "users", "constraints")}
    # who the users are, shortly: the first part of the answer ("our customers and the support team, roughly 4,000 people")
    users = re.split(r"[,;，；(（]|\s+-\s+", fields["users"])[0].strip() if fields["users"] else ""
    users = re.sub(r"^(?:only|just|mainly|mostly)\s+", "", users, flags=re.IGNORECASE) or say_in(lang, "a project's users", "the users")
    goal = fields["goal"] or say_in(lang, "a project's goal", "to be agreed")
    constraints = fields["constraints"]
    kind = intent_class if intent_class in PHASES else "other"
    phases, milestones, week = [], [], 1
    for key, weeks in PHASES[kind]:
        name, purpose, milestone = _PHASES[key]
        end = week + weeks - 1
        phases.append({"name": say(lang, name), "weeks": _span(lang, week, end), "purpose": say(lang, purpose, users=users, goal=goal)})
        milestones.append({"week": _span(lang, end, end), "name": say(lang, milestone)})
        week = end + 1
    deadline = _DEADLINE.search(constraints) if constraints else None
    budget = _MONEY.search(constraints) if constraints else None
    if deadline is not None:
        milestones[-1]["due"] = deadline.group(0).strip(" ，,。")
    risks = [say(lang, "Scope creep: keep the first version to what serves the goal ({goal}).", goal=goal)]
    questions = []
    if budget is not None:
        risks.append(say(lang, "Budget ({budget}): cost the scope against it once the design is agreed; drop features before quality.",
                         budget=budget.group(0).strip()))
    elif not (constraints and _NO_BUDGET.search(constraints)):
        risks.append(say(lang, "No budget given: the scope cannot be costed yet."))
        questions.append(say(lang, "What budget is available?"))
    due, sure = _deadline_day(constraints, today)
    passed = due is not None and today is not None and due <= today
    if passed:  # never moved to a later year: said plainly, and asked
        milestones[-1]["due"] = say(lang, "{date}, which has passed", date=due.isoformat())
        risks.append(say(lang, "Deadline {date} has already passed: the plan cannot meet it.", date=due.isoformat()))
        questions.append(say(lang, "The date given ({date}) has passed: which date must it be live by?", date=due.isoformat()))
    elif due is not None and sure and today is not None:
        available = (due - today).days // 7
        milestones[-1]["due"] = due.isoformat()
        if week - 1 > available:
            # the launch cannot be on that day with this scope: the milestone says so, as the risk does
            milestones[-1]["due"] = say(lang, "{date}: not reachable with this scope ({weeks} weeks of work, {available} left)",
                                        date=due.isoformat(), weeks=week - 1, available=max(available, 0))
            risks.append(say(lang, "Deadline {date}: the phases take {weeks} weeks and only {available} are left; cut the first "
                                   "version or move the date.", date=due.isoformat(), weeks=week - 1, available=max(available, 0)))
        else:
            risks.append(say(lang, "Deadline {date}: {available} weeks for {weeks} weeks of work; decide early what can wait for a "
                                   "later release.", date=due.isoformat(), weeks=week - 1, available=available))
    elif deadline is not None:  # the deadline in the person's words: a day read unsure is asked, never planned
        risks.append(say(lang, "Deadline ({deadline}): little slack in the schedule; decide early what can wait for a later release.",
                         deadline=deadline.group(0).strip(" ，,。")))
    if due is not None and not sure and not passed:
        questions.append(say(lang, "Which date must it be live by exactly ({date} is how I read it)?", date=due.isoformat()))
    elif due is None and deadline is None:
        questions.append(say(lang, "Is there a date it must be live by?"))
    risks.append(say(lang, "Adoption: {users} have to change how they work; involve them in design and testing.", users=users))
    count = _user_count(fields["users"]) if fields["users"] else None
    if count is not None and count >= 1000:
        risks.append(say(lang, "Load: about {count} users; test with realistic volumes before launch.", count=f"{count:,}"))
    elif count is None:
        questions.append(say(lang, "About how many people will use it?"))
    rule = _RULES.search(" ".join(fields.values()))
    if rule is not None:
        risks.append(say(lang, "Compliance ({rule}): review data protection before any real data is used.", rule=rule.group(0)))
    if not _MEASURE.search(fields["goal"]):
        risks.append(say(lang, "The goal has no measure yet, so success will be hard to show."))
        questions.append(say(lang, "How will you measure that the goal is reached?"))
    if kind == "other":
        risks.append(say(lang, "The kind of solution is not clear yet; the phases above are generic."))
        questions.append(say(lang, "What kind of solution do you have in mind: a website, a mobile app, an internal tool, reports, an automation?"))
    return {
        "language": lang,
        "intake_version": intake_version,
        "project_kind": kind,
        **{key: fields[key] or None for key in ("summary", "goal", "users", "constraints")},
        "phases": phases,
        "milestones": milestones,
        "risks": risks,
        "open_questions": questions,
    }


def render_project_plan(content: Mapping[str, Any], *, stale_reason: str | None = None, current_intake: int | None = None) -> str:
    """The plan as a person reads it (markdown), with a warning at the top while it is out of date."""
    lang = str(content.get("language") or "en")
    lines = ["# " + say(lang, "Project plan"), ""]
    if stale_reason:
        lines += [say(lang, "> **Out of date:** this plan was built from intake document v{used}; the intake is now v{current}. "
                            "Regenerate the plan.", used=content.get("intake_version"), current=current_intake), ""]
    if content.get("intake_version"):
        lines += [say(lang, "Built from intake document v{version}.", version=content["intake_version"]), ""]
    for key, label in _FIELDS.items():
        lines.append(say(lang, "**{label}:** {value}", label=say(lang, label), value=content.get(key) or say(lang, "none given")))
    lines += ["", "## " + say(lang, "Phases")]
    for number, phase in enumerate(content.get("phases", []), start=1):
        lines.append(f"{number}. **{phase['name']}** ({phase['weeks']}): {phase['purpose']}")
    lines += ["", "## " + say(lang, "Milestones")]
    for milestone in content.get("milestones", []):
        due = f" — {milestone['due']}" if milestone.get("due") else ""
        lines.append(f"- {milestone['week']}: {milestone['name']}{due}")
    lines += ["", "## " + say(lang, "Risks")] + [f"- {risk}" for risk in content.get("risks", [])]
    lines += ["", "## " + say(lang, "Open questions")] + ([f"- {q}" for q in content.get("open_questions", [])] or ["- —"])
    return "\n".join(lines) + "\n"
