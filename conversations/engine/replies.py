"""The rules backend's replies: what the concierge says when no model is involved.

It turns a TurnOutcome and a snapshot of the run (current step, options, tool results,
review) into a reply that separates business facts, evidence and the conclusion. Every
fee or rule it states comes from a tool result or a cited chunk given to it; it never
invents one. English and Chinese are first-class; the fixed phrases a diagnostic conversation
uses are also in Russian and Spanish (`_RU_ES`); other texts fall back to English.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, time
from typing import Any

from ._text import asks_question, chitchat_kind, localize
from .action_prefs import CALL_DAY, CALL_TIME, understood_line
from .config import ConversationConfig
from .fee_questions import OVERNIGHT, OVERNIGHT_START, asks_cap, day_part
from .forms import answers_listing
from .plain_words import (
    acknowledgement,
    answer_shown,
    introduces,
    is_account,
    question_label,
    yes_no_said,
)
from .state import ContextState
from .timeparse import says_clock
from .turn import ANSWER, FOLLOW_UP, REQUEST, TurnOutcome, final_report_for


@dataclass(frozen=True)
class RunView:
    """What the reply may say about the workflow run, as plain data."""

    step_id: str
    step_label: str = ""
    status: str = "active"
    options: tuple[Mapping[str, Any], ...] = ()
    recommended_option_id: str | None = None
    recommendation_reasons: tuple[str, ...] = ()
    tool_result: Mapping[str, Any] | None = None  # set when a tool ran in this turn
    review_opened: bool = False
    review_pending: bool = False
    fee_decision: Mapping[str, Any] | None = None
    citations: tuple[Mapping[str, Any], ...] = ()
    entered_steps: tuple[str, ...] = ()
    new_actions: tuple[str, ...] = ()  # action options that became eligible this turn
    stale_documents: tuple[str, ...] = ()  # labels of the run's documents built on an older version of what they use


@dataclass(frozen=True)
class ComposedReply:
    text: str
    asks_question: bool
    kind: str = "reply"  # reply | clarifying_question
    facts: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()
    conclusion: str = ""
    sources: tuple[str, ...] = ()
    citations: tuple[Mapping[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text, "kind": self.kind, "asks_question": self.asks_question,
            "facts": list(self.facts), "evidence": list(self.evidence), "conclusion": self.conclusion,
            "sources": list(self.sources), "citations": [dict(c) for c in self.citations],
        }


def lang_of(outcome: TurnOutcome | None, fallback: str) -> str:
    language = (outcome.language if outcome else None) or fallback or "en"
    if language.lower().startswith("zh"):
        return "zh"
    return language[:2].lower() if language[:2].lower() in ("ru", "es") else "en"


def _t(lang: str, en: str, zh: str, **values: Any) -> str:
    """The phrase in the reply's language: English, Chinese, or Russian / Spanish from `_RU_ES` (by the English
    text; English when it has none); `{name}` in it is filled from `values`."""
    text = zh if lang == "zh" else (_RU_ES.get(en, {}).get(lang) or en) if lang in ("ru", "es") else en
    for name, value in values.items():
        text = text.replace("{" + name + "}", str(value))
    return text


def _hm(iso: str | None) -> str:
    """'2026-03-02T08:00:00+08:00' -> '2026-03-02 08:00'."""
    return (iso or "")[:16].replace("T", " ")


def _money(value: Any) -> str:
    return f"{float(value):.2f}"


# --- billing tool results ---------------------------------------------------------


def _title_in(title: str, lang: str) -> str:
    """The part of a title written "中文 / English" that is in the reply's language (the whole title otherwise)."""
    parts = [part.strip() for part in title.split(" / ") if part.strip()]
    if len(parts) < 2:
        return title
    chinese = [part for part in parts if _in_language(part, "zh")]
    others = [part for part in parts if part not in chinese]
    return (chinese if lang == "zh" else others or chinese)[0] if chinese else title


def _source_name(citation: Mapping[str, Any], lang: str) -> str:
    """A cited source as people read it: its title and version ("Arrears FAQ, version 1"), not its id."""
    title = _title_in(str(citation.get("title") or "").strip(), lang) or str(citation["source_id"])
    return _t(lang, f"{title}, version {citation['version']}", f"《{title}》第{citation['version']}版")


def _cite(citation: Mapping[str, Any], lang: str) -> str:
    """A citation as people read it: source title and version, effective range, snippet."""
    since = _hm(citation.get("effective_from"))
    until = _hm(citation.get("effective_to"))
    if since or until:
        when = _t(lang, f", in force {since or 'from the start'} – {until or 'open-ended'}",
                  f"，{since or '一直'}起生效{f'至{until}' if until else '，长期有效'}")
    else:
        when = ""
    return f"[{_source_name(citation, lang)}{when}] {citation['snippet']}"


def _window_text(window: Mapping[str, Any], lang: str) -> str:
    """A segment's window as people read it: "08:00–20:00", "all day", "all day from 08:00"."""
    start, end = window.get("start"), window.get("end")
    if start != end:
        return f"{start}–{end}"
    if start == "00:00":
        return _t(lang, "all day", "全天")
    return _t(lang, f"all day from {start}", f"全天（{start}起）")


def _seg_name(seg: Mapping[str, Any], lang: str) -> str:
    """A segment's name followed by a space, as a sentence in `lang` can say it: a Chinese sentence
    leaves out a key such as `night_free` (its time window, said beside it, names it)."""
    name = str(seg.get("name") or "")
    if not _in_language(name, lang):
        return ""
    return f"{name} " if name else ""


def _row_name(row: Mapping[str, Any], result: Mapping[str, Any], lang: str) -> str:
    """How a breakdown row names its segment in `lang`: its name, or in Chinese for a key such as
    `day`, its time window when the result lists the segments ("08:00–20:00 "), else nothing."""
    seg = next((s for s in result.get("segments", []) if s.get("name") == row.get("segment_name")), {"name": row.get("segment_name")})
    name = _seg_name(seg, lang)
    if name or lang != "zh" or "time_window" not in seg:
        return name
    return _window_text(seg["time_window"], lang) + _weekdays_text(seg, lang) + " "  # the window's days tell two apart


