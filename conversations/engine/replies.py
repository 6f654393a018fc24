"""The rules backend's replies: what the concierge says when no model is involved.

It turns a TurnOutcome and a snapshot of the run (current step, options, tool results,
review) into a reply that separates business facts, evidence and the conclusion. Every
fee or rule it states comes from a tool result or a cited chunk given to it; it never
invents one. Its sentences come from the message catalog (`catalog.say`) in the reply's language: English,
Chinese, Russian or Spanish; a sentence without a translation is said in English.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, time
from typing import Any

from ._text import asks_question, chitchat_kind, localize
from .action_prefs import CALL_DAY, CALL_TIME, describe_when, details_missing, understood_line
from .catalog import marked, say, say_in, say_n
from .config import ConversationConfig
from .fee_questions import OVERNIGHT, OVERNIGHT_START, asks_cap, day_part
from .forms import answers_listing
from .lexicon import word_list
from .negation import says_it_corrects
from .plain_words import (
    acknowledgement,
    answer_shown,
    aside,
    details_shown,
    introduces,
    is_account,
    lower_first,
    question_label,
    quoted,
    then,
    yes_no_said,
)
from .state import ContextState
from .timeparse import says_clock
from .turn import ANSWER, FOLLOW_UP, REQUEST, TurnOutcome, final_report_for
from .turn_work import ESTIMATE_CONFIRMED_TEXT


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


def _hm(iso: str | None) -> str:
    """'2026-03-02T08:00:00+08:00' -> '2026-03-02 08:00'."""
    return (iso or "")[:16].replace("T", " ")


def _money(value: Any) -> str:
    return f"{float(value):.2f}"


# --- billing tool results ---------------------------------------------------------


def _title_in(title: str, lang: str) -> str:
    """The part of a title written "中文 / English" that is in the reply's language (the whole title otherwise); a " / "
    inside brackets ("吸收式冰箱（燃气 / 120V交流）") parts no languages."""
    parts = [part.strip() for part in _outside_brackets(title).split("\0") if part.strip()]
    if len(parts) < 2:
        return title
    chinese = [part for part in parts if _in_language(part, "zh")]
    others = [part for part in parts if part not in chinese]
    return (chinese if lang == "zh" else others or chinese)[0] if chinese else title


def _outside_brackets(title: str) -> str:
    """The title with each " / " outside brackets turned into a NUL, to split on."""
    depth, out, i = 0, [], 0
    while i < len(title):
        ch = title[i]
        depth += 1 if ch in "(（[【" else -1 if ch in ")）]】" and depth else 0
        if depth == 0 and title.startswith(" / ", i):
            out.append("\0")
            i += 3
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _source_name(citation: Mapping[str, Any], lang: str) -> str:
    """A cited source as people read it: its title and version ("Arrears FAQ, version 1"), not its id."""
    title = _title_in(str(citation.get("title") or "").strip(), lang) or str(citation["source_id"])
    return say(lang, "{title}, version {version}", title=title, version=citation["version"])


def _cite(citation: Mapping[str, Any], lang: str) -> str:
    """A citation as people read it: source title and version, effective range, snippet."""
    since = _hm(citation.get("effective_from"))
    until = _hm(citation.get("effective_to"))
    if until:
        when = say(lang, ", in force {since} – {until}", since=since or say(lang, "from the start"), until=until)
    else:
        when = say(lang, ", in force {since} – open-ended", since=since) if since else ""
    return f"[{_source_name(citation, lang)}{when}] {citation['snippet']}"


def _window_text(window: Mapping[str, Any], lang: str) -> str:
    """A segment's window as people read it: "08:00–20:00", "all day", "all day from 08:00"."""
    start, end = window.get("start"), window.get("end")
    if start != end:
        return f"{start}–{end}"
    if start == "00:00":
        return say(lang, "all day")
    return say(lang, "all day from {start}", start=start)


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
        return say(lang, "{name}{span}: free", name=name, span=span)
    unit = seg.get("unit_minutes")
    if kind == "tiered":
        tiers = "; ".join(
            say(lang, "minutes {start}–{end}: {price} per {unit} min", start=t["start_minute"],
                end=t["end_minute"] if t.get("end_minute") is not None else "…", price=_money(t["unit_price"]), unit=unit)
            for t in seg.get("tiers", [])
        )
        text = say(lang, "{name}{span}, tiered ({tiers})", name=name, span=span, tiers=tiers)
    else:
        text = say(lang, "{name}{span}: {price} per {unit} min (started units round up)", name=name, span=span,
                   price=_money(seg["unit_price"]), unit=unit)
    if seg.get("free_minutes"):
        text += say(lang, ", first {minutes} min free", minutes=seg["free_minutes"])
    if seg.get("max_charge") is not None:
        text += say(lang, _CAP_SAID.get(_cap_period(seg), _CAP_SAID["day"]), cap=_money(seg["max_charge"]))
    return text


_CAP_SAID = {  # a segment's cap, by how its period is counted
    "night": marked(", capped at {cap} per night (the whole window is one period)"),
    "split": marked(", capped at {cap} per day (split at midnight: each calendar day has its own cap)"),
    "day": marked(", capped at {cap} per day"),
}


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
    until = _hm(result.get("effective_to")) or say(lang, "open-ended")
    return say(lang, "rule {code} v{version} (in force {since} – {until})", code=result["rule_code"], version=result["version_no"],
               since=_hm(result["effective_from"]), until=until)


