"""Rule payload validation: every problem is reported with its JSON path."""

from __future__ import annotations

import copy
from decimal import Decimal

import pytest

from billing.engine import (
    CompiledPayload,
    PayloadProblem,
    RulePayloadError,
    compile_payload,
    validate_rule_payload,
)

VALID = [
    {
        "name": "weekend",
        "type": "tiered",
        "time_window": {"start": "00:00", "end": "00:00", "timezone": "Asia/Shanghai"},
        "weekdays": [6, 7],
        "unit_minutes": 30,
        "tiers": [
            {"start_minute": 0, "end_minute": 120, "unit_price": 2},
            {"start_minute": 120, "end_minute": None, "unit_price": "3.50"},
        ],
        "max_charge": 30,
    },
    {
        "name": "day",
        "type": "periodic",
        "time_window": {"start": "08:00", "end": "20:00"},
        "unit_minutes": 30,
        "unit_price": 2.5,
        "free_minutes": 30,
        "max_charge": Decimal("20.00"),
    },
    {"name": "night", "type": "free", "time_window": {"start": "20:00", "end": "24:00"}},
]


def problems(payload) -> dict[str, str]:
    return {p.path: p.message for p in validate_rule_payload(payload)}


def with_change(index: int, **changes) -> list[dict]:
    payload = copy.deepcopy(VALID)
    for key, value in changes.items():
        if value is ...:
            del payload[index][key]
        else:
            payload[index][key] = value
    return payload


def test_valid_payload_has_no_problems():
    assert validate_rule_payload(VALID) == []
    compiled = compile_payload(VALID)
    assert isinstance(compiled, CompiledPayload)
    assert [s.name for s in compiled.segments] == ["weekend", "day", "night"]
    assert compiled.segments[1].unit_price_cents == 250
    assert compiled.segments[2].length == 240


@pytest.mark.parametrize(
    ("payload", "message"),
    [({"name": "x"}, "must be a list of segments"), ([], "must contain at least one segment")],
)
def test_payload_must_be_a_non_empty_list(payload, message):
    assert problems(payload) == {"rule_payload": message}


def test_segment_must_be_an_object():
    assert problems([*VALID, "oops"]) == {"rule_payload[3]": "must be an object"}


def test_required_fields():
    found = problems([{}])
    assert set(found) == {
        "rule_payload[0].name",
        "rule_payload[0].type",
        "rule_payload[0].time_window",
    }


def test_periodic_needs_unit_minutes_and_price():
    found = problems(with_change(1, unit_minutes=..., unit_price=...))
    assert found == {
        "rule_payload[1].unit_minutes": "is required for periodic segments",
        "rule_payload[1].unit_price": "is required for periodic segments",
    }


def test_unknown_type_and_field():
    found = problems(with_change(1, type="hourly", free_minute=30))
    assert found == {
        "rule_payload[1].type": "must be one of periodic, tiered, free",
        "rule_payload[1].free_minute": "unknown field",
    }


def test_duplicate_names():
    found = problems(with_change(2, name="day"))
    assert found == {"rule_payload[2].name": "repeats the name of rule_payload[1]"}


@pytest.mark.parametrize("value", ["8:00", "24:00", "23:60", "0800", 800, None, "08:00:00"])
def test_window_start_format(value):
    payload = with_change(1, time_window={"start": value, "end": "20:00"})
    assert list(problems(payload)) == ["rule_payload[1].time_window.start"]


@pytest.mark.parametrize("value", ["00:00", "23:59", "24:00", "08:00"])
def test_window_end_accepts_hhmm_and_2400(value):
    assert problems(with_change(1, time_window={"start": "08:00", "end": value})) == {}


