"""Knowledge retrieval: filtered top-k chunks (hybrid, vector or lexical) with citations and a trace.

It searches this process's index (`index.knowledge_index`); on PostgreSQL with pgvector the
vector scores come from the database's HNSW index and are ranked with the lexical ones here.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from .. import vectors
from ..engine import (
    Citation,
    RetrievalFilters,
    RetrievalHit,
    SearchOptions,
    citations_for,
    top_k_indices,
)
from ..errors import InvalidKnowledge
from .index import knowledge_embedder, knowledge_index, vector_backend

MODES = ("hybrid", "vector", "lexical")
MAX_TOP_K = 50


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


@dataclass(frozen=True)
class RetrievalResult:
    """Ranked hits, their citations, and how they were found."""

    hits: list[RetrievalHit]
    citations: list[Citation]
    trace: dict[str, Any]


def _filters_trace(filters: RetrievalFilters) -> dict[str, Any]:
    return {
        "doc_type": filters.doc_type,
        "source_type": filters.source_type,
        "city_code": filters.city_code,
        "lot_code": filters.lot_code,
        "at_time": _iso(filters.at_time),
        "source_ids": list(filters.source_ids) if filters.source_ids is not None else None,
        "include_inactive": filters.include_inactive,
    }


def knowledge_retrieve(
    query: str,
    *,
    filters: RetrievalFilters | None = None,
    top_k: int = 5,
    mode: str = "hybrid",
    query_vector: np.ndarray | Sequence[float] | None = None,
    backend: str | None = None,
    using: str = "default",
) -> RetrievalResult:
    """Filtered top-k chunks for a query (hybrid, vector or lexical) with citations and a trace."""
    started = time.perf_counter()
    filters = filters or RetrievalFilters()
    query = (query or "").strip()
    if mode not in MODES:
        raise InvalidKnowledge(f"mode must be one of {', '.join(MODES)}.", details={"mode": [f"not one of {MODES}"]})
    if not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
        raise InvalidKnowledge(f"top_k must be between 1 and {MAX_TOP_K}.", details={"top_k": ["out of range"]})
    embedder = knowledge_embedder()
    vector: np.ndarray | None = None
    if query_vector is not None:
        with np.errstate(over="ignore"):
            vector = np.asarray(query_vector, dtype=np.float32).reshape(-1)
        if not np.isfinite(vector).all():
            raise InvalidKnowledge("query_embedding must hold finite numbers (float32 range).",
                                   details={"query_embedding": ["not finite"]})
        if vector.shape[0] != embedder.dim:
            raise InvalidKnowledge(
                f"query_embedding has dimension {vector.shape[0]}, expected {embedder.dim}.",
                code="dimension_mismatch",
                details={"expected_dim": embedder.dim, "got": int(vector.shape[0])},
            )
    elif mode != "lexical" and query:
        vector = embedder.embed([query])[0]
    if not query and vector is None:
        raise InvalidKnowledge("query is required.", details={"query": ["is required"]})
    if backend is None:
        backend = vector_backend(using)
    cached, rebuilt = knowledge_index(backend=backend, using=using)
    index = cached.index
    options = SearchOptions(mode=mode)  # type: ignore[arg-type]
    if backend == "pgvector" and vector is not None and mode != "lexical" and len(index):
        depth = max(top_k * 4, vectors.MIN_CANDIDATES)
        also: list[int] = []
        if mode == "hybrid" and query:
            lexical = index.bm25.scores(query)
            keep = index.mask(filters)
            top_lexical = top_k_indices(lexical, depth, mask=keep & (lexical > 0), tie_rank=index.tie_rank)
            also = [int(cached.pks[i]) for i in top_lexical]
        similarities = vectors.nearest(vector, filters, depth, also=also, using=using)
        scores = np.zeros(len(index), dtype=np.float32)
        for pk, similarity in similarities.items():
            position = cached.position.get(pk)
            if position is not None:
                scores[position] = similarity
        hits = index.search(query, query_vector=scores, filters=filters, top_k=top_k, options=options)
    else:
        hits = index.search(query, query_vector=vector, filters=filters, top_k=top_k, options=options)
    citations = citations_for(hits, query, per_source=1)
    trace = {
        "mode": mode,
        "backend": backend,
        "embedder": embedder.name,
        "top_k": top_k,
        "filters": _filters_trace(filters),
        "corpus_chunks": len(index),
        "matching_chunks": int(index.mask(filters).sum()) if len(index) else 0,
        "embedding_mismatch": cached.mismatched,
        "index_rebuilt": rebuilt,
        "index_build_ms": round(cached.built_ms, 2) if rebuilt else None,
        "took_ms": round((time.perf_counter() - started) * 1000, 3),
    }
    return RetrievalResult(hits=hits, citations=citations, trace=trace)


def citation_dict(citation: Citation) -> dict[str, Any]:
    """A citation in the REST shape."""
    return {
        "source_id": citation.source_id,
        "version": citation.version,
        "title": citation.title,
        "chunk_id": citation.chunk_id,
        "snippet": citation.snippet,
        "effective_from": _iso(citation.effective_from),
        "effective_to": _iso(citation.effective_to),
    }