def _caps(result: Mapping[str, Any], lang: str) -> str:
    """The rule's daily caps, segment by segment, or that it has none."""
    capped = [seg for seg in result.get("segments", []) if seg.get("max_charge") is not None]
    if not capped:
        return say(lang, "This rule has no daily cap: every started unit is charged.")
    parts = []
    for seg in capped:
        days = _days_said(seg, lang)
        span = _window_text(seg.get("time_window", {}), lang) + (say_in(lang, "clause", ", ") + days if days else "")
        most = marked("{name}({span}) at most {cap} a night") if _cap_period(seg) == "night" else marked("{name}({span}) at most {cap} a day")
        parts.append(say(lang, most, name=_seg_name(seg, lang), span=span, cap=_money(seg["max_charge"])))
    return say(lang, "The most this rule charges: {caps}.", caps=say_in(lang, "items", "; ").join(parts))


def _weekdays(lang: str) -> tuple[str, ...]:
    """Monday to Sunday; in the context "weekday", as Django's own catalog gives the bare names for the pages' dates."""
    return (say_in(lang, "weekday", "Monday"), say_in(lang, "weekday", "Tuesday"), say_in(lang, "weekday", "Wednesday"),
            say_in(lang, "weekday", "Thursday"), say_in(lang, "weekday", "Friday"), say_in(lang, "weekday", "Saturday"),
            say_in(lang, "weekday", "Sunday"))


def _weekdays_short(lang: str) -> tuple[str, ...]:
    return (say_in(lang, "weekday", "Mon"), say_in(lang, "weekday", "Tue"), say_in(lang, "weekday", "Wed"), say_in(lang, "weekday", "Thu"),
            say_in(lang, "weekday", "Fri"), say_in(lang, "weekday", "Sat"), say_in(lang, "weekday", "Sun"))


def _local(iso: str | None) -> datetime | None:
    try:
        return datetime.fromisoformat(iso) if iso else None
    except ValueError:
        return None


def _weekday_name(day: datetime | date, lang: str) -> str:
    return _weekdays(lang)[day.weekday()]


def _day_hm(iso: str | None, lang: str) -> str:
    """'2026-11-29T09:00:00+08:00' -> 'Sunday 2026-11-29 09:00' / '2026-11-29（周日）09:00': the day priced, said."""
    moment = _local(iso)
    if moment is None:
        return _hm(iso)
    return say(lang, "{weekday} {date} {time}", weekday=_weekday_name(moment, lang), date=_hm(iso)[:10], time=_hm(iso)[11:])


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
    names = [_weekdays_short(lang)[d - 1] for d in days]
    if len(days) > 2 and days == list(range(days[0], days[-1] + 1)):
        return say(lang, "{first}–{last}", first=names[0], last=names[-1])
    return say_in(lang, "list", ", ").join(names)


def _weekdays_text(seg: Mapping[str, Any], lang: str) -> str:
    """A segment's days after its window: ' (Mon–Fri)' / '（周一至周五）'."""
    said = _days_said(seg, lang)
    return aside(said, lang) if said else ""


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


_PART_NAMES = {"night": marked("At night"), "evening": marked("In the evening"), "morning": marked("In the morning"),
               "afternoon": marked("In the afternoon"), "daytime": marked("In the daytime"), "overnight": marked("Overnight")}


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
    label = say(lang, _PART_NAMES[name])
    segments = [seg for seg in result.get("segments", []) if _applies_on(seg, on) and _covers(seg, at)]
    day = say(lang, "{weekday} {date}", weekday=_weekday_name(on, lang), date=on.isoformat())
    if not segments:
        return say(lang, "{part} ({time} on {day}) no segment of this rule applies: nothing is charged then.",
                   part=label, time=f"{at:%H:%M}", day=day)
    return say(lang, "{part} on {day} this rule's segment is {segment}.", part=label, day=day, segment=_segment_text(segments[0], lang))


