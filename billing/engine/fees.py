"""Parking fee simulation: what a stay costs under a rule payload, in closed form.

The rules (the billing requirements and their worked scenarios; SPEC "Billing rule payload";
where both are silent the choice is marked *chosen*):

- The stay is whole minutes. ``duration_minutes`` is the stay rounded up to the minute
  (*chosen*: every started minute counts); the minutes are the ``duration_minutes`` minutes
  starting at the entry time truncated to the minute.
- Each minute goes to the first segment, in payload order, whose window contains it in that
  segment's time zone (default Asia/Shanghai) and whose ``weekdays`` (ISO, 1 = Monday)
  contain the minute's *period day*. A window with ``end < start`` crosses midnight (the
  requirements' "20:00-08:00"); ``end == start`` is a whole day starting at ``start``, so
  ``00:00``-``00:00`` is the calendar day.
- The period day depends on the segment's ``cap_period`` (SPEC). ``calendar_day``, the
  default and how the original billing system counts: the local date the minute falls on, so a night
  20:00-08:00 is two periods split at midnight. ``window``: the local day on which the
  window occurrence holding the minute starts, so a Friday night stays a Friday night after
  midnight and is one period.
- Minutes no segment contains are not charged and appear in no breakdown row (*chosen*).
- Free minutes belong to the segment that declares them and are consumed once per stay from
  that segment's first minutes (SPEC "consumed once per stay, from the start"; *chosen*: per
  segment, so a day allowance is not eaten by night minutes). Free segments charge nothing
  and have no allowance.
- Charging happens per segment per period day: the period's chargeable minutes (its minutes
  less free ones) are rounded up to whole units ("ceil charging"); a periodic
  period costs ``units * unit_price``; a tiered period prices unit ``k`` (positions
  ``k*unit`` to ``(k+1)*unit`` counted from the start of that period's chargeable time, SPEC)
  at the tier holding position ``k*unit``; then ``max_charge`` caps the period
  ("daily cap per segment, reset by day"). ``capped`` says the cap lowered at least one
  period's charge.
- DST: local time is read from the zone at each minute, so a skipped hour has no minutes and
  a repeated hour is counted twice, each minute in the period day its local time gives.

How it is fast: times are integer minutes since the epoch. A segment's minutes depend only
on its own zone and those of the segments before it, so for each segment the stay is split
into *epochs* where none of those zones changes its UTC offset; inside one, the segment's
periods (a window occurrence, or the pieces of one calendar day) are a fixed pattern of
intervals repeating every day (every week with weekdays).
Per segment per epoch only occurrences cut by the epoch's ends, shared with another epoch (a
repeated hour) or still eating free minutes are computed one by one, by interval arithmetic;
the whole occurrences between fall into 7 weekday classes whose minutes and charges are
computed once per set of offsets, cached on the compiled payload, and summed by count with
prefix sums. A stay's cost therefore barely depends on its length.

Caches (compiled raw payloads, per-payload day classes and charges, zone transitions) hold
pure functions of their keys, so concurrent threads can at worst compute an entry twice.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import NamedTuple

from billing.engine.money import ZERO, cents_to_money
from billing.engine.payload import DAY, CompiledPayload, compile_payload
from billing.engine.zones import MAX_MINUTE, MIN_MINUTE, offset_changes

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_FAR = 1 << 62
_MINUTE_US = 60_000_000
_RAW_CACHE_SIZE = 256
# repr(payload) -> compiled; repr tells 1 from 1.0 from True, so a hit compiles identically.
_raw_cache: dict[str, CompiledPayload] = {}


class DayClasses(NamedTuple):
    """A segment's whole-occurrence figures by epoch day % 7, with prefix sums over two weeks."""

    won: tuple[int, ...]  # minutes won on a day of each class
    won_sums: tuple[int, ...]  # won_sums[i] = minutes won on classes 0..i-1 (mod 7), i <= 14
    cents_sums: tuple[int, ...]
    capped_sums: tuple[int, ...]  # how many of those days hit the cap


