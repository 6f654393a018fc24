"""The billing tools as workflow step handlers, and the fee decision as an edge effect.

Each tool reads validated slots from the run's signals and publishes a `tool_result`
that the concierge turns into an answer with its sources (rule code, version, order).
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.utils import timezone

from config.errors import ApplicationError
from conversations.engine.slots import AMOUNTS
from workflows.handlers import StepContext, StepEffect, edge_effect, step_handler
from workflows.models import Review
from workflows.services.reviews import review_applier

from . import selectors, services
from .models import ParkingOrder
from .parsing import local_iso, parse_minutes, parse_time
from .places import find_places

EXAMPLE_STAYS_MINUTES = (60, 180)


def _validated(ctx: StepContext) -> dict[str, Any]:
    slots = ctx.state.signals.get("validated") or {}
    return dict(slots) if isinstance(slots, dict) else {}


def _failure(tool: str, error: ApplicationError) -> StepEffect:
    return StepEffect(signals={"tool_result": {"tool": tool, "error": {"code": error.code, "message": error.message}}, "tool_error": True})


def _order_dict(order: ParkingOrder) -> dict[str, Any]:
    return {
        "order_no": order.order_no, "plate_no": order.plate_no, "city_code": order.city_code, "lot_code": order.lot_code,
        "entry_time": local_iso(order.entry_time), "exit_time": local_iso(order.exit_time),
        "total_amount": str(order.total_amount), "paid_amount": str(order.paid_amount),
        "arrears_amount": str(order.arrears_amount), "status": order.status,
        "billing_rule_code": order.billing_rule_code, "billing_rule_version_no": order.billing_rule_version_no,
    }


_TOOL_SIGNALS = ("tool_error", "tool_result")


@step_handler("billing.rule_explain", signals=_TOOL_SIGNALS)
def rule_explain(ctx: StepContext) -> StepEffect:
    """Which rule and version apply to a lot at a time, and what a stay costs."""
    slots = _validated(ctx)
    try:
        at = parse_time(slots["at_time"], "at_time") if slots.get("at_time") else timezone.now()
        city = slots.get("city_code") or selectors.city_of_lot(slots.get("lot_code"))
        version = selectors.rule_version_for(at=at, city_code=city, lot_code=slots.get("lot_code"))
        stays = []
        if slots.get("entry_time") and slots.get("exit_time"):
            entry, exit_ = parse_time(slots["entry_time"], "entry_time"), parse_time(slots["exit_time"], "exit_time")
            stays.append((entry, exit_))
        elif slots.get("duration_minutes"):
            stays.append((at, at + timedelta(minutes=parse_minutes(slots["duration_minutes"], "duration_minutes"))))
        asked = bool(stays)
        # the same stay on the days after it that were asked too (a weekend's Sunday)
        stays += [(entry + timedelta(days=int(n)), exit_ + timedelta(days=int(n)))
                  for n in slots.get("also_days") or () for entry, exit_ in stays[:1]]
        if not stays:
            stays += [(at, at + timedelta(minutes=m)) for m in EXAMPLE_STAYS_MINUTES]
        simulations = []
        for entry, exit_ in stays:
            sim = selectors.simulate_with_version(version, entry, exit_)
            simulations.append({"entry_time": local_iso(entry), "exit_time": local_iso(exit_), **sim.result.to_dict(),
                                "rule_code": sim.rule_code, "version_no": sim.version_no})
    except ApplicationError as error:
        return _failure("rule_explain", error)
    rule = version.rule
    return StepEffect(signals={"tool_error": False, "tool_result": {
        "tool": "rule_explain", "rule_code": rule.rule_code, "rule_name": rule.name, "version_no": version.version_no,
        "effective_from": local_iso(version.effective_from), "effective_to": local_iso(version.effective_to),
        "city_code": rule.city_code, "lot_code": slots.get("lot_code"), "at_time": local_iso(at),
        "segments": version.rule_payload, "simulations": simulations, "stays_asked": asked,
    }})


@step_handler("billing.arrears_check", signals=_TOOL_SIGNALS)
def arrears_check(ctx: StepContext) -> StepEffect:
    """The plate's orders that still owe money."""
    slots = _validated(ctx)
    # a city known only from an order verified before ("does that car owe anything else?") is where that order
    # was, not a place the person asked about: the plate's arrears are looked up everywhere
    learned = ctx.state.signals.get("learned_slots") or ()
    city = None if "city_code" in learned else slots.get("city_code")
    orders = selectors.arrears_list(plate_no=slots["plate_no"], city_code=city)
    total = sum((o.arrears_amount for o in orders), Decimal("0.00"))
    return StepEffect(signals={"tool_error": False, "tool_result": {
        "tool": "arrears_check", "plate_no": slots["plate_no"].upper(), "city_code": city,
        "orders": [_order_dict(o) for o in orders], "total_arrears": str(total),
        # no order at all is not "nothing owed": the records do not know the plate (a slip, another spelling)
        "on_record": bool(orders) or selectors.plate_on_record(slots["plate_no"]),
        # "第一笔", "the second one", "the one at Chengdu East" point at one of these
        "listed": {"slot": "order_no", "values": [o.order_no for o in orders],
                   "details": {o.order_no: _order_details(o) for o in orders}},
    }})


