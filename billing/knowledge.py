"""Knowledge derived from billing: rule explanations and scenario FAQs, handed to knowledge ingestion.

Every billing rule version gets an explanation source (`rule:<RULE>:v<N>`, doc_type
`rule_explain`) in Chinese and English: scope, effective dates, what each segment charges,
caps and free minutes, and worked examples computed by the fee engine. The demo scenarios
become FAQ sources (`faq:<SCENARIO>`). A new rule version regenerates its rule's explanations
(`on_rule_version_added`, a receiver of `billing.signals.rule_version_added`).

Billing plugs into conversations here, one way: `connect()` (from `BillingConfig.ready()`)
subscribes to new rule versions and gives the knowledge evaluation the scenarios as queries
and a loader for its second operator's data set.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from datetime import datetime, time, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from conversations.knowledge import evaluation
from conversations.knowledge.engine import KnowledgeRecord, has_cjk
from conversations.knowledge.models import KnowledgeSource
from conversations.knowledge.services.ingestion import IngestReport, knowledge_ingest

from .datasets import dataset_load
from .engine import crosses_midnight
from .models import BillingRuleVersion
from .selectors import simulate_with_version
from .signals import rule_version_added

logger = logging.getLogger(__name__)

RULE_DOC_TYPE = "rule_explain"
FAQ_DOC_TYPE = "faq"
DERIVED_SOURCE_TYPE = "biz_derived"
DEFAULT_TZ = "Asia/Shanghai"
ZH_WEEKDAYS = {1: "周一", 2: "周二", 3: "周三", 4: "周四", 5: "周五", 6: "周六", 7: "周日"}
EN_WEEKDAYS = {1: "Monday", 2: "Tuesday", 3: "Wednesday", 4: "Thursday", 5: "Friday", 6: "Saturday", 7: "Sunday"}
_NAME_RE = re.compile(r"^(?P<zh>.*?)\s*[(（](?P<en>[^()（）]*)[)）]\s*$")


def rule_source_id(rule_code: str, version_no: int) -> str:
    """The knowledge source id of a rule version's explanation."""
    return f"rule:{rule_code}:v{version_no}"


def _money(value: Any) -> str:
    return f"{Decimal(str(value)).quantize(Decimal('0.01'))}"


def _split_name(name: str) -> tuple[str, str]:
    """'浦东一号停车场 日间计费 (Pudong lot 1: day rate)' -> (Chinese part, English part)."""
    match = _NAME_RE.match(name.strip())
    if match and has_cjk(match.group("zh")) and not has_cjk(match.group("en")):
        return match.group("zh").strip(), match.group("en").strip()
    return name.strip(), name.strip()


def _duration_zh(minutes: int) -> str:
    return f"{minutes // 60}小时" if minutes % 60 == 0 else f"{minutes}分钟"


def _duration_en(minutes: int) -> str:
    if minutes % 60 == 0:
        hours = minutes // 60
        return f"{hours} hour{'s' if hours != 1 else ''}"
    return f"{minutes} minutes"