def _segment_text(seg: Mapping[str, Any], lang: str) -> str:
    span = _window_text(seg.get("time_window", {}), lang) + _weekdays_text(seg, lang)
    kind = seg.get("type")
    name = _seg_name(seg, lang)
    if kind == "free":
        return _t(lang, f"{name}{span}: free", f"{name}{span}：免费")
    unit = seg.get("unit_minutes")
    if kind == "tiered":
        tiers = "; ".join(
            _t(lang, f"minutes {t['start_minute']}–{t['end_minute'] if t.get('end_minute') is not None else '…'}: "
                     f"{_money(t['unit_price'])} per {unit} min",
               f"第{t['start_minute']}–{t['end_minute'] if t.get('end_minute') is not None else '…'}分钟：每{unit}分钟{_money(t['unit_price'])}元")
            for t in seg.get("tiers", [])
        )
        text = _t(lang, f"{name}{span}, tiered ({tiers})", f"{name}{span}，阶梯计费（{tiers}）")
    else:
        text = _t(lang, f"{name}{span}: {_money(seg['unit_price'])} per {unit} min (started units round up)",
                  f"{name}{span}：每{unit}分钟{_money(seg['unit_price'])}元（不足一个单位按一个单位计）")
    if seg.get("free_minutes"):
        text += _t(lang, f", first {seg['free_minutes']} min free", f"，前{seg['free_minutes']}分钟免费")
    if seg.get("max_charge") is not None:
        cap = _money(seg["max_charge"])
        text += {
            "night": _t(lang, f", capped at {cap} per night (the whole window is one period)", f"，每晚（整段算一次）封顶{cap}元"),
            "split": _t(lang, f", capped at {cap} per day (split at midnight: each calendar day has its own cap)",
                        f"，每日封顶{cap}元（跨零点按自然日分开计）"),
        }.get(_cap_period(seg), _t(lang, f", capped at {cap} per day", f"，每日封顶{cap}元"))
    return text


def _crosses_midnight(window: Mapping[str, Any]) -> bool:
    """A window running past local midnight ("20:00"-"08:00", "08:00"-"08:00"), where the cap period
    matters; billing.engine.payload.crosses_midnight is the same test on the rule's side."""
    start, end = window.get("start", "00:00"), window.get("end", "00:00")
    return ("24:00" if end == "00:00" else end) <= start


def _cap_period(seg: Mapping[str, Any]) -> str:
    """How a segment crossing midnight counts its cap: "night" (one window, one period), "split" (per
    calendar day, the default); "" for a window inside one day, where both are the same."""
    if not _crosses_midnight(seg.get("time_window") or {}):
        return ""
    return "night" if seg.get("cap_period") == "window" else "split"


def _rule_source(result: Mapping[str, Any], lang: str) -> str:
    until = _hm(result.get("effective_to")) or _t(lang, "open-ended", "长期有效")
    return _t(lang, f"rule {result['rule_code']} v{result['version_no']} (in force {_hm(result['effective_from'])} – {until})",
              f"规则 {result['rule_code']} 第{result['version_no']}版（生效 {_hm(result['effective_from'])} – {until}）")


def _caps(result: Mapping[str, Any], lang: str) -> str:
    """The rule's daily caps, segment by segment, or that it has none."""
    capped = [seg for seg in result.get("segments", []) if seg.get("max_charge") is not None]
    if not capped:
        return _t(lang, "This rule has no daily cap: every started unit is charged.", "该规则没有每日封顶：每个计费单位都会收费。")
    parts = []
    for seg in capped:
        span = _window_text(seg.get("time_window", {}), lang) + ("" if not _days_said(seg, lang) else
                                                                _t(lang, ", ", "，") + _days_said(seg, lang))
        if _cap_period(seg) == "night":
            parts.append(_t(lang, f"{seg['name']} ({span}) at most {_money(seg['max_charge'])} a night",
                            f"{_seg_name(seg, lang)}{span} 每晚最多 {_money(seg['max_charge'])} 元"))
        else:
            parts.append(_t(lang, f"{seg['name']} ({span}) at most {_money(seg['max_charge'])} a day",
                            f"{_seg_name(seg, lang)}{span} 每天最多 {_money(seg['max_charge'])} 元"))
    return _t(lang, "The most this rule charges: " + "; ".join(parts) + ".", "该规则的收费上限：" + "；".join(parts) + "。")


_WEEKDAY_NAMES = {"en": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
                  "zh": ("周一", "周二", "周三", "周四", "周五", "周六", "周日")}


def _local(iso: str | None) -> datetime | None:
    try:
        return datetime.fromisoformat(iso) if iso else None
    except ValueError:
        return None


def _weekday_name(day: datetime | date, lang: str) -> str:
    return _WEEKDAY_NAMES["zh" if lang == "zh" else "en"][day.weekday()]


def _day_hm(iso: str | None, lang: str) -> str:
    """'2026-11-29T09:00:00+08:00' -> 'Sunday 2026-11-29 09:00' / '2026-11-29（周日）09:00': the day priced, said."""
    moment = _local(iso)
    if moment is None:
        return _hm(iso)
    day = _weekday_name(moment, lang)
    return f"{_hm(iso)[:10]}（{day}）{_hm(iso)[11:]}" if lang == "zh" else f"{day} {_hm(iso)}"


def _span(sim: Mapping[str, Any], lang: str) -> tuple[str, str]:
    """A stay's start and end as said: the end's day only when it is another day."""
    entry, exit_ = _local(sim.get("entry_time")), _local(sim.get("exit_time"))
    start = _day_hm(sim.get("entry_time"), lang)
    if entry is not None and exit_ is not None and entry.date() == exit_.date():
        return start, _hm(sim.get("exit_time"))[11:]
    return start, _day_hm(sim.get("exit_time"), lang)


def _days_said(seg: Mapping[str, Any], lang: str) -> str:
    """A segment's days when it has some ('Mon–Fri', '周一至周五'); '' for every day."""
    days = sorted({int(d) for d in seg.get("weekdays") or () if str(d).isdigit() and 1 <= int(d) <= 7})
    if not days or len(days) == 7:
        return ""
    names = [_WEEKDAY_NAMES["zh" if lang == "zh" else "en"][d - 1] for d in days]
    if len(days) > 2 and days == list(range(days[0], days[-1] + 1)):
        return f"{names[0]}至{names[-1]}" if lang == "zh" else f"{names[0][:3]}–{names[-1][:3]}"
    return "、".join(names) if lang == "zh" else ", ".join(n[:3] for n in names)


def _weekdays_text(seg: Mapping[str, Any], lang: str) -> str:
    """A segment's days after its window: ' (Mon–Fri)' / '（周一至周五）'."""
    said = _days_said(seg, lang)
    return "" if not said else f"（{said}）" if lang == "zh" else f" ({said})"


def _applies_on(seg: Mapping[str, Any], day: date) -> bool:
    days = seg.get("weekdays")
    return not days or day.isoweekday() in {int(d) for d in days}


def _covers(seg: Mapping[str, Any], at: time) -> bool:
    """Whether a segment's window holds a time of day (a window crossing midnight included)."""
    window = seg.get("time_window", {})
    try:
        start, end = time.fromisoformat(window["start"]), time.fromisoformat(window["end"])
    except (KeyError, TypeError, ValueError):
        return False
    if start == end:
        return True
    return start <= at < end if start < end else (at >= start or at < end)


_PART_NAMES = {"night": ("At night", "晚上"), "evening": ("In the evening", "傍晚"), "morning": ("In the morning", "上午"),
               "afternoon": ("In the afternoon", "下午"), "daytime": ("In the daytime", "白天"), "overnight": ("Overnight", "过夜")}