def _order_details(order: ParkingOrder) -> dict[str, str]:
    """What a listed order may be pointed at by (its lot, its city, an amount the list showed), and how to name
    it when asking which."""
    return {"lot_code": order.lot_code, "city_code": order.city_code,
            AMOUNTS: f"{order.total_amount:.2f} {order.paid_amount:.2f} {order.arrears_amount:.2f}",
            "label": f"{order.order_no} ({order.lot_code}, {local_iso(order.entry_time)[:10]}, {order.arrears_amount})"}


@step_handler("billing.fee_verify", signals=_TOOL_SIGNALS + (
    "amount_check_result", "qa_pass", "confidence", "missing_critical", "intent_class", "review_subject", "check_summary"))
def fee_verify(ctx: StepContext) -> StepEffect:
    """Recompute the order's fee; the gate after this step routes a mismatch to a supervisor."""
    slots = _validated(ctx)
    try:
        checked = services.parking_order_verify_for_person(
            order_no=slots["order_no"], person_id=ctx.owner_id, trail={"run_id": ctx.run_id, "conversation_id": ctx.conversation_id})
    except ApplicationError as error:
        return _failure("fee_verify", error)
    verification = checked.verification
    order = verification.order
    match = verification.result == "match"
    result = {
        "tool": "fee_verify", "order": _order_dict(order), "amount_check_result": verification.result,
        "amount_check_action": verification.action, "order_total_amount": str(verification.order_total_amount),
        "simulated_total_amount": str(verification.simulated_total_amount), "rule_code": verification.rule_code,
        "version_no": verification.version_no, "breakdown": verification.breakdown, "verification_id": verification.pk,
        "fee_decision": selectors.order_fee_decision(order),  # a supervisor's adjustment, and what it leaves paid over
        # what the order tells of the stay: "that car", "this car park" in the turns after
        "learned": {"tool": "billing.fee_verify", "record": f"order_no={order.order_no}",
                    "slots": {"plate_no": order.plate_no, "city_code": order.city_code, "lot_code": order.lot_code}},
    }
    if checked.review_joined or checked.review_refused:
        return _verified_without_review(checked, result)
    return StepEffect(signals={
        "tool_error": False, "tool_result": result, "amount_check_result": verification.result,
        # Gate signals: a match is unambiguous; a mismatch is not, so a person decides.
        "qa_pass": match, "confidence": 1.0, "missing_critical": False, "intent_class": "fee_verify",
        "review_subject": services.fee_review_subject(order, verification),
        "check_summary": None if match else (
            f"the order's amount {verification.order_total_amount} differs from {verification.simulated_total_amount} "
            f"given by {verification.rule_code} v{verification.version_no}"),
    })


def _verified_without_review(checked: services.VerificationOutcome, result: dict[str, Any]) -> StepEffect:
    """A mismatch this run must not take to its own gate (the gate would open a review): the order's open review was
    joined, or the person's reviews for the day are spent. The plan's one way from the check to the answer without
    the gate is its `tool_error` edge, so the run takes it; the result says why, and no error is reported."""
    review = checked.verification.review
    result = {**result, "review_joined": checked.review_joined, "review_refused": checked.review_refused,
              "review_id": review.pk if review is not None else None,
              # beyond the day's reviews a member of staff can still look at the order with the person
              "handoff_offered": checked.review_refused}
    return StepEffect(signals={
        "tool_error": True, "tool_result": result, "amount_check_result": checked.verification.result,
        "qa_pass": False, "confidence": 1.0, "missing_critical": False, "intent_class": "fee_verify",
        "review_subject": None, "check_summary": None,
    })


@edge_effect("billing.fee_decision", signals=("fee_decision",))
def fee_decision(ctx: StepContext, option, user) -> StepEffect:  # noqa: ANN001
    """Apply the gate's fee outcome (adjust / keep / waive) to the order."""
    result = ctx.state.signals.get("tool_result") or {}
    if option.outcome not in ("adjust", "keep", "waive") or result.get("tool") != "fee_verify":
        return StepEffect()
    order = services.order_fee_decision_apply(
        order_no=result["order"]["order_no"], outcome=option.outcome,
        simulated_amount=Decimal(result["simulated_total_amount"]), user=user,
    )
    return StepEffect(signals={"fee_decision": {"outcome": option.outcome, "order": _order_dict(order)}})


@review_applier(Review.Kind.FEE_VERIFICATION)
def apply_fee_review(review: Review, option_id: str, user) -> None:  # noqa: ANN001
    outcome = next(o["outcome"] for o in review.options if o["option_id"] == option_id)
    services.order_fee_decision_apply(
        order_no=review.subject["order_no"], outcome=outcome,
        simulated_amount=Decimal(review.subject["simulated_total_amount"]), user=user, review=review,
    )


# --- what conversations learn from billing ---------------------------------------------


def place_finder(text: str, lang: str) -> list[dict]:
    """Lots and cities named in a message, by code, name or alias (conversations' finder protocol)."""
    return [{"slots": hit.slots, "raw": hit.raw, "labels": hit.labels} for hit in find_places(text, lang)]


def register_lookups() -> None:
    """Plug billing into conversations: identifiers checked against the records, places found in words."""
    from conversations.services import register_finder, register_lookup

    register_lookup("order_no", selectors.order_lookup)
    register_lookup("plate_no", selectors.plate_lookup)
    register_lookup("lot_code", selectors.lot_lookup)
    register_lookup("city_code", selectors.city_lookup)
    register_finder(place_finder)
