"""Wiring done once at start-up: `ConversationsConfig.ready()` calls `connect()`."""

from __future__ import annotations

import threading

from django.db.models.signals import post_migrate

from config.runtime import process_started

_lock = threading.Lock()
_connected = False


def connect() -> None:
    """Register the Celery tasks, and build the index when a server or worker starts (idempotent)."""
    global _connected
    with _lock:
        if _connected:
            return
        from . import tasks  # noqa: F401  (a worker learns the knowledge tasks from this import)
        # A migration may add the pgvector column: forget what was probed before it ran.
        post_migrate.connect(_reset_vector_probe, dispatch_uid="knowledge_reset_vector_probe")
        process_started.connect(_warm_index, dispatch_uid="knowledge_warm_index")
        _connected = True


def _reset_vector_probe(**kwargs: object) -> None:
    from .vectors import reset

    reset()


def _warm_index(**kwargs: object) -> None:
    from .services.index import warm_index

    warm_index()
