"""Money helpers for the fee engine: amounts are Decimal with two places, rounded half up.

Inside the engine every price is held as integer cents (payload prices may carry at most
two decimal places), so charges are exact and only converted to Decimal at the edge.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

CENT = Decimal("0.01")
ZERO = Decimal("0.00")


def quantize_money(value: Decimal | int | float | str) -> Decimal:
    """Return value as a Decimal rounded half up to two places (the one rounding rule)."""
    if isinstance(value, float):
        # str() keeps the decimal the author wrote (2.675 stays 2.675, not 2.67499...).
        value = str(value)
    return Decimal(value).quantize(CENT, rounding=ROUND_HALF_UP)


def cents_to_money(cents: int) -> Decimal:
    """Return integer cents as a two-place Decimal."""
    return Decimal(cents).scaleb(-2)


def parse_money_cents(value: object) -> tuple[int | None, str | None]:
    """Parse a non-negative money value (number or decimal string) to cents, or explain why not."""
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal | str):
        return None, "must be a number or a decimal string"
    if isinstance(value, int):
        amount = Decimal(value)
    else:
        try:
            amount = Decimal(str(value).strip())
        except InvalidOperation:
            return None, "must be a number or a decimal string"
    if not amount.is_finite():
        return None, "must be a finite number"
    if amount < 0:
        return None, "must not be negative"
    cents = amount.scaleb(2)
    if cents != cents.to_integral_value():
        return None, "must have at most two decimal places"
    return int(cents), None
