"""What a supervisor reads on a fee mismatch: the order and its two amounts with the rule that gave the second.

Registered with workflows' review summaries when billing starts (billing/apps.py), as its step
handlers are: workflows renders whatever subject it is handed and knows nothing of orders.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from django.template.loader import render_to_string
from django.utils import timezone

from workflows.review_summary import CheckWording, readable, subject_reader

from .models import Lot, ParkingOrder

# The fee subject's keys and signals in words.
FEE_LABELS = {
    "order_no": "Order", "plate_no": "Plate", "city_code": "City", "lot_code": "Lot",
    "entry_time": "Entry", "exit_time": "Exit",
    "order_total_amount": "Recorded amount", "simulated_total_amount": "Simulated amount",
    "rule_code": "Rule", "version_no": "Rule version", "verification_id": "Verification",
    "amount_check_result": "Amount check",
}
# The facts about the order, in reading order (times come from the order itself).
FEE_ORDER_KEYS = ("order_no", "plate_no", "city_code", "lot_code", "entry_time", "exit_time")
# fee_verify reports its comparison as the step's check (qa_pass): say what it compared.
AMOUNTS_AGREE = CheckWording("Amounts agree", "must agree for an automatic pass", passed="yes", failed="no")


def is_fee_subject(subject: Mapping[str, Any]) -> bool:
    """A fee mismatch names an order and the amount the rule gives (gate or billing review alike)."""
    return bool(subject.get("order_no")) and "simulated_total_amount" in subject


@dataclass(frozen=True)
class FeeSummary:
    order: list[tuple[str, str]]
    recorded: str
    simulated: str
    rule: str
    difference: str


def _difference(recorded: str, simulated: str) -> str:
    try:
        delta = Decimal(simulated) - Decimal(recorded)
    except (InvalidOperation, TypeError):
        return ""
    if delta == 0:
        return "The rule gives the amount the order records."
    direction = "less" if delta < 0 else "more"
    return f"The rule gives {abs(delta):.2f} {direction} than the order records."


def fee_summary(subject: Mapping[str, Any], order_facts: Mapping[str, Any] | None = None) -> FeeSummary:
    """The order (number, plate, lot, times) and its two amounts with the rule that gave the second."""
    facts = {**subject, **(order_facts or {})}
    recorded, simulated = str(subject.get("order_total_amount", "")), str(subject.get("simulated_total_amount", ""))
    rule = str(subject.get("rule_code") or "—")
    if subject.get("version_no") is not None:
        rule = f"{rule}, version {subject['version_no']}"
    return FeeSummary(
        order=[(FEE_LABELS[key], readable(facts.get(key))) for key in FEE_ORDER_KEYS],
        recorded=recorded or "—", simulated=simulated or "—", rule=rule, difference=_difference(recorded, simulated),
    )


def named(code: str, names: Mapping[str, str] | None, locale: str = "en") -> str:
    """A city or lot by its name with its code beside it: 'Shanghai (310100)'."""
    name = (names or {}).get(locale) or next(iter((names or {}).values()), "")
    return f"{name} ({code})" if name and name != code else code


def _local_minute(value) -> str:  # noqa: ANN001
    return timezone.localtime(value).strftime("%Y-%m-%d %H:%M") if value else "—"


def order_facts(order_no: str) -> dict[str, str]:
    """The order's stay and places as the supervisor reads them (the subject holds only codes)."""
    order = ParkingOrder.objects.filter(order_no=order_no).first()
    if order is None:
        return {}
    lot = Lot.objects.filter(city__code=order.city_code, code=order.lot_code).select_related("city").first()
    facts = {"entry_time": _local_minute(order.entry_time), "exit_time": _local_minute(order.exit_time)}
    if lot is not None:
        facts |= {"city_code": named(lot.city.code, lot.city.names), "lot_code": named(lot.code, lot.names)}
    return facts


@subject_reader("billing.fee", recognizes=is_fee_subject, check=AMOUNTS_AGREE, labels=FEE_LABELS,
                expected={"amount_check_result": "match"})
def fee_summary_html(subject: Mapping[str, Any]) -> str:
    """The fee mismatch in words, for the review's page and its Decide page."""
    context = {"fee": fee_summary(subject, order_facts(subject["order_no"])), "timezone": timezone.get_current_timezone_name()}
    return render_to_string("admin/billing/fee_review_summary.html", context)