@dataclass(frozen=True)
class SegmentCharge:
    """What one segment of the payload charged over the stay."""

    segment_name: str
    segment_type: str
    minutes: int
    amount: Decimal
    free_minutes: int
    capped: bool

    def to_dict(self) -> dict:
        """Return the SPEC's breakdown row, money as a two-place string."""
        return {
            "segment_name": self.segment_name,
            "segment_type": self.segment_type,
            "minutes": self.minutes,
            "amount": f"{self.amount:.2f}",
            "free_minutes": self.free_minutes,
            "capped": self.capped,
        }


@dataclass(frozen=True)
class FeeResult:
    """A simulated fee: duration, total and one row per segment that won any minute."""

    duration_minutes: int
    total_amount: Decimal
    breakdown: tuple[SegmentCharge, ...]

    def to_dict(self) -> dict:
        """Return the SPEC's simulate response body (without rule_code/version_no)."""
        return {
            "duration_minutes": self.duration_minutes,
            "total_amount": f"{self.total_amount:.2f}",
            "breakdown": [row.to_dict() for row in self.breakdown],
        }


def _compiled(payload: Sequence[dict] | CompiledPayload) -> CompiledPayload:
    if isinstance(payload, CompiledPayload):
        return payload
    key = repr(payload)
    found = _raw_cache.get(key)
    if found is None:
        found = compile_payload(payload)
        if len(_raw_cache) >= _RAW_CACHE_SIZE:
            # Evict the oldest; another thread may have evicted it already.
            with contextlib.suppress(KeyError, StopIteration, RuntimeError):
                del _raw_cache[next(iter(_raw_cache))]
        _raw_cache[key] = found
    return found


