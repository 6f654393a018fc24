"""The fee rules done the slow, obvious way: look at every minute of the stay.

Used by the property tests and bench/billing.py as the oracle for billing.engine. It reads
the raw payload itself (assuming it is valid) and shares no code with the engine.
"""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

DEFAULT_TIMEZONE = "Asia/Shanghai"


def _minute_of_day(text: str) -> int:
    hours, minutes = text.split(":")
    return int(hours) * 60 + int(minutes)


def _contains(start: int, end: int, minute_of_day: int) -> bool:
    if start == end:
        return True  # all day
    if start < end:
        return start <= minute_of_day < end
    return minute_of_day >= start or minute_of_day < end  # crosses midnight


def _day_amount(segment: dict, chargeable: int) -> Decimal:
    if segment["type"] == "free" or chargeable == 0:
        return Decimal(0)
    unit = segment["unit_minutes"]
    units = math.ceil(chargeable / unit)
    if segment["type"] == "periodic":
        return units * Decimal(str(segment["unit_price"]))
    amount = Decimal(0)
    for k in range(units):
        position = k * unit
        for tier in segment["tiers"]:
            end = tier.get("end_minute")
            if tier["start_minute"] <= position and (end is None or position < end):
                amount += Decimal(str(tier["unit_price"]))
                break
    return amount


def reference_fee(payload: list[dict], entry: datetime, exit: datetime) -> dict:
    """Return {"duration_minutes", "total_amount", "segments": {name: row}} minute by minute."""
    entry, exit = entry.astimezone(UTC), exit.astimezone(UTC)  # instants, not wall clocks
    span = exit - entry
    micros = (span.days * 86_400 + span.seconds) * 1_000_000 + span.microseconds
    duration = math.ceil(micros / 60_000_000)
    first_minute = entry.astimezone(UTC).replace(second=0, microsecond=0)

    free_left = {
        s["name"]: 0 if s["type"] == "free" else (s.get("free_minutes") or 0) for s in payload
    }
    minutes = {s["name"]: 0 for s in payload}
    freed = {s["name"]: 0 for s in payload}
    chargeable: dict[tuple[str, date], int] = {}

    for k in range(duration):
        instant = first_minute + timedelta(minutes=k)
        for segment in payload:
            window = segment["time_window"]
            local = instant.astimezone(ZoneInfo(window.get("timezone") or DEFAULT_TIMEZONE))
            now = local.hour * 60 + local.minute
            start, end = _minute_of_day(window["start"]), _minute_of_day(window["end"])
            if not _contains(start, end, now):
                continue
            if segment.get("cap_period") == "window":
                # One occurrence is one period: it began today if we are past its start.
                anchor = local.date() if now >= start else local.date() - timedelta(days=1)
            else:  # calendar_day, the default: the minute's own local date
                anchor = local.date()
            weekdays = segment.get("weekdays")
            if weekdays is not None and anchor.isoweekday() not in weekdays:
                continue
            name = segment["name"]
            minutes[name] += 1
            if free_left[name] > 0:
                free_left[name] -= 1
                freed[name] += 1
            else:
                chargeable[(name, anchor)] = chargeable.get((name, anchor), 0) + 1
            break

    amounts = {s["name"]: Decimal(0) for s in payload}
    capped = {s["name"]: False for s in payload}
    for segment in payload:
        name = segment["name"]
        for (day_name, _anchor), count in chargeable.items():
            if day_name != name:
                continue
            amount = _day_amount(segment, count)
            cap = segment.get("max_charge")
            if cap is not None and amount > Decimal(str(cap)):
                amount = Decimal(str(cap))
                capped[name] = True
            amounts[name] += amount

    segments = {
        s["name"]: {
            "segment_type": s["type"],
            "minutes": minutes[s["name"]],
            "amount": amounts[s["name"]].quantize(Decimal("0.01")),
            "free_minutes": freed[s["name"]],
            "capped": capped[s["name"]],
        }
        for s in payload
        if minutes[s["name"]]
    }
    total = sum((row["amount"] for row in segments.values()), Decimal(0))
    return {
        "duration_minutes": duration,
        "total_amount": total.quantize(Decimal("0.01")),
        "segments": segments,
    }
