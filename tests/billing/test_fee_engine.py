"""Fee engine semantics, one rule at a time, with hand-computed amounts (the billing demo scenarios)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest

from billing.engine import (
    FeeResult,
    RulePayloadError,
    SegmentCharge,
    compile_payload,
    quantize_money,
    simulate_fee,
)

SH = ZoneInfo("Asia/Shanghai")
NY = ZoneInfo("America/New_York")


def at(day: int, hour: int, minute: int = 0, second: int = 0, tz=SH) -> datetime:
    """A time in March 2024; 2024-03-01 is a Friday."""
    return datetime(2024, 3, day, hour, minute, second, tzinfo=tz)


def periodic(name="day", start="08:00", end="20:00", unit=30, price=2, **extra) -> dict:
    return {
        "name": name,
        "type": "periodic",
        "time_window": {"start": start, "end": end},
        "unit_minutes": unit,
        "unit_price": price,
        **extra,
    }


def tiered(name="day", start="08:00", end="20:00", unit=30, tiers=None, **extra) -> dict:
    return {
        "name": name,
        "type": "tiered",
        "time_window": {"start": start, "end": end},
        "unit_minutes": unit,
        "tiers": tiers
        or [
            {"start_minute": 0, "end_minute": 120, "unit_price": 2},
            {"start_minute": 120, "end_minute": None, "unit_price": 3},
        ],
        **extra,
    }


def free(name="night", start="20:00", end="08:00", **extra) -> dict:
    return {"name": name, "type": "free", "time_window": {"start": start, "end": end}, **extra}


def rows(result: FeeResult) -> dict[str, tuple[int, str, int, bool]]:
    """Breakdown as name -> (minutes, amount, free_minutes, capped)."""
    return {
        r.segment_name: (r.minutes, f"{r.amount:.2f}", r.free_minutes, r.capped)
        for r in result.breakdown
    }


# --- periodic and round-up (SCN-001, SCN-002) -------------------------------------------


def test_periodic_whole_units():
    result = simulate_fee([periodic()], at(4, 8), at(4, 9))
    assert result.total_amount == Decimal("4.00")
    assert rows(result) == {"day": (60, "4.00", 0, False)}


def test_periodic_rounds_a_started_unit_up():
    # 65 minutes at 30-minute units: 3 units.
    assert simulate_fee([periodic()], at(4, 8), at(4, 9, 5)).total_amount == Decimal("6.00")


def test_round_up_with_odd_unit():
    # 46 minutes at 45-minute units: 2 units.
    payload = [periodic(unit=45, price="1.50")]
    assert simulate_fee(payload, at(4, 8), at(4, 8, 46)).total_amount == Decimal("3.00")


# --- caps (SCN-003, SCN-004, SCN-012, cap boundaries) -----------------------------------


def test_day_cap():
    # 12 h = 24 units = 48.00, capped at 20; 20:00-20:30 is covered by no segment.
    result = simulate_fee([periodic(max_charge=20)], at(4, 8), at(4, 20, 30))
    assert rows(result) == {"day": (720, "20.00", 0, True)}
    assert result.duration_minutes == 750


def test_cap_boundary_equal_is_not_capped_one_unit_over_is():
    payload = [periodic(max_charge=20)]
    assert rows(simulate_fee(payload, at(4, 8), at(4, 13))) == {"day": (300, "20.00", 0, False)}
    assert rows(simulate_fee(payload, at(4, 8), at(4, 13, 1))) == {"day": (301, "20.00", 0, True)}


def test_day_cap_resets_every_day():
    result = simulate_fee([periodic(max_charge=20)], at(4, 8), at(6, 20))
    assert result.total_amount == Decimal("60.00")


def test_day_and_night_caps_are_independent():
    payload = [
        periodic(max_charge=20),
        periodic("night", "20:00", "08:00", unit=60, price=1, max_charge=5, cap_period="window"),
    ]
    result = simulate_fee(payload, at(4, 8), at(5, 8))
    assert rows(result) == {"day": (720, "20.00", 0, True), "night": (720, "5.00", 0, True)}
    assert result.total_amount == Decimal("25.00")


def test_a_night_is_two_calendar_days_by_default():
    # As the original billing system counts: 20:00-24:00 (4 units) and 00:00-08:00 (8, capped at 5).
    payload = [periodic("night", "20:00", "08:00", unit=60, price=1, max_charge=5)]
    result = simulate_fee(payload, at(4, 20), at(5, 8))
    assert rows(result) == {"night": (720, "9.00", 0, True)}
    calendar = [{**payload[0], "cap_period": "calendar_day"}]
    assert simulate_fee(calendar, at(4, 20), at(5, 8)) == result


def test_cap_period_window_makes_a_night_one_cap_period():
    # 12 units in one night: capped once at 5.
    payload = [periodic("night", "20:00", "08:00", unit=60, price=1, max_charge=5, cap_period="window")]
    assert simulate_fee(payload, at(4, 20), at(5, 8)).total_amount == Decimal("5.00")


def test_tiers_restart_at_midnight_by_default_and_not_per_night_window():
    # 22:00-02:00 at 30-minute units: 2 h before midnight (4 units at 2.00), 2 h after.
    payload = [tiered("night", "20:00", "08:00")]
    by_day = simulate_fee(payload, at(4, 22), at(5, 2))
    assert rows(by_day) == {"night": (240, "16.00", 0, False)}  # both days in the first tier
    by_night = simulate_fee([{**payload[0], "cap_period": "window"}], at(4, 22), at(5, 2))
    assert rows(by_night) == {"night": (240, "20.00", 0, False)}  # 4 x 2.00 + 4 x 3.00


def test_free_minutes_come_off_the_first_calendar_day_and_units_round_per_day():
    # 23:00-01:00, 30 free minutes, 45-minute units: 30 chargeable before midnight (1 unit)
    # and 60 after (2 units); per night the 90 chargeable minutes are 2 units.
    payload = [periodic("night", "20:00", "08:00", unit=45, price=1, free_minutes=30)]
    assert rows(simulate_fee(payload, at(4, 23), at(5, 1))) == {"night": (120, "3.00", 30, False)}
    per_night = [{**payload[0], "cap_period": "window"}]
    assert rows(simulate_fee(per_night, at(4, 23), at(5, 1))) == {"night": (120, "2.00", 30, False)}


def test_zero_cap_makes_a_segment_free():
    result = simulate_fee([periodic(max_charge=0)], at(4, 8), at(4, 9))
    assert rows(result) == {"day": (60, "0.00", 0, True)}


# --- free segments (SCN-005, SCN-006) ---------------------------------------------------


def test_night_free():
    result = simulate_fee([periodic(), free()], at(4, 21), at(5, 7))
    assert rows(result) == {"night": (600, "0.00", 0, False)}
    assert result.total_amount == Decimal("0.00")


def test_day_charged_night_free():
    result = simulate_fee([periodic(), free()], at(4, 18), at(4, 22))
    assert rows(result) == {"day": (120, "8.00", 0, False), "night": (120, "0.00", 0, False)}


# --- tiers (scenarios SCN-007, SCN-013, SCN-014) -----------------------------------------


@pytest.mark.parametrize(
    ("exit_time", "amount"),
    [
        (at(4, 11), "8.00"),  # 2 h: 4 units in the first tier
        (at(4, 11, 30), "11.00"),  # 2.5 h: one unit more in the second tier
        (at(4, 12), "14.00"),  # 3 h: 4 x 2 + 2 x 3
    ],
)
def test_tiered_within_and_beyond_two_hours(exit_time, amount):
    assert simulate_fee([tiered()], at(4, 9), exit_time).total_amount == Decimal(amount)


def test_tiers_restart_each_day_with_night_free_ending_at_0829():
    # Day 1: 18:00-20:00 = 4 units x 2; night free; day 2: 08:00-08:29 = 1 unit, tier 1 again.
    result = simulate_fee([tiered(), free()], at(4, 18), at(5, 8, 29))
    assert rows(result) == {"day": (149, "10.00", 0, False), "night": (720, "0.00", 0, False)}


def test_tier_positions_count_chargeable_minutes_after_free_ones():
    tiers = [
        {"start_minute": 0, "end_minute": 60, "unit_price": 1},
        {"start_minute": 60, "end_minute": None, "unit_price": 5},
    ]
    # 90 minutes, 30 free: the 60 chargeable minutes are both in the first tier.
    result = simulate_fee([tiered(tiers=tiers, free_minutes=30)], at(4, 9), at(4, 10, 30))
    assert rows(result) == {"day": (90, "2.00", 30, False)}


def test_tier_gaps_and_after_a_closed_last_tier_are_not_charged():
    tiers = [
        {"start_minute": 0, "end_minute": 60, "unit_price": 1},
        {"start_minute": 90, "end_minute": 120, "unit_price": 2},
    ]
    # Units start at 0, 30 (tier 1), 60 (gap), 90 (tier 2), 120, 150 (past the last tier).
    assert simulate_fee([tiered(tiers=tiers)], at(4, 9), at(4, 12)).total_amount == Decimal("4.00")


def test_tiered_cap():
    # 12 h: 4 x 2 + 20 x 3 = 68, capped at 30.
    result = simulate_fee([tiered(max_charge="30.00")], at(4, 8), at(4, 20))
    assert rows(result) == {"day": (720, "30.00", 0, True)}


# --- free minutes (SCN-008, SCN-010, SCN-011) -------------------------------------------


@pytest.mark.parametrize(("minutes", "amount"), [(29, "0.00"), (30, "0.00"), (31, "2.00")])
def test_first_30_minutes_free_boundary(minutes, amount):
    payload = [periodic(free_minutes=30)]
    result = simulate_fee(payload, at(4, 9), at(4, 9) + timedelta(minutes=minutes))
    assert result.total_amount == Decimal(amount)
    assert result.breakdown[0].free_minutes == min(minutes, 30)


def test_free_minutes_are_used_once_per_stay():
    # Day 1: 08:00-20:00 = 720 - 30 free = 690 min = 23 units; day 2: 24 units.
    result = simulate_fee([periodic(free_minutes=30)], at(4, 8), at(5, 20))
    assert rows(result) == {"day": (1440, "94.00", 30, False)}


def test_free_minutes_belong_to_their_segment():
    payload = [periodic(free_minutes=30), periodic("night", "20:00", "08:00", unit=60, price=1)]
    # 10 day minutes eat 10 of the day's allowance; the night's 20 minutes are charged.
    result = simulate_fee(payload, at(4, 19, 50), at(4, 20, 20))
    assert rows(result) == {"day": (10, "0.00", 10, False), "night": (20, "1.00", 0, False)}


def test_free_minutes_spanning_more_than_a_week():
    payload = [periodic("all", "00:00", "00:00", unit=60, price=1, free_minutes=7 * 1440 + 60)]
    # Days 1-7 free, day 8: 60 free + 23 units, days 9-10: 24 units each.
    result = simulate_fee(payload, at(4, 0), at(14, 0))
    assert rows(result) == {"all": (14400, "71.00", 10140, False)}


def test_free_allowance_longer_than_the_stay():
    payload = [periodic("all", "00:00", "00:00", unit=60, price=1, free_minutes=7 * 1440 + 60)]
    result = simulate_fee(payload, at(4, 0), at(10, 0))
    assert rows(result) == {"all": (6 * 1440, "0.00", 6 * 1440, False)}


# --- windows: cross-midnight, all day, 24:00, first match -------------------------------


def test_all_day_window_rounds_per_calendar_day():
    # 30 minutes before and 30 after midnight: one started unit on each day.
    payload = [periodic("all", "00:00", "00:00", unit=60, price=1)]
    assert simulate_fee(payload, at(4, 23, 30), at(5, 0, 30)).total_amount == Decimal("2.00")


def test_all_day_window_from_0800_runs_0800_to_0800_per_window():
    payload = [periodic("all", "08:00", "08:00", unit=60, price=1, max_charge=10, cap_period="window")]
    # Midnight to midnight: 8 h of the day that began 08:00 yesterday, 16 h (cap 10) of today's.
    result = simulate_fee(payload, at(4, 0), at(5, 0))
    assert rows(result) == {"all": (1440, "18.00", 0, True)}


def test_all_day_window_from_0800_is_the_calendar_day_by_default():
    payload = [periodic("all", "08:00", "08:00", unit=60, price=1, max_charge=10)]
    assert rows(simulate_fee(payload, at(4, 0), at(5, 0))) == {"all": (1440, "10.00", 0, True)}


def test_end_2400_is_midnight():
    a = simulate_fee([periodic("late", "20:00", "24:00", unit=60, price=1)], at(4, 19), at(5, 2))
    b = simulate_fee([periodic("late", "20:00", "00:00", unit=60, price=1)], at(4, 19), at(5, 2))
    assert rows(a) == rows(b) == {"late": (240, "4.00", 0, False)}


def test_first_matching_segment_wins():
    payload = [
        periodic("peak", "10:00", "12:00", unit=60, price=5),
        periodic("day", "08:00", "20:00", unit=60, price=1),
    ]
    result = simulate_fee(payload, at(4, 9), at(4, 13))
    # day keeps 09:00-10:00 and 12:00-13:00: 120 minutes in one day = 2 units.
    assert rows(result) == {"peak": (120, "10.00", 0, False), "day": (120, "2.00", 0, False)}


def test_uncovered_minutes_are_free_and_not_in_the_breakdown():
    result = simulate_fee([periodic()], at(4, 6), at(4, 9))
    assert result.duration_minutes == 180
    assert rows(result) == {"day": (60, "4.00", 0, False)}


def test_segment_after_an_all_day_segment_never_wins():
    payload = [periodic("all", "00:00", "00:00", unit=60, price=1), periodic()]
    assert rows(simulate_fee(payload, at(4, 8), at(4, 10))) == {"all": (120, "2.00", 0, False)}


# --- weekdays -----------------------------------------------------------------------------


def test_weekdays_follow_the_day_a_night_window_starts_per_window():
    payload = [
        periodic("friday_night", "22:00", "06:00", unit=60, price=1, weekdays=[5], cap_period="window")
    ]
    # Friday 23:00 to Saturday 02:00 is Friday's night.
    assert rows(simulate_fee(payload, at(1, 23), at(2, 2))) == {
        "friday_night": (180, "3.00", 0, False)
    }
    # Saturday night is not.
    assert simulate_fee(payload, at(2, 23), at(3, 1)).breakdown == ()


def test_weekdays_are_checked_on_each_minutes_own_date_by_default():
    payload = [periodic("friday_night", "22:00", "06:00", unit=60, price=1, weekdays=[5])]
    # Friday 23:00 to Saturday 02:00: only the Friday hour; Thursday night's Friday morning counts.
    assert rows(simulate_fee(payload, at(1, 23), at(2, 2))) == {"friday_night": (60, "1.00", 0, False)}
    assert rows(simulate_fee(payload, at(1, 5), at(1, 7))) == {"friday_night": (60, "1.00", 0, False)}


def test_weekday_and_weekend_segments():
    payload = [
        periodic("weekend", "00:00", "00:00", unit=60, price=3, weekdays=[6, 7]),
        periodic("weekday", "00:00", "00:00", unit=60, price=1),
    ]
    # Friday 22:00 to Saturday 02:00: 2 weekday hours, 2 weekend hours.
    result = simulate_fee(payload, at(1, 22), at(2, 2))
    assert rows(result) == {"weekend": (120, "6.00", 0, False), "weekday": (120, "2.00", 0, False)}


def test_weekdays_over_four_weeks():
    # 20 weekdays from Monday 2024-03-04, each 12 units capped at 10.
    payload = [periodic(unit=60, price=1, max_charge=10, weekdays=[1, 2, 3, 4, 5])]
    assert rows(simulate_fee(payload, at(4, 0), at(4, 0) + timedelta(days=28))) == {
        "day": (20 * 720, "200.00", 0, True)
    }


# --- time zones and DST -------------------------------------------------------------------


def test_default_timezone_is_shanghai():
    # 00:00 UTC is 08:00 in Shanghai.
    entry = datetime(2024, 3, 4, 0, 0, tzinfo=UTC)
    result = simulate_fee([periodic()], entry, entry + timedelta(hours=1))
    assert result.total_amount == Decimal("4.00")


def test_window_in_its_own_timezone():
    utc_morning = periodic("utc", "00:00", "12:00", unit=60, price=1)
    utc_morning["time_window"]["timezone"] = "UTC"
    # 08:00-10:00 Shanghai is 00:00-02:00 UTC.
    assert rows(simulate_fee([utc_morning], at(4, 8), at(4, 10))) == {
        "utc": (120, "2.00", 0, False)
    }


def test_spring_forward_day_has_23_hours():
    payload = [periodic("all", "00:00", "00:00", unit=60, price=1)]
    payload[0]["time_window"]["timezone"] = "America/New_York"
    entry = datetime(2024, 3, 10, 0, 0, tzinfo=NY)
    result = simulate_fee(payload, entry, datetime(2024, 3, 11, 0, 0, tzinfo=NY))
    assert rows(result) == {"all": (23 * 60, "23.00", 0, False)}


def test_fall_back_day_has_25_hours_in_one_day():
    payload = [periodic("all", "00:00", "00:00", unit=60, price=1, max_charge=24)]
    payload[0]["time_window"]["timezone"] = "America/New_York"
    entry = datetime(2024, 11, 3, 0, 0, tzinfo=NY)
    result = simulate_fee(payload, entry, datetime(2024, 11, 4, 0, 0, tzinfo=NY))
    assert result.duration_minutes == 25 * 60
    assert rows(result) == {"all": (25 * 60, "24.00", 0, True)}


def test_repeated_hour_counts_for_the_day_its_wall_clock_shows():
    # Days run 01:30-01:30. At the fall back (02:00 EDT -> 01:00 EST on Nov 3) the repeated
    # 01:00-01:30 belongs to Nov 2's day again and 01:30-02:00 EDT already to Nov 3's: each
    # day has 1470 minutes = 25 units, capped at 24 once per day.
    payload = [periodic("all", "01:30", "01:30", unit=60, price=1, max_charge=24, cap_period="window")]
    payload[0]["time_window"]["timezone"] = "America/New_York"
    entry = datetime(2024, 11, 2, 1, 30, tzinfo=NY)
    exit = datetime(2024, 11, 4, 1, 30, tzinfo=NY)
    assert rows(simulate_fee(payload, entry, exit)) == {"all": (2940, "48.00", 0, True)}


def test_fall_back_calendar_day_is_one_period_of_25_hours():
    # The same stay counted by calendar day: Nov 2 from 01:30 (23 units), Nov 3 with its
    # repeated hour (25 units, capped at 24), Nov 4 to 01:30 (2 units).
    payload = [periodic("all", "01:30", "01:30", unit=60, price=1, max_charge=24)]
    payload[0]["time_window"]["timezone"] = "America/New_York"
    entry = datetime(2024, 11, 2, 1, 30, tzinfo=NY)
    exit = datetime(2024, 11, 4, 1, 30, tzinfo=NY)
    assert rows(simulate_fee(payload, entry, exit)) == {"all": (2940, "49.00", 0, True)}


def test_day_starting_in_a_skipped_hour():
    # Days run 02:30-02:30; 02:00-03:00 does not exist on Mar 10, so both days have 23.5 h.
    payload = [periodic("all", "02:30", "02:30", unit=60, price=1, cap_period="window")]
    payload[0]["time_window"]["timezone"] = "America/New_York"
    entry = datetime(2024, 3, 9, 2, 30, tzinfo=NY)
    exit = datetime(2024, 3, 11, 2, 30, tzinfo=NY)
    assert rows(simulate_fee(payload, entry, exit)) == {"all": (2820, "48.00", 0, False)}


def test_year_long_stay_across_dst_changes():
    payload = [periodic("all", "00:00", "00:00", unit=60, price=1, max_charge=10)]
    payload[0]["time_window"]["timezone"] = "America/New_York"
    entry = datetime(2024, 1, 1, 0, 0, tzinfo=NY)
    result = simulate_fee(payload, entry, entry.replace(year=2025))
    assert rows(result) == {"all": (366 * 1440, "3660.00", 0, True)}


def test_exit_after_a_fold_is_measured_in_real_time():
    # Both in New York: 01:50 EDT, then 01:10 EST (fold=1) is 20 minutes later.
    entry = datetime(2024, 11, 3, 1, 50, tzinfo=NY)
    exit = datetime(2024, 11, 3, 1, 10, fold=1, tzinfo=NY)
    assert simulate_fee([periodic("all", "00:00", "00:00")], entry, exit).duration_minutes == 20


# --- duration and result shape ------------------------------------------------------------


def test_duration_counts_started_minutes_from_the_entry_minute():
    result = simulate_fee([periodic(unit=1, price="0.10")], at(4, 8, 0, 30), at(4, 8, 30, 31))
    assert result.duration_minutes == 31
    assert result.total_amount == Decimal("3.10")


def test_empty_stay():
    result = simulate_fee([periodic()], at(4, 9), at(4, 9))
    assert result == FeeResult(0, Decimal("0.00"), ())


def test_to_dict_shape():
    result = simulate_fee([periodic(max_charge=20), free()], at(4, 19), at(4, 21))
    assert result.to_dict() == {
        "duration_minutes": 120,
        "total_amount": "4.00",
        "breakdown": [
            {
                "segment_name": "day",
                "segment_type": "periodic",
                "minutes": 60,
                "amount": "4.00",
                "free_minutes": 0,
                "capped": False,
            },
            {
                "segment_name": "night",
                "segment_type": "free",
                "minutes": 60,
                "amount": "0.00",
                "free_minutes": 0,
                "capped": False,
            },
        ],
    }
    assert isinstance(result.breakdown[0], SegmentCharge)


def test_compiled_and_raw_payloads_agree():
    payload = [periodic(free_minutes=30, max_charge=20), tiered("evening", "20:00", "23:00")]
    compiled = compile_payload(payload)
    assert compile_payload(compiled) is compiled
    for days in (0, 1, 3, 40):
        exit = at(4, 21) + timedelta(days=days)
        assert simulate_fee(compiled, at(4, 7), exit) == simulate_fee(payload, at(4, 7), exit)


def test_mutating_a_raw_payload_is_seen_by_the_next_call():
    payload = [periodic()]
    assert simulate_fee(payload, at(4, 8), at(4, 9)).total_amount == Decimal("4.00")
    payload[0]["unit_price"] = 3
    assert simulate_fee(payload, at(4, 8), at(4, 9)).total_amount == Decimal("6.00")


# --- errors -------------------------------------------------------------------------------


def test_naive_datetimes_are_refused():
    with pytest.raises(ValueError, match="timezone-aware"):
        simulate_fee([periodic()], datetime(2024, 3, 4, 8), at(4, 9))  # noqa: DTZ001
    with pytest.raises(ValueError, match="timezone-aware"):
        simulate_fee([periodic()], at(4, 8), datetime(2024, 3, 4, 9))  # noqa: DTZ001


def test_exit_before_entry_is_refused():
    with pytest.raises(ValueError, match="before"):
        simulate_fee([periodic()], at(4, 9), at(4, 8))


def test_invalid_payload_is_refused_with_its_problems():
    with pytest.raises(RulePayloadError) as raised:
        simulate_fee([periodic(unit=0)], at(4, 8), at(4, 9))
    assert [p.path for p in raised.value.problems] == ["rule_payload[0].unit_minutes"]


# --- money --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [(2.675, "2.68"), (Decimal("1.005"), "1.01"), (1, "1.00"), ("0.004", "0.00"), (0.125, "0.13")],
)
def test_quantize_money_rounds_half_up(value, expected):
    assert quantize_money(value) == Decimal(expected)
    assert str(quantize_money(value)) == expected
