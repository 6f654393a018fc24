"""How fast this machine runs Python right now, to read the other figures against.

On a shared virtual machine the same code can run up to twice as slow from one minute to
the next (other tenants on the same physical cores). The probe times a fixed pure-Python
loop; the benchmarks print it next to their figures.
"""

from __future__ import annotations

import time


def speed_probe(rounds: int = 3) -> float:
    """CPU milliseconds of a fixed pure-Python loop (the best of `rounds`); lower is faster."""
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        total = 0
        for i in range(1_000_000):
            total += i * i
        best = min(best, (time.process_time() - start) * 1000)
    return best


def probe_line() -> str:
    return f"machine speed probe: {speed_probe():.0f} ms for a fixed Python loop (42 ms at the quickest seen on this machine; lower is faster)"


if __name__ == "__main__":
    print(probe_line())
