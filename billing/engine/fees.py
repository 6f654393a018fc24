"""Parking fee simulation: what a stay costs under a rule payload, in closed form.

The rules (seed 001 BIZ-006/BIZ-007 and RAG-000; SPEC "Billing rule payload"; where both are
silent the choice is marked *chosen*):

- The stay is whole minutes. ``duration_minutes`` is the stay rounded up to the minute
  (*chosen*: every started minute counts); the minutes are the ``duration_minutes`` minutes
  starting at the entry time truncated to the minute.
- Each minute goes to the first segment, in payload order, whose window contains it in that
  segment's time zone (default Asia/Shanghai) and whose ``weekdays`` (ISO, 1 = Monday)
  contain the window occurrence's *anchor day*: the local day on which that occurrence
  starts (*chosen*: a Friday 20:00-08:00 night stays a Friday night after midnight). A
  window with ``end < start`` crosses midnight (BIZ-006 "20:00-08:00"); ``end == start`` is a
  whole day starting at ``start``, so ``00:00``-``00:00`` is the calendar day.
- Minutes no segment contains are not charged and appear in no breakdown row (*chosen*).
- Free minutes belong to the segment that declares them and are consumed once per stay from
  that segment's first minutes (SPEC "consumed once per stay, from the start"; *chosen*: per
  segment, so a day allowance is not eaten by night minutes). Free segments charge nothing
  and have no allowance.
- Charging happens per segment per anchor day (one window occurrence, so a night is one
  period, not two calendar days): the day's chargeable minutes (its minutes less free ones)
  are rounded up to whole units (BIZ-006 "ceil charging"); a periodic day costs
  ``units * unit_price``; a tiered day prices unit ``k`` (positions ``k*unit`` to
  ``(k+1)*unit`` counted from the start of that day's chargeable time, SPEC) at the tier
  holding position ``k*unit``; then ``max_charge`` caps the day (BIZ-006 "daily cap per
  segment, reset by day"). ``capped`` says the cap lowered at least one day's charge.
- DST: local time is read from the zone at each minute, so a skipped hour has no minutes and
  a repeated hour is counted twice, each minute in the anchor day its local time gives.

How it is fast: times are integer minutes since the epoch. The stay is split into *epochs*
where no segment's UTC offset changes; inside one, each segment's occurrences are a fixed
pattern of intervals repeating every day (every week with weekdays). Per segment per epoch
only the first and last occurrences (and any shared with another epoch, or still eating free
minutes) are computed explicitly by interval arithmetic; the whole days between fall into at
most 7 classes (weekday), whose charge is computed once per set of offsets, cached on the
compiled payload, and multiplied by their count. A stay's cost therefore barely depends on
its length.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

from billing.engine.money import ZERO, cents_to_money
from billing.engine.payload import DAY, CompiledPayload, compile_payload
from billing.engine.zones import MAX_MINUTE, MIN_MINUTE, offset_changes

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_FAR = 1 << 62
_MINUTE_US = 60_000_000
_RAW_CACHE_SIZE = 256
# repr(payload) -> compiled; repr tells 1 from 1.0 from True, so a hit compiles identically.
_raw_cache: dict[str, CompiledPayload] = {}


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
            _raw_cache.pop(next(iter(_raw_cache)))
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


def _epochs(cp: CompiledPayload, first: int, stop: int) -> list[tuple[int, int, tuple[int, ...]]]:
    """Split [first, stop) where any zone's offset changes: (lo, hi, offset per segment)."""
    current = []
    events = []
    for i, key in enumerate(cp.timezones):
        offset, changes = offset_changes(key, first, stop)
        current.append(offset)
        for minute, new in changes:
            events.append((minute, i, new))
    zones = cp.segment_zone
    if not events:
        return [(first, stop, tuple([current[z] for z in zones]))]
    events.sort()
    epochs = []
    lo = first
    for minute, i, new in events:
        if minute > lo:
            epochs.append((lo, minute, tuple([current[z] for z in zones])))
            lo = minute
        current[i] = new
    epochs.append((lo, stop, tuple([current[z] for z in zones])))
    return epochs


