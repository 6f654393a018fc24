"""The real-worker tests under pytest-xdist: each pytest worker has its own test database and
starts its own Celery workers, so each also gets a Redis database of its own as the broker (gw0
keeps the one configured, gw1 the next, ...): no Celery worker takes another's task."""

from __future__ import annotations

import os

_BROKER = os.environ.get("CONCIERGE_TEST_BROKER_URL", "")
_XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if _BROKER and _XDIST_WORKER.startswith("gw") and _XDIST_WORKER[2:].isdigit():
    base, _, number = _BROKER.rpartition("/")
    if number.isdigit():
        os.environ["CONCIERGE_TEST_BROKER_URL"] = f"{base}/{int(number) + int(_XDIST_WORKER[2:])}"
