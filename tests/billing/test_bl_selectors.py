"""Billing reads: the rule in force (kept per process) and a plate's arrears in one query; billing plugged into conversations."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from billing import selectors, services
from config.errors import NotFound

pytestmark = pytest.mark.django_db

SHANGHAI = ZoneInfo("Asia/Shanghai")
PAYLOAD = [{"name": "day", "type": "periodic", "time_window": {"start": "00:00", "end": "00:00"},
            "unit_minutes": 60, "unit_price": "2.00"}]


def at(day: int, hour: int) -> datetime:
    return datetime(2026, 3, day, hour, tzinfo=SHANGHAI)


def add(code: str, lots: list[str], effective_from: str, priority: int = 0, effective_to: str | None = None) -> None:
    services.billing_rule_version_add(data={
        "rule_code": code, "name": code, "scope": {"city_code": "110100", "lot_codes": lots},
        "version": {"effective_from": effective_from, "effective_to": effective_to, "priority": priority, "rule_payload": PAYLOAD},
    })


@pytest.fixture
def rules() -> None:
    add("CITY", [], "2026-01-01T00:00:00+08:00")
    add("CITY-HIGH", [], "2026-01-01T00:00:00+08:00", priority=5, effective_to="2026-03-02T00:00:00+08:00")
    add("LOT-A", ["A"], "2026-01-01T00:00:00+08:00", effective_to="2026-03-01T00:00:00+08:00")
    add("LOT-A", ["A"], "2026-03-01T00:00:00+08:00")
    add("LOT-B", ["B"], "2026-01-01T00:00:00+08:00", priority=9)


def test_the_lot_rule_beats_the_city_rule_then_priority_decides(rules) -> None:  # noqa: ANN001
    version = selectors.rule_version_for(at=at(2, 10), city_code="110100", lot_code="A")
    assert (version.rule.rule_code, version.version_no) == ("LOT-A", 2)
    # a lot no rule names: the city's rules, the higher priority first while it is in force
    assert selectors.rule_version_for(at=at(1, 10), city_code="110100", lot_code="C").rule.rule_code == "CITY-HIGH"
    assert selectors.rule_version_for(at=at(2, 10), city_code="110100", lot_code="C").rule.rule_code == "CITY"
    # no lot asked about: every rule of the city counts, the highest priority wins
    assert selectors.rule_version_for(at=at(2, 10), city_code="110100").rule.rule_code == "LOT-B"


def test_a_rule_code_gives_its_version_in_force(rules) -> None:  # noqa: ANN001
    version = selectors.rule_version_for(at=at(1, 10), rule_code="LOT-A")
    assert version.version_no == 2
    assert selectors.rule_version_for(at=datetime(2026, 2, 28, 23, 59, tzinfo=SHANGHAI), rule_code="LOT-A").version_no == 1
    with pytest.raises(NotFound) as unknown:
        selectors.rule_version_for(at=at(1, 10), rule_code="NOPE")
    assert unknown.value.code == "rule_not_found"
    with pytest.raises(NotFound) as early:
        selectors.rule_version_for(at=datetime(2025, 1, 1, tzinfo=SHANGHAI), rule_code="LOT-A")
    assert early.value.code == "no_rule_in_force"


def test_rule_versions_are_kept_per_process_and_a_new_one_counts_at_once(rules, settings, django_assert_num_queries) -> None:  # noqa: ANN001
    from django.utils import timezone

    from billing.models import BillingRule, BillingRuleVersion

    settings.BILLING_RULES_RECHECK_SECONDS = 60
    selectors.rule_version_for(at=at(2, 10), city_code="110100", lot_code="A")
    with django_assert_num_queries(0):  # read once, then kept
        assert selectors.rule_version_for(at=at(2, 10), city_code="110100", lot_code="C").rule.rule_code == "CITY"
    add("CITY-NEW", [], "2026-03-02T00:00:00+08:00", priority=7)  # saved here: in force at once
    assert selectors.rule_version_for(at=at(2, 10), city_code="110100", lot_code="C").rule.rule_code == "CITY-NEW"
    # another process's change (written past this process's signals) is seen at the next check
    BillingRule.objects.filter(rule_code="CITY-NEW").update(status=BillingRule.Status.INACTIVE, updated_at=timezone.now())
    assert selectors.rule_version_for(at=at(2, 10), city_code="110100", lot_code="C").rule.rule_code == "CITY-NEW"
    settings.BILLING_RULES_RECHECK_SECONDS = 0
    assert selectors.rule_version_for(at=at(2, 10), city_code="110100", lot_code="C").rule.rule_code == "CITY"
    version = BillingRuleVersion.objects.get(rule__rule_code="CITY")
    with django_assert_num_queries(1):  # checked: unchanged, nothing read again
        assert selectors.rule_version_for(at=at(2, 10), rule_code="CITY") == version


def test_arrears_of_a_plate_however_written_oldest_first(rules, django_assert_num_queries) -> None:  # noqa: ANN001
    for order_no, plate, day, paid in (("O-2", "京A-12345", 3, "0"), ("O-1", "京A 12345", 2, "0"), ("O-3", "京A12345", 4, "4.00")):
        services.parking_order_create(data={
            "order_no": order_no, "plate_no": plate, "city_code": "110100", "lot_code": "A",
            "entry_time": at(day, 8).isoformat(), "exit_time": at(day, 10).isoformat(), "paid_amount": paid,
        })
    with django_assert_num_queries(1):
        orders = selectors.arrears_list(plate_no="京a·12345")
    assert [o.order_no for o in orders] == ["O-1", "O-2"]  # O-3 is paid
    assert selectors.arrears_list(plate_no="京A12345", city_code="310100") == []


def test_a_plate_typed_without_its_province_is_the_recorded_plate_it_ends(rules) -> None:  # noqa: ANN001
    def order(order_no: str, plate: str) -> None:
        services.parking_order_create(data={
            "order_no": order_no, "plate_no": plate, "city_code": "110100", "lot_code": "A",
            "entry_time": at(2, 8).isoformat(), "exit_time": at(2, 10).isoformat(), "paid_amount": "0"})

    order("P-1", "晋K·3E771")
    order("P-2", "晋K 3E771")  # the same plate written another way
    assert selectors.plate_lookup("k3e771") == "晋K·3E771"
    assert selectors.plate_lookup("K-3E771") == "晋K·3E771"
    assert selectors.plate_lookup("3e771") == "晋K·3E771"  # without the province and the city's letter too
    order("P-3", "蒙K3E771")
    assert selectors.plate_lookup("K3E771") is False  # two provinces' plates end so: neither is guessed
    assert selectors.plate_lookup("3E771") is False
    assert selectors.plate_lookup("蒙k3e771") == "蒙K3E771"
    assert selectors.plate_lookup("ZX9981") == "ZX9981"  # plate-shaped, no orders: as typed
    assert selectors.plate_lookup("E771") == "E771"  # four characters say too little: as typed


def test_a_plate_whose_province_is_said_in_pinyin_is_the_recorded_plate_it_names(rules) -> None:  # noqa: ANN001
    for order_no, plate in (("H-1", "黑L 88G6K"), ("J-1", "冀B55501"), ("J-2", "吉B55501")):
        services.parking_order_create(data={
            "order_no": order_no, "plate_no": plate, "city_code": "110100", "lot_code": "A",
            "entry_time": at(2, 8).isoformat(), "exit_time": at(2, 10).isoformat(), "paid_amount": "0"})
    assert selectors.plate_lookup("hei L 88G6K") == "黑L 88G6K"
    assert selectors.plate_lookup("HEIL88G6K") == "黑L 88G6K"
    assert selectors.plate_lookup("ji B55501") is False  # 冀 and 吉 are both "ji": the records hold both, asked
    assert selectors.plate_on_record("黑L88G6K") and not selectors.plate_on_record("黑L88G6X")


def test_billing_plugs_its_lookups_and_place_finder_into_conversations() -> None:
    from billing.handlers import place_finder
    from conversations.services import FINDERS, LOOKUPS

    assert LOOKUPS["order_no"] is selectors.order_lookup and LOOKUPS["plate_no"] is selectors.plate_lookup
    assert LOOKUPS["lot_code"] is selectors.lot_lookup and LOOKUPS["city_code"] is selectors.city_lookup
    assert place_finder in FINDERS
