"""Process-level tuning applied once a server or worker process has loaded the project."""

from __future__ import annotations

import gc
import logging

from django.db import connections
from django.dispatch import Signal

# A turn allocates tens of thousands of short-lived objects (ORM queries, engine state);
# with CPython's default threshold of 700 the collector runs dozens of times per turn and
# each time walks every long-lived object Django loaded (measured: a third of a turn).
YOUNG_GENERATION_THRESHOLD = 50_000

# Sent once a web server or worker process has loaded the project, before it serves: apps
# build what their first request would otherwise wait for (the knowledge index).
process_started = Signal()

logger = logging.getLogger(__name__)


def start_serving() -> None:
    """Warm the apps (`process_started`), then tune the collector; web and worker start-up call this."""
    warm_up()
    # A connection opened while warming must not be shared with workers forked from this process.
    connections.close_all()
    tune_gc()


def warm_up() -> None:
    """Send `process_started`; a receiver that fails is logged and the process starts anyway.

    A warm-up is only a head start (no database yet, or not migrated): what it would have read
    is read by the first request instead, so its receivers need no error handling of their own.
    """
    for receiver, result in process_started.send_robust(sender=None):
        if isinstance(result, Exception):
            name = f"{receiver.__module__}.{receiver.__qualname__}"
            logger.warning("%s did not warm up at start-up (%s); the first request reads it instead",
                           name, result, exc_info=result)


def tune_gc() -> None:
    """Move everything loaded so far out of the collector's sight and collect less often.

    Call after the application is loaded (and before forking workers, so the frozen
    objects' pages stay shared). Cycles are still collected, just in larger batches.
    """
    from django.urls import get_resolver

    _ = get_resolver().url_patterns  # import every view and service now, so they are frozen too
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_GENERATION_THRESHOLD, older, oldest)