def _won(geometry, s: int, day: int, offsets: tuple[int, ...], lo: int, hi: int) -> int:
    """Minutes of segment s's occurrence on anchor day, within [lo, hi), no earlier segment takes."""
    start, length, mask = geometry[s]
    if mask is not None and not mask[day % 7]:
        return 0
    x0 = day * DAY + start - offsets[s]
    x1 = x0 + length
    if x0 < lo:
        x0 = lo
    if x1 > hi:
        x1 = hi
    if x0 >= x1:
        return 0
    taken = []
    for t in range(s):
        t_start, t_length, t_mask = geometry[t]
        shift = t_start - offsets[t]
        other = (x0 - shift) // DAY
        b0 = other * DAY + shift
        # An earlier occurrence may start before x0 and reach into [x0, x1); at most two do.
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


def _day_classes(cp: CompiledPayload, offsets: tuple[int, ...]):
    """Per segment, per day class (weekday or one class), a whole occurrence's (won, cents, capped)."""
    found = cp._day_classes.get(offsets)
    if found is None:
        classes = 7 if cp.weekly else 1
        rows = []
        for s, segment in enumerate(cp.segments):
            row = []
            for day in range(classes):
                # Only day % 7 matters for a whole occurrence under fixed offsets.
                won = _won(cp.geometry, s, day, offsets, -_FAR, _FAR)
                row.append((won, *segment.charge(won)))
            rows.append(tuple(row))
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

    spans = []
    for lo, hi, offsets in epochs:
        shift = start - offsets[s]
        first = (lo - shift) // DAY
        if first * DAY + shift + length <= lo:
            first += 1
        spans.append((first, (hi - 1 - shift) // DAY))
    single = len(epochs) == 1
    # Across an offset change an anchor day can get minutes from two epochs (a repeated
    # hour); such days are summed in `pending` and charged once all epochs are seen.
    pending: dict[int, list[int]] = {}
    if not single:
        before = []
        latest = -_FAR
        for first, last in spans:
            before.append(latest)
            if first <= last:
                latest = max(latest, last)
        after = [0] * len(spans)
        earliest = _FAR
        for k in range(len(spans) - 1, -1, -1):
            after[k] = earliest
            first, last = spans[k]
            if first <= last:
                earliest = min(earliest, first)

    for k, (lo, hi, offsets) in enumerate(epochs):
        first, last = spans[k]
        if first > last:
            continue
        # Interior days lie wholly inside this epoch and the stay: they go by class.
        inner_first, inner_last = first + 1, last - 1
        if not single:
            inner_first = max(inner_first, before[k] + 1)
            inner_last = min(inner_last, after[k] - 1)
        if inner_first > inner_last:
            explicit = (range(first, last + 1),)
        else:
            explicit = (range(first, inner_first), range(inner_last + 1, last + 1))

        for part, days in enumerate(explicit):
            if part == 1:
                # Between the front and back explicit days: the interior, by class.
                table = _day_classes(cp, offsets)[s]
                day, stop = inner_first, inner_last
                weekly = len(table) == 7
                if free_left:
                    week = sum(row[0] for row in table) * (1 if weekly else 7)
                    if week:
                        weeks = min(free_left // week, (stop - day + 1) // 7)
                        if weeks:
                            # Whole weeks swallowed by the allowance charge nothing.
                            used = weeks * week
                            free_left -= used
                            freed += used
                            minutes += used
                            day += 7 * weeks
                        while free_left and day <= stop:
                            won = table[day % 7 if weekly else 0][0]
                            take = won if won < free_left else free_left
                            free_left -= take
                            freed += take
                            minutes += won
                            day_cents, day_capped = charge(won - take)
                            cents += day_cents
                            capped = capped or day_capped
                            day += 1
                if day <= stop:
                    count = stop - day + 1
                    if not weekly:
                        won, day_cents, day_capped = table[0]
                        minutes += count * won
                        cents += count * day_cents
                        capped = capped or day_capped
                    else:
                        weeks, extra = divmod(count, 7)
                        base = day % 7
                        for r, (won, day_cents, day_capped) in enumerate(table):
                            n = weeks + ((r - base) % 7 < extra)
                            if n:
                                minutes += n * won
                                cents += n * day_cents
                                capped = capped or day_capped
            for day in days:
                won = _won(geometry, s, day, offsets, lo, hi)
                if not won:
                    continue
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
    epochs = _epochs(cp, first, first + duration)
    rows = []
    total = 0
    for s, segment in enumerate(cp.segments):
        if cp.shadowed[s]:
            continue
        minutes, freed, cents, capped = _segment_charge(cp, s, epochs)
        if minutes:
            total += cents
            rows.append(
                SegmentCharge(
                    segment.name, segment.type, minutes, cents_to_money(cents), freed, capped
                )
            )
    return FeeResult(duration, cents_to_money(total), tuple(rows))