def _part_of_day(result: Mapping[str, Any], asked: str, lang: str) -> str:
    """ "and at night?", "那晚上呢": the rule's own segments for that part of the day on the day talked about,
    or that none covers it."""
    part = ("overnight", OVERNIGHT_START) if OVERNIGHT.search(asked) else day_part(asked)
    first = (result.get("simulations") or [{}])[0]
    entry = _local(first.get("entry_time")) or _local(result.get("at_time"))
    if part is None or entry is None or says_clock(asked):
        return ""  # "晚上九点以后呢", "9pm to 11pm": the stay itself answers
    # where the stay was put for it; an overnight stay is said by what holds its midnight
    name, at, on = part[0], time(0, 0) if part[0] == "overnight" else entry.time(), entry.date()
    label = _t(lang, _PART_NAMES[name][0], _PART_NAMES[name][1])
    segments = [seg for seg in result.get("segments", []) if _applies_on(seg, on) and _covers(seg, at)]
    day = _t(lang, f"{_weekday_name(on, lang)} {on.isoformat()}", f"{on.isoformat()}（{_weekday_name(on, lang)}）")
    if not segments:
        return _t(lang, f"{label} ({at:%H:%M} on {day}) no segment of this rule applies: nothing is charged then.",
                  f"{label}（{day} {at:%H:%M}）该规则没有适用的计费段：这段时间不收费。")
    said = ("；" if lang == "zh" else "; ").join(_segment_text(seg, lang) for seg in segments[:1])
    return _t(lang, f"{label} on {day} this rule's segment is {said}.", f"{day}{label}适用的计费段是 {said}。")


