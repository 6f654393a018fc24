"""Wiring done once at start-up: `ConversationsConfig.ready()` calls `connect()`."""

from __future__ import annotations

import threading

_lock = threading.Lock()
_connected = False


def connect() -> None:
    """Subscribe knowledge to new billing rule versions and register the Celery tasks (idempotent)."""
    global _connected
    with _lock:
        if _connected:
            return
        from billing.services import on_version_added

        from . import tasks  # noqa: F401  (a worker learns the knowledge tasks from this import)
        from .derived import on_rule_version_added

        on_version_added(on_rule_version_added)
        _connected = True
