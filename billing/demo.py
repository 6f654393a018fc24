"""The billing demo scenarios: 5 rules, 6 versions, 22 orders, 20 scenarios.

Every expected amount here is worked out by hand from the rule text; the tests check the
fee engine and the REST API against them.
"""

from __future__ import annotations

import json
from typing import Any

from .models import BillingRule, BillingRuleVersion, ParkingOrder
from .parsing import parse_time
from .services import billing_rule_version_add, city_save, lot_save, parking_order_create

CITY = "310100"  # Shanghai
T = "+08:00"


def _day_night(day_price: int, day_cap: int, night_price: int, night_cap: int) -> list[dict[str, Any]]:
    return [
        {"name": "day", "type": "periodic", "time_window": {"start": "08:00", "end": "20:00"},
         "unit_minutes": 60, "unit_price": day_price, "free_minutes": 0, "max_charge": day_cap},
        # This operator caps a whole night once (cap_period "window"), not each calendar day.
        {"name": "night", "type": "periodic", "time_window": {"start": "20:00", "end": "08:00"},
         "unit_minutes": 60, "unit_price": night_price, "free_minutes": 0, "max_charge": night_cap,
         "cap_period": "window"},
    ]


RULES: list[dict[str, Any]] = [
    {"rule_code": "SH-PD-DAY", "name": "浦东一号停车场 日间计费、夜间免费 (Pudong lot 1: day rate, free nights)",
     "scope": {"city_code": CITY, "lot_codes": ["SH-PD-001"]},
     "versions": [{"effective_from": f"2026-01-01T00:00:00{T}", "effective_to": None, "rule_payload": [
         {"name": "day", "type": "periodic", "time_window": {"start": "08:00", "end": "20:00"},
          "unit_minutes": 30, "unit_price": 2, "free_minutes": 0, "max_charge": 20},
         {"name": "night_free", "type": "free", "time_window": {"start": "20:00", "end": "08:00"}},
     ]}]},
    {"rule_code": "SH-JA-TIERED", "name": "静安一号停车场 阶梯计费 (Jing'an lot 1: tiered)",
     "scope": {"city_code": CITY, "lot_codes": ["SH-JA-001"]},
     "versions": [{"effective_from": f"2026-01-01T00:00:00{T}", "effective_to": None, "rule_payload": [
         {"name": "all_day_tiered", "type": "tiered", "time_window": {"start": "00:00", "end": "00:00"}, "unit_minutes": 30,
          "tiers": [{"start_minute": 0, "end_minute": 120, "unit_price": 2}, {"start_minute": 120, "end_minute": None, "unit_price": 3}]},
     ]}]},
    {"rule_code": "SH-XH-FREE30", "name": "徐汇一号停车场 首30分钟免费 (Xuhui lot 1: first 30 minutes free)",
     "scope": {"city_code": CITY, "lot_codes": ["SH-XH-001"]},
     "versions": [{"effective_from": f"2026-01-01T00:00:00{T}", "effective_to": None, "rule_payload": [
         {"name": "all_day", "type": "periodic", "time_window": {"start": "00:00", "end": "00:00"},
          "unit_minutes": 60, "unit_price": 5, "free_minutes": 30, "max_charge": 50},
     ]}]},
    {"rule_code": "SH-PD2-DAYNIGHT", "name": "浦东二号停车场 日夜分段封顶 (Pudong lot 2: day and night caps)",
     "scope": {"city_code": CITY, "lot_codes": ["SH-PD-002"]},
     "versions": [
         {"effective_from": f"2026-01-01T00:00:00{T}", "effective_to": f"2026-04-01T08:00:00{T}", "rule_payload": _day_night(3, 30, 1, 10)},
         {"effective_from": f"2026-04-01T08:00:00{T}", "effective_to": None, "rule_payload": _day_night(4, 40, 1, 10)},
     ]},
    {"rule_code": "SH-CITY-DEFAULT", "name": "上海市默认计费 (Shanghai city default)",
     "scope": {"city_code": CITY, "lot_codes": []},
     "versions": [{"effective_from": f"2026-01-01T00:00:00{T}", "effective_to": None, "rule_payload": [
         {"name": "all_day", "type": "periodic", "time_window": {"start": "00:00", "end": "00:00"},
          "unit_minutes": 60, "unit_price": 6, "free_minutes": 0, "max_charge": 60},
     ]}]},
]