def _stay_line(sim: Mapping[str, Any], result: Mapping[str, Any], lang: str) -> str:
    """What one stay costs, with the day priced; a stay no segment covers is said plainly."""
    start, end = _span(sim, lang)
    rows = sim.get("breakdown") or []
    if not rows:
        entry = _local(sim.get("entry_time"))
        idle = [seg for seg in result.get("segments", []) if entry is not None and not _applies_on(seg, entry.date())]
        why = ("" if not idle else _t(lang, " (" + "; ".join(f"{seg['name']} applies {_days_said(seg, lang)} only" for seg in idle) + ")",
                                      "（" + "；".join(f"{_seg_name(seg, lang)}{_window_text(seg.get('time_window', {}), lang)} 仅适用于{_days_said(seg, lang)}"
                                                      for seg in idle) + "）"))
        return _t(lang, f"No segment of this rule applies from {start} to {end}{why}, so that stay is not charged: {sim['total_amount']}.",
                  f"从 {start} 到 {end} 该规则没有适用的计费段{why}，这段停车不收费：{sim['total_amount']} 元。")
    line = _t(lang, f"A stay from {start} to {end} costs {sim['total_amount']}.", f"从 {start} 停到 {end} 应收 {sim['total_amount']} 元。")
    entry, exit_ = _local(sim.get("entry_time")), _local(sim.get("exit_time"))
    if entry is not None and exit_ is not None:
        idle = int((exit_ - entry).total_seconds() // 60) - sum(int(row.get("minutes") or 0) for row in rows)
        if idle > 0:
            line += _t(lang, f" {idle} min of it fall in no segment of the rule and are not charged.",
                       f"其中 {idle} 分钟不在任何计费段内，不收费。")
    return line


def _explain_rule(result: Mapping[str, Any], lang: str, asked: str = "") -> tuple[list[str], str, list[str]]:
    facts = [_t(lang, f"Lot {result.get('lot_code')} at {_hm(result['at_time'])} is billed by {_rule_source(result, lang)}: {result['rule_name']}.",
                f"车场 {result.get('lot_code')} 在 {_hm(result['at_time'])} 适用{_rule_source(result, lang)}：{result['rule_name']}。")]
    facts += [_segment_text(seg, lang) for seg in result.get("segments", [])]
    costs = []
    for sim in result.get("simulations", []):
        parts = _t(lang, ", ", "，").join(_t(lang, f"{row['segment_name']} {row['minutes']} min {row['amount']}",
                                            f"{_row_name(row, result, lang)}{row['minutes']}分钟 {row['amount']}元") for row in sim["breakdown"])
        parts = parts or _t(lang, "no segment applies", "无适用计费段")
        start, end = _span(sim, lang)
        costs.append(_t(lang, f"{start} → {end}: {sim['total_amount']} ({parts})", f"{start} → {end}：{sim['total_amount']}元（{parts}）"))
    facts += costs
    sims = result.get("simulations") or []
    # the stays asked about (a weekend is two), or the first example stay
    asked_stays = sims if result.get("stays_asked") else sims[:1]
    conclusion = (" " if lang != "zh" else "").join(_stay_line(sim, result, lang) for sim in asked_stays)
    if asks_cap(asked):
        conclusion = _caps(result, lang) + (("" if lang == "zh" else " ") + conclusion if conclusion else "")
    elif part := _part_of_day(result, asked, lang):
        conclusion = part + (("" if lang == "zh" else " ") + conclusion if conclusion else "")
    return facts, conclusion, [f"{result['rule_code']} v{result['version_no']}"]


def _arrears(result: Mapping[str, Any], lang: str) -> tuple[list[str], str, list[str]]:
    orders = result.get("orders", [])
    plate = result["plate_no"]
    if not orders:
        return [], _t(lang, f"Plate {plate} has no unpaid orders.", f"车牌 {plate} 没有欠费订单。"), []
    facts = [
        _t(lang, f"Order {o['order_no']} at {o['lot_code']} ({_hm(o['entry_time'])} – {_hm(o['exit_time'])}): "
                 f"total {o['total_amount']}, paid {o['paid_amount']}, owes {o['arrears_amount']}.",
           f"订单 {o['order_no']}（{o['lot_code']}，{_hm(o['entry_time'])} – {_hm(o['exit_time'])}）：应收 {o['total_amount']} 元，已付 {o['paid_amount']} 元，欠费 {o['arrears_amount']} 元。")
        for o in orders
    ]
    count = "one unpaid order" if len(orders) == 1 else f"{len(orders)} unpaid orders"
    conclusion = _t(lang, f"Plate {plate} has {count}, {result['total_arrears']} in total. "
                          "Say “verify the first one” to check an order's fee.",
                    f"车牌 {plate} 共有 {len(orders)} 笔欠费订单，合计 {result['total_arrears']} 元。如需核验某笔订单金额，可以说“核验第一笔”。")
    return facts, conclusion, [_t(lang, f"order {o['order_no']}", f"订单 {o['order_no']}") for o in orders]


def _verify(result: Mapping[str, Any], view: RunView, lang: str) -> tuple[list[str], str, list[str]]:
    order = result["order"]
    source = f"{result['rule_code']} v{result['version_no']}"
    facts = [
        _t(lang, f"Order {order['order_no']} ({order['plate_no']}, {order['lot_code']}, {_hm(order['entry_time'])} – {_hm(order['exit_time'])}) was charged {result['order_total_amount']}.",
           f"订单 {order['order_no']}（{order['plate_no']}，{order['lot_code']}，{_hm(order['entry_time'])} – {_hm(order['exit_time'])}）记录金额 {result['order_total_amount']} 元。"),
        _t(lang, f"Rule {source}, in force at entry, gives {result['simulated_total_amount']}.",
           f"按入场时生效的规则 {result['rule_code']} 第{result['version_no']}版模拟应收 {result['simulated_total_amount']} 元。"),
    ]
    facts += [_t(lang, f"  {row['segment_name']}: {row['minutes']} min → {row['amount']}",
                 f"  {_row_name(row, result, lang) or '计费'}{row['minutes']}分钟 → {row['amount']}元") for row in result.get("breakdown", [])]
    if result["amount_check_result"] == "match":
        conclusion = _t(lang, "The amounts match: the fee is correct.", "金额一致，收费正确。")
    elif view.review_pending or view.review_opened:
        conclusion = _t(lang, "The amounts differ, so a supervisor is reviewing this order now. I'll post the decision here as soon as it is made.",
                        "金额不一致，已提交主管复核。复核结果出来后我会在这里告诉您。")
    else:
        conclusion = _t(lang, "The amounts differ.", "金额不一致。")
    return facts, conclusion, [source, _t(lang, f"order {order['order_no']}", f"订单 {order['order_no']}")]


def fee_decision_text(decision: Mapping[str, Any], lang: str) -> str:
    """The message a person sees when a supervisor decided their fee review."""
    order = decision["order"]
    outcome = decision["outcome"]
    what = {
        "adjust": _t(lang, f"adjusted the order to {order['total_amount']}", f"将订单金额调整为 {order['total_amount']} 元"),
        "keep": _t(lang, f"kept the order's amount of {order['total_amount']}", f"维持原金额 {order['total_amount']} 元"),
        "waive": _t(lang, "waived what was still owed", "免除了尚欠金额"),
    }.get(outcome, _t(lang, "decided", "作出了决定"))  # an outcome without words is never said by its code
    return _t(lang, f"Review decided: a supervisor {what} for order {order['order_no']}. It now owes {order['arrears_amount']}.",
              f"复核已完成：主管{what}（订单 {order['order_no']}）。当前欠费 {order['arrears_amount']} 元。")


def review_decided_text(label: str, reason: str, lang: str) -> str:
    """A supervisor's decision on a review, said with the decided option's label (never its id) and their reason."""
    reason = reason.strip().rstrip(".。")
    if lang == "zh":
        said = f"主管已作出决定：{label}。" if label else "主管已作出决定。"
        return said + (f"理由：{reason}。" if reason else "")
    said = f"A supervisor decided: {label[:1].lower() + label[1:]}." if label else "A supervisor has decided."
    return said + (f" Their reason: {reason}." if reason else "")


def _tool_reply(view: RunView, lang: str, asked: str = "") -> tuple[list[str], str, list[str]] | None:
    result = view.tool_result
    if not result:
        return None
    if result.get("error"):
        return [], _t(lang, f"I couldn't complete that: {result['error']['message']}", f"无法完成查询：{result['error']['message']}"), []
    tool = result.get("tool")
    if tool == "rule_explain":
        return _explain_rule(result, lang, asked)
    if tool == "arrears_check":
        return _arrears(result, lang)
    if tool == "fee_verify":
        return _verify(result, view, lang)
    return None


# --- diagnostic, form and guidance ------------------------------------------------


def _diagnostic_lines(outcome: TurnOutcome, state: ContextState, config: ConversationConfig, lang: str) -> list[str]:
    lines = []
    if outcome.replan:
        lines.append(_t(lang, "New evidence changes the picture: I've set the earlier conclusion aside and switched to the matching checks.",
                        "新的证据改变了判断：之前的结论已撤回，转到相应的检查。"))
    if outcome.isolation_completed and state.isolation_finding:
        hypothesis = state.hypothesis(state.isolation_finding)
        report = final_report_for(state, config, locale=lang)
        finding = hypothesis.description if hypothesis else state.isolation_finding
        lines.append(_t(lang, "Cause isolated: {finding}.", "已定位原因：{finding}。", finding=finding))
        if report and report.correction:
            lines.append(_t(lang, "Recommended correction: {items}.", "建议处理：{items}。",
                            items=("；" if lang == "zh" else "; ").join(report.correction)))
        if state.estimate.status == "draft":
            lines.append(_t(lang, "A draft labor estimate of {hours} h is ready; you don't need to confirm it to keep going.",
                            "已生成 {hours} 小时的工时估算草稿；无需确认即可继续。", hours=state.estimate.total_hours))
    if (outcome.facts_added and not outcome.isolation_completed and not outcome.replan and not outcome.next_step_question
            and not outcome.notice and outcome.reply_action not in ("estimate_skipped", "estimate_confirmed", "final_report")):
        # nothing left to ask, but the message said something: say what was noted (never "I didn't understand")
        said = [f.value for f in state.facts if f.id in outcome.facts_added and f.key != "note"]
        if said:
            lines.append(_t(lang, "Noted: {facts}.", "已记录：{facts}。", facts=("；" if lang == "zh" else "; ").join(said)))
    elif (state.isolation_complete and not outcome.isolation_completed and not outcome.replan and not outcome.next_step_question
          and not outcome.notice and not outcome.question and outcome.side_question is None
          and outcome.reply_action not in ("estimate_skipped", "estimate_confirmed", "final_report")):
        # nothing new and nothing left to ask: say where the diagnosis stands and the ways on (never "I didn't understand")
        hypothesis = state.hypothesis(state.isolation_finding or "")
        lines.append(_t(lang, "The cause stays as isolated: {finding}. Tell me anything new you find, or write the report.",
                        "原因仍为：{finding}。如有新的发现请告诉我，或者生成报告。",
                        finding=hypothesis.description if hypothesis else state.isolation_finding))
    if outcome.reply_action == "estimate_skipped":
        lines.append(_t(lang, "Labor estimate skipped: the report will leave labor out. Diagnostics go on.",
                        "已跳过工时估算：报告中不写工时。诊断继续。"))
    elif outcome.reply_action == "estimate_confirmed":
        hours = state.estimate.confirmed_hours or state.estimate.total_hours
        lines.append(_t(lang, "Labor estimate confirmed: {hours} h; the report will show it as confirmed.",
                        "工时估算已确认：{hours} 小时；报告中将标注为已确认。", hours=f"{hours:g}"))
    return lines


_FILLER = re.compile(r"^(?:(?:so|well|ok(?:ay)?|um+|uh+|er+m*|basically|right|hi|hello|hey|yeah|yes|嗯+|呃+|那个|就是说?|其实|是这样的?|你好|您好)"
                     r"(?![A-Za-z])[\s,，.。!！…:：-]*)+", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?。！？；;])\s*")


