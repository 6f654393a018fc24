"""Figures of the schemathesis runs (operations, cases, failures per role), printed at the end.

The hooks are the root conftest's: under pytest-xdist only the root conftest is loaded in the
controller, which sums what each worker counted."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

FUZZ_FIGURES: dict[str, dict[str, Any]] = defaultdict(lambda: {"operations": set(), "cases": 0, "5xx": 0, "failures": 0})


def hand_over(config) -> None:  # noqa: ANN001
    """In a pytest-xdist worker: give this worker's figures to the controller."""
    if hasattr(config, "workeroutput"):
        config.workeroutput["fuzz_figures"] = {
            role: {**figures, "operations": sorted(figures["operations"])} for role, figures in FUZZ_FIGURES.items()
        }


def take_over(workeroutput: dict) -> None:
    """In the controller: add one worker's figures."""
    for role, figures in workeroutput.get("fuzz_figures", {}).items():
        total = FUZZ_FIGURES[role]
        total["operations"].update(figures["operations"])
        for key in ("cases", "5xx", "failures"):
            total[key] += figures[key]


def lines() -> list[str]:
    return [
        f"schemathesis as {role}: {len(figures['operations'])} operations, {figures['cases']} cases, "
        f"{figures['5xx']} answered 5xx, {figures['failures']} failed a check"
        for role, figures in sorted(FUZZ_FIGURES.items())
    ]
