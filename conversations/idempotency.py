"""Idempotency-Key: the one mechanism every POST that takes the header goes through.

A request with a key first *claims* it inside the caller's transaction, before any work:
it inserts the key's row. A concurrent request with the same key blocks on that insert
(PostgreSQL's unique index; SQLite serialises writers) until the first commits, then finds
the row and replays the stored response instead of working again. If the first fails, its
transaction rolls back with the claim and the next request simply does the work.

A turn that calls the model stores a provisional response (the rules reply, which is what
the database holds) when its first transaction commits, and the final one after the model
answered; a retry arriving in between waits for the final response, up to a bound.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction

from config.errors import ApplicationError, Conflict

from .models import IdempotencyRecord

MAX_KEY_LENGTH = 200


def request_hash(body: Mapping[str, Any]) -> str:
    """A stable fingerprint of a request body (the same key with another body is refused)."""
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()


@dataclass
class Claim:
    """What claiming a key found: nothing to claim (no key), a fresh claim, or a stored response."""

    record: IdempotencyRecord | None = None
    replay: tuple[int, Any] | None = None
    in_progress: bool = False

    def store(self, status_code: int, response: Any, *, final: bool = True) -> None:
        """Keep the response for retries (inside the caller's transaction)."""
        if self.record is None:
            return
        IdempotencyRecord.objects.filter(pk=self.record.pk).update(status_code=status_code, response=response, completed=final)
        self.record.status_code, self.record.response, self.record.completed = status_code, response, final


@contextmanager
def idempotent(*, user, key: str | None, endpoint: str, body: Mapping[str, Any]) -> Iterator[Claim]:  # noqa: ANN001
    """A transaction that claims the key before any work: the work done inside it commits, or
    rolls back, together with the claim (and the response the caller stores on it)."""
    with transaction.atomic():
        yield idempotency_claim(user=user, key=key, endpoint=endpoint, body=body)


def idempotency_store_final(claim: Claim, status_code: int, response: Any) -> None:
    """Replace a provisional response by the final one (after a model phase), in its own transaction."""
    if claim.record is not None:
        with transaction.atomic():
            claim.store(status_code, response)


def idempotency_known(user, key: str | None, endpoint: str) -> bool:  # noqa: ANN001
    """Whether a key was claimed already (a cheap read, to skip work a replay will not need)."""
    return bool(key) and IdempotencyRecord.objects.filter(user=user, key=key, endpoint=endpoint).exists()


def idempotency_claim(*, user, key: str | None, endpoint: str, body: Mapping[str, Any]) -> Claim:  # noqa: ANN001
    """Claim `key` for this request, or return the response stored for it.

    Must run inside the transaction that does the work, so the claim and the work commit
    (or roll back) together.
    """
    if not key:
        return Claim()
    if len(key) > MAX_KEY_LENGTH:
        raise ApplicationError(f"Idempotency-Key is at most {MAX_KEY_LENGTH} characters.", code="invalid_idempotency_key",
                               details={"Idempotency-Key": ["too long"]})
    fingerprint = request_hash(body)
    try:
        with transaction.atomic():  # a savepoint: a lost race must not doom the caller's transaction
            record = IdempotencyRecord.objects.create(user=user, key=key, endpoint=endpoint, request_hash=fingerprint,
                                                      status_code=0, response=None, completed=False)
        return Claim(record=record)
    except IntegrityError:
        pass
    record = IdempotencyRecord.objects.get(user=user, key=key, endpoint=endpoint)
    if record.request_hash != fingerprint:
        raise Conflict("This Idempotency-Key was used with a different request.", code="idempotency_key_reused")
    if not record.completed:
        return Claim(record=record, replay=(record.status_code, record.response) if record.status_code else None, in_progress=True)
    return Claim(record=record, replay=(record.status_code, record.response))


@contextmanager
def sent_once(*, user, key: str | None, endpoint: str, body: Mapping[str, Any]) -> Iterator[bool]:  # noqa: ANN001
    """A page form's key (no network wait may sit inside a transaction, so the claim commits on its own first):
    yields whether this key was sent already; the claim is kept when the work succeeds, released when it fails,
    so a "Send again" after a lost answer is done once, and after a refusal it is done again."""
    if not key:
        yield False
        return
    with transaction.atomic():
        claim = idempotency_claim(user=user, key=key, endpoint=endpoint, body=body)
    if claim.replay is not None or claim.in_progress:
        yield True
        return
    try:
        yield False
    except BaseException:
        IdempotencyRecord.objects.filter(pk=claim.record.pk).delete()
        raise
    with transaction.atomic():
        claim.store(200, None)


def idempotency_await(claim: Claim, *, wait_seconds: float) -> tuple[int, Any]:
    """The final response of a claim another request is still finishing (no transaction open).

    After `wait_seconds` the provisional response is replayed: it is what the database holds.
    """
    assert claim.record is not None
    deadline = time.monotonic() + wait_seconds
    record = claim.record
    while not record.completed and time.monotonic() < deadline:
        time.sleep(0.05)
        record = IdempotencyRecord.objects.get(pk=record.pk)
    if not record.status_code:
        raise Conflict("A request with this Idempotency-Key is still being processed; retry shortly.",
                       code="idempotency_in_progress")
    return record.status_code, record.response
