"""Figures of the schemathesis runs (operations, cases, failures per role), printed at the end."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest

from tests.support import demo_data

FUZZ_FIGURES: dict[str, dict[str, Any]] = defaultdict(lambda: {"operations": set(), "cases": 0, "5xx": 0, "failures": 0})


def pytest_sessionfinish(session) -> None:  # noqa: ANN001
    # Under pytest-xdist each worker counts its own share; it hands its figures to the controller.
    if hasattr(session.config, "workeroutput"):
        session.config.workeroutput["fuzz_figures"] = {
            role: {**figures, "operations": sorted(figures["operations"])} for role, figures in FUZZ_FIGURES.items()
        }


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook
def pytest_testnodedown(node, error) -> None:  # noqa: ANN001, ARG001
    for role, figures in getattr(node, "workeroutput", {}).get("fuzz_figures", {}).items():
        total = FUZZ_FIGURES[role]
        total["operations"].update(figures["operations"])
        for key in ("cases", "5xx", "failures"):
            total[key] += figures[key]


def pytest_terminal_summary(terminalreporter) -> None:  # noqa: ANN001
    for role, figures in sorted(FUZZ_FIGURES.items()):
        terminalreporter.write_line(
            f"schemathesis as {role}: {len(figures['operations'])} operations, {figures['cases']} cases, "
            f"{figures['5xx']} answered 5xx, {figures['failures']} failed a check"
        )


@pytest.fixture
def fuzz_figures() -> dict[str, dict[str, Any]]:
    return FUZZ_FIGURES


@pytest.fixture(scope="module")
def committed_db(django_db_setup, django_db_blocker):  # noqa: ANN001, ANN201
    """The database without a test transaction, for a module whose requests go through the WSGI
    application (it closes the connection after each request, which no test transaction survives):
    writes commit and on-commit work runs as in production, on the demo data (plans, rules, orders,
    knowledge to find). Cheaper than a transactional test each, which empties the database after
    itself and so needs the demo data loaded again: the module's tests share one database, which
    goes back to the session's demo data after the module."""
    from django.core.management import call_command

    with django_db_blocker.unblock():
        demo_data.ensure()
        yield
        call_command("flush", interactive=False, verbosity=0)
        demo_data.note_migrated_rows()
        demo_data.load()
