"""Fixtures for workflow tests."""

from __future__ import annotations

import pytest

from tests.support.receiver import Receiver


@pytest.fixture
def receiver():  # noqa: ANN201
    """A webhook receiver listening on loopback."""
    server = Receiver()
    yield server
    server.close()
