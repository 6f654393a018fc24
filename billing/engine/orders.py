"""Order amounts: arrears and status always follow from total and paid."""

from __future__ import annotations

from decimal import Decimal

from billing.engine.money import quantize_money

IN_PROGRESS, UNPAID, PARTIALLY_PAID, PAID = "in_progress", "unpaid", "partially_paid", "paid"


def order_standing(total: Decimal, paid: Decimal, *, finished: bool) -> tuple[Decimal, str]:
    """(arrears_amount, status) of an order; an open stay owes nothing yet."""
    total, paid = quantize_money(total), quantize_money(paid)
    if not finished:
        return Decimal("0.00"), IN_PROGRESS
    arrears = max(total - paid, Decimal("0.00"))
    if arrears == 0:
        return arrears, PAID
    return arrears, (PARTIALLY_PAID if paid > 0 else UNPAID)


def ranges_overlap(a_from, a_to, b_from, b_to) -> bool:  # noqa: ANN001
    """Half-open ranges [from, to) with None as an open end."""
    return (b_to is None or a_from < b_to) and (a_to is None or b_from < a_to)