# How people name the demo's city and lots (records an operator edits in admin or over REST).
CITIES: list[dict[str, Any]] = [
    {"code": CITY, "names": {"en": "Shanghai", "zh": "上海"}, "aliases": ["上海市", "沪", "Shanghai city"]},
]
LOTS: list[dict[str, Any]] = [
    {"city_code": CITY, "code": "SH-PD-001", "names": {"en": "Pudong lot 1", "zh": "浦东一号停车场"},
     "aliases": ["浦东一号", "Pudong 1", "Pudong No. 1"]},
    {"city_code": CITY, "code": "SH-PD-002", "names": {"en": "Pudong lot 2", "zh": "浦东二号停车场"},
     "aliases": ["浦东二号", "Pudong 2", "Pudong No. 2"]},
    {"city_code": CITY, "code": "SH-JA-001", "names": {"en": "Jing'an lot 1", "zh": "静安一号停车场"},
     "aliases": ["静安一号", "Jingan lot 1", "Jing'an 1"]},
    {"city_code": CITY, "code": "SH-XH-001", "names": {"en": "Xuhui lot 1", "zh": "徐汇一号停车场"},
     "aliases": ["徐汇一号", "Xuhui 1"]},
]


def _order(order_no, plate, lot, entry, exit_, total, paid):  # noqa: ANN001, ANN202
    return {"order_no": order_no, "plate_no": plate, "city_code": CITY, "lot_code": lot, "entry_time": entry + T,
            "exit_time": exit_ + T, "total_amount": total, "paid_amount": paid}


