"""Reading times, amounts and rule payloads given to billing, and writing times back as people read them.

Selectors and services both take values from callers (the API, the admin, a conversation's
slots): they are read here, the same way everywhere, and refused with one error family.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any
from zoneinfo import ZoneInfo

from django.conf import settings
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from billing.engine import quantize_money, validate_rule_payload
from config.errors import ApplicationError


class InvalidInput(ApplicationError):
    code = "validation_error"


# What the amount columns hold (max_digits=12, decimal_places=2): a larger amount, given or
# computed, is refused before it reaches the database (which would fail on it).
MAX_AMOUNT = Decimal("9999999999.99")


def amount_in_range(amount: Decimal, field: str) -> Decimal:
    """The amount, when an order's amount column can hold it."""
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


def parse_minutes(value: Any, field: str) -> int:
    """A length of time in whole minutes (a stay's), from a number or its digits; anything else is refused."""
    text = str(value).strip()
    if not text.isdigit() or not 0 < int(text) <= 525_600:
        raise InvalidInput(f"{field} must be a whole number of minutes.", details={field: ["not a number of minutes"]})
    return int(text)


def local_iso(value: datetime | None) -> str | None:
    """ISO 8601 in the product's time zone (what people read and the API returns), never UTC."""
    return timezone.localtime(value).isoformat() if value else None


def parse_money(value: Any, field: str) -> Decimal:
    """A non-negative amount quantized to cents, within what an order holds."""
    try:
        amount = Decimal(str(value))
    except (InvalidOperation, ValueError):
        raise InvalidInput(f"{field} must be a decimal amount.", details={field: ["not a decimal amount"]}) from None
    if not amount.is_finite() or amount < 0:
        raise InvalidInput(f"{field} must be zero or more.", details={field: ["must be zero or more"]})
    return amount_in_range(quantize_money(amount), field)


def rule_payload_checked(payload: Any, prefix: str) -> Any:
    """The payload, when the engine can run it; otherwise every problem, each with its JSON path under `prefix`."""
    problems = validate_rule_payload(payload)
    if problems:
        raise InvalidInput(
            f"The rule payload has {len(problems)} problem(s).",
            code="invalid_rule_payload",
            details={"problems": [{"path": f"{prefix}{p.path.removeprefix('rule_payload')}", "message": p.message} for p in problems]},
        )
    return payload


def names_checked(value: Any, field: str) -> dict[str, str]:
    """A city's or lot's names: a language code to a non-empty name (none: no names)."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in value.items()):
        raise InvalidInput(f"{field} must map a language code to a name.", details={field: ['e.g. {"en": "Pudong lot 1", "zh": "浦东一号停车场"}']})
    return {k: v.strip() for k, v in value.items()}


def aliases_checked(value: Any, field: str) -> list[str]:
    """Other names people use: non-empty strings, trimmed, each once."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise InvalidInput(f"{field} must be a list of names.", details={field: ["a list of non-empty strings"]})
    return list(dict.fromkeys(v.strip() for v in value))