# Words that start a sentence and read on lower-case inside ours; a name ("Sam was late") keeps its capital.
_SENTENCE_STARTS = frozenset({"we", "we're", "we’re", "our", "the", "a", "an", "it", "it's", "this", "that", "they", "there", "my",
                              "mostly", "mainly", "just", "basically", "about", "around", "some", "most", "all", "people", "users"})


def brief(text: str, lang: str) -> str:
    """A short form of what a person said, to tell them what was understood (never the whole message back)."""
    whole = _FILLER.sub("", " ".join(text.split())).strip() or " ".join(text.split())
    cjk = bool(re.search(r"[\u4e00-\u9fff]", whole))
    limit = 36 if cjk else 72
    end = ".。;；!！?？ "
    first = _SENTENCE_END.split(whole)[0].rstrip(end) if len(whole) > limit else whole.rstrip(end)
    more = len(first) < len(whole.rstrip(end))
    if len(first) > limit:
        cut = first[:limit]
        clause = max(cut.rfind(c) for c in ",，、;；")
        if clause > limit // 2:
            cut = cut[:clause]
        elif not cjk and " " in cut:
            cut = cut[: cut.rfind(" ")]
        first, more = cut, True
    first = first.rstrip(" ,，、;；:：")
    if len(first.split()) > 3 and first.split()[0].lower().strip(",'’") in _SENTENCE_STARTS:
        # a sentence of theirs goes on inside ours ("Noted the project: we're ..."); a value keeps its case ("Group C")
        first = first[0].lower() + first[1:]
    return first + ("…" if more else "")


def _label(spec: Any, config: ConversationConfig, lang: str) -> str:
    """A question's short name in replies: its label, its slot's label, or what its unit measures ("" when none)."""
    slot = config.slot_spec(spec.slot) if spec.slot else None
    return ((localize(spec.label, lang) if spec.label else "") or (localize(slot.label, lang) if slot is not None and slot.label else "")
            or question_label(spec, lang))


def _changed_line(outcome: TurnOutcome, config: ConversationConfig, lang: str) -> str:
    """What a change of an answer did, the values said as the person reads them ("从“2层”改为“3层”")."""
    form = config.form
    spec = form.question(outcome.form_changed_question) if form is not None and outcome.form_changed_question else None
    if spec is None:
        return ""
    label, question = _label(spec, config, lang), localize(spec.question, lang).rstrip("?？")
    before = brief(answer_shown(spec, outcome.form_changed_from or "", lang), lang)
    after = brief(answer_shown(spec, outcome.form_changed_to or "", lang), lang)
    if label:
        return _t(lang, f"Changed the {label} from “{before}” to “{after}”.", f"已将{label}从“{before}”改为“{after}”。")
    return _t(lang, f"Changed “{question}” from {before} to {after}.", f"已将“{question}”从“{before}”改为“{after}”。")


def _form_lines(outcome: TurnOutcome, config: ConversationConfig, lang: str) -> list[str]:
    lines = [changed] if (changed := _changed_line(outcome, config, lang)) else []
    if outcome.form_note:
        lines.append(outcome.form_note)
    lines += _recorded_lines(outcome, config, lang)
    last_question = not outcome.question and not outcome.next_step_question
    if outcome.form_complete and last_question and config.form is not None and config.form.kind == "form":
        lines.append(_t(lang, "That's every question answered. Please review your answers and submit when ready.",
                        "所有问题都已回答。请核对后提交。"))
        lines.append(_t(lang, "Your answers:", "您的答案：") + "\n" + answers_listing(outcome.state, config.form, lang))
    return lines


def _recorded_lines(outcome: TurnOutcome, config: ConversationConfig, lang: str) -> list[str]:
    """What this turn recorded, said as a person would: a value confirmed in the person's language with its
    question's name, a yes or no as a sentence, an account acknowledged by its question's name or a thanks
    (never the person's message back)."""
    form = config.form
    fresh = {a.question_id: a.answer for a in outcome.state.finalized_answers
             if a.turn == outcome.turn_index and a.question_id != outcome.form_changed_question}
    if form is None or not fresh:
        return []
    specs = [q for q in form.questions if q.id in fresh]
    said = outcome.state.latest_user_text or ""
    accounts = [q for q in specs if q.answer_type == "text" and _echoes(fresh[q.id], said, lang, bool(_label(q, config, lang)))]
    if len(specs) == 1 and accounts:
        return [_noted(outcome, config, lang, accounts[0])]
    lines = [sentence for q in specs if q.answer_type == "yes_no" and (sentence := yes_no_said(q, fresh[q.id], lang))]
    # an account goes by its question's name alone ("the project"); a value is said with it ("the users: nurses")
    noted = [(_label(q, config, lang), None if q in accounts else brief(answer_shown(q, fresh[q.id], lang), lang))
             for q in specs if not (q.answer_type == "yes_no" and lines) and not (q in accounts and not _label(q, config, lang))]
    if not noted:
        return lines or [acknowledgement(outcome.turn_index, lang)]
    lines.append(_noted_values(noted, lang, thanks=bool(accounts)))
    return lines


def _noted_values(noted: list[tuple[str, str | None]], lang: str, *, thanks: bool) -> str:
    """'Noted the building type: residential; the dwelling type: two-family dwelling.' / '已记下建筑类型：住宅；…。'"""
    if lang == "zh":
        items = [f"{label}：{value}" if label and value else label or value or "" for label, value in noted]
        return ("好的，已记下" if thanks else "已记下") + ("" if noted[0][0] else "：") + "；".join(items) + "。"
    items = [f"the {label}: {value}" if label and value else f"the {label}" if label else value or "" for label, value in noted]
    opening = "Thanks, I've noted " if thanks else "Noted " if noted[0][0] else "Noted: "
    return opening + "; ".join(items) + "."


def _echoes(answer: str, message: str, lang: str, labelled: bool) -> bool:
    """Saying this answer back would repeat the person's message: an account of theirs, not a value. A long one
    under a question's name is said as its gist instead ("Noted the project: we run three bakeries…")."""
    if not is_account(answer, message):
        return False
    return not labelled or not brief(answer, lang).endswith("…")


def _noted(outcome: TurnOutcome, config: ConversationConfig, lang: str, question: Any) -> str:
    """A plain acknowledgement of an account: thanks, and what was picked out of it, not the message again."""
    label, picked = _label(question, config, lang), []
    for name in outcome.slots_changed:
        if name == question.slot:
            continue  # the answer itself: the account not to be said back
        spec, slot = config.slots.get(name), outcome.state.slots.get(name)
        if spec is not None and slot is not None and spec.label and slot.value.strip() != outcome.state.latest_user_text.strip():
            picked.append(f"{localize(spec.label, lang)}{'：' if lang == 'zh' else ': '}{slot.value}")
    if label:
        if lang == "zh":
            return f"好的，已记下{label}" + (f"（{'；'.join(picked)}）" if picked else "") + "。"
        return f"Thanks, I've noted the {label}" + (f" ({'; '.join(picked)})" if picked else "") + "."
    thanks = acknowledgement(outcome.turn_index, lang)
    if not picked:
        return thanks
    if lang == "zh":
        return thanks.rstrip("。") + "，已记下" + "；".join(picked) + "。"
    return thanks.rstrip(".") + " — I've noted the " + "; the ".join(picked) + "."


