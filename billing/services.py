"""Billing services: rules and versions, simulation, orders, arrears, fee verification.

They validate, call the fee engine, and write with their audit rows in one transaction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db import IntegrityError, models, transaction
from django.db.models import Func, Q, Value
from django.db.models.functions import Replace, Upper
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from billing.engine import FeeResult, quantize_money, simulate_fee, validate_rule_payload
from billing.engine.orders import order_standing, ranges_overlap
from config.errors import ApplicationError, Conflict, NotFound
from workflows.audit import audit_record
from workflows.models import Review

from .models import BillingRule, BillingRuleVersion, FeeVerification, ParkingOrder
from .places import lot_cities, places_ensure
from .signals import rule_version_added

FEE_OPTIONS = (
    ("adjust_to_simulated", "adjust", "Adjust to the simulated amount", "调整为模拟金额",
     "Changes the order's total to the simulated amount and recomputes arrears."),
    ("keep_order_amount", "keep", "Keep the order's amount", "维持原金额", "Leaves the order unchanged."),
    ("waive_fee", "waive", "Waive the fee", "免除费用", "Waives what is still owed: the total becomes what was already paid."),
)


class InvalidInput(ApplicationError):
    code = "validation_error"


# What the amount columns hold (max_digits=12, decimal_places=2): a larger amount, given or
# computed, is refused before it reaches the database (which would fail on it).
MAX_AMOUNT = Decimal("9999999999.99")


def _amount_in_range(amount: Decimal, field: str) -> Decimal:
    if amount > MAX_AMOUNT:
        raise InvalidInput(f"{field} {amount} is beyond the largest amount an order holds ({MAX_AMOUNT}).",
                           code="amount_out_of_range", details={field: [f"at most {MAX_AMOUNT}"]})
    return amount


def parse_time(value: Any, field: str) -> datetime:
    """An aware datetime from ISO 8601; a time without offset is read in the product's zone."""
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str):
        try:
            parsed = parse_datetime(value.strip())
        except ValueError:
            parsed = None
    else:
        parsed = None
    if parsed is None:
        raise InvalidInput(f"{field} must be an ISO 8601 date-time.", details={field: ["not an ISO 8601 date-time"]})
    if timezone.is_naive(parsed):
        parsed = parsed.replace(tzinfo=ZoneInfo(settings.CONCIERGE_TIMEZONE))
    return parsed


def local_iso(value: datetime | None) -> str | None:
    """ISO 8601 in the product's time zone (what people read and the API returns), never UTC."""
    return timezone.localtime(value).isoformat() if value else None


def parse_money(value: Any, field: str) -> Decimal:
    try:
        amount = Decimal(str(value))
    except (InvalidOperation, ValueError):
        raise InvalidInput(f"{field} must be a decimal amount.", details={field: ["not a decimal amount"]}) from None
    if not amount.is_finite() or amount < 0:
        raise InvalidInput(f"{field} must be zero or more.", details={field: ["must be zero or more"]})
    return _amount_in_range(quantize_money(amount), field)


def _payload_problems(payload: Any, prefix: str) -> None:
    problems = validate_rule_payload(payload)
    if problems:
        raise InvalidInput(
            f"The rule payload has {len(problems)} problem(s).",
            code="invalid_rule_payload",
            details={"problems": [{"path": f"{prefix}{p.path.removeprefix('rule_payload')}", "message": p.message} for p in problems]},
        )


# --- rules ------------------------------------------------------------------------


