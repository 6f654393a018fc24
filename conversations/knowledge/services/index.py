"""This process's retrieval index: built once, kept per database, rebuilt when knowledge changes.

The index is rebuilt only when the cheap fingerprint (count, newest update and highest id of
the sources) changes; every chunk write touches its source, so the fingerprint sees it. A
process's own writes drop its index at once; other processes' writes show within
`KNOWLEDGE_INDEX_RECHECK_SECONDS`. On PostgreSQL with pgvector the index holds no vectors:
vector scores come from the HNSW index instead (see `vectors.py`).

Building takes a few hundred milliseconds, so a serving process builds it when it starts
(`warm_index`, connected to `config.runtime.process_started`), not on a person's first message.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from asgiref.local import Local
from django.conf import settings
from django.db import connections, transaction

from .. import vectors
from ..engine import ChunkSnapshot, Embedder, KnowledgeIndex, get_embedder
from ..selectors import knowledge_fingerprint, stored_chunks

logger = logging.getLogger(__name__)

# --- embedders ---------------------------------------------------------------------

_embedders: dict[str, Embedder] = {}
_embedder_lock = threading.Lock()


def knowledge_embedder() -> Embedder:
    """The configured embedder (KNOWLEDGE_EMBEDDER, default the offline hashing one), shared."""
    name = str(getattr(settings, "KNOWLEDGE_EMBEDDER", "") or "hash-ngram-v1")
    with _embedder_lock:
        if name not in _embedders:
            _embedders[name] = get_embedder(name, fallback=True)
        return _embedders[name]


def vector_backend(using: str = "default") -> str:
    """Where vector scores come from: "pgvector" (the database's HNSW index) or "numpy" (in memory)."""
    return "pgvector" if vectors.pgvector_active(using) else "numpy"


# --- the cached index --------------------------------------------------------------


class ScoredIndex(KnowledgeIndex):
    """An index without a matrix whose vector scores arrive precomputed (from pgvector).

    `search(query_vector=scores)` takes an (n,) array of per-chunk cosine scores in place of
    a query embedding, so the engine's filtering, fusion and tie-breaking apply unchanged.
    """

    def __init__(self, chunks: Sequence[ChunkSnapshot]) -> None:
        super().__init__(chunks)
        self.matrix = np.zeros((len(self.chunks), 0), dtype=np.float32)

    def vector_scores(self, query_vector: np.ndarray) -> np.ndarray:
        return np.asarray(query_vector, dtype=np.float32)


@dataclass
class CachedIndex:
    """An index with what it was built from: its fingerprint and embedder, and chunk ids by position."""

    key: tuple[Any, ...]
    index: KnowledgeIndex
    pks: np.ndarray
    position: dict[int, int]
    mismatched: int
    built_ms: float
    # time.monotonic() of the last fingerprint check; -inf: recheck on next use (monotonic
    # time starts near zero at boot, so 0.0 would read as a recent check on a fresh machine)
    checked_at: float = -math.inf


_cache: dict[tuple[str, str, bool], CachedIndex] = {}
_cache_lock = threading.Lock()
# Per connection (thread or async context, like Django's connections): the aliases whose open
# transaction wrote knowledge. An index built then may hold rows a rollback removes.
_uncommitted = Local()


def invalidate_index() -> None:
    """Drop this process's cached retrieval indexes (the next retrieval rebuilds)."""
    with _cache_lock:
        _cache.clear()


def _written(using: str) -> set[str]:
    if not hasattr(_uncommitted, "aliases"):
        _uncommitted.aliases = set()
    return _uncommitted.aliases


def invalidate_index_on_write(using: str = "default") -> None:
    """Call inside a transaction that writes knowledge: drop the index now and again after commit.

    Now, so this transaction's own later reads rebuild; after commit, for everyone else in this
    process. Until the commit, an index built inside the transaction is rechecked on every use.
    """
    invalidate_index()
    _written(using).add(using)

    def committed() -> None:
        _written(using).discard(using)
        invalidate_index()

    transaction.on_commit(committed, using=using)


def _build(using: str, embedder: Embedder, with_matrix: bool) -> tuple[KnowledgeIndex, np.ndarray, int]:
    stored = stored_chunks(embedder, with_vectors=with_matrix, using=using)
    if stored.matrix is None:
        return ScoredIndex(stored.chunks), stored.pks, stored.mismatched
    index = KnowledgeIndex(stored.chunks, stored.matrix, embedder_name=embedder.name)
    return index, stored.pks, stored.mismatched


def knowledge_index(*, backend: str = "numpy", using: str = "default") -> tuple[CachedIndex, bool]:
    """This process's index for the database, rebuilt when the fingerprint changed; (index, rebuilt)."""
    embedder = knowledge_embedder()
    with_matrix = backend == "numpy"
    connection = connections[using]
    slot = (using, str(connection.settings_dict.get("NAME")), with_matrix)
    now = time.monotonic()
    if not connection.in_atomic_block:
        _written(using).discard(using)  # a rolled-back transaction never ran its on-commit hook
    provisional = using in _written(using)
    cached = _cache.get(slot)
    recheck_after = settings.KNOWLEDGE_INDEX_RECHECK_SECONDS
    if cached is not None and cached.key[1] == embedder.name and now - cached.checked_at < recheck_after:
        return cached, False  # this process's own writes invalidate at once; others' show within the interval
    key = (knowledge_fingerprint(using), embedder.name)
    with _cache_lock:
        cached = _cache.get(slot)
        if cached is not None and cached.key == key:
            cached.checked_at = -math.inf if provisional else now
            return cached, False
        started = time.perf_counter()
        index, pks, mismatched = _build(using, embedder, with_matrix)
        cached = CachedIndex(
            key=key, index=index, pks=pks, position={int(pk): i for i, pk in enumerate(pks)},
            mismatched=mismatched, built_ms=(time.perf_counter() - started) * 1000,
            checked_at=-math.inf if provisional else now,
        )
        _cache[slot] = cached
        return cached, True


def warm_index(using: str = "default") -> None:
    """Build the index and load the embedder now, so a person's first message does not wait for them.

    Connected to `config.runtime.process_started` (web server and Celery worker start-up). It is
    only a head start: if it fails (a database not migrated yet, or not reachable), `warm_up`
    logs it, the process starts anyway and the index is built on first use.
    """
    started = time.perf_counter()
    knowledge_embedder().embed(["warm up"])
    cached, _ = knowledge_index(backend=vector_backend(using), using=using)
    _ = cached.index.bm25  # the lexical index is otherwise built by the first hybrid search
    logger.info(
        "knowledge index built at start-up: %d chunks in %.0f ms",
        len(cached.index), (time.perf_counter() - started) * 1000,
    )
