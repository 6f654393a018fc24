"""Knowledge storage: sources (documents with retrieval metadata) and their embedded chunks.

Chunks copy the source's filter metadata so retrieval reads one table. On PostgreSQL with the
`vector` extension, migration 0004 also gives the chunk table an `embedding_vec vector(384)`
column with an HNSW index (see `conversations/knowledge/vectors.py`); elsewhere the float32
bytes in `embedding` are searched with numpy.
"""

from __future__ import annotations

import numpy as np
from django.db import models

from config.fields import JSONField

DEFAULT_SOURCE_TYPE = "biz_derived"


class KnowledgeStatus(models.TextChoices):
    ACTIVE = "active"
    INACTIVE = "inactive"


class IngestStatus(models.TextChoices):
    PENDING = "pending"
    PROCESSING = "processing"
    DONE = "done"
    FAILED = "failed"


class KnowledgeSource(models.Model):
    """A knowledge document: its text, the metadata retrieval filters on, and its ingest state."""

    source_id = models.CharField(max_length=128, unique=True)
    title = models.CharField(max_length=300)
    doc_type = models.CharField(max_length=64, db_index=True)
    source_type = models.CharField(max_length=64, default=DEFAULT_SOURCE_TYPE, db_index=True)
    # NULL, not "": no city means the knowledge applies in every city (the engine reads None).
    city_code = models.CharField(max_length=32, null=True, blank=True)  # noqa: DJ001
    lot_codes = JSONField(default=list, blank=True)
    effective_from = models.DateTimeField(null=True, blank=True)
    effective_to = models.DateTimeField(null=True, blank=True)
    source = models.CharField(
        max_length=500, blank=True, help_text="Origin: a file path, a URL, or billing:RULE:vN."
    )
    version = models.PositiveIntegerField(default=1)
    status = models.CharField(
        max_length=16, choices=KnowledgeStatus.choices, default=KnowledgeStatus.ACTIVE
    )
    locale = models.CharField(max_length=16, blank=True)
    content = models.TextField(blank=True, help_text="The Markdown or text the chunks come from.")
    content_hash = models.CharField(max_length=64, blank=True)
    metadata = JSONField(default=dict, blank=True)
    embedder = models.CharField(max_length=64, blank=True)
    ingest_status = models.CharField(
        max_length=16, choices=IngestStatus.choices, default=IngestStatus.PENDING, db_index=True
    )
    ingest_total = models.PositiveIntegerField(default=0, help_text="Chunks to embed.")
    ingest_done = models.PositiveIntegerField(default=0, help_text="Chunks embedded so far.")
    ingest_error = models.TextField(blank=True)
    ingested_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Every write to a source or its chunks sets this: with the row count it is the
    # fingerprint that tells a process its cached retrieval index is stale.
    updated_at = models.DateTimeField(auto_now=True, db_index=True)

    class Meta:
        ordering = ["source_id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(effective_to__isnull=True)
                | models.Q(effective_from__isnull=True)
                | models.Q(effective_to__gt=models.F("effective_from")),
                name="knowledge_source_range_forward",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.source_id} v{self.version}"


class KnowledgeChunk(models.Model):
    """One embedded passage of a source, with the source's filter metadata copied onto it."""

    source = models.ForeignKey(KnowledgeSource, on_delete=models.CASCADE, related_name="chunks")
    chunk_id = models.CharField(max_length=64, unique=True)
    ordinal = models.PositiveIntegerField()
    heading = models.CharField(max_length=500, blank=True)
    text = models.TextField()
    embedding = models.BinaryField(help_text="Little-endian float32 vector, unit length.")
    embedder = models.CharField(max_length=64)
    dim = models.PositiveSmallIntegerField()
    # Denormalised from the source so retrieval filters without a join.
    source_key = models.CharField(max_length=128, db_index=True)
    source_version = models.PositiveIntegerField(default=1)
    title = models.CharField(max_length=300)
    doc_type = models.CharField(max_length=64)
    source_type = models.CharField(max_length=64, default=DEFAULT_SOURCE_TYPE)
    # NULL, not "": no city means the knowledge applies in every city (the engine reads None).
    city_code = models.CharField(max_length=32, null=True, blank=True)  # noqa: DJ001
    lot_codes = JSONField(default=list, blank=True)
    effective_from = models.DateTimeField(null=True, blank=True)
    effective_to = models.DateTimeField(null=True, blank=True)
    status = models.CharField(
        max_length=16, choices=KnowledgeStatus.choices, default=KnowledgeStatus.ACTIVE
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["source_key", "ordinal"]
        indexes = [
            models.Index(fields=["status", "doc_type"], name="kchunk_status_doctype"),
            models.Index(fields=["city_code"], name="kchunk_city"),
            models.Index(fields=["effective_from", "effective_to"], name="kchunk_effective"),
            models.Index(fields=["source", "ordinal"], name="kchunk_source_ordinal"),
        ]

    def __str__(self) -> str:
        return f"{self.source_key}#{self.ordinal}"

    @property
    def vector(self) -> np.ndarray:
        """The stored embedding as a float32 array."""
        return np.frombuffer(bytes(self.embedding), dtype="<f4")