def billing_rule_version_add(*, data: dict[str, Any], user=None) -> tuple[BillingRule, BillingRuleVersion]:  # noqa: ANN001
    """Create the rule (or update its name and scope) and append a non-overlapping version."""
    rule_code, scope, version = data["rule_code"], data["scope"], data["version"]
    _payload_problems(version["rule_payload"], "version.rule_payload")
    effective_from = parse_time(version["effective_from"], "version.effective_from")
    effective_to = parse_time(version["effective_to"], "version.effective_to") if version.get("effective_to") else None
    if effective_to is not None and effective_to <= effective_from:
        raise InvalidInput("effective_to must be after effective_from.", details={"version.effective_to": ["must be after effective_from"]})
    with transaction.atomic():
        rule, created = BillingRule.objects.select_for_update().get_or_create(
            rule_code=rule_code,
            defaults={"name": data["name"], "scope": scope, "city_code": scope["city_code"]},
        )
        places_ensure(scope["city_code"], scope.get("lot_codes") or ())
        if not created and (rule.name, rule.scope) != (data["name"], scope):
            rule.name, rule.scope, rule.city_code = data["name"], scope, scope["city_code"]
            rule.save(update_fields=["name", "scope", "city_code", "updated_at"])
        existing = list(rule.versions.all())
        clash = next((v for v in existing if ranges_overlap(effective_from, effective_to, v.effective_from, v.effective_to)), None)
        if clash is not None:
            raise Conflict(
                f"The new version overlaps version {clash.version_no} of {rule_code}.",
                code="version_overlap",
                details={"version_no": clash.version_no, "effective_from": clash.effective_from.isoformat(),
                         "effective_to": clash.effective_to.isoformat() if clash.effective_to else None},
            )
        row = BillingRuleVersion.objects.create(
            rule=rule,
            version_no=max((v.version_no for v in existing), default=0) + 1,
            effective_from=effective_from,
            effective_to=effective_to,
            priority=version.get("priority", 0),
            rule_payload=version["rule_payload"],
        )
        audit_record("billing_rule_version_added", actor=user, payload={"rule_code": rule_code, "version_no": row.version_no})
        transaction.on_commit(lambda: rule_version_added.send(sender=BillingRuleVersion, version=row))
    return rule, row


def _in_force(rows: models.QuerySet, at: datetime) -> models.QuerySet:
    return rows.filter(Q(effective_to__isnull=True) | Q(effective_to__gt=at), effective_from__lte=at)


def _versions_by_code(rule_code: str, at: datetime) -> models.QuerySet:
    return _in_force(BillingRuleVersion.objects.select_related("rule").filter(rule__rule_code=rule_code), at)


def _active_versions_by_city(city_code: str, at: datetime) -> models.QuerySet:
    rows = BillingRuleVersion.objects.select_related("rule").filter(rule__city_code=city_code, rule__status=BillingRule.Status.ACTIVE)
    return _in_force(rows, at)


def rule_version_for(*, at: datetime, rule_code: str | None = None, city_code: str | None = None, lot_code: str | None = None) -> BillingRuleVersion:
    """The version in force at a moment, by rule code, or by city and lot (most specific, then priority)."""
    # Runs on most parking turns: its SQL is compiled once per connection (config.queries).
    if rule_code:
        candidates = list(_versions_by_code(str(rule_code), at))
        if not candidates:
            if not BillingRule.objects.filter(rule_code=rule_code).exists():
                raise NotFound(f"Billing rule '{rule_code}' not found.", code="rule_not_found")
            raise NotFound(f"No version of {rule_code} is in force at {at.isoformat()}.", code="no_rule_in_force")
        return max(candidates, key=lambda v: (v.priority, v.effective_from, v.version_no))
    if not city_code:
        raise InvalidInput("Give a rule_code, or a city_code (and lot_code).", details={"rule_code": ["or city_code and lot_code"]})
    scored = []
    for version in list(_active_versions_by_city(str(city_code), at)):
        lots = version.rule.lot_codes
        if lot_code and lots and lot_code not in lots:
            continue
        specific = 1 if lot_code and lot_code in lots else 0
        scored.append(((specific, version.priority, version.effective_from, version.rule.rule_code), version))
    if not scored:
        where = f"{city_code}/{lot_code}" if lot_code else city_code
        raise NotFound(f"No billing rule is in force for {where} at {at.isoformat()}.", code="no_rule_in_force")
    # Most specific scope, then priority, then the newest range; rule_code keeps ties deterministic.
    scored.sort(key=lambda item: (-item[0][0], -item[0][1], -item[0][2].timestamp(), item[0][3]))
    return scored[0][1]