# (scenario, intent tags, zh question, en question, order(s), expected facts, note)
SCENARIOS: list[dict[str, Any]] = [
    {"id": "SCN-001", "tags": ["rule_explain"], "title": "周期计费-整除 / periodic, whole units",
     "zh": "浦东一号停车场（SH-PD-001）3月2日早上8点停到9点要多少钱？", "en": "How much is parking at SH-PD-001 from 8:00 to 9:00 on March 2?",
     "orders": [_order("SCN-001", "沪A10001", "SH-PD-001", "2026-03-02T08:00:00", "2026-03-02T09:00:00", "4.00", "4.00")],
     "expect": {"rule_code": "SH-PD-DAY", "version_no": 1, "amount": "4.00"}, "note": "60 minutes = 2 units of 30 minutes at 2.00"},
    {"id": "SCN-002", "tags": ["rule_explain"], "title": "周期计费-非整除进位 / periodic, round up",
     "zh": "SH-PD-001 从8:00停到9:05收多少？", "en": "What does SH-PD-001 charge for 8:00 to 9:05?",
     "orders": [_order("SCN-002", "沪A10002", "SH-PD-001", "2026-03-02T08:00:00", "2026-03-02T09:05:00", "6.00", "6.00")],
     "expect": {"rule_code": "SH-PD-DAY", "version_no": 1, "amount": "6.00"}, "note": "65 minutes round up to 3 units"},
    {"id": "SCN-003", "tags": ["rule_explain"], "title": "日间封顶 / daytime cap",
     "zh": "在浦东一号停车场从早上8点停到晚上8点半，会封顶吗？", "en": "Is there a cap if I park at SH-PD-001 from 8:00 to 20:30?",
     "orders": [_order("SCN-003", "沪A10003", "SH-PD-001", "2026-03-02T08:00:00", "2026-03-02T20:30:00", "20.00", "20.00")],
     "expect": {"rule_code": "SH-PD-DAY", "version_no": 1, "amount": "20.00"}, "note": "48.00 of day units capped at 20.00; night free"},
    {"id": "SCN-004", "tags": ["rule_explain"], "title": "跨天日间封顶重置 / cap resets each day",
     "zh": "SH-PD-001 连续停三天（3月2日8点到3月4日20点）怎么收费？", "en": "How is a three-day stay at SH-PD-001 (Mar 2 8:00 to Mar 4 20:00) charged?",
     "orders": [_order("SCN-004", "沪A10004", "SH-PD-001", "2026-03-02T08:00:00", "2026-03-04T20:00:00", "60.00", "60.00")],
     "expect": {"rule_code": "SH-PD-DAY", "version_no": 1, "amount": "60.00"}, "note": "three days, each capped at 20.00"},
    {"id": "SCN-005", "tags": ["rule_explain"], "title": "夜间免费 / free at night",
     "zh": "晚上9点停到第二天早上7点半在SH-PD-001要钱吗？", "en": "Do I pay at SH-PD-001 from 21:00 to 7:30 the next morning?",
     "orders": [_order("SCN-005", "沪A10005", "SH-PD-001", "2026-03-02T21:00:00", "2026-03-03T07:30:00", "0.00", "0.00")],
     "expect": {"rule_code": "SH-PD-DAY", "version_no": 1, "amount": "0.00"}, "note": "the whole stay is in the free night window"},
    {"id": "SCN-006", "tags": ["rule_explain"], "title": "日夜组合 / day and night combined",
     "zh": "SH-PD-001 从傍晚6点停到第二天上午9点，分段怎么算？", "en": "How are the segments of an 18:00 to 9:00 next day stay at SH-PD-001 charged?",
     "orders": [_order("SCN-006", "沪A10006", "SH-PD-001", "2026-03-02T18:00:00", "2026-03-03T09:00:00", "12.00", "12.00")],
     "expect": {"rule_code": "SH-PD-DAY", "version_no": 1, "amount": "12.00"}, "note": "day 8.00 + night 0.00 + next day 4.00"},
    {"id": "SCN-007", "tags": ["rule_explain"], "title": "阶梯计费 / tiered",
     "zh": "静安一号停车场（SH-JA-001）停3小时多少钱？", "en": "How much are 3 hours at SH-JA-001?",
     "orders": [_order("SCN-007", "沪A10007", "SH-JA-001", "2026-03-02T09:00:00", "2026-03-02T12:00:00", "14.00", "14.00")],
     "expect": {"rule_code": "SH-JA-TIERED", "version_no": 1, "amount": "14.00"}, "note": "4 units at 2.00 then 2 units at 3.00"},
    {"id": "SCN-008", "tags": ["rule_explain"], "title": "首30分钟免费边界-29分钟 / free 30 minutes, 29",
     "zh": "徐汇一号停车场停29分钟收费吗？", "en": "Is a 29-minute stay at SH-XH-001 free?",
     "orders": [_order("SCN-008", "沪A10008", "SH-XH-001", "2026-03-02T10:00:00", "2026-03-02T10:29:00", "0.00", "0.00")],
     "expect": {"rule_code": "SH-XH-FREE30", "version_no": 1, "amount": "0.00"}, "note": "inside the free 30 minutes"},
    {"id": "SCN-009", "tags": ["arrears_check"], "title": "欠费判断 / arrears",
     "zh": "车牌沪B88888在上海有没有欠费？", "en": "Does plate 沪B88888 have any unpaid parking in Shanghai?",
     "orders": [
         _order("SCN-009-A", "沪B88888", "SH-PD-001", "2026-03-03T08:00:00", "2026-03-03T10:00:00", "8.00", "8.00"),
         _order("SCN-009-B", "沪B88888", "SH-PD-001", "2026-03-04T09:00:00", "2026-03-04T12:00:00", "12.00", "5.00"),
         _order("SCN-009-C", "沪B88888", "SH-PD-001", "2026-03-05T14:00:00", "2026-03-05T15:30:00", "6.00", "0.00"),
     ],
     "expect": {"plate_no": "沪B88888", "arrears_orders": ["SCN-009-B", "SCN-009-C"], "total_arrears": "13.00", "arrears_status": "HAS_ARREARS"},
     "note": "one paid, one partly paid, one unpaid"},
    {"id": "SCN-010", "tags": ["rule_explain"], "title": "首30分钟免费边界-30分钟 / free 30 minutes, 30",
     "zh": "SH-XH-001 正好停30分钟要付钱吗？", "en": "Do I pay for exactly 30 minutes at SH-XH-001?",
     "orders": [_order("SCN-010", "沪A10010", "SH-XH-001", "2026-03-02T10:00:00", "2026-03-02T10:30:00", "0.00", "0.00")],
     "expect": {"rule_code": "SH-XH-FREE30", "version_no": 1, "amount": "0.00"}, "note": "exactly the free allowance"},
    {"id": "SCN-011", "tags": ["rule_explain"], "title": "首30分钟免费边界-31分钟 / free 30 minutes, 31",
     "zh": "SH-XH-001 停31分钟收多少？", "en": "What do 31 minutes at SH-XH-001 cost?",
     "orders": [_order("SCN-011", "沪A10011", "SH-XH-001", "2026-03-02T10:00:00", "2026-03-02T10:31:00", "5.00", "5.00")],
     "expect": {"rule_code": "SH-XH-FREE30", "version_no": 1, "amount": "5.00"}, "note": "one chargeable minute rounds up to one hour"},
    {"id": "SCN-012", "tags": ["rule_explain"], "title": "日夜双时段各自封顶 / day and night caps",
     "zh": "浦东二号停车场（SH-PD-002）3月2日早上8点起停满24小时多少钱？", "en": "What does a full 24 hours at SH-PD-002 cost from March 2 at 8:00?",
     "orders": [_order("SCN-012", "沪A10012", "SH-PD-002", "2026-03-02T08:00:00", "2026-03-03T08:00:00", "40.00", "40.00")],
     "expect": {"rule_code": "SH-PD2-DAYNIGHT", "version_no": 1, "amount": "40.00"}, "note": "day 36.00 capped at 30.00, night 12.00 capped at 10.00"},
    {"id": "SCN-013", "tags": ["rule_explain"], "title": "阶梯计费-2小时内 / tiered within 2 hours",
     "zh": "SH-JA-001 停一个半小时多少钱？", "en": "How much is an hour and a half at SH-JA-001?",
     "orders": [_order("SCN-013", "沪A10013", "SH-JA-001", "2026-03-02T10:00:00", "2026-03-02T11:30:00", "6.00", "6.00")],
     "expect": {"rule_code": "SH-JA-TIERED", "version_no": 1, "amount": "6.00"}, "note": "3 units in the first tier"},
    {"id": "SCN-014", "tags": ["rule_explain"], "title": "阶梯计费-超过2小时 / tiered past 2 hours",
     "zh": "SH-JA-001 停两个半小时收多少？", "en": "What do two and a half hours at SH-JA-001 cost?",
     "orders": [_order("SCN-014", "沪A10014", "SH-JA-001", "2026-03-02T10:00:00", "2026-03-02T12:30:00", "11.00", "11.00")],
     "expect": {"rule_code": "SH-JA-TIERED", "version_no": 1, "amount": "11.00"}, "note": "4 units at 2.00 and 1 at 3.00"},
    {"id": "SCN-015", "tags": ["rule_explain"], "title": "规则版本切换-生效前 / before the new version",
     "zh": "4月1日早上7:59进SH-PD-002，停到9:59，按哪个版本收费？", "en": "Entering SH-PD-002 at 7:59 on April 1 until 9:59: which version applies?",
     "orders": [_order("SCN-015", "沪A10015", "SH-PD-002", "2026-04-01T07:59:00", "2026-04-01T09:59:00", "7.00", "7.00")],
     "expect": {"rule_code": "SH-PD2-DAYNIGHT", "version_no": 1, "amount": "7.00"}, "note": "entry one minute before v2: v1 applies (1 night unit + 2 day units at 3.00)"},
    {"id": "SCN-016", "tags": ["rule_explain"], "title": "规则版本切换-生效时刻 / at the new version",
     "zh": "4月1日8点整进SH-PD-002停两小时多少钱？", "en": "What do two hours at SH-PD-002 from 8:00 on April 1 cost?",
     "orders": [_order("SCN-016", "沪A10016", "SH-PD-002", "2026-04-01T08:00:00", "2026-04-01T10:00:00", "8.00", "8.00")],
     "expect": {"rule_code": "SH-PD2-DAYNIGHT", "version_no": 2, "amount": "8.00"}, "note": "entry exactly at v2's effective_from: 2 units at 4.00"},
    {"id": "SCN-017", "tags": ["rule_explain"], "title": "同城不同车场-专属规则 / lot with its own rule",
     "zh": "上海SH-PD-001停车场上午10点到11点收费多少？", "en": "In Shanghai, what does SH-PD-001 charge from 10:00 to 11:00?",
     "orders": [_order("SCN-017", "沪A10017", "SH-PD-001", "2026-03-05T10:00:00", "2026-03-05T11:00:00", "4.00", "4.00")],
     "expect": {"rule_code": "SH-PD-DAY", "version_no": 1, "amount": "4.00"}, "note": "the lot's own rule wins over the city default"},
    {"id": "SCN-018", "tags": ["rule_explain"], "title": "同城不同车场-城市默认 / lot on the city default",
     "zh": "上海SH-HP-009停车场上午10点到11点收费多少？", "en": "In Shanghai, what does lot SH-HP-009 charge from 10:00 to 11:00?",
     "orders": [_order("SCN-018", "沪A10018", "SH-HP-009", "2026-03-05T10:00:00", "2026-03-05T11:00:00", "6.00", "6.00")],
     "expect": {"rule_code": "SH-CITY-DEFAULT", "version_no": 1, "amount": "6.00"}, "note": "no lot rule: the city default applies"},
    {"id": "SCN-019", "tags": ["fee_verify"], "title": "计费核验一致 / verification matches",
     "zh": "帮我核对一下订单SCN-019的金额对不对", "en": "Please check whether order SCN-019 was charged correctly",
     "orders": [_order("SCN-019", "沪A10019", "SH-PD-001", "2026-03-06T08:00:00", "2026-03-06T11:00:00", "12.00", "12.00")],
     "expect": {"order_no": "SCN-019", "rule_code": "SH-PD-DAY", "version_no": 1, "amount": "12.00", "order_amount": "12.00",
                "amount_check_result": "match", "amount_check_action": "auto_pass"}, "note": "order amount equals the simulation"},
    {"id": "SCN-020", "tags": ["fee_verify"], "title": "计费核验异常 / verification mismatch",
     "zh": "订单SCN-020收了18块，是不是收多了？", "en": "Order SCN-020 charged 18.00 — was I overcharged?",
     "orders": [_order("SCN-020", "沪A10020", "SH-PD-001", "2026-03-06T13:00:00", "2026-03-06T16:10:00", "18.00", "0.00")],
     "expect": {"order_no": "SCN-020", "rule_code": "SH-PD-DAY", "version_no": 1, "amount": "14.00", "order_amount": "18.00",
                "amount_check_result": "mismatch", "amount_check_action": "needs_review"}, "note": "190 minutes = 7 units = 14.00, order says 18.00: a supervisor reviews"},
]


