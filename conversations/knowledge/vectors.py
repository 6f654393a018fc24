"""Optional pgvector storage and HNSW search for chunk embeddings.

Migration 0004 adds `embedding_vec vector(384)` with an HNSW index (cosine) to the chunk table
when the database is PostgreSQL and the `vector` extension is available. When that column
exists, every chunk write also fills it and retrieval asks the index for the nearest chunks;
otherwise (SQLite, PostgreSQL without pgvector, or `KNOWLEDGE_VECTOR_BACKEND = "numpy"`)
retrieval runs exact numpy search over the float32 bytes every chunk keeps anyway.

Vectors travel as `real[]` parameters cast to `vector` in SQL, so no adapter package is needed.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connections
from django.db.models import Q

from .engine import RetrievalFilters
from .models import KnowledgeChunk, KnowledgeStatus

COLUMN = "embedding_vec"
INDEX_NAME = "kchunk_embedding_hnsw"
VECTOR_DIM = 384
# ef_search: the HNSW candidate list (pgvector's default). Retrieval asks for MIN_CANDIDATES
# rows and ranks them exactly, and ef_search grows to the depth asked for.
DEFAULT_EF_SEARCH = 40
MIN_CANDIDATES = 40
WRITE_BATCH = 2000

_lock = threading.Lock()
_state: dict[tuple[str, str], tuple[bool, tuple[int, ...]]] = {}


def _table() -> str:
    return KnowledgeChunk._meta.db_table


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".") if part.isdigit())


def _probe(using: str) -> tuple[bool, tuple[int, ...]]:
    connection = connections[using]
    key = (using, str(connection.settings_dict.get("NAME")))
    with _lock:
        if key in _state:
            return _state[key]
    enabled, version = False, ()
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT 1 FROM information_schema.columns WHERE table_name = %s AND column_name = %s",
                [_table(), COLUMN],
            )
            if cursor.fetchone() is not None:
                cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
                row = cursor.fetchone()
                enabled, version = row is not None, _version_tuple(row[0]) if row else ()
    with _lock:
        _state[key] = (enabled, version)
    return enabled, version


def reset() -> None:
    """Forget what was learnt about the databases (after a migration, in tests)."""
    with _lock:
        _state.clear()


def backend_setting() -> str:
    """`auto` (pgvector when available), `numpy` or `pgvector`, from KNOWLEDGE_VECTOR_BACKEND."""
    value = str(getattr(settings, "KNOWLEDGE_VECTOR_BACKEND", "auto") or "auto").lower()
    return value if value in ("auto", "numpy", "pgvector") else "auto"


def column_available(using: str = "default") -> bool:
    """True when the chunk table has the pgvector column (PostgreSQL with the extension)."""
    return _probe(using)[0]


def pgvector_active(using: str = "default") -> bool:
    """True when retrieval should search with the HNSW index rather than numpy."""
    return backend_setting() != "numpy" and column_available(using)


def _as_list(vector: np.ndarray) -> list[float]:
    return np.asarray(vector, dtype=np.float32).reshape(-1).tolist()


def _literal(vector: np.ndarray) -> str:
    # pgvector's text form; 7 significant digits is all float32 carries.
    return "[" + ",".join(format(x, ".7g") for x in vector.tolist()) + "]"


def store_vectors(rows: Iterable[tuple[int, np.ndarray]], *, using: str = "default") -> int:
    """Write embeddings into the pgvector column for (chunk pk, vector) pairs; no-op without it."""
    if not column_available(using):
        return 0
    # One UPDATE per batch from unnest()ed arrays: a round trip per row would dominate.
    sql = (
        f"UPDATE {_table()} AS chunk SET {COLUMN} = data.vec "  # noqa: S608
        "FROM (SELECT unnest(%s::bigint[]) AS id, unnest(%s::text[])::vector AS vec) AS data "
        "WHERE chunk.id = data.id"
    )
    written = 0
    ids: list[int] = []
    literals: list[str] = []
    with connections[using].cursor() as cursor:
        for pk, vector in rows:
            vector = np.asarray(vector, dtype=np.float32).reshape(-1)
            if vector.shape[0] != VECTOR_DIM:
                continue  # another dimension cannot live in vector(384): numpy-only chunk
            ids.append(pk)
            literals.append(_literal(vector))
            if len(ids) >= WRITE_BATCH:
                cursor.execute(sql, [ids, literals])
                written += len(ids)
                ids, literals = [], []
        if ids:
            cursor.execute(sql, [ids, literals])
            written += len(ids)
    return written


def filters_q(filters: RetrievalFilters) -> Q:
    """The engine's `exclusion_reason` semantics as a Q over the chunk's denormalised columns."""
    q = Q()
    if not filters.include_inactive:
        q &= Q(status=KnowledgeStatus.ACTIVE)
    if filters.doc_type is not None:
        q &= Q(doc_type=filters.doc_type)
    if filters.source_type is not None:
        q &= Q(source_type=filters.source_type)
    if filters.city_code is not None:
        q &= Q(city_code=filters.city_code) | Q(city_code__isnull=True)
    if filters.lot_code is not None:
        q &= Q(lot_codes=[]) | Q(lot_codes__contains=[filters.lot_code])
    if filters.at_time is not None:
        q &= Q(effective_from__isnull=True) | Q(effective_from__lte=filters.at_time)
        q &= Q(effective_to__isnull=True) | Q(effective_to__gt=filters.at_time)
    if filters.source_ids is not None:
        q &= Q(source_key__in=list(filters.source_ids))
    return q


@lru_cache(maxsize=256)
def _where_cached(filters: RetrievalFilters, using: str) -> tuple[str, tuple[Any, ...]]:
    query = KnowledgeChunk.objects.using(using).filter(filters_q(filters)).query
    if not query.where:
        return "TRUE", ()
    sql, params = query.get_compiler(using=using).compile(query.where)
    return sql or "TRUE", tuple(params)


def _where(filters: RetrievalFilters, using: str) -> tuple[str, list[Any]]:
    """The filters as a SQL condition on the chunk table (compiled by the ORM, memoised)."""
    sql, params = _where_cached(filters, using)
    return sql, list(params)


# Raw connections whose session already carries our HNSW settings: one round trip per query
# instead of four (BEGIN, SET LOCAL, query, COMMIT), which matters on a busy machine.
_configured: weakref.WeakKeyDictionary[Any, tuple[int, bool]] = weakref.WeakKeyDictionary()


def _configure(using: str, cursor: Any, ef: int, iterative: bool) -> None:
    connection = connections[using]
    raw = connection.connection
    want = (ef, iterative)
    if raw is not None and _configured.get(raw) == want:
        return
    sql = "SELECT set_config('hnsw.ef_search', %s, false)"
    if iterative:
        # With filters, keep walking the graph until enough matching rows are found.
        sql += ", set_config('hnsw.iterative_scan', 'relaxed_order', false)"
    cursor.execute(sql, [str(ef)])
    # Inside a transaction the setting dies with a rollback, so remember it only in autocommit.
    if raw is not None and not connection.in_atomic_block:
        _configured[raw] = want


def nearest(
    query_vector: np.ndarray,
    filters: RetrievalFilters,
    limit: int,
    *,
    also: Sequence[int] = (),
    ef_search: int | None = None,
    using: str = "default",
) -> dict[int, float]:
    """Cosine similarity by chunk pk: the HNSW nearest matching chunks (at least `limit`, up to
    `MIN_CANDIDATES`, for the caller to rank) plus the chunks listed in `also`."""
    enabled, version = _probe(using)
    if not enabled:
        raise RuntimeError("the pgvector column is not available on this database")
    literal = _literal(np.asarray(query_vector, dtype=np.float32).reshape(-1))
    where, params = _where(filters, using)
    table = connections[using].ops.quote_name(_table())
    depth = max(limit, MIN_CANDIDATES)
    ef = min(max(ef_search or DEFAULT_EF_SEARCH, depth), 1000)
    # ORDER BY ... LIMIT is what the HNSW index serves; with iterative scans the order is
    # relaxed, so the caller ranks the candidates by their exact distances.
    sql = (
        f"SELECT id, {COLUMN} <=> %s::vector AS distance FROM {table} "  # noqa: S608
        f"WHERE {COLUMN} IS NOT NULL AND ({where}) ORDER BY distance LIMIT %s"
    )
    out: dict[int, float] = {}
    with connections[using].cursor() as cursor:
        _configure(using, cursor, ef, version >= (0, 8, 0))
        cursor.execute(sql, [literal, *params, depth])
        for pk, dist in cursor.fetchall():
            out[pk] = 1.0 - float(dist)
        missing = [pk for pk in also if pk not in out]
        if missing:
            cursor.execute(
                f"SELECT id, {COLUMN} <=> %s::vector FROM {table} "  # noqa: S608
                f"WHERE {COLUMN} IS NOT NULL AND id = ANY(%s)",
                [literal, missing],
            )
            for pk, dist in cursor.fetchall():
                out[pk] = 1.0 - float(dist)
    return out
