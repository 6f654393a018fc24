"""Serializer fields and shapes shared by every API: the error body, ids, times, money.

Input fields here carry the bounds of what the engines and the columns hold, so a value
beyond them is a 400 in the error shape instead of a failure deep inside.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from django.utils import timezone
from rest_framework import serializers

ID_MAX = 2**63 - 1  # a BigAutoField (and a PostgreSQL bigint) holds no more
POSITIVE_INT_MAX = 2**31 - 1  # PositiveIntegerField on every database Django supports
# Far from datetime's own limits (years 1 and 9999), where moving by a zone or a day overflows.
MIN_YEAR, MAX_YEAR = 1900, 2999


class ErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="Stable machine-readable code, e.g. `validation_error`, `not_found`.")
    message = serializers.CharField(help_text="What went wrong, for people.")
    details = serializers.JSONField(help_text="Structured details: for validation errors, the problems per field.")


class ErrorSerializer(serializers.Serializer):
    """The one error shape of the API: `{"error": {"code", "message", "details"}}`."""

    error = ErrorDetailSerializer()


def IdField(**kwargs: Any) -> serializers.IntegerField:
    """A database id: a positive 64-bit integer."""
    return serializers.IntegerField(min_value=1, max_value=ID_MAX, **kwargs)


def MoneyField(**kwargs: Any) -> serializers.DecimalField:
    """An amount as the order columns hold it: at most 12 digits, 2 of them decimals, not negative."""
    return serializers.DecimalField(max_digits=12, decimal_places=2, min_value=Decimal("0"), **kwargs)


class AwareDateTimeField(serializers.DateTimeField):
    """An ISO 8601 date-time with its UTC offset, in the years the engines handle."""

    default_error_messages = {
        "naive": "Give the time with its UTC offset, e.g. 2026-03-02T08:00:00+08:00.",
        "year_range": f"The year must be between {MIN_YEAR} and {MAX_YEAR}.",
    }

    def enforce_timezone(self, value: datetime) -> datetime:
        if timezone.is_naive(value):
            self.fail("naive")
        if not MIN_YEAR <= value.year <= MAX_YEAR:
            self.fail("year_range")
        return super().enforce_timezone(value)
