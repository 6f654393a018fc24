"""Knowledge ingestion: the only code that writes sources and chunks.

Ingestion is clean -> chunk -> embed -> upsert (the engine does the first three). A source is
replaced whole: its old chunks are deleted and the new ones inserted in one transaction, with
an audit row. A record whose content hash matches what is stored (and was embedded with the
same embedder) changes nothing. Large inputs are staged (source rows marked pending) and the
embedding runs in a Celery task after commit (`knowledge_ingest_background`). Every write
drops this process's retrieval index (`index.invalidate_index_on_write`).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import numpy as np
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from config.errors import Conflict, NotFound
from workflows.audit import audit_record

from .. import vectors
from ..engine import (
    ChunkSnapshot,
    Embedder,
    KnowledgeRecord,
    l2_normalize,
    make_chunk_id,
    normalize_whitespace,
    record_from_mapping,
    record_snapshots,
)
from ..errors import InvalidKnowledge
from ..models import IngestStatus, KnowledgeChunk, KnowledgeSource, KnowledgeStatus
from ..selectors import source_chunk_snapshots
from ..tasks import queue_ingestion
from .index import invalidate_index, invalidate_index_on_write, knowledge_embedder

logger = logging.getLogger(__name__)

EMBED_BATCH = 64
MAX_BATCH_CHUNKS = 1000
ProgressFn = Callable[[str, int, int], None]


def _vector_bytes(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype="<f4").reshape(-1).tobytes()


# --- records and hashes ------------------------------------------------------------


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def record_hash(record: KnowledgeRecord) -> str:
    """SHA-256 of everything that defines a source's stored state (text and metadata)."""
    body = {
        "title": record.title,
        "text": record.text,
        "doc_type": record.doc_type,
        "source_type": record.source_type,
        "version": record.version,
        "city_code": record.city_code,
        "lot_codes": list(record.lot_codes),
        "effective_from": _iso(record.effective_from),
        "effective_to": _iso(record.effective_to),
        "status": record.status,
        "locale": record.locale,
        "metadata": _metadata(record),
    }
    encoded = json.dumps(body, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(encoded.encode("utf-8")).hexdigest()


def _metadata(record: KnowledgeRecord) -> dict[str, Any]:
    # "source" in a JSONL line is the origin, kept in its own column, not metadata.
    return {key: value for key, value in dict(record.metadata).items() if key != "source"}


def _record_of(source: KnowledgeSource, text: str | None = None) -> KnowledgeRecord:
    return KnowledgeRecord(
        source_id=source.source_id,
        title=source.title,
        text=source.content if text is None else text,
        doc_type=source.doc_type,
        source_type=source.source_type,
        version=source.version,
        city_code=source.city_code,
        lot_codes=tuple(source.lot_codes or ()),
        effective_from=source.effective_from,
        effective_to=source.effective_to,
        status=source.status,
        locale=source.locale or None,
        metadata=dict(source.metadata or {}),
    )


def _origin_for(record: KnowledgeRecord, origins: str | Mapping[str, str] | None) -> str:
    # A record's own "source" field (a JSONL column) wins over where it was read from.
    own = record.metadata.get("source") if record.metadata else None
    if own:
        return str(own)
    if isinstance(origins, str):
        return origins
    return str((origins or {}).get(record.source_id) or "")


def _apply_record(source: KnowledgeSource, record: KnowledgeRecord, origin: str, digest: str) -> None:
    source.title = record.title
    source.doc_type = record.doc_type
    source.source_type = record.source_type
    source.city_code = record.city_code
    source.lot_codes = list(record.lot_codes)
    source.effective_from = record.effective_from
    source.effective_to = record.effective_to
    source.version = record.version
    source.status = record.status
    source.locale = record.locale or ""
    source.content = record.text
    source.content_hash = digest
    source.metadata = _metadata(record)
    if origin:
        source.source = origin


# --- ingestion ---------------------------------------------------------------------


@dataclass
class IngestReport:
    """What an ingest did, by source id."""

    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    chunks_written: int = 0
    queued: list[int] = field(default_factory=list)

    @property
    def changed(self) -> list[str]:
        return self.created + self.updated

    def summary(self) -> str:
        parts = [
            f"{len(self.created)} created",
            f"{len(self.updated)} updated",
            f"{len(self.unchanged)} unchanged",
            f"{self.chunks_written} chunks written",
        ]
        if self.queued:
            parts.append(f"{len(self.queued)} queued for background ingestion")
        if self.failed:
            parts.append(f"{len(self.failed)} failed")
        return ", ".join(parts)


def _check_unique(records: Sequence[KnowledgeRecord]) -> None:
    seen: set[str] = set()
    duplicates = sorted({r.source_id for r in records if r.source_id in seen or seen.add(r.source_id)})
    if duplicates:
        raise InvalidKnowledge(
            f"{len(duplicates)} source id(s) appear more than once in one ingest.",
            code="duplicate_source",
            details={"source_ids": duplicates},
        )


def _stage(
    records: Sequence[KnowledgeRecord],
    origins: str | Mapping[str, str] | None,
    embedder: Embedder,
    report: IngestReport,
) -> list[KnowledgeSource]:
    """Upsert source rows for changed records (pending); unchanged ones are left alone."""
    _check_unique(records)
    existing = {
        s.source_id: s
        for s in KnowledgeSource.objects.select_for_update().filter(
            source_id__in=[r.source_id for r in records]
        )
    }
    staged: list[KnowledgeSource] = []
    for record in records:
        digest = record_hash(record)
        source = existing.get(record.source_id)
        if (
            source is not None
            and source.content_hash == digest
            and source.ingest_status == IngestStatus.DONE
            and source.embedder == embedder.name
        ):
            report.unchanged.append(record.source_id)
            continue
        created = source is None
        if source is None:
            source = KnowledgeSource(source_id=record.source_id)
        _apply_record(source, record, _origin_for(record, origins), digest)
        source.ingest_status = IngestStatus.PENDING
        source.ingest_total = 0
        source.ingest_done = 0
        source.ingest_error = ""
        source.save()
        (report.created if created else report.updated).append(record.source_id)
        staged.append(source)
    return staged


def _snapshots_for(source: KnowledgeSource) -> list[ChunkSnapshot]:
    """The chunks a source should have: its content chunked, or its existing chunks re-embedded."""
    if source.content.strip():
        return record_snapshots(_record_of(source))
    return source_chunk_snapshots(source)


def _embed_snapshots(
    source: KnowledgeSource,
    snapshots: Sequence[ChunkSnapshot],
    embedder: Embedder,
    *,
    progress: ProgressFn | None,
    track: bool,
) -> list[bytes]:
    """Embed each chunk's search text, reusing stored vectors of identical chunks."""
    reuse: dict[tuple[str, str, str], bytes] = {}
    if source.pk is not None:
        stored = KnowledgeChunk.objects.filter(
            source=source, embedder=embedder.name, dim=embedder.dim
        ).values_list("title", "heading", "text", "embedding")
        reuse = {(t, h, x): bytes(e) for t, h, x, e in stored}
    out: list[bytes | None] = [reuse.get((s.title, s.heading, s.text)) for s in snapshots]
    todo = [i for i, blob in enumerate(out) if blob is None]
    total, done = len(snapshots), len(snapshots) - len(todo)
    for start in range(0, len(todo), EMBED_BATCH):
        rows = todo[start : start + EMBED_BATCH]
        matrix = embedder.embed([snapshots[i].search_text for i in rows])
        for i, vector in zip(rows, matrix, strict=True):
            out[i] = _vector_bytes(vector)
        done += len(rows)
        if track:
            # Progress only: no updated_at, so readers' cached indexes stay valid.
            KnowledgeSource.objects.filter(pk=source.pk).update(ingest_done=done, ingest_total=total)
        if progress is not None:
            progress(source.source_id, done, total)
    if not todo and progress is not None:
        progress(source.source_id, total, total)
    return [blob or b"" for blob in out]


def _chunk_rows(
    source: KnowledgeSource, snapshots: Sequence[ChunkSnapshot], blobs: Sequence[bytes], embedder: Embedder
) -> list[KnowledgeChunk]:
    return [
        KnowledgeChunk(
            source=source,
            chunk_id=snap.chunk_id,
            ordinal=snap.ordinal,
            heading=snap.heading[:500],
            text=snap.text,
            embedding=blob,
            embedder=embedder.name,
            dim=len(blob) // 4,
            **_denormalised(source),
        )
        for snap, blob in zip(snapshots, blobs, strict=True)
    ]


def _denormalised(source: KnowledgeSource) -> dict[str, Any]:
    return {
        "source_key": source.source_id,
        "source_version": source.version,
        "title": source.title,
        "doc_type": source.doc_type,
        "source_type": source.source_type,
        "city_code": source.city_code,
        "lot_codes": list(source.lot_codes or []),
        "effective_from": source.effective_from,
        "effective_to": source.effective_to,
        "status": source.status,
    }


def _write_chunks(rows: list[KnowledgeChunk]) -> None:
    created = KnowledgeChunk.objects.bulk_create(rows, batch_size=500)
    if vectors.column_available():
        vectors.store_vectors(
            (row.pk, np.frombuffer(row.embedding, dtype="<f4")) for row in created if row.pk
        )


def _process(
    source: KnowledgeSource,
    embedder: Embedder,
    *,
    user: Any = None,
    progress: ProgressFn | None = None,
    track: bool = False,
) -> tuple[str, int]:
    """Chunk, embed and replace one staged source's chunks; ('done' | 'skipped', chunks)."""
    expected_hash = source.content_hash
    snapshots = _snapshots_for(source)
    blobs = _embed_snapshots(source, snapshots, embedder, progress=progress, track=track)
    with transaction.atomic():
        locked = KnowledgeSource.objects.select_for_update().filter(pk=source.pk).first()
        if locked is None or locked.content_hash != expected_hash:
            return "skipped", 0  # deleted or re-staged meanwhile: that staging's task wins
        if track and locked.ingest_status == IngestStatus.DONE:
            return "skipped", 0  # a redelivered task: the first delivery finished
        KnowledgeChunk.objects.filter(source=locked).delete()
        _write_chunks(_chunk_rows(locked, snapshots, blobs, embedder))
        locked.ingest_status = IngestStatus.DONE
        locked.ingest_total = locked.ingest_done = len(snapshots)
        locked.ingest_error = ""
        locked.embedder = embedder.name
        locked.ingested_at = timezone.now()
        locked.save()
        audit_record(
            "knowledge_source_ingested",
            actor=user,
            payload={
                "source_id": locked.source_id,
                "version": locked.version,
                "chunks": len(snapshots),
                "embedder": embedder.name,
                "content_hash": locked.content_hash,
                "origin": locked.source,
            },
        )
    return "done", len(snapshots)


def knowledge_ingest(
    records: Iterable[KnowledgeRecord],
    *,
    origins: str | Mapping[str, str] | None = None,
    embedder: Embedder | None = None,
    progress: ProgressFn | None = None,
    user: Any = None,
) -> IngestReport:
    """Clean, chunk, embed and upsert sources in one transaction; unchanged ones are no-ops."""
    records = list(records)
    embedder = embedder or knowledge_embedder()
    report = IngestReport()
    with transaction.atomic():
        for source in _stage(records, origins, embedder, report):
            _, written = _process(source, embedder, user=user, progress=progress)
            report.chunks_written += written
        if report.changed:
            invalidate_index_on_write()
    return report


def knowledge_ingest_background(
    records: Iterable[KnowledgeRecord],
    *,
    origins: str | Mapping[str, str] | None = None,
    user: Any = None,
) -> IngestReport:
    """Stage sources as pending and queue their embedding in a Celery task after commit."""
    records = list(records)
    embedder = knowledge_embedder()
    report = IngestReport()
    with transaction.atomic():
        staged = _stage(records, origins, embedder, report)
        report.queued = [source.pk for source in staged]
        if staged:
            audit_record(
                "knowledge_ingest_queued",
                actor=user,
                payload={"source_ids": [s.source_id for s in staged], "embedder": embedder.name},
            )
            queue_ingestion(report.queued)
    return report


def knowledge_sources_reingest(*, source_pks: Sequence[int], user: Any = None) -> list[int]:
    """Mark sources pending and re-chunk and re-embed them in the background (admin action)."""
    with transaction.atomic():
        sources = list(KnowledgeSource.objects.select_for_update().filter(pk__in=list(source_pks)))
        pks = [s.pk for s in sources]
        if not pks:
            return []
        KnowledgeSource.objects.filter(pk__in=pks).update(
            ingest_status=IngestStatus.PENDING, ingest_done=0, ingest_error="", updated_at=timezone.now()
        )
        audit_record(
            "knowledge_reingest_queued",
            actor=user,
            payload={"source_ids": sorted(s.source_id for s in sources)},
        )
        queue_ingestion(pks)
    return pks


def knowledge_sources_process(
    *, source_pks: Sequence[int], embedder: Embedder | None = None, user: Any = None
) -> dict[str, Any]:
    """Process pending sources one by one, each in its own transaction; failures are recorded."""
    embedder = embedder or knowledge_embedder()
    result: dict[str, Any] = {"done": [], "skipped": [], "failed": {}}
    for pk in source_pks:
        claimed = (
            KnowledgeSource.objects.filter(pk=pk)
            .exclude(ingest_status=IngestStatus.DONE)
            .update(ingest_status=IngestStatus.PROCESSING, ingest_done=0, ingest_error="")
        )
        source = KnowledgeSource.objects.filter(pk=pk).first() if claimed else None
        if source is None:
            result["skipped"].append(pk)
            continue
        try:
            outcome, _ = _process(source, embedder, user=user, track=True)
        except Exception as error:  # noqa: BLE001 - recorded on the source for the admin
            logger.exception("knowledge ingestion of %s failed", source.source_id)
            message = f"{type(error).__name__}: {error}"[:2000]
            with transaction.atomic():
                KnowledgeSource.objects.filter(pk=pk, content_hash=source.content_hash).update(
                    ingest_status=IngestStatus.FAILED, ingest_error=message, updated_at=timezone.now()
                )
                audit_record(
                    "knowledge_ingest_failed",
                    actor=user,
                    payload={"source_id": source.source_id, "error": message},
                )
            result["failed"][source.source_id] = message
            continue
        result[outcome].append(source.source_id if outcome == "done" else pk)
    invalidate_index()
    return result


# --- metadata upserts and chunk batches (the REST API) -----------------------------

SOURCE_FIELDS = (
    "title",
    "doc_type",
    "source_type",
    "version",
    "city_code",
    "lot_codes",
    "effective_from",
    "effective_to",
    "status",
    "locale",
)


def _problems(errors: Iterable[Any]) -> list[dict[str, Any]]:
    return [{"field": e.field, "message": e.message} for e in errors]


def knowledge_source_upsert(*, data: Mapping[str, Any], user: Any = None) -> tuple[KnowledgeSource, str]:
    """Create or update a source; with `content` it is (re)ingested, else only metadata changes.

    Returns the source and what happened: created | updated | unchanged.
    """
    source_id = data.get("source_id")
    existing = KnowledgeSource.objects.filter(source_id=source_id).first() if source_id else None
    content = data.get("content")
    if content is None and data.get("text") is not None:
        content = data.get("text")
    if content is not None:
        merged = {**_current_fields(existing), **dict(data), "text": content}
        merged.pop("content", None)
        record = _validated(merged)
        report = knowledge_ingest([record], origins=str(data.get("source") or ""), user=user)
        outcome = "created" if report.created else "updated" if report.updated else "unchanged"
        return KnowledgeSource.objects.get(source_id=record.source_id), outcome
    if not source_id:
        raise InvalidKnowledge(
            "source_id is required.", details={"problems": [{"field": "source_id", "message": "is required"}]}
        )
    # Metadata only: validate the merged fields with the stored text standing in.
    merged = {**_current_fields(existing), **dict(data)}
    merged["text"] = (existing.content if existing and existing.content.strip() else None) or "-"
    record = _validated(merged)
    if existing is not None and existing.content.strip() and (
        (record.title, record.version) != (existing.title, existing.version)
    ):
        # Chunk ids carry the version and embeddings the title: re-chunk the stored content.
        report = knowledge_ingest([record], origins=str(data.get("source") or ""), user=user)
        return KnowledgeSource.objects.get(pk=existing.pk), "updated" if report.updated else "unchanged"
    digest = record_hash(replace_text(record, existing.content if existing else ""))
    with transaction.atomic():
        source = KnowledgeSource.objects.select_for_update().filter(source_id=record.source_id).first()
        if source is not None and source.content_hash == digest:
            return source, "unchanged"
        created = source is None
        if source is None:
            source = KnowledgeSource(source_id=record.source_id, ingest_status=IngestStatus.DONE)
        content_before = source.content
        _apply_record(source, replace_text(record, content_before), str(data.get("source") or ""), digest)
        source.save()
        KnowledgeChunk.objects.filter(source=source).update(**_denormalised(source))
        audit_record(
            "knowledge_source_upserted",
            actor=user,
            payload={"source_id": source.source_id, "version": source.version, "created": created,
                     "fields": sorted(k for k in data if k in SOURCE_FIELDS)},
        )
        invalidate_index_on_write()
    return source, "created" if created else "updated"


def replace_text(record: KnowledgeRecord, text: str) -> KnowledgeRecord:
    return replace(record, text=text)


def _current_fields(source: KnowledgeSource | None) -> dict[str, Any]:
    if source is None:
        return {}
    return {
        "source_id": source.source_id,
        "title": source.title,
        "doc_type": source.doc_type,
        "source_type": source.source_type,
        "version": source.version,
        "city_code": source.city_code,
        "lot_codes": list(source.lot_codes or []),
        "effective_from": _iso(source.effective_from),
        "effective_to": _iso(source.effective_to),
        "status": source.status,
        "locale": source.locale or None,
        **dict(source.metadata or {}),
    }


def _validated(data: Mapping[str, Any]) -> KnowledgeRecord:
    payload = {k: v for k, v in data.items() if k not in ("source", "metadata")}
    payload.update({k: v for k, v in dict(data.get("metadata") or {}).items() if k not in payload})
    if payload.get("source_type") is None:
        payload.pop("source_type", None)
    record, errors = record_from_mapping(payload)
    if record is None:
        raise InvalidKnowledge(
            f"The knowledge source has {len(errors)} problem(s).",
            details={"problems": _problems(errors)},
        )
    return record


def knowledge_chunks_batch(
    *,
    source_id: str,
    chunks: Sequence[Mapping[str, Any]],
    embedder_name: str | None = None,
    replace: bool = False,
    user: Any = None,
) -> tuple[KnowledgeSource, int]:
    """Add (or replace) a source's chunks from ready text, with embeddings checked for dimension."""
    source = KnowledgeSource.objects.filter(source_id=source_id).first()
    if source is None:
        raise NotFound(f"Knowledge source '{source_id}' not found.", code="knowledge_source_not_found")
    if not chunks:
        raise InvalidKnowledge("chunks must not be empty.", details={"problems": [{"index": None, "message": "empty"}]})
    if len(chunks) > MAX_BATCH_CHUNKS:
        raise InvalidKnowledge(f"At most {MAX_BATCH_CHUNKS} chunks per batch.", code="batch_too_large")
    embedder = knowledge_embedder()
    name = embedder_name or embedder.name
    problems: list[dict[str, Any]] = []
    texts: list[str] = []
    provided: dict[int, np.ndarray] = {}
    for index, chunk in enumerate(chunks):
        text = normalize_whitespace(str(chunk.get("text") or ""))
        if not text:
            problems.append({"index": index, "field": "text", "message": "is required"})
        texts.append(text)
        raw = chunk.get("embedding")
        if raw is None:
            continue
        vector = np.asarray(raw, dtype=np.float64).reshape(-1)
        if vector.shape[0] != embedder.dim:
            problems.append({"index": index, "field": "embedding",
                             "message": f"has dimension {vector.shape[0]}, expected {embedder.dim}"})
        elif not np.isfinite(vector).all() or not vector.any():
            problems.append({"index": index, "field": "embedding", "message": "must be finite and non-zero"})
        else:
            provided[index] = l2_normalize(vector.astype(np.float32))
    if any(p["field"] == "embedding" and "dimension" in p["message"] for p in problems):
        raise InvalidKnowledge(
            "Embedding dimensions do not match the knowledge base.",
            code="dimension_mismatch",
            details={"expected_dim": embedder.dim, "problems": problems},
        )
    if problems:
        raise InvalidKnowledge(f"{len(problems)} chunk(s) are invalid.", details={"problems": problems})
    if name != embedder.name and len(provided) != len(chunks):
        raise InvalidKnowledge(
            f"Chunks without an embedding are embedded with '{embedder.name}', not '{name}'.",
            code="embedder_mismatch",
        )
    with transaction.atomic():
        source = KnowledgeSource.objects.select_for_update().get(pk=source.pk)
        current = KnowledgeChunk.objects.filter(source=source)
        next_ordinal = 0 if replace else (current.aggregate(m=Max("ordinal"))["m"] or -1) + 1
        rows: list[KnowledgeChunk] = []
        need = [i for i in range(len(chunks)) if i not in provided]
        computed = embedder.embed([_search_text(source, chunks[i], texts[i]) for i in need]) if need else []
        vectors_by_index = {**provided, **dict(zip(need, computed, strict=True))}
        for index, chunk in enumerate(chunks):
            ordinal = chunk.get("ordinal")
            if ordinal is None:
                ordinal, next_ordinal = next_ordinal, next_ordinal + 1
            chunk_id = chunk.get("chunk_id") or make_chunk_id(
                source.source_id, int(ordinal), texts[index], version=source.version
            )
            blob = _vector_bytes(vectors_by_index[index])
            rows.append(
                KnowledgeChunk(
                    source=source, chunk_id=str(chunk_id)[:64], ordinal=int(ordinal),
                    heading=str(chunk.get("heading") or "")[:500], text=texts[index], embedding=blob,
                    embedder=name, dim=len(blob) // 4, **_denormalised(source),
                )
            )
        ids = [row.chunk_id for row in rows]
        if len(set(ids)) != len(ids):
            raise InvalidKnowledge("chunk_id values repeat within the batch.", code="duplicate_chunk")
        taken = sorted(
            KnowledgeChunk.objects.filter(chunk_id__in=ids).exclude(source=source).values_list("chunk_id", flat=True)
        )
        if taken:
            raise Conflict("Some chunk ids belong to another source.", code="chunk_id_taken",
                           details={"chunk_ids": taken})
        (current if replace else current.filter(chunk_id__in=ids)).delete()
        _write_chunks(rows)
        count = KnowledgeChunk.objects.filter(source=source).count()
        source.ingest_status = IngestStatus.DONE
        source.ingest_total = source.ingest_done = count
        source.ingest_error = ""
        source.embedder = name
        source.ingested_at = timezone.now()
        source.save()
        audit_record(
            "knowledge_chunks_batch",
            actor=user,
            payload={"source_id": source.source_id, "chunks": len(rows), "replace": replace,
                     "embedder": name, "provided_embeddings": len(provided)},
        )
        invalidate_index_on_write()
    return source, len(rows)


def _search_text(source: KnowledgeSource, chunk: Mapping[str, Any], text: str) -> str:
    return ChunkSnapshot(
        chunk_id="-", source_id=source.source_id, source_version=source.version, title=source.title,
        heading=str(chunk.get("heading") or ""), text=text, doc_type=source.doc_type,
        source_type=source.source_type, city_code=None, lot_codes=(), effective_from=None,
        effective_to=None, status=KnowledgeStatus.ACTIVE, ordinal=0,
    ).search_text
