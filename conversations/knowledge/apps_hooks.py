"""Wiring done once at start-up: `ConversationsConfig.ready()` calls `connect()`."""

from __future__ import annotations

import threading

from django.db.models.signals import post_migrate

_lock = threading.Lock()
_connected = False


def connect() -> None:
    """Register the Celery tasks (idempotent)."""
    global _connected
    with _lock:
        if _connected:
            return
        from . import tasks  # noqa: F401  (a worker learns the knowledge tasks from this import)
        # A migration may add the pgvector column: forget what was probed before it ran.
        post_migrate.connect(_reset_vector_probe, dispatch_uid="knowledge_reset_vector_probe")
        _connected = True


def _reset_vector_probe(**kwargs: object) -> None:
    from .vectors import reset

    reset()