def test_window_shape_and_timezone():
    assert problems(with_change(1, time_window="08:00-20:00")) == {
        "rule_payload[1].time_window": "must be an object with start and end"
    }
    found = problems(
        with_change(1, time_window={"start": "08:00", "timezone": "Mars/Base", "x": 1})
    )
    assert found == {
        "rule_payload[1].time_window.end": "is required",
        "rule_payload[1].time_window.timezone": "unknown time zone 'Mars/Base'",
        "rule_payload[1].time_window.x": "unknown field",
    }
    assert list(
        problems(
            with_change(
                1, time_window={"start": "08:00", "end": "09:00", "timezone": "/etc/passwd"}
            )
        )
    )


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ([], "rule_payload[0].weekdays"),
        ("6,7", "rule_payload[0].weekdays"),
        ([0, 6], "rule_payload[0].weekdays[0]"),
        ([6, 8], "rule_payload[0].weekdays[1]"),
        ([6, "7"], "rule_payload[0].weekdays[1]"),
        ([6, True], "rule_payload[0].weekdays[1]"),
        ([6, 6], "rule_payload[0].weekdays[1]"),
    ],
)
def test_weekdays_are_iso_1_to_7(value, path):
    assert list(problems(with_change(0, weekdays=value))) == [path]


def test_null_weekdays_means_every_day():
    assert problems(with_change(0, weekdays=None)) == {}


@pytest.mark.parametrize("value", [0, -30, 1.5, "30", True])
def test_unit_minutes_is_a_positive_integer(value):
    assert problems(with_change(1, unit_minutes=value)) == {
        "rule_payload[1].unit_minutes": "must be an integer > 0"
    }


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (-1, "must not be negative"),
        ("abc", "must be a number or a decimal string"),
        ("0.001", "must have at most two decimal places"),
        (0.001, "must have at most two decimal places"),
        (float("nan"), "must be a finite number"),
        (Decimal("Infinity"), "must be a finite number"),
        (True, "must be a number or a decimal string"),
        ([2], "must be a number or a decimal string"),
    ],
)
def test_money_fields(value, message):
    assert problems(with_change(1, unit_price=value)) == {"rule_payload[1].unit_price": message}
    assert problems(with_change(1, max_charge=value)) == {"rule_payload[1].max_charge": message}


@pytest.mark.parametrize("value", [0, "0", 0.0, "12.30", 12.3, Decimal("7")])
def test_money_accepts_numbers_and_decimal_strings(value):
    assert problems(with_change(1, unit_price=value, max_charge=value)) == {}


def test_free_minutes_and_null_optionals():
    assert problems(with_change(1, free_minutes=-1)) == {
        "rule_payload[1].free_minutes": "must be an integer >= 0"
    }
    assert problems(with_change(1, free_minutes=None, max_charge=None)) == {}


def test_tiered_needs_tiers():
    assert problems(with_change(0, tiers=...)) == {
        "rule_payload[0].tiers": "must be a non-empty list of tiers"
    }
    assert problems(with_change(0, tiers=[])) == {
        "rule_payload[0].tiers": "must be a non-empty list of tiers"
    }


def test_tiers_only_on_tiered_segments():
    assert problems(with_change(1, tiers=VALID[0]["tiers"])) == {
        "rule_payload[1].tiers": "only tiered segments take tiers"
    }


def test_tier_fields():
    tiers = [
        {"start_minute": -1, "end_minute": 60, "unit_price": 2},
        {"start_minute": 60, "end_minute": 60, "unit_price": 2},
        {"end_minute": None},
        "tier",
        {"start_minute": 500, "unit_price": 1, "price": 3},
    ]
    assert problems(with_change(0, tiers=tiers)) == {
        "rule_payload[0].tiers[0].start_minute": "must be an integer >= 0",
        "rule_payload[0].tiers[1].end_minute": "must be null or an integer > start_minute",
        "rule_payload[0].tiers[2].start_minute": "is required",
        "rule_payload[0].tiers[2].unit_price": "is required",
        "rule_payload[0].tiers[3]": "must be an object",
        "rule_payload[0].tiers[4].price": "unknown field",
    }