_THANKS = re.compile(r"\b(?:thanks|thank\s+you|thx|cheers)\b|谢谢|多谢|感谢|谢啦|спасибо|gracias", re.IGNORECASE)


def _options_line(view: RunView, lang: str) -> str:
    eligible = [o for o in view.options if o.get("eligibility") == "eligible" and not o.get("non_advancing")]
    if not eligible or view.status != "active":
        return ""
    labels = _t(lang, ", ", "、").join(f"“{o['label']}”" for o in eligible)
    line = _t(lang, "You can choose: {labels}.", "您可以选择：{labels}。", labels=labels)
    if view.recommended_option_id and len(eligible) > 1:
        rec = next((o for o in eligible if o["option_id"] == view.recommended_option_id), None)
        if rec is not None:
            reasons = [r for r in view.recommendation_reasons if _in_language(r, lang)]  # a reason in another language is left out
            reason = f" — {reasons[0].rstrip('.。')}" if reasons else ""
            line += _t(lang, " Recommended: “{label}”{reason}.", "推荐：“{label}”{reason}。", label=rec["label"], reason=reason)
    return line


def _in_language(text: str, lang: str) -> bool:
    """Whether a plan or engine text can be said in this conversation: a Chinese reply takes Chinese text only."""
    return lang != "zh" or bool(re.search(r"[\u4e00-\u9fff]", text))


_GUIDANCE_STEP = {  # what the guidance leads to, by the offered action's flow
    "calendar": ("So I'd start with a conversation{with_name}: one-to-one, by call or in person.",
                 "所以建议先{with_name}一对一谈一谈（电话或当面）。"),
    "email": ("So I'd put it in writing{to_name}: a short, factual email.", "所以建议{to_name}发一封简短、只写事实的邮件。"),
}


def _guidance(view: RunView, config: ConversationConfig, state: ContextState, lang: str) -> str:
    """The guidance behind an offered action: the cited passages, then what they lead to."""
    offered = [o for o in view.options if o["option_id"] in view.new_actions and o.get("eligibility") == "eligible"]
    action = next((a for a in config.actions if offered and a.id == offered[0]["option_id"]), None)
    if action is None or not action.guidance or not view.citations:
        return ""
    name = state.slots["employee_name"].value if "employee_name" in state.slots else ""
    en, zh = _GUIDANCE_STEP.get(action.flow, ("", ""))
    zh_lang = lang == "zh"
    step = _t(lang, en, zh, with_name=(f"和{name}" if zh_lang else f" with {name}") if name else "",
              to_name=(f"给{name}" if zh_lang else f" to {name}") if name else "")
    lines = [f"{c['snippet']} [{_source_name(c, lang)}]" for c in view.citations]
    return _t(lang, "From the team's guidance:", "根据团队的管理指南：") + "\n- " + "\n- ".join(lines) + ("\n\n" + step if step else "")


def _action_offer(view: RunView, lang: str) -> str:
    offered = [o for o in view.options if o["option_id"] in view.new_actions and o.get("eligibility") == "eligible"]
    if not offered:
        return ""
    option = offered[0]
    # What the option does is on its button's card: the sentence only offers it (no pasted effects summary).
    return _t(lang, f"If it helps, I can {option['label'].lower()} for you: use the “{option['label']}” button, and I'll ask for your consent first.",
              f"如有需要，我可以帮您{option['label']}：请点击“{option['label']}”按钮，执行前会先征得您的同意。")


def _capabilities(config: ConversationConfig, lang: str) -> str:
    """When a message matched nothing: say plainly what this concierge can do."""
    labels = [(i.label.get(lang) or i.label.get("en") or i.name) for i in config.intents]
    if not labels:
        return ""
    return _t(lang, "I can help you " + "; ".join(labels) + ". Which is it? Please include the lot code, plate number or order number.",
              "我可以帮您" + "；".join(labels) + "。请问是哪一项？请附上车场编码、车牌号或订单号。")


