"""What the real-worker tests share: the test database's URL for a worker process, waiting for a condition,
and stopping a worker's process group."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable

from django.db import connection


def database_url() -> str:
    """The test database as a DATABASE_URL, for a worker started as another process."""
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    return f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def wait_for(predicate: Callable[[], bool], timeout: float) -> bool:
    """Whether the predicate held within `timeout` seconds (asked every 0.2 s)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def stop(worker: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    """Stop a worker started in a session of its own, with whatever it started."""
    if worker.poll() is None:
        os.killpg(worker.pid, sig)
        worker.wait(timeout=30)