def _stay(entry_time: datetime, exit_time: datetime) -> tuple[int, int]:
    """Return (first minute since the epoch, duration in minutes) of a stay."""
    for label, value in (("entry_time", entry_time), ("exit_time", exit_time)):
        if not isinstance(value, datetime):
            raise TypeError(f"{label} must be a datetime")
        if value.utcoffset() is None:
            raise ValueError(f"{label} must be timezone-aware")
    # Subtracting from a UTC epoch compares instants; two datetimes sharing a zone would be
    # compared by wall clock, which goes wrong across a DST fold.
    since = entry_time - _EPOCH
    span = (exit_time - _EPOCH) - since
    if span.days < 0:
        raise ValueError("exit_time is before entry_time")
    first = since.days * DAY + since.seconds // 60
    micros = (span.days * 86_400 + span.seconds) * 1_000_000 + span.microseconds
    duration = -(-micros // _MINUTE_US)
    if first < MIN_MINUTE or first + duration > MAX_MINUTE:
        raise ValueError("entry_time and exit_time must lie between 1900 and 9000")
    return first, duration


def _zone_changes(
    cp: CompiledPayload, first: int, stop: int
) -> tuple[list[int], list[tuple[int, int, int]]]:
    """Return each zone's offset at first and all (minute, zone, new offset) changes, in order."""
    offsets = []
    events = []
    for i, key in enumerate(cp.timezones):
        offset, changes = offset_changes(key, first, stop)
        offsets.append(offset)
        for minute, new in changes:
            events.append((minute, i, new))
    events.sort()
    return offsets, events


def _epochs(
    cp: CompiledPayload,
    first: int,
    stop: int,
    start_offsets: list[int],
    events: list[tuple[int, int, int]],
    zones: set[int],
) -> list[tuple[int, int, tuple[int, ...]]]:
    """Split [first, stop) where a zone in zones changes offset: (lo, hi, offset per segment).

    Changes of other zones are ignored (their offsets stay as at first): a segment's minutes
    depend only on its own zone and those of the segments before it.
    """
    current = list(start_offsets)
    segment_zone = cp.segment_zone
    epochs = []
    lo = first
    for minute, zone, new in events:
        if zone not in zones:
            continue
        if minute > lo:
            epochs.append((lo, minute, tuple([current[z] for z in segment_zone])))
            lo = minute
        current[zone] = new
    epochs.append((lo, stop, tuple([current[z] for z in segment_zone])))
    return epochs


def _won(geometry, s: int, day: int, offsets: tuple[int, ...], lo: int, hi: int) -> int:
    """Minutes of segment s's period of day, within [lo, hi), that no earlier segment takes."""
    pieces, mask = geometry[s]
    if mask is not None and not mask[day % 7]:
        return 0
    base = day * DAY - offsets[s]
    won = 0
    for start, length in pieces:
        x0 = base + start
        x1 = x0 + length
        if x0 < lo:
            x0 = lo
        if x1 > hi:
            x1 = hi
        if x0 < x1:
            won += x1 - x0 if not s else _untaken(geometry, s, offsets, x0, x1)
    return won


def _untaken(geometry, s: int, offsets: tuple[int, ...], x0: int, x1: int) -> int:
    """Minutes of [x0, x1) that no segment before s takes."""
    taken = []
    for t in range(s):
        t_pieces, t_mask = geometry[t]
        for t_start, t_length in t_pieces:
            shift = t_start - offsets[t]
            other = (x0 - shift) // DAY
            b0 = other * DAY + shift
            # A piece of an earlier day may start before x0 and reach into [x0, x1); a piece
            # is at most a day long, so no piece of a still earlier day does.
            while b0 < x1:
                if t_mask is None or t_mask[other % 7]:
                    b1 = b0 + t_length
                    c0 = b0 if b0 > x0 else x0
                    c1 = b1 if b1 < x1 else x1
                    if c0 < c1:
                        if c0 == x0 and c1 == x1:
                            return 0
                        taken.append((c0, c1))
                other += 1
                b0 += DAY
    if not taken:
        return x1 - x0
    if len(taken) > 1:
        taken.sort()
    covered = 0
    run0, run1 = taken[0]
    for c0, c1 in taken[1:]:
        if c0 > run1:
            covered += run1 - run0
            run0, run1 = c0, c1
        elif c1 > run1:
            run1 = c1
    covered += run1 - run0
    return x1 - x0 - covered


def _day_classes(cp: CompiledPayload, offsets: tuple[int, ...]) -> tuple[DayClasses, ...]:
    """Per segment, what a whole occurrence wins and charges by weekday, under fixed offsets."""
    found = cp._day_classes.get(offsets)
    if found is None:
        rows = []
        for s, segment in enumerate(cp.segments):
            # Only day % 7 matters for a whole occurrence (day 0, 1970-01-01, is a Thursday).
            if cp.weekly:
                won = tuple(_won(cp.geometry, s, day, offsets, -_FAR, _FAR) for day in range(7))
            else:
                won = (_won(cp.geometry, s, 0, offsets, -_FAR, _FAR),) * 7
            charges = [segment.charge(w) for w in won]
            pw, pc, pk = [0], [0], [0]
            for i in range(14):
                day_cents, day_capped = charges[i % 7]
                pw.append(pw[-1] + won[i % 7])
                pc.append(pc[-1] + day_cents)
                pk.append(pk[-1] + day_capped)
            rows.append(DayClasses(won, tuple(pw), tuple(pc), tuple(pk)))
        found = tuple(rows)
        if len(cp._day_classes) >= 64:
            cp._day_classes.clear()
        cp._day_classes[offsets] = found
    return found


def _segment_charge(cp: CompiledPayload, s: int, epochs) -> tuple[int, int, int, bool]:
    """Return (minutes, free minutes used, cents, capped) of segment s over the stay's epochs."""
    segment = cp.segments[s]
    geometry = cp.geometry
    start, length = segment.start, segment.length
    charge = segment.charge
    free_left = segment.free_minutes
    minutes = freed = cents = 0
    capped = False
    single = len(epochs) == 1

    # Per epoch: the anchor days whose occurrence meets it, and the inner run of days whose
    # occurrence lies wholly inside it (and so inside the stay), which go by class.
    plans = []
    for lo, hi, offsets in epochs:
        shift = start - offsets[s]
        first = (lo - shift) // DAY
        if first * DAY + shift + length <= lo:
            first += 1
        last = (hi - 1 - shift) // DAY
        inner_first = first if first * DAY + shift >= lo else first + 1
        inner_last = last if last * DAY + shift + length <= hi else last - 1
        plans.append([first, last, inner_first, inner_last])
    pending: dict[int, list[int]] = {}
    if not single:
        # Across an offset change a period day can get minutes from two epochs (a repeated
        # hour): such days are computed one by one, summed in `pending`, charged at the end.
        latest = -_FAR
        for plan in plans:
            if plan[0] <= plan[1]:
                if plan[2] <= latest:
                    plan[2] = latest + 1
                latest = max(latest, plan[1])
        earliest = _FAR
        for plan in reversed(plans):
            if plan[0] <= plan[1]:
                if plan[3] >= earliest:
                    plan[3] = earliest - 1
                earliest = min(earliest, plan[0])

    def one_day(day: int, offsets: tuple[int, ...], lo: int, hi: int) -> None:
        nonlocal minutes, freed, cents, capped, free_left
        won = _won(geometry, s, day, offsets, lo, hi)
        if not won:
            return
        take = 0
        if free_left:
            take = won if won < free_left else free_left
            free_left -= take
        if single:
            minutes += won
            freed += take
            day_cents, day_capped = charge(won - take)
            cents += day_cents
            capped = capped or day_capped
        else:
            row = pending.get(day)
            if row is None:
                pending[day] = [won, take]
            else:
                row[0] += won
                row[1] += take

    # Epochs, and days within each, are visited in time order, so free minutes go first.
    for (lo, hi, offsets), (first, last, inner_first, inner_last) in zip(
        epochs, plans, strict=True
    ):
        if first > last:
            continue
        if inner_first > inner_last:
            for day in range(first, last + 1):
                one_day(day, offsets, lo, hi)
            continue
        for day in range(first, inner_first):
            one_day(day, offsets, lo, hi)

        won7, pw, pc, pk = _day_classes(cp, offsets)[s]
        day, stop = inner_first, inner_last
        if free_left and pw[7]:
            weeks = min(free_left // pw[7], (stop - day + 1) // 7)
            if weeks:
                # Whole weeks swallowed by the allowance charge nothing.
                used = weeks * pw[7]
                free_left -= used
                freed += used
                minutes += used
                day += 7 * weeks
            while free_left and day <= stop:
                won = won7[day % 7]
                take = won if won < free_left else free_left
                free_left -= take
                freed += take
                minutes += won
                day_cents, day_capped = charge(won - take)
                cents += day_cents
                capped = capped or day_capped
                day += 1
        if day <= stop:
            # Sums over whole weeks plus a run of weekdays, from prefix sums of two weeks.
            weeks, extra = divmod(stop - day + 1, 7)
            base = day % 7
            minutes += weeks * pw[7] + pw[base + extra] - pw[base]
            cents += weeks * pc[7] + pc[base + extra] - pc[base]
            if not capped:
                capped = bool(weeks and pk[7]) or pk[base + extra] > pk[base]

        for day in range(inner_last + 1, last + 1):
            one_day(day, offsets, lo, hi)

    for won, take in pending.values():
        minutes += won
        freed += take
        day_cents, day_capped = charge(won - take)
        cents += day_cents
        capped = capped or day_capped
    return minutes, freed, cents, capped


def simulate_fee(
    rule_payload: Sequence[dict] | CompiledPayload, entry_time: datetime, exit_time: datetime
) -> FeeResult:
    """Return what a stay from entry_time to exit_time (aware datetimes) costs under the payload."""
    cp = _compiled(rule_payload)
    first, duration = _stay(entry_time, exit_time)
    if not duration:
        return FeeResult(0, ZERO, ())
    stop = first + duration
    start_offsets, events = _zone_changes(cp, first, stop)
    zones: set[int] = set()
    epochs = None
    rows = []
    total = 0
    for s, segment in enumerate(cp.segments):
        if cp.shadowed[s]:
            continue
        zone = cp.segment_zone[s]
        if epochs is None or (events and zone not in zones):
            zones.add(zone)
            epochs = _epochs(cp, first, stop, start_offsets, events, zones)
        minutes, freed, cents, capped = _segment_charge(cp, s, epochs)
        if minutes:
            total += cents
            rows.append(
                SegmentCharge(
                    segment.name, segment.type, minutes, cents_to_money(cents), freed, capped
                )
            )
    return FeeResult(duration, cents_to_money(total), tuple(rows))