def _runs(days: Sequence[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for day in sorted(days):
        if runs and runs[-1][1] == day - 1:
            runs[-1] = (runs[-1][0], day)
        else:
            runs.append((day, day))
    return runs


def _weekdays(days: Sequence[int] | None) -> tuple[str, str]:
    if not days or len(set(days)) == 7:
        return "", ""
    zh = "、".join(ZH_WEEKDAYS[a] if a == b else f"{ZH_WEEKDAYS[a]}至{ZH_WEEKDAYS[b]}" for a, b in _runs(days))
    en = ", ".join(EN_WEEKDAYS[a] if a == b else f"{EN_WEEKDAYS[a]} to {EN_WEEKDAYS[b]}" for a, b in _runs(days))
    return f"仅{zh}", f"{en} only"


def _window(window: dict[str, Any]) -> tuple[str, str]:
    start, end = window.get("start", "00:00"), window.get("end", "00:00")
    tz = window.get("timezone") or DEFAULT_TZ
    suffix_zh = "" if tz == DEFAULT_TZ else f"（{tz} 时间）"
    suffix_en = "" if tz == DEFAULT_TZ else f" ({tz} time)"
    if start == end:
        if start == "00:00":
            return f"全天{suffix_zh}", f"all day{suffix_en}"
        return f"每天{start}起24小时{suffix_zh}", f"24 hours from {start} each day{suffix_en}"
    if end != "24:00" and end < start:
        return f"{start}-次日{end}{suffix_zh}", f"{start} to {end} the next day{suffix_en}"
    return f"{start}-{end}{suffix_zh}", f"{start} to {end}{suffix_en}"


def _is_chinese(name: str) -> bool:
    """A segment name a Chinese sentence can say; an ASCII key such as `night_free` is left out."""
    return any("\u4e00" <= ch <= "\u9fff" for ch in name)


def segment_label_zh(segment: dict[str, Any]) -> str:
    """How a Chinese text names a segment: its own name when it is Chinese, else its time window."""
    name = segment.get("name", "")
    if _is_chinese(name):
        return name
    window_zh, _en = _window(segment.get("time_window") or {})
    days_zh, _days_en = _weekdays(segment.get("weekdays"))
    return f"{window_zh}{('，' + days_zh) if days_zh else ''}"


def _segment_lines(segment: dict[str, Any]) -> tuple[str, str]:
    """One bullet per segment, Chinese and English."""
    name = segment.get("name", "")
    window_zh, window_en = _window(segment.get("time_window") or {})
    days_zh, days_en = _weekdays(segment.get("weekdays"))
    kind = segment.get("type")
    unit = int(segment.get("unit_minutes") or 0)
    crosses = crosses_midnight(segment.get("time_window") or {})
    per_window = crosses and segment.get("cap_period") == "window"
    parts_zh: list[str] = []
    parts_en: list[str] = []
    if kind == "free":
        parts_zh.append("免费，不收费")
        parts_en.append("free of charge")
    elif kind == "periodic":
        price = _money(segment.get("unit_price", 0))
        parts_zh.append(f"每{unit}分钟{price}元，不足{unit}分钟按{unit}分钟计（向上取整）")
        parts_en.append(f"¥{price} per {unit} minutes, a started unit is charged in full (rounded up)")
    elif kind == "tiered":
        tiers_zh, tiers_en = [], []
        for tier in segment.get("tiers") or []:
            a, b = int(tier.get("start_minute") or 0), tier.get("end_minute")
            price = _money(tier.get("unit_price", 0))
            if b is None:
                tiers_zh.append(f"超过{_duration_zh(a)}后每{unit}分钟{price}元")
                tiers_en.append(f"after {_duration_en(a)} ¥{price} per {unit} minutes")
            elif a == 0:
                tiers_zh.append(f"前{_duration_zh(int(b))}每{unit}分钟{price}元")
                tiers_en.append(f"the first {_duration_en(int(b))} ¥{price} per {unit} minutes")
            else:
                tiers_zh.append(f"{_duration_zh(a)}至{_duration_zh(int(b))}之间每{unit}分钟{price}元")
                tiers_en.append(f"from {_duration_en(a)} to {_duration_en(int(b))} ¥{price} per {unit} minutes")
        if per_window:
            parts_zh.append("阶梯计费：" + "；".join(tiers_zh) + "（阶梯按每个时段内的计费时长起算，下一段重新从第一档开始）")
            parts_en.append(
                "tiered: " + "; ".join(tiers_en) + " (tier positions count from the start of each window's chargeable time)"
            )
        else:
            parts_zh.append("阶梯计费：" + "；".join(tiers_zh) + "（阶梯按每个自然日内的计费时长起算，跨天重新从第一档开始）")
            parts_en.append(
                "tiered: " + "; ".join(tiers_en) + " (tier positions count from the start of each day's chargeable time)"
            )
    free = int(segment.get("free_minutes") or 0)
    if free and kind != "free":
        parts_zh.append(f"每次停车前{free}分钟免费（整次停车只扣减一次，从入场开始计）")
        parts_en.append(f"the first {free} minutes of each stay are free (once per stay, from entry)")
    cap = segment.get("max_charge")
    if cap is not None and kind != "free":
        if per_window:
            parts_zh.append(f"每个时段（整段，如一整夜）最高收费{_money(cap)}元")
            parts_en.append(f"capped at ¥{_money(cap)} per whole window (one night is one period) for this segment")
        else:
            parts_zh.append(f"每天最高收费{_money(cap)}元（该计费段按自然日封顶）")
            parts_en.append(f"capped at ¥{_money(cap)} per day for this segment (per calendar day)")
    if kind != "free" and crosses:
        if per_window:
            parts_zh.append("跨零点的一整段算一个计费周期：封顶、阶梯和免费时长都按整段计，星期按开始那天算")
            parts_en.append(
                "a window that crosses midnight is one period: its cap, tiers and free minutes count over the whole"
                " window, and its weekday is the day it starts"
            )
        else:
            parts_zh.append("跨零点的时段在零点分成两天：封顶、阶梯和免费时长按自然日计，星期按每分钟所在的日期算")
            parts_en.append(
                "a window that crosses midnight is split at midnight into two calendar days: caps, tiers and free"
                " minutes count per calendar day, and weekdays are checked on each minute's own date"
            )
    label_zh = f"{window_zh}{('，' + days_zh) if days_zh else ''}{f'（{name}）' if _is_chinese(name) else ''}"
    label_en = f"{window_en}{(', ' + days_en) if days_en else ''} (segment '{name}')"
    return f"- {label_zh}：{'；'.join(parts_zh)}。", f"- {label_en}: {'; '.join(parts_en)}."


def _example_stays(payload: Sequence[dict[str, Any]], base: datetime) -> list[tuple[datetime, datetime]]:
    """Two or three stays that show what this payload does: short, then its feature, then long."""
    stays = [(base.replace(hour=10), base.replace(hour=11))]
    free = max((int(s.get("free_minutes") or 0) for s in payload if s.get("type") != "free"), default=0)
    if free:
        entry = base.replace(hour=10)
        stays.insert(0, (entry, entry + timedelta(minutes=free + 1)))
    elif any(s.get("type") == "tiered" for s in payload):
        stays.append((base.replace(hour=9), base.replace(hour=12)))
    else:
        stays.append((base.replace(hour=8), base.replace(hour=9, minute=5)))
    stays.append((base.replace(hour=8), base.replace(hour=9) + timedelta(days=1)))
    return stays[:3]


def _example_base(version: Any) -> datetime:
    tz = ZoneInfo(DEFAULT_TZ)
    start = version.effective_from.astimezone(tz)
    day = start.date() if start.time() == time(0, 0) else start.date() + timedelta(days=1)
    base = datetime.combine(day, time(0, 0), tzinfo=tz)
    if version.effective_to is not None and base + timedelta(days=2) > version.effective_to:
        base = datetime.combine(start.date(), time(0, 0), tzinfo=tz)
    return base


def _example_lines(version: Any) -> tuple[list[str], list[str]]:
    zh_lines, en_lines = [], []
    names_zh = {segment.get("name", ""): segment_label_zh(segment) for segment in version.rule_payload}
    for number, (entry, exit_) in enumerate(_example_stays(version.rule_payload, _example_base(version)), start=1):
        result = simulate_with_version(version, entry, exit_).result
        same_day = entry.date() == exit_.date()
        exit_zh = exit_.strftime("%H:%M") if same_day else f"次日{exit_:%H:%M}"
        exit_en = exit_.strftime("%H:%M") if same_day else f"{exit_:%H:%M} the next day"
        rows_zh, rows_en = [], []
        for row in result.breakdown:
            note_zh = ("，已封顶" if row.capped else "") + (f"，含免费{row.free_minutes}分钟" if row.free_minutes else "")
            note_en = (", capped" if row.capped else "") + (f", {row.free_minutes} free minutes" if row.free_minutes else "")
            rows_zh.append(f"{names_zh.get(row.segment_name, row.segment_name)} {row.minutes}分钟 {row.amount:.2f}元{note_zh}")
            rows_en.append(f"segment '{row.segment_name}' {row.minutes} min ¥{row.amount:.2f}{note_en}")
        total = f"{result.total_amount:.2f}"
        zh_lines.append(
            f"- 例{number}：{entry.month}月{entry.day}日 {entry:%H:%M} 入场，{exit_zh} 出场，共停车{result.duration_minutes}分钟，"
            f"应收{total}元（{'；'.join(rows_zh) or '无计费'}）。"
        )
        en_lines.append(
            f"- Example {number}: in at {entry:%Y-%m-%d %H:%M}, out at {exit_en}, {result.duration_minutes} minutes, "
            f"total ¥{total} ({'; '.join(rows_en) or 'nothing charged'})."
        )
    return zh_lines, en_lines


def _range(version: Any) -> tuple[str, str]:
    tz = ZoneInfo(DEFAULT_TZ)
    start = version.effective_from.astimezone(tz).strftime("%Y-%m-%d %H:%M")
    if version.effective_to is None:
        return f"{start} 起生效，长期有效（北京时间）", f"from {start} (Beijing time), with no end date"
    end = version.effective_to.astimezone(tz).strftime("%Y-%m-%d %H:%M")
    return f"{start} 起生效，{end} 起失效（北京时间）", f"from {start} until {end} (Beijing time)"


def rule_version_record(version: Any) -> KnowledgeRecord:
    """The bilingual explanation of one billing rule version, as a knowledge record."""
    rule = version.rule
    code, number = rule.rule_code, version.version_no
    name_zh, name_en = _split_name(rule.name)
    lots = list(rule.lot_codes)
    lots_zh = "、".join(lots) if lots else f"城市 {rule.city_code} 内没有专属规则的车场（城市默认规则）"
    lots_en = ", ".join(lots) if lots else f"every lot in city {rule.city_code} without a rule of its own (city default)"
    range_zh, range_en = _range(version)
    segment_lines = [_segment_lines(segment) for segment in version.rule_payload]
    examples_zh, examples_en = _example_lines(version)
    text = "\n".join(
        [
            f"# {name_zh}怎么收费",
            "",
            "## 适用范围与生效时间",
            "",
            f"{name_zh}（规则编号 {code}，第{number}版）适用于车场 {lots_zh}，城市代码 {rule.city_code}。"
            f"本版本 {range_zh}。按入场时刻生效的版本计费。",
            "",
            "## 收费标准",
            "",
            f"{name_zh}的收费标准如下。停车期间的每一分钟按顺序匹配第一个符合时间窗口的计费段：",
            "",
            *[zh for zh, _ in segment_lines],
            "",
            "## 计算示例",
            "",
            f"以下示例由计费引擎按 {code} 第{number}版计算：",
            "",
            *examples_zh,
            "",
            f"# How rule {code} charges ({name_en})",
            "",
            "## Scope and effective dates",
            "",
            f"Rule {code} version {number} applies to lot(s) {lots_en} in city {rule.city_code}. "
            f"This version is in force {range_en}; the version in force at entry time applies.",
            "",
            "## What it charges",
            "",
            "Each minute of a stay is charged by the first segment whose time window contains it:",
            "",
            *[en for _, en in segment_lines],
            "",
            "## Worked examples",
            "",
            f"Computed by the fee engine with {code} version {number}:",
            "",
            *examples_en,
        ]
    )
    return KnowledgeRecord(
        source_id=rule_source_id(code, number),
        title=f"{name_zh} 计费规则说明 {code} v{number} / {name_en}: how rule {code} v{number} charges",
        text=text,
        doc_type=RULE_DOC_TYPE,
        source_type=DERIVED_SOURCE_TYPE,
        version=number,
        city_code=rule.city_code or None,
        lot_codes=tuple(lots),
        effective_from=version.effective_from,
        effective_to=version.effective_to,
        status="active" if rule.status == "active" else "inactive",
        locale="mul",  # Chinese and English in one document
        metadata={"rule_code": code, "version_no": number, "languages": ["zh", "en"]},
    )


def _answer(record: dict[str, Any]) -> tuple[str, str]:
    truth = record["ground_truth"]
    note = record.get("notes") or ""
    if "total_arrears" in truth:
        orders = "、".join(truth["arrears_orders"])
        return (
            f"车牌 {truth['plate_no']} 有欠费订单 {orders}，欠费合计 {truth['total_arrears']} 元，请及时补缴。说明：{note}",
            f"Plate {truth['plate_no']} has unpaid orders {', '.join(truth['arrears_orders'])}, "
            f"¥{truth['total_arrears']} in total. Note: {note}",
        )
    if "amount_check_result" in truth:
        match = truth["amount_check_result"] == "match"
        return (
            f"订单 {truth['order_no']} 按计费规则 {truth['rule_code']} 第{truth['version_no']}版模拟应收 {truth['amount']} 元，"
            f"订单金额 {truth['order_amount']} 元，核验结果："
            + ("一致，自动通过。" if match else "不一致，转主管人工复核。")
            + f"说明：{note}",
            f"Order {truth['order_no']}: simulated under {truth['rule_code']} v{truth['version_no']} at ¥{truth['amount']}, "
            f"the order says ¥{truth['order_amount']}: "
            + ("they match, passed automatically." if match else "a mismatch, sent to a supervisor for review.")
            + f" Note: {note}",
        )
    return (
        f"按计费规则 {truth['rule_code']} 第{truth['version_no']}版计算，应收 {truth['amount']} 元。说明：{note}",
        f"Charged under rule {truth['rule_code']} version {truth['version_no']}: ¥{truth['amount']}. How: {note}",
    )


def scenario_faq_records(scenarios: Iterable[dict[str, Any]] | None = None) -> list[KnowledgeRecord]:
    """The demo scenarios as FAQ sources (question and answer in Chinese and English)."""
    if scenarios is None:
        from .demo import (
            scenario_records,  # the demo data imports this module to seed its knowledge
        )

        scenarios = scenario_records()
    records = []
    for scenario in scenarios:
        answer_zh, answer_en = _answer(scenario)
        context = scenario.get("context") or {}
        text = "\n".join(
            [
                "## 问题", "", scenario["query"]["zh"], "", "## 解答", "", answer_zh, "",
                "## Question", "", scenario["query"]["en"], "", "## Answer", "", answer_en,
            ]
        )
        lot = context.get("lot_code")
        records.append(
            KnowledgeRecord(
                source_id=f"faq:{scenario['scenario_id']}",
                title=f"常见问题 FAQ {scenario['scenario_id']}：{scenario['title']}",
                text=text,
                doc_type=FAQ_DOC_TYPE,
                source_type=DERIVED_SOURCE_TYPE,
                version=1,
                city_code=context.get("city_code") or None,
                lot_codes=(lot,) if lot else (),
                locale="mul",
                metadata={"scenario_id": scenario["scenario_id"], "intent_tags": list(scenario.get("intent_tags") or [])},
            )
        )
    return records


def knowledge_rule_explanations_sync(*, rule_codes: Sequence[str] | None = None, user: Any = None) -> IngestReport:
    """(Re)generate the explanation of every version of the given rules (all rules by default)."""
    versions = BillingRuleVersion.objects.select_related("rule").order_by("rule__rule_code", "version_no")
    if rule_codes is not None:
        versions = versions.filter(rule__rule_code__in=list(rule_codes))
    records, origins = [], {}
    for version in versions:
        record = rule_version_record(version)
        records.append(record)
        origins[record.source_id] = f"billing:{version.rule.rule_code}:v{version.version_no}"
    return knowledge_ingest(records, origins=origins, user=user)


def knowledge_scenario_faqs_sync(*, user: Any = None) -> IngestReport:
    """(Re)generate the scenario FAQ sources."""
    records = scenario_faq_records()
    origins = {r.source_id: f"billing:scenario:{r.source_id.removeprefix('faq:')}" for r in records}
    return knowledge_ingest(records, origins=origins, user=user)


def seed(stdout: Any) -> None:
    """Demo data: the explanation of every rule version and the scenario FAQs (idempotent)."""
    for label, report in (
        ("rule explanations", knowledge_rule_explanations_sync()),
        ("scenario FAQs", knowledge_scenario_faqs_sync()),
    ):
        stdout.write(f"  knowledge {label}: {report.summary()}")


def on_rule_version_added(sender: Any, version: BillingRuleVersion, **kwargs: Any) -> None:
    """After a rule version is committed: regenerate that rule's explanations (in a worker)."""
    from .tasks import queue_rule_explanations

    try:
        queue_rule_explanations(version.rule.rule_code)
    except Exception:  # noqa: BLE001 - knowledge must never break the billing write that succeeded
        logger.exception("could not regenerate the explanations of %s", version.rule.rule_code)


# --- the knowledge evaluation's billing part -----------------------------------------

EVAL_TOOLS = {"rule_explain": "billing.rule_explain", "arrears_check": "billing.arrears_check",
              "fee_verify": "billing.fee_verify"}


def scenario_eval_queries() -> list[dict[str, Any]]:
    """The 20 demo scenarios asked in Chinese and in English, with their ground truth."""
    from .demo import SCENARIOS

    queries = []
    for scenario in SCENARIOS:
        expect = scenario["expect"]
        tag = scenario["tags"][0]
        texts = [v for k, v in expect.items() if k in ("amount", "total_arrears")]
        if "rule_code" in expect:
            texts.append(expect["rule_code"])
        if expect.get("amount_check_result") == "mismatch":
            texts.append(expect.get("order_amount", ""))
        if "rule_code" in expect:
            cite = [rule_source_id(expect["rule_code"], expect["version_no"])]
        else:
            cite = ["parking_help_desk.arrears_faq"]
        category = "version_boundary" if scenario["id"] in ("SCN-015", "SCN-016") else tag
        for lang in ("zh", "en"):
            queries.append({"id": f"{scenario['id']}-{lang}", "kind": "helpdesk", "category": category, "lang": lang,
                            "data": "demo", "query": scenario[lang], "expect_tool": EVAL_TOOLS[tag], "expect_text": texts,
                            "expect_citation": cite})
    return queries


def load_eval_data_set(data: dict[str, Any]) -> list[str]:
    """Load the evaluation's second operator's data set and derive its rules' explanations; what is missing.

    Explanations are derived after commit when a rule version is added; the evaluation runs in a
    transaction it rolls back, so they are derived here, as the after-commit receiver would.
    """
    dataset_load(data)
    codes = sorted({rule["rule_code"] for rule in data.get("rules", ())})
    knowledge_rule_explanations_sync(rule_codes=codes)
    wanted = {rule_source_id(code, no) for code, no in
              BillingRuleVersion.objects.filter(rule__rule_code__in=codes).values_list("rule__rule_code", "version_no")}
    found = set(KnowledgeSource.objects.filter(source_id__in=wanted).values_list("source_id", flat=True))
    return [f"fixture: no explanation {sid}" for sid in sorted(wanted - found)]


def connect() -> None:
    """Plug billing's knowledge into conversations (from `BillingConfig.ready()`; idempotent)."""
    rule_version_added.connect(on_rule_version_added, dispatch_uid="billing_knowledge_rule_explanations")
    evaluation.register_queries(scenario_eval_queries)
    evaluation.register_data_set_loader(load_eval_data_set)
