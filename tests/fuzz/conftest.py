"""Figures of the schemathesis runs (operations, cases, failures per role), printed at the end."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest

FUZZ_FIGURES: dict[str, dict[str, Any]] = defaultdict(lambda: {"operations": set(), "cases": 0, "5xx": 0, "failures": 0})


def pytest_terminal_summary(terminalreporter) -> None:  # noqa: ANN001
    for role, figures in sorted(FUZZ_FIGURES.items()):
        terminalreporter.write_line(
            f"schemathesis as {role}: {len(figures['operations'])} operations, {figures['cases']} cases, "
            f"{figures['5xx']} answered 5xx, {figures['failures']} failed a check"
        )


@pytest.fixture
def fuzz_figures() -> dict[str, dict[str, Any]]:
    return FUZZ_FIGURES
