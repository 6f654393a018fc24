"""Slot extractors, time parsing, slot memory, validation and the clarify decision."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from conversations.engine.config import SlotSpec
from conversations.engine.slots import (
    ABORT,
    ASK,
    CONTINUE,
    ExtractContext,
    Extraction,
    decide_clarify,
    extract_slot,
    merge_slots,
    resolve_reference,
    slot_question,
    usable_slots,
    validate_slots,
)
from conversations.engine.state import INVALID, UNVERIFIED, VALID
from conversations.engine.timeparse import parse_date, parse_datetime

NOW = datetime(2026, 2, 12, 2, 0, tzinfo=UTC)  # 10:00 in Shanghai
TZ = "Asia/Shanghai"
CTX = ExtractContext(now=NOW, timezone=TZ)


def spec(name: str, **kw) -> SlotSpec:
    return SlotSpec.from_dict({"extractor": name, **kw}, name)


@pytest.mark.parametrize(
    ("name", "text", "value"),
    [
        ("plate_no", "arrears for 沪A12345 please", "沪A12345"),
        ("plate_no", "新能源车沪AD12345欠费吗", "沪AD12345"),
        ("plate_no", "粤b·8k2q9 has a ticket", "粤B8K2Q9"),
        ("plate_no", "plate number: ab-1234", "AB1234"),
        ("order_no", "verify SCN-020", "SCN-020"),
        ("order_no", "订单号ORD-20260210-0001金额不对", "ORD-20260210-0001"),
        ("order_no", "my order no. 88123 looks off", "88123"),
        ("lot_code", "rules at lot SH-A01 please", "SH-A01"),
        ("lot_code", "车场A01怎么收费", "A01"),
        ("lot_code", "what about SZ-B12?", "SZ-B12"),
        ("lot_code", "SH-PD-001 停车场 2026-03-02 10:00 怎么收费？", "SH-PD-001"),
        ("lot_code", "停车场 B2-07 今天收费吗", "B2-07"),
        ("lot_code", "the lot on 2026-03-02, SH-A01", "SH-A01"),
        ("city_code", "city code: sh", "SH"),
        ("city_code", "arrears in BJ", "BJ"),
        ("email", "write to Anna.Lee+hr@Example.com", "anna.lee+hr@example.com"),
        ("number", "it reads 12.5 now", "12.5"),
        ("number", "金额是12元", "12"),
        ("date", "on 2026/02/10", "2026-02-10"),
        ("date", "昨天", "2026-02-11"),
        ("at_time", "2026-02-10 14:00", "2026-02-10T14:00:00+08:00"),
        ("at_time", "parked yesterday 3pm", "2026-02-11T15:00:00+08:00"),
        ("at_time", "昨天下午3点入场", "2026-02-11T15:00:00+08:00"),
        ("at_time", "明天上午9点", "2026-02-13T09:00:00+08:00"),
        ("at_time", "今天", "2026-02-12T00:00:00+08:00"),
        ("at_time", "2026-02-10T14:00:00+08:00", "2026-02-10T14:00:00+08:00"),
        ("at_time", "завтра в 18:30", "2026-02-13T18:30:00+08:00"),
        ("at_time", "ayer a las 3 de la tarde", "2026-02-11T15:00:00+08:00"),
    ],
)
def test_extractors(name: str, text: str, value: str) -> None:
    found = extract_slot(text, spec(name), CTX)
    assert found is not None and found.value == value, (text, found)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("number", "SCN-020"),
        ("number", "沪A12345"),
        ("plate_no", "a lot of money"),
        ("lot_code", "a lot of cars"),
        ("lot_code", "停车场 2026-03-02 10:00 怎么收费"),
        ("lot_code", "车场 12/3 收费吗"),
        ("order_no", "order soon"),
    ],
)
def test_extractors_do_not_overreach(name: str, text: str) -> None:
    assert extract_slot(text, spec(name), CTX) is None


def test_spec_patterns_and_aliases_override_the_extractor() -> None:
    city = spec("city_code", aliases={"上海": "SH", "Shanghai": "SH"})
    assert extract_slot("上海的停车场", city, CTX).value == "SH"
    custom = SlotSpec.from_dict(
        {"extractor": "text", "patterns": {"en": [r"employee\s+named\s+(\w+)"]}}, "employee"
    )
    assert extract_slot("an employee named Tom", custom, CTX).value == "Tom"


def test_time_is_relative_to_now_and_timezone() -> None:
    parsed = parse_datetime("yesterday 11pm", now=NOW, timezone="America/New_York")
    assert parsed.iso() == "2026-02-10T23:00:00-05:00"  # 2026-02-11 21:00 in New York is "today"
    assert parse_date("tomorrow", now=NOW, timezone=TZ).isoformat() == "2026-02-13"
    with pytest.raises(ValueError):
        parse_datetime("today", now=datetime(2026, 2, 12), timezone=TZ)  # noqa: DTZ001


def test_memory_keeps_source_turns_and_only_replaces_changed_slots() -> None:
    memory, changed = merge_slots(
        {}, {"city_code": Extraction("SH", "SH"), "lot_code": Extraction("SH-A01", "SH-A01")}, 1
    )
    assert changed == ("city_code", "lot_code")
    memory, changed = merge_slots(
        memory, {"at_time": Extraction("2026-02-13T09:00:00+08:00", "tomorrow 9am")}, 2
    )
    assert changed == ("at_time",)
    assert memory["city_code"].source_turn == 1 and memory["at_time"].source_turn == 2
    again, changed = merge_slots(memory, {"city_code": Extraction("SH", "SH")}, 3)
    assert changed == () and again["city_code"].source_turn == 1


def test_validation_by_lookup_normalises_and_rejects() -> None:
    memory, _ = merge_slots(
        {},
        {
            "order_no": Extraction("scn-20", "scn-20"),
            "lot_code": Extraction("X-1", "X-1"),
            "plate_no": Extraction("沪A12345", ""),
        },
        1,
    )
    lookups = {
        "order_no": lambda v: "SCN-020" if v.upper() == "SCN-20" else False,
        "lot_code": lambda v, known: False,
    }
    memory = validate_slots(memory, ["order_no", "lot_code", "plate_no"], lookups, 1)
    assert memory["order_no"].status == VALID and memory["order_no"].value == "SCN-020"
    assert memory["lot_code"].status == INVALID
    assert memory["plate_no"].validated_by == "format"
    assert usable_slots(memory) == {"order_no": "SCN-020", "plate_no": "沪A12345"}


def test_lookup_failure_leaves_slot_unverified() -> None:
    def broken(value: str) -> bool:
        raise RuntimeError("service down")

    memory, _ = merge_slots({}, {"order_no": Extraction("SCN-020", "")}, 1)
    memory = validate_slots(memory, ["order_no"], {"order_no": broken}, 1)
    assert memory["order_no"].status == UNVERIFIED and usable_slots(memory) == {}


def _decide(memory, pending=None, progressed=False, locale="en", turn=1):
    return decide_clarify(
        intent="fee_verify",
        required=("order_no",),
        memory=memory,
        specs={},
        pending=pending,
        progressed=progressed,
        locale=locale,
        turn=turn,
        max_rounds=3,
    )


def test_clarify_continue_ask_abort() -> None:
    first = _decide({})
    assert first.decision == ASK and first.slot == "order_no" and first.rounds == 1
    assert "order number" in first.question
    zh = _decide({}, locale="zh")
    assert "订单号" in zh.question
    second = _decide({}, pending=first.pending, turn=2)
    third = _decide({}, pending=second.pending, turn=3)
    assert (second.rounds, third.rounds) == (2, 3) and second.question != first.question
    assert _decide({}, pending=third.pending, turn=4).decision == ABORT
    memory, _ = merge_slots({}, {"order_no": Extraction("SCN-020", "")}, 4)
    memory = validate_slots(memory, ["order_no"], None, 4)
    assert _decide(memory, pending=third.pending, progressed=True).decision == CONTINUE


def test_invalid_slot_gets_a_targeted_question_and_progress_resets_rounds() -> None:
    memory, _ = merge_slots({}, {"order_no": Extraction("SCN-999", "")}, 1)
    memory = validate_slots(memory, ["order_no"], {"order_no": lambda v: False}, 1)
    verdict = _decide(memory, progressed=True)
    assert (
        verdict.decision == ASK
        and verdict.invalid == ("order_no",)
        and "SCN-999" in verdict.question
    )


def test_slot_question_uses_config_text() -> None:
    custom = SlotSpec.from_dict(
        {"question": {"en": "Order number, please.", "zh": "请给订单号。"}}, "order_no"
    )
    assert slot_question(custom, "zh") == "请给订单号。"


@pytest.mark.parametrize(
    ("text", "candidates", "value"),
    [
        ("verify this order", ["SCN-009"], "SCN-009"),
        ("核验这笔", ["SCN-009"], "SCN-009"),
        ("the second one", ["A", "B"], "B"),
        ("第一笔", ["A", "B"], "A"),
        ("上一单", ["A", "B"], "B"),
        ("this order", ["A", "B"], None),
        ("hello", ["A"], None),
    ],
)
def test_reference_resolution(text: str, candidates: list[str], value: str | None) -> None:
    assert resolve_reference(text, candidates) == value
