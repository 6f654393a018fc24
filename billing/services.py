"""Billing services: rule versions, orders, fee verification and fee decisions, cities and lots.

They validate, call the fee engine, and write with their audit rows in one transaction.
Reads live in `billing.selectors`; reading the values given lives in `billing.parsing`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction

from billing.engine import quantize_money
from billing.engine.orders import order_standing, ranges_overlap
from config.errors import ApplicationError, Conflict, NotFound
from workflows.audit import audit_record
from workflows.models import Review

from . import selectors
from .models import BillingRule, BillingRuleVersion, City, FeeVerification, Lot, ParkingOrder
from .parsing import (
    InvalidInput,
    aliases_checked,
    amount_in_range,
    names_checked,
    parse_money,
    parse_time,
    rule_payload_checked,
)
from .selectors import Simulation, rule_version_for, simulate_with_version
from .signals import rule_version_added

FEE_OPTIONS = (
    ("adjust_to_simulated", "adjust", "Adjust to the simulated amount", "调整为模拟金额",
     "Changes the order's total to the simulated amount and recomputes arrears."),
    ("keep_order_amount", "keep", "Keep the order's amount", "维持原金额", "Leaves the order unchanged."),
    ("waive_fee", "waive", "Waive the fee", "免除费用", "Waives what is still owed: the total becomes what was already paid."),
)


# --- rules ------------------------------------------------------------------------


def billing_rule_version_add(*, data: dict[str, Any], user=None) -> tuple[BillingRule, BillingRuleVersion]:  # noqa: ANN001
    """Create the rule (or update its name and scope) and append a non-overlapping version."""
    rule_code, scope, version = data["rule_code"], data["scope"], data["version"]
    rule_payload_checked(version["rule_payload"], "version.rule_payload")
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




# --- orders -----------------------------------------------------------------------


def _apply_standing(order: ParkingOrder) -> None:
    order.arrears_amount, order.status = order_standing(order.total_amount, order.paid_amount, finished=order.exit_time is not None)


def _overpayment_checked(order: ParkingOrder) -> None:
    """More paid than the total is money owed back: refused unless the order is marked as a credit."""
    if order.paid_amount > order.total_amount and not order.is_credit:
        raise InvalidInput(
            f"paid_amount {order.paid_amount} exceeds total_amount {order.total_amount}; "
            "an overpayment is recorded only on an order marked is_credit.",
            code="paid_exceeds_total",
            details={"paid_amount": [f"exceeds total_amount {order.total_amount}; set is_credit to record an overpayment"]},
        )


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
        is_credit=data.get("is_credit") is True,
    )
    if data.get("total_amount") is not None:
        order.total_amount = parse_money(data["total_amount"], "total_amount")
    elif exit_ is not None:
        version = rule_version_for(at=entry, rule_code=order.billing_rule_code or None, city_code=order.city_code, lot_code=order.lot_code)
        order.total_amount = amount_in_range(simulate_with_version(version, entry, exit_).result.total_amount, "total_amount")
        order.billing_rule_code, order.billing_rule_version_no = version.rule.rule_code, version.version_no
    if order.exit_time is not None and not order.billing_rule_code:
        try:
            version = rule_version_for(at=entry, city_code=order.city_code, lot_code=order.lot_code)
            order.billing_rule_code, order.billing_rule_version_no = version.rule.rule_code, version.version_no
        except NotFound:
            pass  # an order may predate any rule we know; verification will say so
    if data.get("total_amount") is not None or exit_ is not None:  # a stay in progress has no total yet
        _overpayment_checked(order)
    _apply_standing(order)
    try:
        with transaction.atomic():
            order.save()
            places_ensure(order.city_code, [order.lot_code])
            audit_record("parking_order_created", actor=user, payload={"order_no": order.order_no, "total_amount": str(order.total_amount),
                                                                        "is_credit": order.is_credit})
    except IntegrityError:
        raise Conflict(f"Order {order.order_no} already exists.", code="order_exists") from None
    return order


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


@dataclass(frozen=True)
class VerificationOutcome:
    """A verification and what became of the review a mismatch asks for."""

    verification: FeeVerification
    review_joined: bool = False  # the order already had an open review: this verification joined it, none opened
    review_refused: bool = False  # the person already opened as many reviews today as one may: none opened


def parking_order_verify(*, order_no: str, user=None, open_review: bool = True) -> FeeVerification:  # noqa: ANN001
    """Simulate an order with the version in force at its entry and compare the totals (an operator's check)."""
    return _verified(order_no, user=user, open_review=open_review).verification


def parking_order_verify_for_person(*, order_no: str, person_id: int, trail: dict[str, Any] | None = None) -> VerificationOutcome:
    """A person's verification from a conversation: the plan's gate opens the review a mismatch needs, unless the
    order already has one open (joined instead) or the person opened their day's share of reviews (refused)."""
    return _verified(order_no, open_review=False, person_id=person_id, trail=trail or {})


def _verified(order_no: str, *, user=None, open_review: bool, person_id: int | None = None,  # noqa: ANN001
              trail: dict[str, Any] | None = None) -> VerificationOutcome:
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
            verification = _verification_record(order, version, simulation)
            outcome = _review_route(order, verification, user=user, open_review=open_review, person_id=person_id, trail=trail or {})
            _verification_audit(order, verification, outcome, user=user)
    if refusal is not None:
        raise refusal
    return outcome


def _verification_inputs(order_no: str) -> tuple[ParkingOrder, BillingRuleVersion, Simulation]:
    # Locked: a fee decision on the same order waits for this verification, and so does another
    # verification of it, which then finds the review this one opened (one open review per order).
    try:
        order = ParkingOrder.objects.select_for_update().get(order_no=order_no)
    except ParkingOrder.DoesNotExist:
        raise NotFound(f"Order {order_no} not found.", code="order_not_found") from None
    if order.exit_time is None:
        raise ApplicationError(f"Order {order_no} is still in progress.", code="order_in_progress", status_code=409)
    version = rule_version_for(
        at=order.entry_time, rule_code=order.billing_rule_code or None, city_code=order.city_code, lot_code=order.lot_code
    )
    simulation = simulate_with_version(version, order.entry_time, order.exit_time)
    amount_in_range(simulation.result.total_amount, "simulated_total_amount")
    return order, version, simulation


def _verification_record(order: ParkingOrder, version: BillingRuleVersion, simulation: Simulation) -> FeeVerification:
    simulated = simulation.result.total_amount
    match = simulated == order.total_amount
    return FeeVerification.objects.create(
        order=order, rule_code=version.rule.rule_code, version_no=version.version_no,
        order_total_amount=order.total_amount, simulated_total_amount=simulated,
        result=FeeVerification.Result.MATCH if match else FeeVerification.Result.MISMATCH,
        action=FeeVerification.Action.AUTO_PASS if match else FeeVerification.Action.NEEDS_REVIEW,
        breakdown=simulation.result.to_dict()["breakdown"],
    )


def _review_route(order: ParkingOrder, verification: FeeVerification, *, user, open_review: bool,  # noqa: ANN001
                  person_id: int | None, trail: dict[str, Any]) -> VerificationOutcome:
    """Join the order's open review, refuse one beyond the person's daily share, or open one (here or by the caller)."""
    if verification.result == FeeVerification.Result.MATCH:
        return VerificationOutcome(verification)
    pending = selectors.open_fee_review(order.order_no)  # seen by every verification after it: the order row is locked
    if pending is not None:
        _link_review(verification, pending)
        audit_record("fee_review_joined", actor=user, review=pending,
                     payload={"order_no": order.order_no, "review_id": pending.pk, "verification_id": verification.pk, **trail})
        return VerificationOutcome(verification, review_joined=True)
    if person_id is not None and _daily_reviews_spent(person_id):
        audit_record("fee_review_refused", actor_label="billing",
                     payload={"order_no": order.order_no, "verification_id": verification.pk, "person_id": person_id,
                              "reason": "daily_review_limit", "limit": settings.CONCIERGE_REVIEWS_PER_PERSON_PER_DAY, **trail})
        return VerificationOutcome(verification, review_refused=True)
    if open_review:
        _link_review(verification, _fee_review_open(order, verification))
    return VerificationOutcome(verification)


def _daily_reviews_spent(person_id: int) -> bool:
    """Whether the person opened as many fee reviews today as one may (the person's row is locked, so two of their
    verifications at once cannot both take the last one)."""
    get_user_model().objects.select_for_update().filter(pk=person_id).values_list("pk", flat=True).first()
    return selectors.fee_reviews_opened_today(person_id) >= settings.CONCIERGE_REVIEWS_PER_PERSON_PER_DAY


def _link_review(verification: FeeVerification, review: Review) -> None:
    verification.review = review
    verification.save(update_fields=["review"])


def _verification_audit(order: ParkingOrder, verification: FeeVerification, outcome: VerificationOutcome, *, user) -> None:  # noqa: ANN001
    audit_record(
        "fee_verified", actor=user, review=verification.review,
        payload={"order_no": order.order_no, "result": verification.result, "action": verification.action,
                 "order_total_amount": str(order.total_amount), "simulated_total_amount": str(verification.simulated_total_amount),
                 "rule_code": verification.rule_code, "version_no": verification.version_no,
                 "review_joined": outcome.review_joined, "review_refused": outcome.review_refused},
    )


def fee_review_subject(order: ParkingOrder, verification: FeeVerification) -> dict[str, Any]:
    """What a supervisor reviews about a fee mismatch; its `title` names the review in the queue."""
    return {
        "title": (f"Fee mismatch on {order.order_no}: order {verification.order_total_amount} "
                  f"vs rule {verification.simulated_total_amount}"),
        "order_no": order.order_no, "plate_no": order.plate_no, "city_code": order.city_code, "lot_code": order.lot_code,
        "order_total_amount": str(verification.order_total_amount),
        "simulated_total_amount": str(verification.simulated_total_amount),
        "rule_code": verification.rule_code, "version_no": verification.version_no, "verification_id": verification.pk,
    }


def _fee_review_open(order: ParkingOrder, verification: FeeVerification) -> Review:
    subject = fee_review_subject(order, verification)
    review = Review.objects.create(
        kind=Review.Kind.FEE_VERIFICATION, workflow_id="parking_help_desk", step_id=f"verify:{order.order_no}",
        title=subject["title"], subject=subject, options=_fee_review_options(),
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
    # a total adjusted below what was already paid leaves money owed back: the order now holds a credit
    order.is_credit = order.is_credit or order.paid_amount > order.total_amount
    _apply_standing(order)
    order.save(update_fields=["total_amount", "arrears_amount", "status", "is_credit", "updated_at"])
    audit_record(
        "order_fee_decided", actor=user, review=review,
        payload={"order_no": order_no, "outcome": outcome, "total_before": str(before), "total_after": str(order.total_amount),
                 "arrears_after": str(order.arrears_amount), "is_credit": order.is_credit},
    )
    return order


# --- cities and lots -----------------------------------------------------------------


def city_save(*, data: dict[str, Any], user=None) -> City:  # noqa: ANN001
    """Create a city or update its names and aliases."""
    with transaction.atomic():
        city, created = City.objects.select_for_update().get_or_create(code=data["code"])
        city.names = names_checked(data.get("names"), "names") if "names" in data or created else city.names
        city.aliases = aliases_checked(data.get("aliases"), "aliases") if "aliases" in data or created else city.aliases
        city.save()
        audit_record("city_saved", actor=user, payload={"code": city.code, "created": created})
    return city


def lot_save(*, data: dict[str, Any], user=None) -> Lot:  # noqa: ANN001
    """Create a lot in a known city or update its names and aliases."""
    with transaction.atomic():
        city = City.objects.filter(code=data["city_code"]).first()
        if city is None:
            raise NotFound(f"No city {data['city_code']}.", code="city_not_found", details={"city_code": data["city_code"]})
        lot, created = Lot.objects.select_for_update().get_or_create(city=city, code=data["code"])
        lot.names = names_checked(data.get("names"), "names") if "names" in data or created else lot.names
        lot.aliases = aliases_checked(data.get("aliases"), "aliases") if "aliases" in data or created else lot.aliases
        lot.save()
        audit_record("lot_saved", actor=user, payload={"city_code": city.code, "code": lot.code, "created": created})
    return lot


def places_ensure(city_code: str, lot_codes: Iterable[str]) -> None:
    """Records for a city and lots a rule or an order names (names are the operator's to add)."""
    city, _ = City.objects.get_or_create(code=city_code)
    for code in lot_codes:
        if code:
            Lot.objects.get_or_create(city=city, code=code)
