"""UTC offsets of IANA zones in whole minutes, with their change points, cached per chunk.

The fee engine works in integer minutes since the Unix epoch. A segment's local minute is
``utc_minute + offset`` where ``offset`` is the zone's UTC offset at that instant, floored to
whole minutes (identical to truncating the local wall time to the minute, which is what a
minute-by-minute reading of the clock gives, even for historical offsets with seconds).

zoneinfo does not expose its transition table, so transitions are found once per zone per
chunk of ``CHUNK`` minutes (about 364 days) by probing the offset every ``PROBE`` minutes and
bisecting to the exact minute; later calls only look the chunk up. Two changes closer than
``PROBE`` minutes (12 hours) that cancel each other would be missed; no zone has such a
pair.
"""

from __future__ import annotations

from bisect import bisect_right
from datetime import datetime, timedelta
from functools import cache
from zoneinfo import ZoneInfo

CHUNK = 1 << 19
PROBE = 720
# Minutes since the epoch of 1900-01-01 and 9000-01-01 UTC: the range simulate_fee accepts.
MIN_MINUTE = -36_816_480
MAX_MINUTE = 3_697_423_200

_ONE_MINUTE = timedelta(minutes=1)

# (zone key, chunk index) -> (offset just before the chunk, change minutes, new offsets)
_chunks: dict[tuple[str, int], tuple[int, tuple[int, ...], tuple[int, ...]]] = {}


@cache
def zone(key: str) -> ZoneInfo:
    """Return the ZoneInfo for key (cached; raises like ZoneInfo on unknown keys)."""
    return ZoneInfo(key)


def _offset_at(tz: ZoneInfo, minute: int) -> int:
    return datetime.fromtimestamp(minute * 60, tz).utcoffset() // _ONE_MINUTE


def _chunk(key: str, index: int) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
    found = _chunks.get((key, index))
    if found is not None:
        return found
    tz = zone(key)
    start = index * CHUNK
    end = start + CHUNK
    base = _offset_at(tz, start - 1)
    changes: list[int] = []
    offsets: list[int] = []
    low, low_offset = start - 1, base
    while low < end - 1:
        high = min(low + PROBE, end - 1)
        high_offset = _offset_at(tz, high)
        # Find each change inside (low, high]; bisection assumes the offset differs from
        # low_offset on a suffix of the bracket, true for one or several same-direction steps.
        while high_offset != low_offset:
            lo, hi = low, high
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if _offset_at(tz, mid) == low_offset:
                    lo = mid
                else:
                    hi = mid
            low, low_offset = hi, _offset_at(tz, hi)
            changes.append(hi)
            offsets.append(low_offset)
        low, low_offset = high, high_offset
    found = (base, tuple(changes), tuple(offsets))
    if len(_chunks) > 4096:
        _chunks.clear()
    _chunks[(key, index)] = found
    return found


def offset_at(key: str, minute: int) -> int:
    """Return the zone's UTC offset in minutes at the given minute since the epoch."""
    base, changes, offsets = _chunk(key, minute // CHUNK)
    if not changes:
        return base
    i = bisect_right(changes, minute)
    return offsets[i - 1] if i else base


def offset_changes(key: str, first: int, stop: int) -> tuple[int, list[tuple[int, int]]]:
    """Return the offset at minute first and the (minute, new offset) changes in (first, stop)."""
    c0 = first // CHUNK
    c1 = (stop - 1) // CHUNK
    base, changes, offsets = _chunk(key, c0)
    if c0 == c1 and not changes:
        return base, []
    start_offset = offset_at(key, first)
    found: list[tuple[int, int]] = []
    for index in range(c0, c1 + 1):
        _, changes, offsets = _chunk(key, index)
        for minute, offset in zip(changes, offsets, strict=True):
            if first < minute < stop:
                found.append((minute, offset))
    return start_offset, found
