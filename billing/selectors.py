"""Billing reads: the rule version in force, simulations, orders and arrears, rules for the API, and the
slot lookups a conversation checks identifiers with. Nothing here writes (see `billing.services`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connection, models
from django.db.models import Count, Max, Prefetch
from django.utils import timezone

from billing.engine import FeeResult, simulate_fee
from config.errors import NotFound
from workflows.models import AuditEvent, Review

from .models import BillingRule, BillingRuleVersion, City, Lot, ParkingOrder, identifier_key_of
from .parsing import InvalidInput, parse_time, rule_payload_checked

# --- rules and their versions ----------------------------------------------------------


# Each process keeps every rule version with its rule (versions never change once stored: a change
# is a new version). Its own writes drop them at once (`forget_rule_versions`, on BillingRule and
# BillingRuleVersion saves); another process's are seen when it checks the versions' count, the newest
# version and the newest change of their rules, at most every BILLING_RULES_RECHECK_SECONDS.
_VERSIONS: dict[str, tuple[tuple, tuple[BillingRuleVersion, ...], float]] = {}  # (fingerprint, versions, when checked)


def forget_rule_versions(**kwargs: object) -> None:
    """Drop the kept rule versions (connected to the rules' and versions' post_save and to `rule_version_added`)."""
    _VERSIONS.clear()


def rule_versions_warm() -> None:
    """Read the rule versions now (at start-up), not on the first fee question."""
    _all_versions()


def _all_versions() -> tuple[BillingRuleVersion, ...]:
    """Every rule version with its rule, as this process keeps them; read-only (shared between requests)."""
    database = connection.alias + ":" + str(connection.settings_dict.get("NAME"))
    cached = _VERSIONS.get(database)
    now = time.monotonic()
    if cached is not None and now - cached[2] < settings.BILLING_RULES_RECHECK_SECONDS:
        return cached[1]
    fingerprint = tuple(BillingRuleVersion.objects.aggregate(n=Count("id"), last=Max("id"), changed=Max("rule__updated_at")).values())
    if cached is not None and cached[0] == fingerprint:
        _VERSIONS[database] = (fingerprint, cached[1], now)
        return cached[1]
    versions = tuple(BillingRuleVersion.objects.select_related("rule"))
    _VERSIONS[database] = (fingerprint, versions, now)
    return versions


def _in_force(version: BillingRuleVersion, at: datetime) -> bool:
    return version.effective_from <= at and (version.effective_to is None or version.effective_to > at)


def _rank(version: BillingRuleVersion) -> tuple:
    """Best first: the highest priority, then the latest start; the rule code and version keep ties in order."""
    return (-version.priority, -version.effective_from.timestamp(), version.rule.rule_code, -version.version_no)


def rule_version_for(*, at: datetime, rule_code: str | None = None, city_code: str | None = None,
                     lot_code: str | None = None) -> BillingRuleVersion:
    """The version in force at a moment, by rule code, or by city and lot (most specific, then priority)."""
    if rule_code:
        candidates = [v for v in _all_versions() if v.rule.rule_code == rule_code and _in_force(v, at)]
        if not candidates:
            if not BillingRule.objects.filter(rule_code=rule_code).exists():
                raise NotFound(f"Billing rule '{rule_code}' not found.", code="rule_not_found")
            raise NotFound(f"No version of {rule_code} is in force at {at.isoformat()}.", code="no_rule_in_force")
        return min(candidates, key=_rank)
    if not city_code:
        raise InvalidInput("Give a rule_code, or a city_code (and lot_code).", details={"rule_code": ["or city_code and lot_code"]})
    # A rule naming lots applies to those lots only; one naming the lot asked about beats the city's rules.
    fitting = [v for v in _all_versions()
               if v.rule.city_code == city_code and v.rule.status == BillingRule.Status.ACTIVE and _in_force(v, at)
               and not (lot_code and v.rule.lot_codes and lot_code not in v.rule.lot_codes)]
    if not fitting:
        where = f"{city_code}/{lot_code}" if lot_code else city_code
        raise NotFound(f"No billing rule is in force for {where} at {at.isoformat()}.", code="no_rule_in_force")
    return min(fitting, key=lambda v: (0 if lot_code and lot_code in v.rule.lot_codes else 1, *_rank(v)))


def billing_rules_list(*, city_code: str | None = None, lot_code: str | None = None) -> list[BillingRule]:
    """Rules with their versions (oldest first), of a city and those that apply to a lot when given."""
    rules = _with_versions(BillingRule.objects.order_by("rule_code"))
    if city_code:
        rules = rules.filter(city_code=city_code)
    return [r for r in rules if not lot_code or not r.lot_codes or lot_code in r.lot_codes]


def billing_rule_get(rule_code: str) -> BillingRule:
    """A rule with its versions (oldest first)."""
    rule = _with_versions(BillingRule.objects.filter(rule_code=rule_code)).first()
    if rule is None:
        raise NotFound(f"Billing rule '{rule_code}' not found.", code="rule_not_found")
    return rule


def _with_versions(rules: models.QuerySet) -> models.QuerySet:
    return rules.prefetch_related(Prefetch("versions", queryset=BillingRuleVersion.objects.order_by("version_no")))


# --- simulation -------------------------------------------------------------------------


@dataclass(frozen=True)
class Simulation:
    """A simulated stay, and the stored rule version that priced it (none for an inline payload)."""

    result: FeeResult
    rule_code: str | None = None
    version_no: int | None = None


def simulate_with_version(version: BillingRuleVersion, entry: datetime, exit_: datetime) -> Simulation:
    """A stay priced by a stored version."""
    # The engine caches compiled payloads by content, so repeated versions compile once.
    return Simulation(simulate_fee(version.rule_payload, entry, exit_), version.rule.rule_code, version.version_no)


def fee_simulate(
    *,
    entry_time: Any,
    exit_time: Any,
    rule_code: str | None = None,
    city_code: str | None = None,
    lot_code: str | None = None,
    rule_payload: Any = None,
) -> Simulation:
    """Simulate a stay with an inline payload, or with the version in force at entry."""
    entry, exit_ = parse_time(entry_time, "entry_time"), parse_time(exit_time, "exit_time")
    if exit_ < entry:
        raise InvalidInput("exit_time must not be before entry_time.", details={"exit_time": ["before entry_time"]})
    if rule_payload is not None:
        return Simulation(simulate_fee(rule_payload_checked(rule_payload, "rule_payload"), entry, exit_))
    version = rule_version_for(at=entry, rule_code=rule_code, city_code=city_code, lot_code=lot_code)
    return simulate_with_version(version, entry, exit_)


# --- places -----------------------------------------------------------------------------


def cities_list() -> list[City]:
    """Every city, by code."""
    return list(City.objects.all())


def lots_list(*, city_code: str | None = None, code: str | None = None) -> list[Lot]:
    """Lots with their city, of a city and with a code (in any case) when given."""
    lots = Lot.objects.select_related("city")
    if city_code:
        lots = lots.filter(city__code=city_code)
    if code:
        lots = lots.filter(code__iexact=code)
    return list(lots)


def lot_cities(lot_code: str) -> list[str]:
    """The codes of the cities that have a lot with this code."""
    return list(Lot.objects.filter(code__iexact=lot_code).values_list("city__code", flat=True).order_by("city__code"))


def city_of_lot(lot_code: str | None) -> str | None:
    """The city of a lot, when exactly one city has a lot with this code."""
    cities = lot_cities(lot_code) if lot_code else []
    return cities[0] if len(cities) == 1 else None


# --- orders -----------------------------------------------------------------------------


def order_get(order_no: str) -> ParkingOrder:
    order = ParkingOrder.objects.filter(order_no=order_no).first()
    if order is None:
        raise NotFound(f"Order {order_no} not found.", code="order_not_found")
    return order


_SEPARATORS = re.compile(r"[\s·•.\-_]+")


def identifier_key(value: str) -> str:
    """A plate or an order number as compared: upper case, without the spaces, dots, dashes and underscores
    written between its groups ("粤B·D12345" is "粤BD12345"; "gz 0603 771" and "GZ-0603-771" are "GZ0603771")."""
    return _SEPARATORS.sub("", value).upper()


def plate_key(plate_no: str) -> str:
    """A plate as compared (`identifier_key`)."""
    return identifier_key(plate_no)


def orders_by_key() -> models.QuerySet:
    """Orders with their number's key (`order_key`, see `identifier_key`), however it was written."""
    return ParkingOrder.objects.alias(order_key=identifier_key_of("order_no"))


