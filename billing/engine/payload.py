"""Billing rule payloads: validation with every problem's JSON path, and compilation.

A payload is a list of segments; the first segment whose window contains a minute wins it::

    {"name": "day", "type": "periodic" | "tiered" | "free",
     "time_window": {"start": "HH:MM", "end": "HH:MM", "timezone": "Asia/Shanghai"},
     "weekdays": [1, 2, 3, 4, 5],          # optional, ISO 1 = Monday .. 7 = Sunday
     "unit_minutes": 30, "unit_price": 2,  # periodic: price per started unit
     "free_minutes": 30,                   # optional, default 0
     "max_charge": 20,                     # optional, null = no cap
     "cap_period": "calendar_day",         # optional: "calendar_day" (default) | "window"
     "tiers": [{"start_minute": 0, "end_minute": 120, "unit_price": 2},
               {"start_minute": 120, "end_minute": null, "unit_price": 3}]}  # tiered only

Rules enforced here (the requirements are silent on most; these are the choices):

- ``name`` is a non-empty string, unique in the payload (breakdown rows are keyed by it).
- ``time_window.start``/``end`` are ``HH:MM`` 00:00..23:59; ``end`` may also be ``24:00``
  (midnight at the end of the day). ``end < start`` crosses midnight, ``end == start`` is a
  whole day starting at ``start``. ``timezone`` is an IANA key, default ``Asia/Shanghai``.
- ``weekdays`` lists ISO weekdays 1..7 (Monday = 1), non-empty, without repeats; absent or
  null means every day. It is tested against the segment's period day (below).
- ``cap_period`` says what one charging period is (SPEC "Billing rule payload"):
  ``"calendar_day"`` (the default, as the original billing system counts): every minute belongs to
  the local calendar day it falls in, so a night 20:00-08:00 is two periods split at
  midnight and ``weekdays`` is checked on each minute's own date; ``"window"``: one window
  occurrence is one period, its day the local day on which it starts (a Friday night stays a
  Friday night after midnight). Caps, tier positions and free-minute days follow the period.
- ``unit_minutes`` (integer > 0) is required for periodic and tiered segments, ``unit_price``
  for periodic ones, ``tiers`` (non-empty) for tiered ones. Money values (``unit_price``,
  ``max_charge``, tier prices) are non-negative numbers or decimal strings with at most two
  decimal places, so every charge is exact in cents. ``free_minutes`` is an integer >= 0.
- Tiers are sorted by ``start_minute``, do not overlap, and only the last may be open-ended
  (``end_minute`` null). Gaps are allowed: a unit whose first position falls in no tier is
  not charged, nor is anything after a closed last tier.
- Fields that a segment's type does not use are validated when present and not null, and
  otherwise ignored, except ``tiers`` on a non-tiered segment, which is an error because it
  would silently not apply. Unknown fields are errors (they are usually typos).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from billing.engine.money import parse_money_cents
from billing.engine.zones import zone

DEFAULT_TIMEZONE = "Asia/Shanghai"
SEGMENT_TYPES = ("periodic", "tiered", "free")
DAY = 1440

_SEGMENT_FIELDS = frozenset(
    {
        "name",
        "type",
        "time_window",
        "weekdays",
        "unit_minutes",
        "unit_price",
        "free_minutes",
        "max_charge",
        "tiers",
        "cap_period",
    }
)
CAP_PERIODS = ("calendar_day", "window")
_WINDOW_FIELDS = frozenset({"start", "end", "timezone"})
_TIER_FIELDS = frozenset({"start_minute", "end_minute", "unit_price"})
_HHMM = re.compile(r"([01][0-9]|2[0-3]):([0-5][0-9])")


@dataclass(frozen=True)
class PayloadProblem:
    """One thing wrong with a rule payload, at a JSON path like rule_payload[1].time_window.end."""

    path: str
    message: str


class RulePayloadError(ValueError):
    """Raised by compile_payload for an invalid payload; carries every problem found."""

    def __init__(self, problems: Sequence[PayloadProblem]) -> None:
        self.problems = tuple(problems)
        listed = "; ".join(f"{p.path}: {p.message}" for p in self.problems)
        super().__init__(f"invalid rule payload: {listed}")


@dataclass(frozen=True)
class CompiledTier:
    """A tier as a half-open range of unit indices [first_unit, stop_unit) and a price in cents."""

    first_unit: int
    stop_unit: int | None
    price_cents: int


@dataclass(frozen=True)
class CompiledSegment:
    """A validated segment with its window as local minute offsets and prices in cents."""

    name: str
    type: str
    timezone: str
    cap_period: str  # "calendar_day" | "window"
    # A period is the segment's minutes belonging to one local day d: the pieces (start,
    # length), in minutes after d's local midnight, sorted. A window period is one piece that
    # may run into the next day; a calendar-day period of a window crossing midnight is the
    # morning piece and the evening piece of d.
    pieces: tuple[tuple[int, int], ...]
    start: int  # where the pieces begin and how far they reach: a period's envelope
    length: int
    day_mask: tuple[bool, ...] | None  # indexed by (days since 1970-01-01) % 7; None = every day
    unit_minutes: int
    unit_price_cents: int
    tiers: tuple[CompiledTier, ...]
    free_minutes: int
    max_charge_cents: int | None
    _charges: dict[int, tuple[int, bool]] = field(
        default_factory=dict, compare=False, repr=False, hash=False
    )

    def charge(self, minutes: int) -> tuple[int, bool]:
        """Return (cents, capped) for one local day's chargeable minutes in this segment."""
        found = self._charges.get(minutes)
        if found is not None:
            return found
        if self.type == "free" or minutes <= 0:
            cents = 0
        else:
            units = -(-minutes // self.unit_minutes)
            if self.type == "periodic":
                cents = units * self.unit_price_cents
            else:
                cents = 0
                for tier in self.tiers:
                    stop = units if tier.stop_unit is None else min(tier.stop_unit, units)
                    if stop > tier.first_unit:
                        cents += (stop - tier.first_unit) * tier.price_cents
        cap = self.max_charge_cents
        found = (cap, True) if cap is not None and cents > cap else (cents, False)
        if len(self._charges) < 4096:
            self._charges[minutes] = found
        return found


@dataclass(frozen=True)
class CompiledPayload:
    """A validated payload, parsed once; simulate_fee reuses it and its caches across calls."""

    segments: tuple[CompiledSegment, ...]
    timezones: tuple[str, ...]  # distinct zone keys, in first-use order
    segment_zone: tuple[int, ...]  # index into timezones for each segment
    weekly: bool  # some segment has weekdays, so whole days fall into 7 classes, not 1
    # (pieces, day_mask) per segment: what first-match needs, unpacked for speed
    geometry: tuple[tuple[tuple[tuple[int, int], ...], tuple[bool, ...] | None], ...]
    # a segment after an every-day, all-day segment can never win a minute
    shadowed: tuple[bool, ...]
    # offsets per segment -> per segment, whole days by weekday (fees.DayClasses)
    _day_classes: dict[tuple[int, ...], tuple] = field(
        default_factory=dict, compare=False, repr=False, hash=False
    )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _hhmm(value: object, *, allow_24: bool) -> int | None:
    if not isinstance(value, str):
        return None
    if allow_24 and value == "24:00":
        return DAY
    match = _HHMM.fullmatch(value)
    if match is None:
        return None
    return int(match.group(1)) * 60 + int(match.group(2))


class _Checker:
    """Collects problems while reading a payload; returns parsed values for compilation."""

    def __init__(self) -> None:
        self.problems: list[PayloadProblem] = []

    def add(self, path: str, message: str) -> None:
        self.problems.append(PayloadProblem(path, message))

    def unknown(self, path: str, data: Mapping, allowed: frozenset[str]) -> None:
        for key in data:
            if key not in allowed:
                self.add(f"{path}.{key}", "unknown field")

    def money(self, path: str, value: object) -> int | None:
        cents, error = parse_money_cents(value)
        if error is not None:
            self.add(path, error)
        return cents

    def window(self, path: str, data: object) -> tuple[int, int, str] | None:
        if not isinstance(data, Mapping):
            self.add(path, "must be an object with start and end")
            return None
        self.unknown(path, data, _WINDOW_FIELDS)
        bounds = []
        for key in ("start", "end"):
            if key not in data:
                self.add(f"{path}.{key}", "is required")
                bounds.append(None)
                continue
            minute = _hhmm(data[key], allow_24=key == "end")
            if minute is None:
                allowed = "HH:MM between 00:00 and 23:59" + (" or 24:00" if key == "end" else "")
                self.add(f"{path}.{key}", f"must be {allowed}")
            bounds.append(minute)
        key = data.get("timezone")
        if key is None:
            key = DEFAULT_TIMEZONE
        elif not isinstance(key, str):
            self.add(f"{path}.timezone", "must be an IANA time zone name")
            key = None
        else:
            try:
                zone(key)
            except (KeyError, ValueError, OSError):
                self.add(f"{path}.timezone", f"unknown time zone {key!r}")
                key = None
        start, end = bounds
        if start is None or end is None or key is None:
            return None
        # end <= start crosses midnight (end == start: one whole day from start).
        length = end - start if end > start else end + DAY - start
        return start, length, key

    def weekdays(self, path: str, value: object) -> tuple[bool, ...] | None:
        if value is None:
            return None
        if not isinstance(value, list | tuple) or not value:
            self.add(path, "must be a non-empty list of ISO weekdays 1..7 (1 = Monday)")
            return None
        days = set()
        for i, day in enumerate(value):
            if not _is_int(day) or not 1 <= day <= 7:
                self.add(f"{path}[{i}]", "must be an ISO weekday 1..7 (1 = Monday)")
            elif day in days:
                self.add(f"{path}[{i}]", f"repeats weekday {day}")
            else:
                days.add(day)
        # 1970-01-01 (epoch day 0) was a Thursday, ISO weekday 4.
        return tuple((r + 3) % 7 + 1 in days for r in range(7))

    def count(self, path: str, value: object, *, positive: bool) -> int | None:
        if not _is_int(value) or value < (1 if positive else 0):
            self.add(path, "must be an integer > 0" if positive else "must be an integer >= 0")
            return None
        return value

    def tiers(self, path: str, value: object, unit: int | None) -> tuple[CompiledTier, ...]:
        if not isinstance(value, list | tuple) or not value:
            self.add(path, "must be a non-empty list of tiers")
            return ()
        parsed = []
        for i, tier in enumerate(value):
            tier_path = f"{path}[{i}]"
            if not isinstance(tier, Mapping):
                self.add(tier_path, "must be an object")
                parsed.append(None)
                continue
            self.unknown(tier_path, tier, _TIER_FIELDS)
            first = None
            if "start_minute" not in tier:
                self.add(f"{tier_path}.start_minute", "is required")
            else:
                first = self.count(
                    f"{tier_path}.start_minute", tier["start_minute"], positive=False
                )
            stop = tier.get("end_minute")
            if stop is not None and (not _is_int(stop) or stop <= (first or 0)):
                self.add(f"{tier_path}.end_minute", "must be null or an integer > start_minute")
                first = None  # unusable: leave it out of the ordering checks
            if "unit_price" not in tier:
                self.add(f"{tier_path}.unit_price", "is required")
                price = None
            else:
                price = self.money(f"{tier_path}.unit_price", tier["unit_price"])
            parsed.append(None if first is None or price is None else (first, stop, price))
        previous = None
        for i, tier in enumerate(parsed):
            if tier is None:
                continue
            if previous is not None:
                prev_index, (_, prev_stop, _) = previous
                if prev_stop is None:
                    self.add(
                        f"{path}[{prev_index}].end_minute", "only the last tier may be open-ended"
                    )
                elif tier[0] < prev_stop:
                    self.add(
                        f"{path}[{i}].start_minute",
                        f"must be >= the end_minute of tier {prev_index} ({prev_stop}): tiers are sorted"
                        " and may not overlap",
                    )
            previous = (i, tier)
        if unit is None or any(tier is None for tier in parsed):
            return ()
        # Unit k covers positions [k*unit, (k+1)*unit) and is priced by the tier holding k*unit.
        return tuple(
            CompiledTier(-(-first // unit), None if stop is None else -(-stop // unit), price)
            for first, stop, price in parsed
        )

    def segment(self, path: str, data: object, names: dict[str, int], index: int):
        if not isinstance(data, Mapping):
            self.add(path, "must be an object")
            return None
        before = len(self.problems)
        self.unknown(path, data, _SEGMENT_FIELDS)
        name = data.get("name")
        if not isinstance(name, str) or not name.strip():
            self.add(f"{path}.name", "is required: a non-empty string")
        elif name in names:
            self.add(f"{path}.name", f"repeats the name of rule_payload[{names[name]}]")
        else:
            names[name] = index
        kind = data.get("type")
        if kind not in SEGMENT_TYPES:
            self.add(f"{path}.type", "must be one of periodic, tiered, free")
        if "time_window" not in data:
            self.add(f"{path}.time_window", "is required")
            window = None
        else:
            window = self.window(f"{path}.time_window", data["time_window"])
        mask = self.weekdays(f"{path}.weekdays", data.get("weekdays"))

        unit = None
        value = data.get("unit_minutes")
        if value is not None:
            unit = self.count(f"{path}.unit_minutes", value, positive=True)
        elif kind in ("periodic", "tiered"):
            self.add(f"{path}.unit_minutes", f"is required for {kind} segments")
        price = None
        value = data.get("unit_price")
        if value is not None:
            price = self.money(f"{path}.unit_price", value)
        elif kind == "periodic":
            self.add(f"{path}.unit_price", "is required for periodic segments")
        free = 0
        value = data.get("free_minutes")
        if value is not None:
            free = self.count(f"{path}.free_minutes", value, positive=False)
        cap = None
        value = data.get("max_charge")
        if value is not None:
            cap = self.money(f"{path}.max_charge", value)
        period = data.get("cap_period")
        if period is None:
            period = "calendar_day"
        elif period not in CAP_PERIODS:
            self.add(f"{path}.cap_period", "must be calendar_day or window")
        tiers: tuple[CompiledTier, ...] = ()
        value = data.get("tiers")
        if kind == "tiered":
            tiers = self.tiers(f"{path}.tiers", value, unit)
        elif value:
            self.add(f"{path}.tiers", "only tiered segments take tiers")

        if len(self.problems) > before or window is None:
            return None
        start, length, key = window
        pieces = _pieces(start, length, period)
        return CompiledSegment(
            name=name,
            type=kind,
            timezone=key,
            cap_period=period,
            pieces=pieces,
            start=pieces[0][0],
            length=pieces[-1][0] + pieces[-1][1] - pieces[0][0],
            day_mask=mask,
            unit_minutes=unit or 1,
            unit_price_cents=price or 0,
            tiers=tiers,
            # Free segments charge nothing anyway; an allowance there would only hide minutes.
            free_minutes=0 if kind == "free" else free,
            max_charge_cents=cap,
        )


def _pieces(start: int, length: int, period: str) -> tuple[tuple[int, int], ...]:
    """A period's pieces: a window crossing midnight splits at it when periods are calendar days."""
    spill = start + length - DAY
    if period == "window" or spill <= 0:
        return ((start, length),)
    if spill == start:  # a whole day from `start`: the calendar day, unbroken
        return ((0, DAY),)
    return ((0, spill), (start, DAY - start))


def crosses_midnight(window: Mapping) -> bool:
    """Whether a valid time window runs past local midnight, so the cap period matters."""
    start, end = window.get("start", "00:00"), window.get("end", "00:00")
    # "HH:MM" compares as text; an end at midnight is the end of the day.
    return ("24:00" if end == "00:00" else end) <= start


def _check(payload: object) -> tuple[list[PayloadProblem], list[CompiledSegment]]:
    checker = _Checker()
    segments: list[CompiledSegment] = []
    if not isinstance(payload, list | tuple):
        checker.add("rule_payload", "must be a list of segments")
        return checker.problems, segments
    if not payload:
        checker.add("rule_payload", "must contain at least one segment")
    names: dict[str, int] = {}
    for i, data in enumerate(payload):
        segment = checker.segment(f"rule_payload[{i}]", data, names, i)
        if segment is not None:
            segments.append(segment)
    return checker.problems, segments


def validate_rule_payload(payload: object) -> list[PayloadProblem]:
    """Return every problem in a rule payload (empty when it is valid)."""
    return _check(payload)[0]


def compile_payload(payload: object) -> CompiledPayload:
    """Validate and parse a rule payload once; raise RulePayloadError listing every problem."""
    if isinstance(payload, CompiledPayload):
        return payload
    problems, segments = _check(payload)
    if problems:
        raise RulePayloadError(problems)
    timezones: list[str] = []
    for segment in segments:
        if segment.timezone not in timezones:
            timezones.append(segment.timezone)
    return CompiledPayload(
        segments=tuple(segments),
        timezones=tuple(timezones),
        segment_zone=tuple(timezones.index(s.timezone) for s in segments),
        weekly=any(s.day_mask is not None for s in segments),
        geometry=tuple((s.pieces, s.day_mask) for s in segments),
        shadowed=tuple(
            any(sum(p[1] for p in t.pieces) == DAY and t.day_mask is None for t in segments[:i])
            for i in range(len(segments))
        ),
    )
