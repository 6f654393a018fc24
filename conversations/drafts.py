"""The reply as the model writes it, for the page to show before the turn is done.

The model phase of a page's turn (in the web process, or on a worker) tells a DraftWriter the
reply so far; the page asks for it (`GET /c/<id>/draft`) while it waits. The draft lives in
Django's cache, never in the database: it is unchecked, and only the checked answer, applied
by compare-and-swap, is stored. With several processes the cache must be shared (Redis) for a
worker's draft to reach the web process; without one the reply simply appears whole.
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.cache import cache

log = logging.getLogger(__name__)

def _key(conversation_id: int) -> str:
    return f"concierge:draft:{conversation_id}"


class DraftWriter:
    """Keeps the draft of one turn's reply in the cache; a failing cache never fails the turn."""

    def __init__(self, conversation_id: int, answer_id: int, *, lifetime: float):
        self.key = _key(conversation_id)
        self.answer_id = answer_id
        self.lifetime = max(1, round(lifetime))

    def start(self) -> None:
        """The model starts writing: until it is done the page shows the draft, not the stored rules reply."""
        self._set({"answer_id": self.answer_id, "text": ""})

    def __call__(self, text: str) -> None:
        """The reply so far ("" when the model starts over). The model client tells it at most
        every READ_REPLY_EVERY seconds, so each one is written: the last words are never held back."""
        self._set({"answer_id": self.answer_id, "text": text})

    def finish(self) -> None:
        """The turn is done (answered, refused or fallen back): the stored message is what counts now."""
        try:
            cache.delete(self.key)
        except Exception:  # noqa: BLE001 - any cache backend's fault: the draft merely lingers until it expires
            log.warning("could not clear the reply draft %s", self.key, exc_info=True)

    def _set(self, draft: dict[str, Any]) -> None:
        try:
            cache.set(self.key, draft, self.lifetime)
        except Exception:  # noqa: BLE001 - the page then shows the reply whole, when it is ready
            log.warning("could not write the reply draft %s", self.key, exc_info=True)


def draft_of(conversation_id: int) -> dict[str, Any] | None:
    """The reply being written in a conversation: {"answer_id": the message it will be stored in,
    "text": as far as it has come, "" before the first words}; None when none is."""
    try:
        draft = cache.get(_key(conversation_id))
    except Exception:  # noqa: BLE001
        log.warning("could not read the reply draft of conversation %s", conversation_id, exc_info=True)
        return None
    return draft if isinstance(draft, dict) else None
