"""Values a tool reads from a conversation's slots are checked, never trusted: a bad one is a clear error."""

from __future__ import annotations

import pytest

from billing.parsing import InvalidInput, parse_minutes


@pytest.mark.parametrize("value", ["180", 180, " 45 "])
def test_a_stay_length_in_minutes_is_read(value) -> None:  # noqa: ANN001
    assert parse_minutes(value, "duration_minutes") == int(str(value).strip())


@pytest.mark.parametrize("value", ["2026-12-04T02:00:00+08:00", "two hours", "", "0", "-30", "1e9", "600000"])
def test_anything_else_is_refused_with_the_field_named(value: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        parse_minutes(value, "duration_minutes")
    assert "duration_minutes" in refused.value.message and refused.value.details == {"duration_minutes": ["not a number of minutes"]}