def compose_reply(
    outcome: TurnOutcome,
    view: RunView,
    config: ConversationConfig,
    *,
    locale: str = "en",
) -> ComposedReply:
    """The deterministic reply for a turn: side answer, facts, evidence, conclusion, next question."""
    lang = lang_of(outcome, locale)
    state = outcome.state
    if outcome.handoff_requested:
        return ComposedReply(text=_t(lang, *HANDOFF_OPENED), asks_question=False, kind="handoff")
    parts: list[str] = []
    if outcome.restarted:
        parts.append(_t(lang, "OK, let's start again from the beginning: I've cleared your earlier answers.",
                        "好的，我们从头开始：之前的回答已清空。"))
    elif outcome.cancelled:
        parts.append(_t(lang, "OK, I've dropped that request; what you told me is still remembered.", "好的，这个请求已取消；您之前提供的信息我还记得。"))
        if not outcome.question and not outcome.next_step_question:
            parts.append(_capabilities(config, lang))  # and what else the concierge can do
    facts: list[str] = []
    evidence = [_cite(c, lang) for c in view.citations]
    conclusion = ""
    sources: list[str] = []
    if outcome.side_question is not None and not outcome.side_question.answer and evidence:
        # No prepared answer for this side question: answer briefly from the cited knowledge.
        parts.append(_t(lang, "From the knowledge base:", "知识库中的说明：") + "\n- " + "\n- ".join(evidence))
    if outcome.side_question is not None and outcome.side_question.answer:
        parts.append(outcome.side_question.answer)
        if view.citations:
            first = view.citations[0]
            parts.append(_t(lang, "(Source: {source})", "（来源：{source}）", source=_source_name(first, lang)))
    tool = _tool_reply(view, lang, asked=state.latest_user_text or "")
    if tool is not None:
        facts, conclusion, sources = tool
        if facts:
            parts.append(_t(lang, "Facts:", "事实：") + "\n- " + "\n- ".join(facts))
        if evidence:
            parts.append(_t(lang, "Evidence:", "依据：") + "\n- " + "\n- ".join(evidence))
        if conclusion:
            parts.append(_t(lang, "Conclusion: ", "结论：") + conclusion)
        if sources:
            parts.append(_t(lang, "Sources: ", "来源：") + _t(lang, ", ", "、").join(sources))
    elif evidence and outcome.intent in ("EXPLAIN", "HOWTO", "LOCATE") and outcome.side_question is None:
        parts.append(_t(lang, "From the knowledge base:", "知识库中的说明：") + "\n- " + "\n- ".join(evidence))
    parts += _diagnostic_lines(outcome, state, config, lang)
    if outcome.notice:
        parts.append(outcome.notice)
    parts += _form_lines(outcome, config, lang)
    changed = outcome.form_changed_question or any(a.turn == outcome.turn_index for a in outcome.state.finalized_answers)
    if view.stale_documents and changed:  # an answer changed under a document built on it
        names = "、".join(view.stale_documents) if lang == "zh" else " and ".join(d[:1].lower() + d[1:] for d in view.stale_documents)
        parts.append(_t(lang, f"The {names} was built on the earlier answers, so it is out of date until you regenerate it.",
                        f"{names}是依据之前的回答生成的，重新生成之前已过期。"))
    if config.actions:  # what the message said about the email / the call, in plain words
        moved = any(n in outcome.slots_changed for n in (CALL_DAY, CALL_TIME))
        if said := understood_line(state, config, wanted=outcome.action_requested, declined=outcome.actions_declined,
                                   when_changed=moved, language=lang, changed=outcome.slots_changed,
                                   corrected=outcome.slots_corrected):
            parts.append(said)
    if view.entered_steps and tool is None:
        parts.append(_t(lang, "Progress: ", "进度：") + " → ".join(view.entered_steps) + ("。" if lang == "zh" else "."))
    if view.fee_decision:
        parts.append(fee_decision_text(view.fee_decision, lang))
    if view.review_opened and tool is None:
        parts.append(_t(lang, "This needs a supervisor's decision; I'll post it here when it is made.", "此事需要主管决定，结果出来后我会在这里告诉您。"))
    elif view.review_pending and tool is None and outcome.meaning in (REQUEST, FOLLOW_UP, ANSWER) and not outcome.question:
        # never a dead end while a supervisor decides: say what can be done meanwhile
        parts.append(_t(lang, "A supervisor is still reviewing this conversation's request; I'll post their decision here. "
                              "Until then I can't look anything else up in this conversation: for another question, start a new "
                              "conversation from the start page, or say “talk to a person”.",
                        "主管仍在复核本次对话中的请求，决定出来后我会在这里告诉您。在此之前，本对话中无法再查询其他内容："
                        "如有其他问题，请在首页开始新的对话，或者说“转人工”。"))
    if view.status == "completed":
        parts.append(_t(lang, "This conversation's workflow is complete.", "本次流程已完成。"))
    question = outcome.question
    if question is None and outcome.next_step_question and outcome.reply_action not in ("present_results",):
        question = outcome.next_step_question
    if outcome.decision == "abort" and config.form is not None and outcome.form_question_id:
        # a form stops asking one question, never the form: the person can answer it later or get a person
        parts.append(_t(lang, "Let's leave this question for now; you can answer it whenever you like, change another answer, "
                              "or say “talk to a person”.",
                        "这个问题先放一放；您可以随时回答它、修改其他答案，或者说“转人工”。"))
        question = None
    elif outcome.decision == "abort":
        parts.append(_t(lang, "I still don't have what I need to look this up, so I'll stop asking. You can start again with the details, or contact the help desk staff.",
                        "仍然缺少必要的信息，我先不再追问。您可以带上完整信息重新提问，或联系人工客服。"))
        question = None
    offer = _action_offer(view, lang)
    if offer and not question:
        if config.actions and (guidance := _guidance(view, config, state, lang)):
            parts.append(guidance)
        parts.append(offer)
    small_talk = (_small_talk_kind(state.latest_user_text or "") if (not question or chitchat_kind(state.latest_user_text or ""))
                  and tool is None and outcome.resolved_intent is None else None)
    written = outcome.reply_action == "final_report"  # the report is being written: no menu after it
    options_line = _options_line(view, lang) if not question and tool is None and not view.new_actions and not written else ""
    if options_line:
        if not parts and outcome.resolved_intent is None and small_talk in (None, "greeting"):
            # Never a bare menu: say what this concierge can do before the options.
            parts.append(_capabilities(config, lang) or _t(lang, "I'm not sure I understood that.", "我没有完全理解您的意思。"))
        parts.append(options_line)
    if small_talk:
        if not parts and small_talk == "greeting":  # a greeting alone: then what this concierge can do
            parts.append(_capabilities(config, lang))
        parts.insert(0, _t(lang, *_SMALL_TALK[small_talk]))
    if question and not parts and (kind := chitchat_kind(state.latest_user_text or "")) in ("greeting", "thanks"):
        parts.append(_t(lang, "Hello!", "您好！") if kind == "greeting" else _t(lang, "You're welcome.", "不客气。"))
    if question:
        if outcome.side_question is not None:
            parts.append(_t(lang, "Back to where we were: ", "回到刚才的步骤：") + question)
        elif outcome.question_repeats >= 3:
            parts.append(_way_out(question, outcome, view, config, lang))  # never the same question a third time
        else:
            parts.append(question)
    text = "\n\n".join(p for p in parts if p).strip()
    if not text:
        text = _capabilities(config, lang) or _t(lang, "Noted. Tell me more, or choose one of the options.", "好的。请继续说明，或选择一个选项。")
    asks = asks_question(text) or bool(question)
    return ComposedReply(
        text=text, asks_question=asks, kind="clarifying_question" if question and outcome.decision == "ask" else "reply",
        facts=tuple(facts), evidence=tuple(evidence), conclusion=conclusion, sources=tuple(sources),
        citations=tuple(view.citations),
    )


_SMALL_TALK = {
    "greeting": ("Hello!", "您好！"),
    "thanks": ("You're welcome! Is there anything else I can help with?", "不客气！还有其他可以帮您的吗？"),
    "goodbye": ("Goodbye! You can come back to this conversation at any time.", "再见！您随时可以回到这个对话。"),
}


HANDOFF_OPENED = (
    "I've asked a member of staff to take over: they will answer you here. Until they hand the conversation back, I'll stay quiet.",
    "已为您转接人工客服：工作人员会在这里回复您。在他们交还对话之前，我不会再自动回复。",
)


def _way_out(question: str, outcome: TurnOutcome, view: RunView, config: ConversationConfig, lang: str) -> str:
    """The third ask of the same question: say it another way, with an example and the ways out."""
    example = next((config.slot_spec(name).example for name in outcome.missing_slots if config.slot_spec(name)), None)
    parts = [question]
    if example and example not in question:
        parts.append(_t(lang, "For example: {example}.", "例如：{example}。", example=example))
    offered = [o["label"] for o in view.options if o.get("eligibility") == "eligible" and not o.get("non_advancing")]
    if offered:
        parts.append(_t(lang, "Or choose: ", "或者选择：") + _t(lang, "; ", "、").join(f"“{label}”" for label in offered) + _t(lang, ".", "。"))
    parts.append(_t(lang, "If this isn't working, say “talk to a person” and a member of staff will take over.",
                    "如果这样行不通，可以说“转人工”，由工作人员接手。"))
    return ("" if lang == "zh" else " ").join(parts)  # Chinese sentences follow each other without a space


