"""Benchmark the fee engine against the minute-by-minute reference: .venv/bin/python bench/billing.py

Prints, for stays of 1 hour, 1 day, 30 days and 365 days, the median time per call of
simulate_fee with a compiled payload and with the raw payload, of the reference, their
ratio, and whether each performance target holds; once with the night counted per calendar
day (the default ``cap_period``) and once per night window (``"cap_period": "window"``). ``--quick`` estimates the 365-day
reference from the 30-day one instead of running it (it takes seconds).
"""

from __future__ import annotations

import statistics
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[1]
# Running this file puts bench/ first on sys.path, where this very module would shadow the
# billing package; the repository root and the reference's folder go there instead.
sys.path[0:1] = [str(ROOT), str(ROOT / "tests" / "billing")]

from fee_reference import reference_fee  # noqa: E402

from billing.engine import compile_payload, simulate_fee  # noqa: E402

PAYLOAD = [
    {
        "name": "weekend",
        "type": "tiered",
        "time_window": {"start": "00:00", "end": "00:00"},
        "weekdays": [6, 7],
        "unit_minutes": 30,
        "tiers": [
            {"start_minute": 0, "end_minute": 120, "unit_price": 2},
            {"start_minute": 120, "end_minute": None, "unit_price": 3},
        ],
        "max_charge": 30,
    },
    {
        "name": "day",
        "type": "periodic",
        "time_window": {"start": "08:00", "end": "20:00", "timezone": "Asia/Shanghai"},
        "unit_minutes": 30,
        "unit_price": 2,
        "free_minutes": 30,
        "max_charge": 20,
    },
    {
        "name": "night",
        "type": "periodic",
        "time_window": {"start": "20:00", "end": "08:00"},
        "unit_minutes": 60,
        "unit_price": 1,
        "max_charge": 10,
    },
]
PAYLOADS = {
    "calendar_day": PAYLOAD,
    "window": [*PAYLOAD[:2], {**PAYLOAD[2], "cap_period": "window"}],
}
ENTRY = datetime(2024, 3, 1, 7, 13, 20, tzinfo=ZoneInfo("Asia/Shanghai"))
STAYS = [
    ("1 hour", timedelta(hours=1)),
    ("1 day", timedelta(days=1)),
    ("30 days", timedelta(days=30)),
    ("365 days", timedelta(days=365)),
]


def per_call(func, *, budget: float = 0.3, batches: int = 9) -> float:
    """Return the median seconds per call of func over batches sized to fill the budget."""
    start = time.perf_counter()
    func()
    once = max(time.perf_counter() - start, 1e-7)
    size = max(1, int(budget / batches / once))
    results = []
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(size):
            func()
        results.append((time.perf_counter() - start) / size)
    return statistics.median(results)


def run(payload: list[dict], quick: bool) -> list[tuple[str, bool]]:
    """Print one table for the payload and return its checks."""
    compiled = compile_payload(payload)
    print(f"{'stay':>9} {'compiled':>11} {'raw':>11} {'reference':>12} {'ratio':>9}")
    compiled_times = {}
    ratios = {}
    reference_30 = None
    for label, length in STAYS:
        exit = ENTRY + length
        assert simulate_fee(compiled, ENTRY, exit).total_amount == (
            reference_fee(payload, ENTRY, exit)["total_amount"]
            if label != "365 days" or not quick
            else simulate_fee(compiled, ENTRY, exit).total_amount
        )
        fast = per_call(lambda exit=exit: simulate_fee(compiled, ENTRY, exit))
        raw = per_call(lambda exit=exit: simulate_fee(payload, ENTRY, exit))
        note = ""
        if label == "365 days" and quick:
            slow = reference_30 * 365 / 30
            note = " (estimated from 30 days)"
        else:
            slow = per_call(
                lambda exit=exit: reference_fee(payload, ENTRY, exit),
                budget=0.5,
                batches=3 if length <= timedelta(days=1) else 1,
            )
        if label == "30 days":
            reference_30 = slow
        compiled_times[label] = fast
        ratios[label] = slow / fast
        print(
            f"{label:>9} {fast * 1e6:9.1f}us {raw * 1e6:9.1f}us {slow * 1e3:10.1f}ms "
            f"{slow / fast:8.0f}x{note}"
        )
    print(f"365 days / 1 hour = {compiled_times['365 days'] / compiled_times['1 hour']:.2f}x")
    return [
        (
            "every stay under 50 us per call (compiled)",
            all(t < 50e-6 for t in compiled_times.values()),
        ),
        (
            "365-day stay at most 3x a 1-hour stay",
            compiled_times["365 days"] <= 3 * compiled_times["1 hour"],
        ),
        ("30-day stay at least 500x faster than the reference", ratios["30 days"] >= 500),
    ]


def main() -> int:
    quick = "--quick" in sys.argv
    checks = []
    for period, payload in PAYLOADS.items():
        print(f"night cap_period: {period}")
        checks += [(f"{text} ({period})", ok) for text, ok in run(payload, quick)]
    for text, ok in checks:
        print(f"[{'met' if ok else 'MISSED'}] {text}")
    return 0 if all(ok for _, ok in checks) else 1


if __name__ == "__main__":
    raise SystemExit(main())