def arrears_list(*, plate_no: str, city_code: str | None = None) -> list[ParkingOrder]:
    """Orders of a plate (and city) that still owe money, oldest first; "ABC-1234" and "abc 1234" are one plate."""
    orders = ParkingOrder.objects.filter(plate_key=plate_key(plate_no), arrears_amount__gt=0)
    if city_code:
        orders = orders.filter(city_code=city_code)
    return list(orders.order_by("entry_time", "order_no"))


def plate_on_record(plate_no: str) -> bool:
    """Whether any order, paid or not, was recorded for the plate."""
    return ParkingOrder.objects.filter(plate_key=plate_key(plate_no)).exists()


# --- fee reviews ------------------------------------------------------------------------------
# A fee review is any review whose subject names an order: a gate a conversation's verification reached, or
# one an operator's verification opened (`billing.services.fee_review_subject` writes both subjects).


def open_fee_review(order_no: str) -> Review | None:
    """The order's review still waiting for a supervisor, if any (the oldest, should there be more)."""
    return Review.objects.filter(status=Review.Status.PENDING, subject__order_no=order_no).order_by("created_at", "pk").first()


def fee_reviews_opened_today(person_id: int) -> int:
    """How many fee reviews the person's conversations opened since the local day began (decided ones count too)."""
    day_start = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    return Review.objects.filter(run__owner_id=person_id, subject__has_key="order_no", created_at__gte=day_start).count()