def city_of_lot(lot_code: str | None) -> str | None:
    """The city of a lot, when exactly one city has a lot with this code."""
    cities = lot_cities(lot_code) if lot_code else []
    return cities[0] if len(cities) == 1 else None


@dataclass(frozen=True)
class Simulation:
    result: FeeResult
    rule_code: str | None = None
    version_no: int | None = None

    def to_dict(self) -> dict[str, Any]:
        body = self.result.to_dict()
        if self.rule_code:
            body.update(rule_code=self.rule_code, version_no=self.version_no)
        return body


def simulate_with_version(version: BillingRuleVersion, entry: datetime, exit_: datetime) -> Simulation:
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
        _payload_problems(rule_payload, "rule_payload")
        return Simulation(simulate_fee(rule_payload, entry, exit_))
    version = rule_version_for(at=entry, rule_code=rule_code, city_code=city_code, lot_code=lot_code)
    return simulate_with_version(version, entry, exit_)


# --- orders -----------------------------------------------------------------------


def _apply_standing(order: ParkingOrder) -> None:
    order.arrears_amount, order.status = order_standing(order.total_amount, order.paid_amount, finished=order.exit_time is not None)


def parking_order_create(*, data: dict[str, Any], user=None) -> ParkingOrder:  # noqa: ANN001
    """Create an order; a missing total is computed with the rule in force at entry."""
    entry = parse_time(data["entry_time"], "entry_time")
    exit_ = parse_time(data["exit_time"], "exit_time") if data.get("exit_time") else None
    if exit_ is not None and exit_ < entry:
        raise InvalidInput("exit_time must not be before entry_time.", details={"exit_time": ["before entry_time"]})
    order = ParkingOrder(
        order_no=data["order_no"], plate_no=data["plate_no"].upper(), city_code=data["city_code"], lot_code=data["lot_code"],
        entry_time=entry, exit_time=exit_, paid_amount=parse_money(data.get("paid_amount", "0"), "paid_amount"),
        billing_rule_code=data.get("billing_rule_code") or "", billing_rule_version_no=data.get("billing_rule_version_no"),
    )
    if data.get("total_amount") is not None:
        order.total_amount = parse_money(data["total_amount"], "total_amount")
    elif exit_ is not None:
        version = rule_version_for(at=entry, rule_code=order.billing_rule_code or None, city_code=order.city_code, lot_code=order.lot_code)
        order.total_amount = _amount_in_range(simulate_with_version(version, entry, exit_).result.total_amount, "total_amount")
        order.billing_rule_code, order.billing_rule_version_no = version.rule.rule_code, version.version_no
    if order.exit_time is not None and not order.billing_rule_code:
        try:
            version = rule_version_for(at=entry, city_code=order.city_code, lot_code=order.lot_code)
            order.billing_rule_code, order.billing_rule_version_no = version.rule.rule_code, version.version_no
        except NotFound:
            pass  # an order may predate any rule we know; verification will say so
    _apply_standing(order)
    try:
        with transaction.atomic():
            order.save()
            places_ensure(order.city_code, [order.lot_code])
            audit_record("parking_order_created", actor=user, payload={"order_no": order.order_no, "total_amount": str(order.total_amount)})
    except IntegrityError:
        raise Conflict(f"Order {order.order_no} already exists.", code="order_exists") from None
    return order


def order_get(order_no: str) -> ParkingOrder:
    order = ParkingOrder.objects.filter(order_no=order_no).first()
    if order is None:
        raise NotFound(f"Order {order_no} not found.", code="order_not_found")
    return order


_PLATE_SEPARATORS = re.compile(r"[\s·•.\-_]+")
_PLATE_CHARS = (" ", "·", "•", ".", "-", "_")


