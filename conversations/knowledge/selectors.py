"""Reads that build knowledge snapshots: the chunks an index is built from, and its fingerprint."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db.models import Count, Max

from .engine import ChunkSnapshot, Embedder
from .models import KnowledgeChunk, KnowledgeSource

_CHUNK_COLUMNS = (
    "id", "chunk_id", "source_key", "source_version", "title", "heading", "text", "doc_type",
    "source_type", "city_code", "lot_codes", "effective_from", "effective_to", "status", "ordinal",
    "embedder", "dim",
)


def knowledge_fingerprint(using: str = "default") -> tuple[Any, ...]:
    """Count, newest update and highest id of the sources: changes whenever knowledge does.

    Every chunk write touches its source, so this one cheap query sees chunk changes too.
    """
    found = KnowledgeSource.objects.using(using).aggregate(
        count=Count("pk"), last=Max("updated_at"), top=Max("pk")
    )
    last = found["last"]
    return (found["count"], str(last) if last is not None else None, found["top"])


@dataclass(frozen=True)
class StoredChunks:
    """Every stored chunk as a snapshot, in id order, with what an index needs besides."""

    chunks: list[ChunkSnapshot]
    pks: np.ndarray  # database id of each chunk, by position
    matrix: np.ndarray | None  # one unit vector per chunk (zeros where unusable); None when not asked for
    mismatched: int  # chunks embedded by another embedder or dimension (never vector-matched)


def stored_chunks(embedder: Embedder, *, with_vectors: bool, using: str = "default") -> StoredChunks:
    """All chunks as snapshots; with `with_vectors`, their embeddings as a matrix for `embedder`."""
    columns = _CHUNK_COLUMNS + (("embedding",) if with_vectors else ())
    rows = KnowledgeChunk.objects.using(using).order_by("id").values_list(*columns)
    chunks: list[ChunkSnapshot] = []
    pks: list[int] = []
    blobs: list[bytes | None] = []
    mismatched = 0
    for row in rows.iterator(chunk_size=5000):
        pks.append(row[0])
        chunks.append(
            ChunkSnapshot(
                chunk_id=row[1], source_id=row[2], source_version=row[3], title=row[4], heading=row[5],
                text=row[6], doc_type=row[7], source_type=row[8], city_code=row[9],
                lot_codes=tuple(row[10] or ()), effective_from=row[11], effective_to=row[12],
                status=row[13], ordinal=row[14],
            )
        )
        usable = row[15] == embedder.name and row[16] == embedder.dim
        mismatched += 0 if usable else 1
        if with_vectors:
            blobs.append(bytes(row[17]) if usable else None)
    matrix = None
    if with_vectors:
        matrix = np.zeros((len(chunks), embedder.dim), dtype=np.float32)
        for i, blob in enumerate(blobs):
            if blob:
                matrix[i] = np.frombuffer(blob, dtype="<f4")
    return StoredChunks(chunks=chunks, pks=np.array(pks, dtype=np.int64), matrix=matrix, mismatched=mismatched)


def source_chunk_snapshots(source: KnowledgeSource) -> list[ChunkSnapshot]:
    """A source's stored chunks as snapshots (for re-embedding a source kept only as chunks)."""
    rows = KnowledgeChunk.objects.filter(source=source).order_by("ordinal", "id")
    return [
        ChunkSnapshot(
            chunk_id=row.chunk_id,
            source_id=source.source_id,
            source_version=source.version,
            title=source.title,
            heading=row.heading,
            text=row.text,
            doc_type=source.doc_type,
            source_type=source.source_type,
            city_code=source.city_code,
            lot_codes=tuple(source.lot_codes or ()),
            effective_from=source.effective_from,
            effective_to=source.effective_to,
            status=source.status,
            ordinal=row.ordinal,
        )
        for row in rows
    ]