# --- slot lookups: an identifier is checked against the records before tools use it ---------


def order_lookup(value: str, known: Mapping[str, Any] | None = None) -> str | bool:
    """An order's number as recorded; written another way it is found when exactly one order fits: in any
    case and with any spaces, dashes, dots or underscores between its groups ("gz 0603 771" for GZ-0603-771,
    "th-kc-5521" for TH_KC_5521: both sides compared without them), then with a number's leading zeros
    aside ("SCN020", "scn 20", "SCN-19" for SCN-019)."""
    order = ParkingOrder.objects.filter(order_no__iexact=value.strip()).values_list("order_no", flat=True).first()
    if order:
        return order
    key = identifier_key(value)
    if len(key) >= 4 and any(ch.isdigit() for ch in key):
        fits = list(orders_by_key().filter(order_key=key).values_list("order_no", flat=True)[:2])
        if len(fits) == 1:
            return fits[0]
    pattern = _loose_number(value)
    if pattern is None:
        return False
    fits = list(ParkingOrder.objects.filter(order_no__iregex=pattern).values_list("order_no", flat=True)[:2])
    return fits[0] if len(fits) == 1 else False


def _loose_number(value: str) -> str | None:
    """A regular expression for an identifier with any separators between its letter and digit runs and
    any leading zeros before a digit run; None for something too short to be sure of."""
    runs = re.findall(r"[A-Za-z]+|\d+", value)
    if len(runs) < 2 or not any(r.isdigit() for r in runs) or sum(len(r) for r in runs) < 4:
        return None
    parts = [f"0*{r.lstrip('0') or '0'}" if r.isdigit() else re.escape(r) for r in runs]
    return "^" + r"[-_ ./·]*".join(parts) + "$"


def lot_lookup(value: str, known: Mapping[str, Any] | None = None) -> str | bool:
    """A lot's code as recorded (in the known city, when one is known)."""
    lots = Lot.objects.filter(code__iexact=value.strip())
    city = (known or {}).get("city_code")
    if city and lots.filter(city__code=city).exists():
        lots = lots.filter(city__code=city)
    return lots.values_list("code", flat=True).first() or False


_PROVINCES = "京津沪渝冀豫云辽黑湘皖鲁新苏浙赣鄂桂甘晋蒙陕吉闽贵粤青藏川宁琼港澳使领警学挂"
# A plate people may type: an optional province character, then 4 to 10 letters and digits with a digit.
_PLATE_LIKE = re.compile(r"[\u4e00-\u9fff]?(?=[A-Z]*\d)[A-Z0-9]{4,10}")
_PLATES_COMPARED = 20  # recorded plates read for one typed without its province (two are enough to ask)


