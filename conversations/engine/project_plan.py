"""A project plan drafted from an intake document, from templates.

Deterministic and model-free: the phases follow the kind of project the intake was classified
as, the milestones close each phase (the launch takes the deadline the person gave), the risks
and open questions come from what the intake says and what it leaves out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ._text import is_vacuous

# (phase key, weeks) per kind of project; names and purposes per language below
PHASES: dict[str, tuple[tuple[str, int], ...]] = {
    "web_app": (("discovery", 2), ("design", 2), ("build", 6), ("test", 2), ("launch", 1)),
    "mobile_app": (("discovery", 2), ("prototype", 3), ("build", 6), ("beta", 2), ("release", 1)),
    "data_pipeline": (("discovery", 2), ("model", 2), ("build", 4), ("validate", 2), ("rollout", 1)),
    "internal_tool": (("discovery", 2), ("design", 2), ("build", 5), ("pilot", 2), ("rollout", 1)),
    "automation": (("map", 2), ("design", 1), ("build", 4), ("parallel", 2), ("switch", 1)),
    "other": (("discovery", 2), ("design", 2), ("build", 6), ("test", 2), ("launch", 1)),
}

WORDS: dict[str, dict[str, Any]] = {
    "en": {
        "title": "Project plan", "built_on": "Built from intake document v{version}.",
        "fields": {"summary": "Summary", "goal": "Goal", "users": "Users", "constraints": "Constraints"},
        "phases_h": "Phases", "milestones_h": "Milestones", "risks_h": "Risks", "questions_h": "Open questions",
        "weeks": "weeks {start}–{end}", "week": "week {n}", "by_deadline": "{deadline}",
        "none_given": "none given",
        "phase": {
            "discovery": ("Discovery", "Confirm the goal ({goal}) with {users} and agree what the first version must do."),
            "map": ("Map the process", "Walk through today's process with {users} and mark the steps to automate."),
            "design": ("Design", "Sketch the screens and flows {users} will use and review them with a few of them."),
            "prototype": ("Prototype", "Build a clickable prototype and try it with a few of {users}."),
            "model": ("Data model", "List the sources and the figures that show progress on the goal; agree their definitions."),
            "build": ("Build", "Build the first version in short iterations, showing progress every two weeks."),
            "test": ("Testing", "Test with real tasks from {users}; fix what blocks them."),
            "beta": ("Beta", "Hand a beta to a small group of {users} and collect their feedback."),
            "validate": ("Validation", "Check the results against figures known to be right."),
            "pilot": ("Pilot", "Run it with one team of {users} before everyone."),
            "parallel": ("Parallel run", "Run the automation next to the current process and compare the outcomes."),
            "launch": ("Launch", "Go live, train {users} and watch the first weeks closely."),
            "release": ("Release", "Publish the app and support {users} through the first weeks."),
            "rollout": ("Rollout", "Roll out to all {users}, with training and a contact for questions."),
            "switch": ("Switch-over", "Switch to the automation and retire the manual steps."),
        },
        "milestone": {
            "discovery": "Scope of the first version agreed", "map": "Process mapped", "design": "Design approved",
            "prototype": "Prototype tested", "model": "Data model agreed", "build": "First version complete",
            "test": "Acceptance tests passed", "beta": "Beta feedback addressed", "validate": "Results validated",
            "pilot": "Pilot signed off", "parallel": "Parallel run matches", "launch": "Live", "release": "Released",
            "rollout": "Rolled out", "switch": "Switched over",
        },
        "risk": {
            "scope": "Scope creep: keep the first version to what serves the goal ({goal}).",
            "budget": "Budget ({budget}): cost the scope against it once the design is agreed; drop features before quality.",
            "no_budget": "No budget given: the scope cannot be costed yet.",
            "deadline": "Deadline ({deadline}): little slack in the schedule; decide early what can wait for a later release.",
            "adoption": "Adoption: {users} have to change how they work; involve them in design and testing.",
            "scale": "Load: about {count} users; test with realistic volumes before launch.",
            "compliance": "Compliance ({rule}): review data protection before any real data is used.",
            "unmeasured": "The goal has no measure yet, so success will be hard to show.",
            "unclear_kind": "The kind of solution is not clear yet; the phases above are generic.",
        },
        "question": {
            "budget": "What budget is available?",
            "deadline": "Is there a date it must be live by?",
            "count": "About how many people will use it?",
            "measure": "How will you measure that the goal is reached?",
            "kind": "What kind of solution do you have in mind: a website, a mobile app, an internal tool, reports, an automation?",
        },
    },
    "zh": {
        "title": "项目计划", "built_on": "依据受理文档第 {version} 版生成。",
        "fields": {"summary": "项目概述", "goal": "目标", "users": "用户", "constraints": "约束条件"},
        "phases_h": "阶段", "milestones_h": "里程碑", "risks_h": "风险", "questions_h": "待确认问题",
        "weeks": "第 {start}–{end} 周", "week": "第 {n} 周", "by_deadline": "{deadline}",
        "none_given": "未提供",
        "phase": {
            "discovery": ("需求调研", "与{users}确认目标（{goal}），商定第一版必须实现的功能。"),
            "map": ("梳理流程", "与{users}一起梳理现有流程，标出要自动化的环节。"),
            "design": ("设计", "画出{users}将使用的页面和流程，并请其中几位评审。"),
            "prototype": ("原型", "做一个可点击的原型，请几位{users}试用。"),
            "model": ("数据模型", "列出数据来源和衡量目标的指标，统一口径。"),
            "build": ("开发", "分小迭代开发第一版，每两周演示一次进展。"),
            "test": ("测试", "用{users}的真实任务测试，修复阻碍使用的问题。"),
            "beta": ("公测", "请一小批{users}试用测试版并收集反馈。"),
            "validate": ("校验", "用已知正确的数据核对结果。"),
            "pilot": ("试点", "先在{users}中的一个团队试运行，再全面推广。"),
            "parallel": ("并行运行", "自动化与现有流程并行运行，对比结果。"),
            "launch": ("上线", "正式上线，培训{users}，并密切关注最初几周。"),
            "release": ("发布", "发布应用，在最初几周支持{users}。"),
            "rollout": ("推广", "向全部{users}推广，提供培训和答疑联系人。"),
            "switch": ("切换", "切换到自动化流程，停用人工步骤。"),
        },
        "milestone": {
            "discovery": "第一版范围确认", "map": "流程梳理完成", "design": "设计通过", "prototype": "原型试用完成",
            "model": "数据模型确认", "build": "第一版开发完成", "test": "验收测试通过", "beta": "公测反馈已处理",
            "validate": "结果校验通过", "pilot": "试点验收", "parallel": "并行结果一致", "launch": "正式上线",
            "release": "正式发布", "rollout": "推广完成", "switch": "切换完成",
        },
        "risk": {
            "scope": "范围蔓延：第一版只做服务于目标（{goal}）的功能。",
            "budget": "预算（{budget}）：设计确认后按预算核算范围；宁可砍功能，不降质量。",
            "no_budget": "尚未提供预算：目前无法核算范围。",
            "deadline": "期限（{deadline}）：进度余量小；尽早决定哪些功能留到后续版本。",
            "adoption": "推广风险：{users}需要改变工作方式；请他们参与设计和测试。",
            "scale": "负载：约 {count} 名用户；上线前用接近真实的数据量测试。",
            "compliance": "合规（{rule}）：使用真实数据前先做数据保护评审。",
            "unmeasured": "目标还没有衡量标准，难以证明项目成功。",
            "unclear_kind": "解决方案的类型尚不明确；以上阶段为通用安排。",
        },
        "question": {
            "budget": "可用预算是多少？",
            "deadline": "是否有必须上线的日期？",
            "count": "大约有多少人会使用？",
            "measure": "如何衡量目标已经达成？",
            "kind": "您设想的是哪类方案：网站、手机应用、内部系统、报表还是自动化？",
        },
    },
}

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


def draft_project_plan(intake: Mapping[str, Any], *, intent_class: str, language: str, intake_version: int | None) -> dict[str, Any]:
    """The plan's content (phases, milestones, risks, open questions) for an intake document's fields."""
    lang = "zh" if language.startswith("zh") else "en"
    w = WORDS[lang]
    fields = {key: _said(intake.get(key)) for key in ("summary", "goal", "users", "constraints")}
    # who the users are, shortly: the first part of the answer ("our customers and the support team, roughly 4,000 people")
    users = re.split(r"[,;，；(（]|\s+-\s+", fields["users"])[0].strip() if fields["users"] else ""
    users = re.sub(r"^(?:only|just|mainly|mostly)\s+", "", users, flags=re.IGNORECASE) or ("用户" if lang == "zh" else "the users")
    goal = fields["goal"] or ("待定" if lang == "zh" else "to be agreed")
    constraints = fields["constraints"]
    kind = intent_class if intent_class in PHASES else "other"
    phases, milestones, week = [], [], 1
    for key, weeks in PHASES[kind]:
        name, purpose = w["phase"][key]
        end = week + weeks - 1
        span = w["weeks"].format(start=week, end=end) if end > week else w["week"].format(n=week)
        phases.append({"name": name, "weeks": span, "purpose": purpose.format(users=users, goal=goal)})
        milestones.append({"week": w["week"].format(n=end), "name": w["milestone"][key]})
        week = end + 1
    deadline = _DEADLINE.search(constraints) if constraints else None
    budget = _MONEY.search(constraints) if constraints else None
    if deadline is not None:
        milestones[-1]["due"] = deadline.group(0).strip(" ，,。")
    risks = [w["risk"]["scope"].format(goal=goal)]
    questions = []
    if budget is not None:
        risks.append(w["risk"]["budget"].format(budget=budget.group(0).strip()))
    elif not (constraints and _NO_BUDGET.search(constraints)):
        risks.append(w["risk"]["no_budget"])
        questions.append(w["question"]["budget"])
    if deadline is not None:
        risks.append(w["risk"]["deadline"].format(deadline=deadline.group(0).strip(" ，,。")))
    else:
        questions.append(w["question"]["deadline"])
    risks.append(w["risk"]["adoption"].format(users=users))
    count = _user_count(fields["users"]) if fields["users"] else None
    if count is not None and count >= 1000:
        risks.append(w["risk"]["scale"].format(count=f"{count:,}"))
    elif count is None:
        questions.append(w["question"]["count"])
    rule = _RULES.search(" ".join(fields.values()))
    if rule is not None:
        risks.append(w["risk"]["compliance"].format(rule=rule.group(0)))
    if not _MEASURE.search(fields["goal"]):
        risks.append(w["risk"]["unmeasured"])
        questions.append(w["question"]["measure"])
    if kind == "other":
        risks.append(w["risk"]["unclear_kind"])
        questions.append(w["question"]["kind"])
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
    lang = content.get("language", "en")
    w = WORDS["zh" if lang == "zh" else "en"]
    lines = [f"# {w['title']}", ""]
    if stale_reason:
        if lang == "zh":
            lines += [f"> **已过期：** 本计划依据受理文档第 {content.get('intake_version')} 版生成，受理信息已更新为第 {current_intake} 版。"
                      "请重新生成计划。", ""]
        else:
            lines += [f"> **Out of date:** this plan was built from intake document v{content.get('intake_version')}; "
                      f"the intake is now v{current_intake}. Regenerate the plan.", ""]
    if content.get("intake_version"):
        lines += [w["built_on"].format(version=content["intake_version"]), ""]
    colon = "：" if lang == "zh" else ":"
    for key, label in w["fields"].items():
        lines.append(f"**{label}{colon}** {content.get(key) or w['none_given']}")
    lines += ["", f"## {w['phases_h']}"]
    for number, phase in enumerate(content.get("phases", []), start=1):
        lines.append(f"{number}. **{phase['name']}** ({phase['weeks']}): {phase['purpose']}")
    lines += ["", f"## {w['milestones_h']}"]
    for milestone in content.get("milestones", []):
        due = f" — {milestone['due']}" if milestone.get("due") else ""
        lines.append(f"- {milestone['week']}: {milestone['name']}{due}")
    lines += ["", f"## {w['risks_h']}"] + [f"- {risk}" for risk in content.get("risks", [])]
    lines += ["", f"## {w['questions_h']}"] + ([f"- {q}" for q in content.get("open_questions", [])] or ["- —"])
    return "\n".join(lines) + "\n"