def test_tiers_sorted_without_overlap_and_open_only_last():
    overlapping = [
        {"start_minute": 0, "end_minute": 120, "unit_price": 2},
        {"start_minute": 60, "end_minute": None, "unit_price": 3},
    ]
    assert list(problems(with_change(0, tiers=overlapping))) == [
        "rule_payload[0].tiers[1].start_minute"
    ]
    open_first = [
        {"start_minute": 0, "end_minute": None, "unit_price": 2},
        {"start_minute": 120, "end_minute": 180, "unit_price": 3},
    ]
    assert problems(with_change(0, tiers=open_first)) == {
        "rule_payload[0].tiers[0].end_minute": "only the last tier may be open-ended"
    }
    with_gap = [
        {"start_minute": 30, "end_minute": 60, "unit_price": 2},
        {"start_minute": 90, "end_minute": 120, "unit_price": 3},
    ]
    assert problems(with_change(0, tiers=with_gap)) == {}


def test_every_problem_is_listed():
    payload = [
        {"name": "", "type": "periodic", "time_window": {"start": "25:00", "end": "x"}},
        {
            "name": "b",
            "type": "tiered",
            "time_window": {"start": "08:00", "end": "09:00", "timezone": 8},
            "unit_minutes": 0,
            "tiers": [{"start_minute": 0, "unit_price": -1}],
            "max_charge": "lots",
        },
    ]
    assert validate_rule_payload(payload) == [
        PayloadProblem("rule_payload[0].name", "is required: a non-empty string"),
        PayloadProblem(
            "rule_payload[0].time_window.start", "must be HH:MM between 00:00 and 23:59"
        ),
        PayloadProblem(
            "rule_payload[0].time_window.end", "must be HH:MM between 00:00 and 23:59 or 24:00"
        ),
        PayloadProblem("rule_payload[0].unit_minutes", "is required for periodic segments"),
        PayloadProblem("rule_payload[0].unit_price", "is required for periodic segments"),
        PayloadProblem("rule_payload[1].time_window.timezone", "must be an IANA time zone name"),
        PayloadProblem("rule_payload[1].unit_minutes", "must be an integer > 0"),
        PayloadProblem("rule_payload[1].max_charge", "must be a number or a decimal string"),
        PayloadProblem("rule_payload[1].tiers[0].unit_price", "must not be negative"),
    ]


def test_compile_raises_with_all_problems():
    payload = with_change(1, unit_minutes=0, unit_price=-2)
    with pytest.raises(RulePayloadError) as raised:
        compile_payload(payload)
    assert list(raised.value.problems) == validate_rule_payload(payload)
    assert len(raised.value.problems) == 2
    assert "rule_payload[1].unit_minutes" in str(raised.value)
    assert isinstance(raised.value, ValueError)


def test_free_segment_fields_are_optional_but_checked_when_given():
    assert problems(with_change(2, unit_minutes=30, unit_price=1)) == {}
    assert problems(with_change(2, unit_minutes=-5)) == {
        "rule_payload[2].unit_minutes": "must be an integer > 0"
    }


@pytest.mark.parametrize("value", ["calendar_day", "window", None])
def test_cap_period_takes_calendar_day_or_window(value):
    payload = copy.deepcopy(VALID)
    payload[1]["cap_period"] = value
    assert validate_rule_payload(payload) == []
    assert compile_payload(payload).segments[1].cap_period == (value or "calendar_day")


@pytest.mark.parametrize("value", ["night", "Window", "", 1, True, ["window"]])
def test_cap_period_anything_else_is_a_problem(value):
    payload = copy.deepcopy(VALID)
    payload[1]["cap_period"] = value
    assert validate_rule_payload(payload) == [
        PayloadProblem("rule_payload[1].cap_period", "must be calendar_day or window")
    ]


def test_a_night_splits_at_midnight_only_by_calendar_day():
    night = {"name": "night", "type": "periodic", "unit_minutes": 60, "unit_price": 1,
             "time_window": {"start": "20:00", "end": "08:00"}}
    by_day = compile_payload([night]).segments[0]
    by_night = compile_payload([{**night, "cap_period": "window"}]).segments[0]
    assert by_day.pieces == ((0, 480), (1200, 240))
    assert by_night.pieces == ((1200, 720),)