def _small_talk_kind(text: str) -> str | None:
    """Greetings, thanks and goodbyes are answered in kind; thanks also at the end of a longer message."""
    return chitchat_kind(text) or ("thanks" if _THANKS.search(text) else None)


def opening_text(config: ConversationConfig, workflow_name: str, description: str, lang: str, first_question: str | None) -> str:
    """The concierge's first message in a new conversation."""
    hello = _t(lang, "Hello! I'm the {name}. {description}", "您好！我是{name}。{description}",
               name=introduces(workflow_name, lang), description=description)
    return f"{hello}\n\n{first_question}" if first_question else hello + _t(lang, " How can I help?", "请问有什么可以帮您？")


# The fixed phrases of a diagnostic conversation in Russian and Spanish, by their English text.
_RU_ES: dict[str, dict[str, str]] = {
    "New evidence changes the picture: I've set the earlier conclusion aside and switched to the matching checks.": {
        "ru": "Новые данные меняют картину: прежний вывод отложен, переходим к соответствующим проверкам.",
        "es": "La nueva evidencia cambia el panorama: dejo de lado la conclusión anterior y paso a las comprobaciones correspondientes."},
    "Cause isolated: {finding}.": {"ru": "Причина найдена: {finding}.", "es": "Causa aislada: {finding}."},
    "Noted: {facts}.": {"ru": "Записано: {facts}.", "es": "Anotado: {facts}."},
    "The cause stays as isolated: {finding}. Tell me anything new you find, or write the report.": {
        "ru": "Причина по-прежнему: {finding}. Сообщите, если найдёте что-то новое, или составьте отчёт.",
        "es": "La causa sigue siendo: {finding}. Dígame si encuentra algo nuevo, o redacte el informe."},
    "Labor estimate skipped: the report will leave labor out. Diagnostics go on.": {
        "ru": "Смета пропущена: в отчёте работ не будет. Диагностика продолжается.",
        "es": "Presupuesto omitido: el informe no incluirá mano de obra. El diagnóstico sigue."},
    "Labor estimate confirmed: {hours} h; the report will show it as confirmed.": {
        "ru": "Смета подтверждена: {hours} ч; в отчёте она будет отмечена как подтверждённая.",
        "es": "Presupuesto confirmado: {hours} h; el informe lo mostrará como confirmado."},
    "Recommended correction: {items}.": {"ru": "Рекомендуемое исправление: {items}.", "es": "Corrección recomendada: {items}."},
    "A draft labor estimate of {hours} h is ready; you don't need to confirm it to keep going.": {
        "ru": "Готов черновик сметы работ на {hours} ч; подтверждать его не обязательно, можно продолжать.",
        "es": "Hay un borrador de presupuesto de mano de obra de {hours} h; no hace falta confirmarlo para continuar."},
    "Progress: ": {"ru": "Ход работы: ", "es": "Avance: "},
    "Back to where we were: ": {"ru": "Вернёмся к тому, на чём остановились: ", "es": "Volvamos a donde estábamos: "},
    "Noted. Tell me more, or choose one of the options.": {
        "ru": "Понял. Расскажите подробнее или выберите один из вариантов.",
        "es": "Entendido. Cuénteme más o elija una de las opciones."},
    "I'm not sure I understood that.": {"ru": "Я не уверен, что правильно вас понял.", "es": "No estoy seguro de haberle entendido."},
    "You can choose: {labels}.": {"ru": "Можно выбрать: {labels}.", "es": "Puede elegir: {labels}."},
    " Recommended: “{label}”{reason}.": {"ru": " Рекомендуется: «{label}»{reason}.", "es": " Recomendado: «{label}»{reason}."},
    "This conversation's workflow is complete.": {"ru": "Работа по этому обращению завершена.", "es": "El proceso de esta conversación ha terminado."},
    "OK, let's start again from the beginning: I've cleared your earlier answers.": {
        "ru": "Хорошо, начнём сначала: прежние ответы удалены.", "es": "De acuerdo, empecemos de nuevo: he borrado sus respuestas anteriores."},
    "OK, I've dropped that request; what you told me is still remembered.": {
        "ru": "Хорошо, этот запрос отменён; то, что вы рассказали, я помню.",
        "es": "De acuerdo, he cancelado esa solicitud; recuerdo lo que me ha contado."},
    "Hello!": {"ru": "Здравствуйте!", "es": "¡Hola!"},
    "You're welcome.": {"ru": "Пожалуйста.", "es": "De nada."},
    "You're welcome! Is there anything else I can help with?": {
        "ru": "Пожалуйста! Могу ли я ещё чем-то помочь?", "es": "¡De nada! ¿Puedo ayudarle en algo más?"},
    "Goodbye! You can come back to this conversation at any time.": {
        "ru": "До свидания! Вы можете вернуться к этому разговору в любое время.",
        "es": "¡Adiós! Puede volver a esta conversación cuando quiera."},
    "I've asked a member of staff to take over: they will answer you here. Until they hand the conversation back, I'll stay quiet.": {
        "ru": "Я попросил сотрудника подключиться: он ответит вам здесь. Пока он не вернёт разговор, я буду молчать.",
        "es": "He pedido a alguien del personal que se haga cargo: le responderá aquí. Hasta que me devuelva la conversación, no intervendré."},
    "For example: {example}.": {"ru": "Например: {example}.", "es": "Por ejemplo: {example}."},
    "Or choose: ": {"ru": "Или выберите: ", "es": "O elija: "},
    "If this isn't working, say “talk to a person” and a member of staff will take over.": {
        "ru": "Если так не получается, напишите «поговорить с человеком», и подключится сотрудник.",
        "es": "Si así no funciona, diga «hablar con una persona» y le atenderá alguien del personal."},
    "I still don't have what I need to look this up, so I'll stop asking. You can start again with the details, or contact the help desk staff.": {
        "ru": "Мне всё ещё не хватает сведений, поэтому я перестану спрашивать. Можно начать заново с подробностями или обратиться к сотрудникам.",
        "es": "Sigo sin tener lo necesario, así que dejaré de preguntar. Puede empezar de nuevo con los detalles o contactar con el personal."},
    "From the knowledge base:": {"ru": "Из базы знаний:", "es": "De la base de conocimiento:"},
    "(Source: {source} v{version})": {"ru": "(Источник: {source}, версия {version})", "es": "(Fuente: {source} v{version})"},
    "Hello! I'm the {name}. {description}": {
        "ru": "Здравствуйте! Я помощник «{name}». {description}", "es": "¡Hola! Soy el asistente de {name}. {description}"},
    " How can I help?": {"ru": " Чем могу помочь?", "es": " ¿En qué puedo ayudarle?"},
}


__all__ = ["ComposedReply", "RunView", "compose_reply", "fee_decision_text", "lang_of", "opening_text"]


