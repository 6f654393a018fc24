"""Sending the workflow's events once the change they report has committed."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from workflows.signals import EVENTS


def emit_on_commit(event: str, subject: Any) -> None:
    """Send the event's signal after the current transaction commits (at once outside one)."""
    signal = EVENTS[event]
    transaction.on_commit(lambda: signal.send(sender=event, subject=subject))
