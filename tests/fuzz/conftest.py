"""Fuzzing fixtures: the schemathesis figures (printed at the end by the root conftest) and a
committed database per module."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support import demo_data
from tests.support.fuzz_figures import FUZZ_FIGURES


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