def identifier_key(value: str) -> str:
    """A plate or an order number as compared: upper case, without the spaces, dots, dashes and underscores
    written between its groups ("粤B·D12345" is "粤BD12345"; "gz 0603 771" and "GZ-0603-771" are "GZ0603771")."""
    return _PLATE_SEPARATORS.sub("", value).upper()


def plate_key(plate_no: str) -> str:
    """A plate as compared (`identifier_key`)."""
    return identifier_key(plate_no)


def _keyed(field: str) -> Func:
    """The database's `identifier_key` of a column: upper case, the same separators removed."""
    folded = Upper(field)
    for char in _PLATE_CHARS:
        folded = Replace(folded, Value(char), Value(""))
    return folded


def orders_of_plate() -> models.QuerySet:
    """Orders with their plate's key (`plate_key`), however the plate was written when the order was made."""
    return ParkingOrder.objects.annotate(plate_key=_keyed("plate_no"))


def orders_by_key() -> models.QuerySet:
    """Orders with their number's key (`order_key`, see `identifier_key`), however it was written."""
    return ParkingOrder.objects.annotate(order_key=_keyed("order_no"))


def arrears_list(*, plate_no: str, city_code: str | None = None) -> list[ParkingOrder]:
    """Orders of a plate (and city) that still owe money, oldest first; "ABC-1234" and "abc 1234" are one plate."""
    plate_no = plate_key(plate_no)
    if city_code:  # the plate-check tool runs this on many turns: its SQL is compiled once
        return list(_arrears_in_city(plate_no, str(city_code)))
    return list(_arrears(plate_no))


def _arrears(plate_no: str) -> models.QuerySet:
    return orders_of_plate().filter(plate_key=plate_no, arrears_amount__gt=0).order_by("entry_time", "order_no")


def _arrears_in_city(plate_no: str, city_code: str) -> models.QuerySet:
    return _arrears(plate_no).filter(city_code=city_code)


# --- verification -----------------------------------------------------------------


def _fee_review_options(locale: str = "en") -> list[dict[str, Any]]:
    return [
        {
            "option_id": option_id, "label": zh if locale.startswith("zh") else en, "description": effects,
            "target_step_id": None, "eligibility": "eligible", "blockers": [], "kind": "user_choice",
            "requires_consent": False, "effects_summary": effects, "outcome": outcome, "recommended": option_id == "adjust_to_simulated",
        }
        for option_id, outcome, en, zh, effects in FEE_OPTIONS
    ]


def _order_for_update(order_no: str) -> models.QuerySet:
    return ParkingOrder.objects.select_for_update().filter(order_no=order_no).order_by()[:1]


def parking_order_verify(*, order_no: str, user=None, open_review: bool = True) -> FeeVerification:  # noqa: ANN001
    """Simulate an order with the version in force at its entry and compare the totals."""
    # No savepoint inside a caller's transaction (a turn's tool step catches refusals). An
    # error leaving a block without one would doom the caller's transaction, so a refusal
    # (always found before the first write) is raised only once the block has closed.
    with transaction.atomic(savepoint=False):
        try:
            order, version, simulation = _verification_inputs(order_no)
        except ApplicationError as error:
            refusal = error
        else:
            refusal = None
            verification = _verification_record(order, version, simulation, user=user, open_review=open_review)
    if refusal is not None:
        raise refusal
    return verification


def _verification_inputs(order_no: str) -> tuple[ParkingOrder, BillingRuleVersion, Any]:
    found = list(_order_for_update(str(order_no)))
    order = found[0] if found else None
    if order is None:
        raise NotFound(f"Order {order_no} not found.", code="order_not_found")
    if order.exit_time is None:
        raise ApplicationError(f"Order {order_no} is still in progress.", code="order_in_progress", status_code=409)
    version = rule_version_for(
        at=order.entry_time, rule_code=order.billing_rule_code or None, city_code=order.city_code, lot_code=order.lot_code
    )
    simulation = simulate_with_version(version, order.entry_time, order.exit_time)
    _amount_in_range(simulation.result.total_amount, "simulated_total_amount")
    return order, version, simulation