def _stay_line(sim: Mapping[str, Any], result: Mapping[str, Any], lang: str) -> str:
    """What one stay costs, with the day priced; a stay no segment covers is said plainly."""
    start, end = _span(sim, lang)
    rows = sim.get("breakdown") or []
    if not rows:
        entry = _local(sim.get("entry_time"))
        idle = [seg for seg in result.get("segments", []) if entry is not None and not _applies_on(seg, entry.date())]
        why = say_in(lang, "items", "; ").join(
            say(lang, "{segment} applies {days} only", segment=_seg_named(seg, lang), days=_days_said(seg, lang)) for seg in idle)
        return say(lang, "No segment of this rule applies from {start} to {end}{why}, so that stay is not charged: {total}.",
                   start=start, end=end, why=aside(why, lang) if why else "", total=sim["total_amount"])
    line = say(lang, "A stay from {start} to {end} costs {total}.", start=start, end=end, total=sim["total_amount"])
    entry, exit_ = _local(sim.get("entry_time")), _local(sim.get("exit_time"))
    if entry is not None and exit_ is not None:
        idle = int((exit_ - entry).total_seconds() // 60) - sum(int(row.get("minutes") or 0) for row in rows)
        if idle > 0:
            line += say(lang, " {minutes} min of it fall in no segment of the rule and are not charged.", minutes=idle)
    return line


def _example_stay_line(sim: Mapping[str, Any], result: Mapping[str, Any], lang: str) -> str:
    """What an example stay costs, said as an example: the person asked how the lot charges, not about a stay."""
    entry, exit_ = _local(sim.get("entry_time")), _local(sim.get("exit_time"))
    if not sim.get("breakdown") or entry is None or exit_ is None:
        return _stay_line(sim, result, lang)
    return say(lang, "For example, {minutes} min of parking from {start} costs {total}.", start=_span(sim, lang)[0],
               minutes=int((exit_ - entry).total_seconds() // 60), total=sim["total_amount"])


def _seg_named(seg: Mapping[str, Any], lang: str) -> str:
    """A segment as a sentence names it: its name; in Chinese also its window, as a key such as `workday` is left out."""
    return f"{_seg_name(seg, lang)}{_window_text(seg.get('time_window', {}), lang)}" if lang == "zh" else str(seg.get("name") or "")


def _explain_rule(result: Mapping[str, Any], lang: str, asked: str = "") -> tuple[list[str], str, list[str]]:
    facts = [say(lang, "Lot {lot} at {time} is billed by {source}: {rule}.", lot=result.get("lot_code"), time=_hm(result["at_time"]),
                 source=_rule_source(result, lang), rule=result["rule_name"])]
    facts += [_segment_text(seg, lang) for seg in result.get("segments", [])]
    costs = []
    for sim in result.get("simulations", []):
        parts = say_in(lang, "clause", ", ").join(
            say(lang, "{name}{minutes} min {amount}", name=_row_name(row, result, lang), minutes=row["minutes"], amount=row["amount"])
            for row in sim["breakdown"])
        start, end = _span(sim, lang)
        costs.append(say(lang, "{start} → {end}: {total} ({parts})", start=start, end=end, total=sim["total_amount"],
                         parts=parts or say(lang, "no segment applies")))
    facts += costs
    sims = result.get("simulations") or []
    # the stays asked about (a weekend is two), or the first example stay, said as an example
    if result.get("stays_asked"):
        conclusion = then(lang, *(_stay_line(sim, result, lang) for sim in sims))
    else:
        conclusion = then(lang, *(_example_stay_line(sim, result, lang) for sim in sims[:1]))
    if asks_cap(asked):
        conclusion = then(lang, _caps(result, lang), conclusion)
    elif part := _part_of_day(result, asked, lang):
        conclusion = then(lang, part, conclusion)
    return facts, conclusion, [f"{result['rule_code']} v{result['version_no']}"]


def _arrears(result: Mapping[str, Any], lang: str) -> tuple[list[str], str, list[str]]:
    orders = result.get("orders", [])
    plate = result["plate_no"]
    if not orders and result.get("on_record") is False:
        return [], say(lang, "I have no parking orders on record for plate {plate}, paid or unpaid. Please check the plate.",
                       plate=plate), []
    if not orders:
        return [], say(lang, "Plate {plate} has no unpaid orders.", plate=plate), []
    facts = [
        say(lang, "Order {order} at {lot} ({since} – {until}): total {total}, paid {paid}, owes {owed}.", order=o["order_no"],
            lot=o["lot_code"], since=_hm(o["entry_time"]), until=_hm(o["exit_time"]), total=o["total_amount"], paid=o["paid_amount"],
            owed=o["arrears_amount"])
        for o in orders
    ]
    conclusion = say_n(lang, "Plate {plate} has one unpaid order, {total} in total. Say “verify the first one” to check an order's fee.",
                       "Plate {plate} has {n} unpaid orders, {total} in total. Say “verify the first one” to check an order's fee.",
                       len(orders), plate=plate, total=result["total_arrears"])
    return facts, conclusion, [say(lang, "order {order}", order=o["order_no"]) for o in orders]


def _verify(result: Mapping[str, Any], view: RunView, lang: str) -> tuple[list[str], str, list[str]]:
    order = result["order"]
    source = f"{result['rule_code']} v{result['version_no']}"
    facts = [
        say(lang, "Order {order} ({plate}, {lot}, {since} – {until}) was charged {charged}.", order=order["order_no"],
            plate=order["plate_no"], lot=order["lot_code"], since=_hm(order["entry_time"]), until=_hm(order["exit_time"]),
            charged=result["order_total_amount"]),
        say(lang, "Rule {code} v{version}, in force at entry, gives {amount}.", code=result["rule_code"], version=result["version_no"],
            amount=result["simulated_total_amount"]),
    ]
    facts += [_breakdown_row(row, number, result, lang) for number, row in enumerate(result.get("breakdown", []), start=1)]
    decision = result.get("fee_decision") or {}
    if result["amount_check_result"] == "match" and decision.get("outcome") == "adjust":
        # the order was adjusted: what that means, said before "correct" (the overpayment and how it comes back)
        conclusion = say(lang, "A supervisor adjusted this order from {before} to {after} on {day}, so the fee now matches the rule.",
                         before=decision["total_before"], after=decision["total_after"], day=describe_when(decision["decided_on"], None, lang))
        if decision.get("overpaid"):
            conclusion += " " + say(lang, "{amount} was paid over the new total: that is owed back to you.", amount=decision["overpaid"])
    elif result["amount_check_result"] == "match":
        conclusion = say(lang, "The amounts match: the fee is correct.")
    elif result.get("review_joined"):
        conclusion = say(lang, "The amounts differ, and a supervisor is already reviewing this order, so I've added this check "
                               "to that review instead of opening another. Their decision will update the order; ask me about "
                               "it again later to see the outcome.")
    elif result.get("review_refused"):
        conclusion = say(lang, "The amounts differ, but a supervisor already has enough reviews from you today, so I haven't "
                               "opened another one. Say “talk to a person” and a member of staff will look at this order with you.")
    elif view.review_pending or view.review_opened:
        conclusion = say(lang, "The amounts differ, so a supervisor is reviewing this order now. I'll post the decision here as soon as it is made.")
    else:
        conclusion = say(lang, "The amounts differ.")
    return facts, conclusion, [source, say(lang, "order {order}", order=order["order_no"])]


def _breakdown_row(row: Mapping[str, Any], number: int, result: Mapping[str, Any], lang: str) -> str:
    """A verified fee's row: its segment by name, or by its number when the name is a key the reply's language leaves out."""
    if name := _row_name(row, result, lang).strip():
        return say(lang, "  {name}: {minutes} min → {amount}", name=name, minutes=row["minutes"], amount=row["amount"])
    return say(lang, "  Segment {number}: {minutes} min → {amount}", number=number, minutes=row["minutes"], amount=row["amount"])


def fee_decision_text(decision: Mapping[str, Any], lang: str) -> str:
    """The message a person sees when a supervisor decided their fee review."""
    order = decision["order"]
    outcome = decision["outcome"]
    # an outcome without words is never said by its code
    what = say(lang, _FEE_OUTCOMES.get(outcome, _FEE_OUTCOMES["decided"]), amount=order["total_amount"])
    return say(lang, "Review decided: a supervisor {what} for order {order}. It now owes {owed}.", what=what, order=order["order_no"],
               owed=order["arrears_amount"])


_FEE_OUTCOMES = {"adjust": marked("adjusted the order to {amount}"), "keep": marked("kept the order's amount of {amount}"),
                 "waive": marked("waived what was still owed"), "decided": marked("decided")}


def review_decided_text(label: str, reason: str, lang: str) -> str:
    """A supervisor's decision on a review, said with the decided option's label (never its id) and their reason."""
    reason = reason.strip().rstrip(".。")
    said = say(lang, "A supervisor decided: {option}.", option=lower_first(label)) if label else say(lang, "A supervisor has decided.")
    if reason and reason[-1] in "?!？！":  # "Is it a website or an app?" keeps its own mark, without a full stop after it
        return said + say(lang, " Their reason: {reason}.", reason=reason).rstrip(".。")
    return said + (say(lang, " Their reason: {reason}.", reason=reason) if reason else "")


def _tool_reply(view: RunView, lang: str, asked: str = "") -> tuple[list[str], str, list[str]] | None:
    result = view.tool_result
    if not result:
        return None
    if result.get("error"):
        return [], say(lang, "I couldn't complete that: {error}", error=result["error"]["message"]), []
    tool = result.get("tool")
    if tool == "rule_explain":
        return _explain_rule(result, lang, asked)
    if tool == "arrears_check":
        return _arrears(result, lang)
    if tool == "fee_verify":
        return _verify(result, view, lang)
    return None


# --- diagnostic, form and guidance ------------------------------------------------


def _correcting_ids(outcome: TurnOutcome, state: ContextState) -> list[str]:
    """The facts this turn added that supersede an earlier fact of another kind, when the message says it corrects
    ("that 0 was wrong …": "12 V present at the pump (12.3 V)" replacing "No 12 V at the pump (0 V)"); a newer
    observation said plainly is noted as any other."""
    if not says_it_corrects(state.latest_user_text or ""):
        return []
    by_id = {f.id: f for f in state.facts}
    old = [by_id[i] for i in outcome.facts_superseded if i in by_id]
    return list(dict.fromkeys(f.superseded_by for f in old if f.key != "note" and f.superseded_by in by_id
                              and f.superseded_by in outcome.facts_added and by_id[f.superseded_by].key != f.key))


def _diagnostic_lines(outcome: TurnOutcome, state: ContextState, config: ConversationConfig, lang: str) -> list[str]:
    lines = []
    corrected = set(_correcting_ids(outcome, state))  # said once, as the correction, never also as "Noted"
    if corrected:
        values = [f.value for f in state.facts if f.id in corrected]
        lines.append(say(lang, "Corrected: {facts}.", facts=say_in(lang, "items", "; ").join(values)))
    if outcome.replan:
        lines.append(say(lang, "New evidence changes the picture: I've set the earlier conclusion aside and switched to the matching checks."))
    if outcome.isolation_completed and state.isolation_finding:
        hypothesis = state.hypothesis(state.isolation_finding)
        report = final_report_for(state, config, locale=lang)
        finding = hypothesis.description if hypothesis else state.isolation_finding
        lines.append(say(lang, "Cause isolated: {finding}.", finding=finding))
        if report and report.correction:
            lines.append(say(lang, "Recommended correction: {items}.", items=say_in(lang, "items", "; ").join(report.correction)))
        if state.estimate.status == "draft":
            lines.append(say(lang, "A draft labor estimate of {hours} h is ready; you don't need to confirm it to keep going.",
                             hours=state.estimate.total_hours))
    if (outcome.facts_added and not outcome.isolation_completed and not outcome.replan and not outcome.next_step_question
            and not outcome.notice and outcome.reply_action not in ("estimate_skipped", "estimate_confirmed", "final_report")):
        # nothing left to ask, but the message said something: say what was noted (never "I didn't understand")
        said = [f.value for f in state.facts if f.id in outcome.facts_added and f.key != "note" and f.id not in corrected]
        if said:
            lines.append(say(lang, "Noted: {facts}.", facts=say_in(lang, "items", "; ").join(said)))
    elif outcome.facts_volunteered and not outcome.isolation_completed and not outcome.replan:
        # said without being asked, then the next check: heard, before the question
        said = [f.value for f in state.facts if f.id in outcome.facts_volunteered and f.id not in corrected]
        if said:
            lines.append(say(lang, "Noted: {facts}.", facts=say_in(lang, "items", "; ").join(said)))
    elif (state.isolation_complete and not outcome.isolation_completed and not outcome.replan and not outcome.next_step_question
          and not outcome.notice and not outcome.question and outcome.side_question is None
          and outcome.reply_action not in ("estimate_skipped", "estimate_confirmed", "final_report")):
        # nothing new and nothing left to ask: say where the diagnosis stands and the ways on (never "I didn't understand")
        hypothesis = state.hypothesis(state.isolation_finding or "")
        lines.append(say(lang, "The cause stays as isolated: {finding}. Tell me anything new you find, or write the report.",
                         finding=hypothesis.description if hypothesis else state.isolation_finding))
    if outcome.reply_action == "estimate_skipped":
        lines.append(say(lang, "Labor estimate skipped: the report will leave labor out. Diagnostics go on."))
    elif outcome.reply_action == "estimate_confirmed":
        hours = state.estimate.confirmed_hours or state.estimate.total_hours
        lines.append(say(lang, ESTIMATE_CONFIRMED_TEXT, hours=f"{hours:g}"))
    return lines


_FILLER = re.compile(r"^(?:(?:so|well|ok(?:ay)?|um+|uh+|er+m*|basically|right|hi|hello|hey|yeah|yes|嗯+|呃+|那个|就是说?|其实|是这样的?|你好|您好)"
                     r"(?![A-Za-z])[\s,，.。!！…:：-]*)+", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?。！？；;])\s*")





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
    if len(first.split()) > 3 and first.split()[0].lower().strip(",'’") in word_list("en", "sentence_starts"):
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
        return say(lang, "Changed the {label} from “{before}” to “{after}”.", label=label, before=before, after=after)
    return say(lang, "Changed “{question}” from {before} to {after}.", question=question, before=before, after=after)


def _form_lines(outcome: TurnOutcome, config: ConversationConfig, lang: str) -> list[str]:
    lines = [changed] if (changed := _changed_line(outcome, config, lang)) else []
    lines += _recorded_lines(outcome, config, lang)
    if outcome.form_note:  # after what was noted: "You weren't sure, so tell me if it should be different."
        lines.append(outcome.form_note)
    last_question = not outcome.question and not outcome.next_step_question
    if outcome.form_complete and last_question and config.form is not None and config.form.kind == "form":
        lines.append(say(lang, "That's every question answered. Please review your answers and submit when ready."))
        lines.append(say(lang, "Your answers:") + "\n" + answers_listing(outcome.state, config.form, lang))
    return lines


def _recorded_lines(outcome: TurnOutcome, config: ConversationConfig, lang: str) -> list[str]:
    """What this turn recorded, said as a person would: a value confirmed in the person's language with its
    question's name, a yes or no as a sentence, an account acknowledged by its question's name or a thanks
    (never the person's message back)."""
    form = config.form
    specs_by_id = {q.id: q for q in form.questions} if form is not None else {}
    said_back = {c.question_id for c in outcome.unsure_commands  # the form note said those values, with how sure
                 if c.question_id in specs_by_id and specs_by_id[c.question_id].answer_type != "text"}
    fresh = {a.question_id: a.answer for a in outcome.state.finalized_answers
             if a.turn == outcome.turn_index
             and a.question_id not in (outcome.form_changed_question, *said_back, *(q for q, _ in outcome.form_also_changed))}
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
    return re.sub(r"…[.。]$", "…", _noted_sentence(noted, lang, thanks=thanks))  # a value cut short ends the sentence


def _noted_sentence(noted: list[tuple[str, str | None]], lang: str, *, thanks: bool) -> str:
    items = say_in(lang, "items", "; ").join(
        say(lang, "the {label}: {value}", label=label, value=value) if label and value
        else say(lang, "the {label}", label=label) if label else value or "" for label, value in noted)
    if noted[0][0]:  # a question's name first
        return say(lang, "Thanks, I've noted {items}.", items=items) if thanks else say(lang, "Noted {items}.", items=items)
    if thanks:
        return say_in(lang, "a value first", "Thanks, I've noted {items}.", items=items)
    return say(lang, "Noted: {items}.", items=items)


def _echoes(answer: str, message: str, lang: str, labelled: bool) -> bool:
    """Saying this answer back would repeat the person's message: an account of theirs, not a value. A long one
    under a question's name is said as its gist instead ("Noted the project: we run three bakeries…"), but only
    when the gist is well short of the message: its first half or more is the message said back."""
    if not is_account(answer, message):
        return False
    gist = brief(answer, lang)
    return not labelled or not gist.endswith("…") or len(gist) >= 0.5 * len(" ".join(message.split()))


def _noted(outcome: TurnOutcome, config: ConversationConfig, lang: str, question: Any) -> str:
    """A plain acknowledgement of an account: thanks, and what was picked out of it, not the message again."""
    label, picked = _label(question, config, lang), []
    for name in outcome.slots_changed:
        if name == question.slot:
            continue  # the answer itself: the account not to be said back
        spec, slot = config.slots.get(name), outcome.state.slots.get(name)
        if spec is not None and slot is not None and spec.label and slot.value.strip() != outcome.state.latest_user_text.strip():
            picked.append(say(lang, "{label}: {value}", label=localize(spec.label, lang), value=slot.value))
    if label:
        picked_said = aside(say_in(lang, "items", "; ").join(picked), lang) if picked else ""
        return say(lang, "Thanks, I've noted the {label}{picked}.", label=label, picked=picked_said)
    thanks = acknowledgement(outcome.turn_index, lang)
    if not picked:
        return thanks
    return say(lang, "{thanks} — I've noted the {picked}.", thanks=thanks.rstrip(".。"), picked=say_in(lang, "items", "; the ").join(picked))


_THANKS = re.compile(r"\b(?:thanks|thank\s+you|thx|cheers)\b|谢谢|多谢|感谢|谢啦|спасибо|gracias", re.IGNORECASE)


def _request_details_noted(outcome: TurnOutcome, config: ConversationConfig, lang: str) -> str:
    """The details of a plan's request this message gave or changed, said back while another is asked (a detail
    never goes by unsaid); only for the plan's own requests' declared slots, not a form's answers."""
    intent = config.intent(outcome.resolved_intent)
    if intent is None or outcome.question_kind != "slot" or config.form is not None:
        return ""
    own = (*intent.required_slots, *intent.optional_slots)
    slots = outcome.state.slots
    names = [n for n in outcome.slots_changed if n in own and n in slots and n not in outcome.missing_slots and n in config.slots]
    noted = details_shown(names, outcome.state.slots, config, lang)
    return _noted_values(noted, lang, thanks=False) if noted else ""


def _request_said_back(outcome: TurnOutcome, view: RunView, config: ConversationConfig, lang: str) -> str:
    """The request a consented option would act on, said back with its details ("Book a visit: pet's name Biscuit;
    day Sunday 6 December; time 10:00"), so the person sees what they consent to; "" when no such option is on offer."""
    intent = config.intent(outcome.resolved_intent)
    consented = any(o.get("eligibility") == "eligible" and o.get("requires_consent") for o in view.options)
    if intent is None or not intent.required_slots or not consented:
        return ""
    slots = outcome.state.slots
    if any(name not in slots for name in intent.required_slots):
        return ""
    names = [n for n in (*intent.required_slots, *intent.optional_slots) if n in slots]
    details = [say(lang, "{label}: {value}", label=label, value=value) for label, value in details_shown(names, outcome.state.slots, config, lang)]
    label = localize(intent.label, lang) or intent.name
    return say(lang, "To {request}: {details}.", request=label, details=say_in(lang, "items", "; ").join(details))


def _options_line(view: RunView, lang: str) -> str:
    eligible = [o for o in view.options if o.get("eligibility") == "eligible" and not o.get("non_advancing")]
    if not eligible or view.status != "active":
        return ""
    labels = say_in(lang, "list", ", ").join(quoted(o["label"], lang) for o in eligible)
    line = say(lang, "You can choose: {labels}.", labels=labels)
    if view.recommended_option_id and len(eligible) > 1:
        rec = next((o for o in eligible if o["option_id"] == view.recommended_option_id), None)
        if rec is not None:
            reasons = [r for r in view.recommendation_reasons if _in_language(r, lang)]  # a reason in another language is left out
            reason = f" — {reasons[0].rstrip('.。')}" if reasons else ""
            line += say(lang, " Recommended: {label}{reason}.", label=quoted(rec["label"], lang), reason=reason)
    return line


def _in_language(text: str, lang: str) -> bool:
    """Whether a plan or engine text can be said in this conversation: a Chinese reply takes Chinese text only."""
    return lang != "zh" or bool(re.search(r"[\u4e00-\u9fff]", text))


_GUIDANCE_STEP = {  # what the guidance leads to, by the offered action's flow, and how it names the person
    "calendar": (marked("So I'd start with a conversation{whom}: one-to-one, by call or in person."), marked(" with {name}")),
    "email": (marked("So I'd put it in writing{whom}: a short, factual email."), marked(" to {name}")),
}


def _guidance(view: RunView, config: ConversationConfig, state: ContextState, lang: str) -> str:
    """The guidance behind an offered action: the cited passages, then what they lead to."""
    offered = [o for o in view.options if o["option_id"] in view.new_actions and o.get("eligibility") == "eligible"]
    action = next((a for a in config.actions if offered and a.id == offered[0]["option_id"]), None)
    if action is None or not action.guidance or not view.citations:
        return ""
    person = config.person_slot
    name = state.slots[person].value if person in state.slots else ""
    step, whom = _GUIDANCE_STEP.get(action.flow, ("", ""))
    step = say(lang, step, whom=say(lang, whom, name=name) if name else "") if step else ""
    lines = [f"{c['snippet']} [{_source_name(c, lang)}]" for c in view.citations]
    return say(lang, "From the team's guidance:") + "\n- " + "\n- ".join(lines) + ("\n\n" + step if step else "")


def _action_offer(view: RunView, config: ConversationConfig, state: ContextState, lang: str) -> str:
    offered = [o for o in view.options if o["option_id"] in view.new_actions and o.get("eligibility") == "eligible"]
    if not offered:
        return ""
    option = offered[0]
    action = next((a for a in config.actions if a.id == option["option_id"]), None)
    if action is not None and details_missing(action, state.slots):  # its day and time come first: asked for
        return say(lang, "If it helps, I can {action} for you: tell me the day and time, and I'll prepare it for your consent.",
                   action=option["label"].lower())
    # What the option does is on its button's card: the sentence only offers it (no pasted effects summary).
    return say(lang, "If it helps, I can {action} for you: say “yes, go ahead”, or use the “{label}” button; nothing is done without your consent.",
               action=option["label"].lower(), label=option["label"])


def _capabilities(config: ConversationConfig, lang: str) -> str:
    """When a message matched nothing: say plainly what this concierge can do."""
    labels = [(i.label.get(lang) or i.label.get("en") or i.name) for i in config.intents]
    if not labels:
        return ""
    tasks = say_in(lang, "items", "; ").join(labels)
    needed = [config.slot_spec(slot) for i in config.intents for slot in i.required_slots]
    details = list(dict.fromkeys(localize(spec.label, lang) or spec.name.replace("_", " ") for spec in needed))
    if not details:
        return say(lang, "I can help you {tasks}. Which is it?", tasks=tasks)
    # what the plan's requests need, by their labels ("the lot code, plate number or order number")
    said = details[0] if len(details) == 1 else say(lang, "{items} or {last}", items=say_in(lang, "list", ", ").join(details[:-1]),
                                                   last=details[-1])
    return say(lang, "I can help you {tasks}. Which is it? It helps to give the {details}.", tasks=tasks, details=said)


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
        return ComposedReply(text=say(lang, HANDOFF_OPENED), asks_question=False, kind="handoff")
    parts: list[str] = []
    if outcome.restarted:
        parts.append(say(lang, "OK, let's start again from the beginning: I've cleared your earlier answers."))
    elif outcome.cancelled:
        parts.append(say(lang, "OK, I've dropped that request; what you told me is still remembered."))
        if not outcome.question and not outcome.next_step_question:
            parts.append(_capabilities(config, lang))  # and what else the concierge can do
    facts: list[str] = []
    evidence = [_cite(c, lang) for c in view.citations]
    conclusion = ""
    sources: list[str] = []
    if outcome.side_question is not None and not outcome.side_question.answer and evidence:
        # No prepared answer for this side question: answer briefly from the cited knowledge.
        parts.append(say(lang, "From the knowledge base:") + "\n- " + "\n- ".join(evidence))
    if outcome.side_question is not None and outcome.side_question.answer:
        parts.append(outcome.side_question.answer)
        if view.citations:
            first = view.citations[0]
            parts.append(say(lang, "(Source: {source})", source=_source_name(first, lang)))
    tool = _tool_reply(view, lang, asked=state.latest_user_text or "")
    if tool is not None:
        facts, conclusion, sources = tool
        if facts:
            parts.append(say(lang, "Facts:") + "\n- " + "\n- ".join(facts))
        if evidence:
            parts.append(say(lang, "Evidence:") + "\n- " + "\n- ".join(evidence))
        if conclusion:
            parts.append(say(lang, "Conclusion: {conclusion}", conclusion=conclusion))
        if sources:
            parts.append(say(lang, "Sources: {sources}", sources=say_in(lang, "list", ", ").join(sources)))
    elif evidence and outcome.intent in ("EXPLAIN", "HOWTO", "LOCATE") and outcome.side_question is None:
        parts.append(say(lang, "From the knowledge base:") + "\n- " + "\n- ".join(evidence))
    parts += _diagnostic_lines(outcome, state, config, lang)
    if outcome.notice:
        parts.append(outcome.notice)
    parts += _form_lines(outcome, config, lang)
    changed = outcome.form_changed_question or any(a.turn == outcome.turn_index for a in outcome.state.finalized_answers)
    if view.stale_documents and changed:  # an answer changed under a document built on it
        names = say_in(lang, "list", " and ").join(lower_first(d) for d in view.stale_documents)
        parts.append(say(lang, "The {documents} was built on the earlier answers, so it is out of date until you regenerate it.", documents=names))
    if config.actions:  # what the message said about the email / the call, in plain words
        moved = any(n in outcome.slots_changed for n in (CALL_DAY, CALL_TIME))
        if said := understood_line(state, config, wanted=outcome.action_requested, declined=outcome.actions_declined,
                                   when_changed=moved, language=lang, changed=outcome.slots_changed,
                                   corrected=outcome.slots_corrected):
            parts.append(said)
    # the plan's steps entered are not said: the side panel shows where the conversation stands, in plain labels
    if view.fee_decision:
        parts.append(fee_decision_text(view.fee_decision, lang))
    if view.review_opened and tool is None:
        parts.append(say(lang, "This needs a supervisor's decision; I'll post it here when it is made."))
    elif view.review_pending and tool is None and outcome.meaning in (REQUEST, FOLLOW_UP, ANSWER) and not outcome.question:
        # never a dead end while a supervisor decides: say what can be done meanwhile
        parts.append(say(lang, "A supervisor is still reviewing this conversation's request; I'll post their decision here. "
                               "Until then I can't look anything else up in this conversation: for another question, start a new "
                               "conversation from the start page, or say “talk to a person”."))
    if view.status == "completed":
        parts.append(say(lang, "This conversation's workflow is complete."))
    question = outcome.question
    if question is None and outcome.next_step_question and outcome.reply_action not in ("present_results",):
        question = outcome.next_step_question
    if outcome.decision == "abort" and config.form is not None and outcome.form_question_id:
        # a form stops asking one question, never the form: the person can answer it later or get a person
        parts.append(say(lang, "Let's leave this question for now; you can answer it whenever you like, change another answer, "
                               "or say “talk to a person”."))
        question = None
    elif outcome.decision == "abort":
        parts.append(say(lang, "I still don't have what I need to look this up, so I'll stop asking. "
                               "You can start again with the details, or contact the help desk staff."))
        question = None
    offer = _action_offer(view, config, state, lang)
    if offer and not question:
        if config.actions and (guidance := _guidance(view, config, state, lang)):
            parts.append(guidance)
        parts.append(offer)
    small_talk = (_small_talk_kind(state.latest_user_text or "") if (not question or chitchat_kind(state.latest_user_text or ""))
                  and tool is None and outcome.resolved_intent is None else None)
    written = outcome.reply_action == "final_report"  # the report is being written: no menu after it
    options_line = _options_line(view, lang) if not question and tool is None and not view.new_actions and not written else ""
    if options_line and (summary := _request_said_back(outcome, view, config, lang)):
        parts.append(summary)  # what the consented option will record, before it is offered
    if options_line:
        if not parts and outcome.resolved_intent is None and small_talk in (None, "greeting"):
            # Never a bare menu: say what this concierge can do before the options.
            parts.append(_capabilities(config, lang) or say(lang, "I'm not sure I understood that."))
        parts.append(options_line)
    said = (state.latest_user_text or "").strip()
    if small_talk == "thanks" and parts and not chitchat_kind(said) and not _THANKS.match(said):
        small_talk = None  # "no email or call, thanks": a thanks closing a message with something to answer is politeness
    if small_talk:
        if not parts and small_talk == "greeting":  # a greeting alone: then what this concierge can do
            parts.append(_capabilities(config, lang))
        parts.insert(0, say(lang, _SMALL_TALK[small_talk]))
    if question and not parts and (kind := chitchat_kind(state.latest_user_text or "")) in ("greeting", "thanks"):
        parts.append(say(lang, "Hello!") if kind == "greeting" else say(lang, "You're welcome."))
    if question:
        if outcome.side_question is not None:
            parts.append(say(lang, "Back to where we were: {question}", question=question))
        elif outcome.question_repeats >= 3:
            parts.append(_way_out(question, outcome, view, config, lang))  # never the same question a third time
        else:
            if not parts and (kept := _request_details_noted(outcome, config, lang)):
                parts.append(kept)  # "Noted the day: Wednesday 9 December." before "What is your pet's name?"
            parts.append(question)
    text = "\n\n".join(p for p in parts if p).strip()
    if not text:
        text = _capabilities(config, lang) or say(lang, "Noted. Tell me more, or choose one of the options.")
    asks = asks_question(text) or bool(question)
    return ComposedReply(
        text=text, asks_question=asks, kind="clarifying_question" if question and outcome.decision == "ask" else "reply",
        facts=tuple(facts), evidence=tuple(evidence), conclusion=conclusion, sources=tuple(sources),
        citations=tuple(view.citations),
    )


_SMALL_TALK = {
    "greeting": marked("Hello!"),
    "thanks": marked("You're welcome! Is there anything else I can help with?"),
    "goodbye": marked("Goodbye! You can come back to this conversation at any time."),
}


HANDOFF_OPENED = marked(
    "I've asked a member of staff to take over: they will answer you here. Until they hand the conversation back, I'll stay quiet.")


def _way_out(question: str, outcome: TurnOutcome, view: RunView, config: ConversationConfig, lang: str) -> str:
    """The third ask of the same question: say it another way, with an example and the ways out."""
    example = next((config.slot_spec(name).example for name in outcome.missing_slots if config.slot_spec(name)), None)
    parts = [question]
    if example and example not in question:
        parts.append(say(lang, "For example: {example}.", example=example))
    offered = [o["label"] for o in view.options if o.get("eligibility") == "eligible" and not o.get("non_advancing")]
    if offered:
        parts.append(say(lang, "Or choose: {options}.", options=say_in(lang, "list", "; ").join(quoted(label, lang) for label in offered)))
    parts.append(say(lang, "If this isn't working, say “talk to a person” and a member of staff will take over."))
    return then(lang, *parts)


def _small_talk_kind(text: str) -> str | None:
    """Greetings, thanks and goodbyes are answered in kind; thanks also at the end of a longer message."""
    return chitchat_kind(text) or ("thanks" if _THANKS.search(text) else None)


def opening_text(config: ConversationConfig, workflow_name: str, description: str, lang: str, first_question: str | None) -> str:
    """The concierge's first message in a new conversation."""
    hello = say(lang, "Hello! I'm the {name}. {description}", name=introduces(workflow_name, lang), description=description)
    return f"{hello}\n\n{first_question}" if first_question else hello + say(lang, " How can I help?")


__all__ = ["ComposedReply", "RunView", "compose_reply", "fee_decision_text", "lang_of", "opening_text"]