def scenario_records() -> list[dict[str, Any]]:
    """The scenarios in the shape of the billing data dictionary, for JSONL export and evaluation."""
    records = []
    for s in SCENARIOS:
        first = s["orders"][0]
        tools = {"rule_explain": "POST /api/v1/billing-rules/simulate", "arrears_check": "GET /api/v1/arrears-orders",
                 "fee_verify": "POST /api/v1/parking-orders/{order_no}/verify"}
        records.append({
            "scenario_id": s["id"], "title": s["title"], "intent_tags": s["tags"],
            "query": {"zh": s["zh"], "en": s["en"]},
            "context": {"city_code": CITY, "lot_code": first["lot_code"], "plate_no": first["plate_no"],
                        "order_no": first["order_no"], "entry_time": first["entry_time"], "exit_time": first["exit_time"]},
            "orders": [o["order_no"] for o in s["orders"]],
            "expected_tools": [tools[t] for t in s["tags"]],
            "ground_truth": s["expect"], "notes": s["note"],
        })
    return records


def seed(stdout) -> None:  # noqa: ANN001
    """Create the rules, versions and orders once; running again changes nothing."""
    for rule in RULES:
        known = set(BillingRuleVersion.objects.filter(rule__rule_code=rule["rule_code"]).values_list("effective_from", flat=True))
        for version in rule["versions"]:
            if parse_time(version["effective_from"], "effective_from") in known:
                continue
            billing_rule_version_add(data={"rule_code": rule["rule_code"], "name": rule["name"], "scope": rule["scope"],
                                           "version": {**version, "priority": 0}})
    for city in CITIES:
        city_save(data=city)
    for lot in LOTS:
        lot_save(data=lot)
    existing = set(ParkingOrder.objects.values_list("order_no", flat=True))
    for scenario in SCENARIOS:
        for order in scenario["orders"]:
            if order["order_no"] not in existing:
                parking_order_create(data=order)
    stdout.write(f"  billing: {BillingRule.objects.count()} rules, {BillingRuleVersion.objects.count()} versions, "
                 f"{ParkingOrder.objects.count()} orders, {len(SCENARIOS)} scenarios")
    from .knowledge import seed as seed_knowledge  # that module imports this one for the scenarios

    seed_knowledge(stdout)


def export_jsonl(path: str) -> int:
    with open(path, "w", encoding="utf-8") as handle:
        for record in scenario_records():
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return len(SCENARIOS)