def _verification_record(order: ParkingOrder, version: BillingRuleVersion, simulation: Any, *, user, open_review: bool) -> FeeVerification:  # noqa: ANN001
    simulated = simulation.result.total_amount
    match = simulated == order.total_amount
    verification = FeeVerification.objects.create(
        order=order, rule_code=version.rule.rule_code, version_no=version.version_no,
        order_total_amount=order.total_amount, simulated_total_amount=simulated,
        result=FeeVerification.Result.MATCH if match else FeeVerification.Result.MISMATCH,
        action=FeeVerification.Action.AUTO_PASS if match else FeeVerification.Action.NEEDS_REVIEW,
        breakdown=simulation.result.to_dict()["breakdown"],
    )
    if not match and open_review:
        verification.review = _fee_review_for(order, verification)
        verification.save(update_fields=["review"])
    audit_record(
        "fee_verified", actor=user, review=verification.review,
        payload={"order_no": order.order_no, "result": verification.result, "action": verification.action,
                 "order_total_amount": str(order.total_amount), "simulated_total_amount": str(simulated),
                 "rule_code": version.rule.rule_code, "version_no": version.version_no},
    )
    return verification


def fee_review_subject(order: ParkingOrder, verification: FeeVerification) -> dict[str, Any]:
    return {
        "order_no": order.order_no, "plate_no": order.plate_no, "city_code": order.city_code, "lot_code": order.lot_code,
        "order_total_amount": str(verification.order_total_amount),
        "simulated_total_amount": str(verification.simulated_total_amount),
        "rule_code": verification.rule_code, "version_no": verification.version_no, "verification_id": verification.pk,
    }


def _fee_review_for(order: ParkingOrder, verification: FeeVerification) -> Review:
    pending = Review.objects.filter(kind=Review.Kind.FEE_VERIFICATION, status=Review.Status.PENDING, subject__order_no=order.order_no).first()
    if pending is not None:
        return pending
    review = Review.objects.create(
        kind=Review.Kind.FEE_VERIFICATION, workflow_id="parking_help_desk", step_id=f"verify:{order.order_no}",
        title=f"Fee mismatch on {order.order_no}: {verification.order_total_amount} vs {verification.simulated_total_amount}",
        subject=fee_review_subject(order, verification), options=_fee_review_options(),
        signals={"amount_check_result": "mismatch", "order_total_amount": str(verification.order_total_amount),
                 "simulated_total_amount": str(verification.simulated_total_amount)},
        recommended_option_id="adjust_to_simulated",
        recommendation_reasons=[f"the rule in force ({verification.rule_code} v{verification.version_no}) gives {verification.simulated_total_amount}"],
        reject_option_id="keep_order_amount",
    )
    audit_record("review_opened", review=review, payload=review.subject, actor_label="billing")
    return review


def order_fee_decision_apply(*, order_no: str, outcome: str, simulated_amount: Decimal, user=None, review: Review | None = None) -> ParkingOrder:  # noqa: ANN001
    """Apply a supervisor's fee decision (adjust / keep / waive) to the order."""
    order = ParkingOrder.objects.select_for_update().get(order_no=order_no)
    before = order.total_amount
    if outcome == "adjust":
        order.total_amount = quantize_money(simulated_amount)
    elif outcome == "waive":
        order.total_amount = min(order.total_amount, order.paid_amount)
    elif outcome != "keep":
        raise ApplicationError(f"Unknown fee decision '{outcome}'.", code="invalid_outcome")
    _apply_standing(order)
    order.save(update_fields=["total_amount", "arrears_amount", "status", "updated_at"])
    audit_record(
        "order_fee_decided", actor=user, review=review,
        payload={"order_no": order_no, "outcome": outcome, "total_before": str(before), "total_after": str(order.total_amount),
                 "arrears_after": str(order.arrears_amount)},
    )
    return order

