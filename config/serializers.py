"""Serializer fields and shapes shared by every API: the error body, ids, times, money.

Input fields here carry the bounds of what the engines and the columns hold, so a value
beyond them is a 400 in the error shape instead of a failure deep inside.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

ID_MAX = 2**63 - 1  # a BigAutoField (and a PostgreSQL bigint) holds no more
POSITIVE_INT_MAX = 2**31 - 1  # PositiveIntegerField on every database Django supports
# Far from datetime's own limits (years 1 and 9999), where moving by a zone or a day overflows.
MIN_YEAR, MAX_YEAR = 1900, 2999


# JSON types each field kind takes. DRF also coerces "5" to 5, 0 to "0" and "yes" to True (as it
# must for form data); in a JSON body such a value is the wrong type, as the schema says.
_JSON_TYPES: tuple[tuple[type[serializers.Field], tuple[type, ...], str], ...] = (
    (serializers.BooleanField, (bool,), "a boolean"),
    (serializers.IntegerField, (int,), "an integer"),
    (serializers.FloatField, (int, float), "a number"),
    (serializers.CharField, (str,), "a string"),
    (serializers.DateTimeField, (str,), "a string"),
)


def _json_type_problem(field: serializers.Field, value: Any) -> str | None:
    """Why a JSON value cannot be this field's (None when it can); list items and map values too."""
    if isinstance(field, serializers.ListField) and isinstance(value, list):
        return next((f"Item {i}: {p}" for i, v in enumerate(value) if (p := _json_type_problem(field.child, v))), None)
    if isinstance(field, serializers.DictField) and isinstance(value, dict):
        return next((f"{k}: {p}" for k, v in value.items() if (p := _json_type_problem(field.child, v))), None)
    for kind, types, name in _JSON_TYPES:
        if isinstance(field, kind):
            if value is None or (isinstance(value, types) and (bool in types or not isinstance(value, bool))):
                return None
            return f"Expected {name}."
    return None


def _too_long(field: serializers.Field, value: Any) -> str | None:
    """A string longer than the field's max_length as sent: DRF trims whitespace first and measures what is
    left, so the schema's maxLength (which counts the whole string) would otherwise let a longer one in."""
    limit = getattr(field, "max_length", None)
    if isinstance(field, serializers.CharField) and limit is not None and isinstance(value, str) and len(value) > limit:
        return f"Ensure this field has no more than {limit} characters."
    return None


class JSONInput(serializers.Serializer):
    """An input serializer for JSON bodies: a value of the wrong JSON type is refused, not coerced."""

    def to_internal_value(self, data: Any) -> Any:
        # Form data (a QueryDict) is all strings: there DRF's coercion is right.
        if isinstance(data, dict) and not hasattr(data, "getlist"):
            wrong = {}
            for name, field in self.fields.items():
                if not field.read_only and name in data and (problem := _json_type_problem(field, data[name])
                                                             or _too_long(field, data[name])):
                    wrong[name] = [problem]
            if wrong:
                raise serializers.ValidationError(wrong)
        return super().to_internal_value(data)


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


MONEY_PATTERN = r"^\d{0,10}(?:\.\d{0,2})?$"


@extend_schema_field({
    "oneOf": [
        {"type": "string", "format": "decimal", "pattern": MONEY_PATTERN},
        {"type": "number", "minimum": 0, "maximum": 9999999999.99},
    ],
    "description": "A decimal amount: at most 10 digits before the point and 2 after, not negative.",
})
class MoneyField(serializers.DecimalField):
    """An amount as the order columns hold it (a string, or a JSON number): at most 12 digits,
    2 of them decimals, not negative."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(max_digits=12, decimal_places=2, min_value=Decimal("0"), **kwargs)


class MoneyOutField(serializers.DecimalField):
    """An amount as the API writes it: a decimal string with two places."""

    def __init__(self, *, max_digits: int | None = 12, **kwargs: Any) -> None:
        super().__init__(max_digits=max_digits, decimal_places=2, **kwargs)


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