def plate_lookup(value: str, known: Mapping[str, Any] | None = None) -> str | bool:
    """A plate as the orders record it ("粤B·D12345" for 粤BD12345); a plate-shaped one without orders as it is."""
    key = plate_key(value)
    if key and "\u4e00" <= key[0] <= "\u9fff" and key[0] not in _PROVINCES:
        key = key[1:]  # "是ABC-1234": a word before the plate, not its province
    recorded = ParkingOrder.objects.filter(plate_key=key).values_list("plate_no", flat=True).first()
    if recorded:
        return recorded
    if (spelled := _province_spelled(key)) is not None:
        return spelled  # "hei L 88G6K": the province said in pinyin (False when two provinces' plates fit)
    plate_like = bool(_PLATE_LIKE.fullmatch(key))
    if plate_like and not "\u4e00" <= key[0] <= "\u9fff":
        # "B88888" for 沪B88888, "7mk29" for 云A·7MK29: a plate typed without its province character (and its
        # city's letter) is the recorded plate it ends, when one does; when two do, it is none of them until the
        # person says which
        ends = (ParkingOrder.objects.filter(plate_key__endswith=key).order_by()
                .values_list("plate_no", "plate_key").distinct()[:_PLATES_COMPARED])
        fits = {recorded_key: plate for plate, recorded_key in ends if _plate_head(recorded_key[:len(recorded_key) - len(key)])}
        if fits:
            return next(iter(fits.values())) if len(fits) == 1 else False
    return key if plate_like else False


# The provinces' characters as people type them in pinyin ("hei L88G6K" for 黑L88G6K); some spellings are two
# provinces' (ji: 冀 and 吉), and the records say which one a plate is.
_PROVINCE_PINYIN = {"jing": "京", "jin": "津晋", "hu": "沪", "yu": "渝豫", "ji": "冀吉", "yun": "云", "liao": "辽", "hei": "黑",
                    "xiang": "湘", "wan": "皖", "lu": "鲁", "xin": "新", "su": "苏", "zhe": "浙", "gan": "赣甘", "e": "鄂",
                    "gui": "桂贵", "meng": "蒙", "shaan": "陕", "shan": "陕", "min": "闽", "yue": "粤", "qing": "青",
                    "zang": "藏", "chuan": "川", "ning": "宁", "qiong": "琼"}


def _province_spelled(key: str) -> str | bool | None:
    """The one recorded plate a key opening with a province's pinyin names ("HEIL88G6K": 黑L88G6K); False when
    two do ("ji": 冀 and 吉); None when none does."""
    keys = [province + key[len(spelling):] for spelling, provinces in _PROVINCE_PINYIN.items()
            if key.startswith(spelling.upper()) and _PLATE_LIKE.fullmatch(key[len(spelling):]) for province in provinces]
    if not keys:
        return None
    found = dict(ParkingOrder.objects.filter(plate_key__in=keys).values_list("plate_key", "plate_no")[:_PLATES_COMPARED])
    return (next(iter(found.values())) if len(found) == 1 else False) if found else None


def _plate_head(head: str) -> bool:
    """Whether what a typed plate left out is its province character, with or without its city's letter."""
    return len(head) in (1, 2) and "\u4e00" <= head[0] <= "\u9fff" and (len(head) == 1 or head[1].isalpha())


def city_lookup(value: str, known: Mapping[str, Any] | None = None) -> str | bool:
    """A city's code as recorded."""
    return City.objects.filter(code__iexact=value.strip()).values_list("code", flat=True).first() or False


def order_fee_decision(order: ParkingOrder) -> dict[str, Any] | None:
    """The newest supervisor decision on an order's fee (adjust, keep or waive), as the audit recorded it, with
    what was paid over the total since: None when no supervisor decided its fee."""
    event = (AuditEvent.objects.filter(event_type="order_fee_decided", payload__order_no=order.order_no)
             .order_by("-id").only("payload", "created_at").first())
    if event is None:
        return None
    over = order.paid_amount - order.total_amount
    return {"outcome": event.payload.get("outcome"), "total_before": event.payload.get("total_before"),
            "total_after": event.payload.get("total_after"), "decided_on": timezone.localtime(event.created_at).date().isoformat(),
            "overpaid": str(over) if over > 0 else None}
