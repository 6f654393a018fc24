"""Knowledge ingestion services: replace on re-ingest, declared versions, no-op on unchanged
content, metadata upserts, chunk batches, and background ingestion with progress and failures."""

from __future__ import annotations

import os
from datetime import UTC, datetime

import numpy as np
import pytest

from config.errors import ApplicationError, NotFound
from conversations.knowledge.engine import HashingEmbedder, KnowledgeRecord, RetrievalFilters
from conversations.knowledge.models import IngestStatus, KnowledgeChunk, KnowledgeSource
from conversations.knowledge.services import index, ingestion, retrieval
from conversations.knowledge.tasks import ingest_sources
from workflows.models import AuditEvent

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_demo_data")]  # knowledge starts empty

LONG_EN = "\n\n".join(
    f"## Part {i}\n\nThe roof air conditioner capacitor number {i} sits behind the shroud. " * 3
    for i in range(6)
)


@pytest.fixture(autouse=True)
def _fresh_index():  # noqa: ANN202
    index.invalidate_index()
    yield
    index.invalidate_index()


def record(source_id: str = "kb.roof_ac", text: str = LONG_EN, **fields) -> KnowledgeRecord:  # noqa: ANN003
    base = {"title": "Roof AC notes", "doc_type": "reference", "source_type": "manual", "version": 1}
    base.update(fields)
    return KnowledgeRecord(source_id=source_id, text=text, **base)


def test_ingest_stores_source_chunks_embeddings_and_audit() -> None:
    report = ingestion.knowledge_ingest([record(city_code="310100", lot_codes=("LOT-A",))], origins="docs/roof.md")
    source = KnowledgeSource.objects.get(source_id="kb.roof_ac")
    chunks = list(source.chunks.order_by("ordinal"))
    assert report.created == ["kb.roof_ac"] and report.chunks_written == len(chunks) > 1
    assert source.ingest_status == IngestStatus.DONE
    assert source.ingest_total == source.ingest_done == len(chunks)
    assert source.source == "docs/roof.md" and source.embedder == HashingEmbedder().name
    first = chunks[0]
    assert (first.source_key, first.source_version, first.city_code, first.lot_codes) == ("kb.roof_ac", 1, "310100", ["LOT-A"])
    assert first.dim == 384 and len(bytes(first.embedding)) == 384 * 4
    assert np.isclose(np.linalg.norm(first.vector), 1.0, atol=1e-5)
    event = AuditEvent.objects.get(event_type="knowledge_source_ingested")
    assert event.payload["source_id"] == "kb.roof_ac" and event.payload["chunks"] == len(chunks)


def test_reingest_replaces_chunks_and_keeps_the_declared_version() -> None:
    ingestion.knowledge_ingest([record(version=3)])
    old_ids = set(KnowledgeChunk.objects.values_list("chunk_id", flat=True))
    report = ingestion.knowledge_ingest([record(version=3, text="# Roof AC\n\nReplaced: the capacitor is in the control box.")])
    source = KnowledgeSource.objects.get(source_id="kb.roof_ac")
    new_ids = set(KnowledgeChunk.objects.values_list("chunk_id", flat=True))
    assert report.updated == ["kb.roof_ac"]
    assert source.version == 3 and KnowledgeChunk.objects.filter(source_version=3).count() == len(new_ids) == 1
    assert not old_ids & new_ids
    assert "Replaced" in KnowledgeChunk.objects.get().text


def test_unchanged_content_changes_nothing() -> None:
    ingestion.knowledge_ingest([record()])
    before = KnowledgeSource.objects.get().updated_at
    chunk_pks = set(KnowledgeChunk.objects.values_list("pk", flat=True))
    events = AuditEvent.objects.count()
    report = ingestion.knowledge_ingest([record()])
    assert report.unchanged == ["kb.roof_ac"] and not report.changed and report.chunks_written == 0
    assert KnowledgeSource.objects.get().updated_at == before
    assert set(KnowledgeChunk.objects.values_list("pk", flat=True)) == chunk_pks
    assert AuditEvent.objects.count() == events


def test_duplicate_source_ids_in_one_ingest_write_nothing() -> None:
    with pytest.raises(ApplicationError) as caught:
        ingestion.knowledge_ingest([record(), record(text="other")])
    assert caught.value.code == "duplicate_source"
    assert not KnowledgeSource.objects.exists()


def test_metadata_upsert_updates_chunks_and_retrieval_sees_it() -> None:
    ingestion.knowledge_ingest([record(text="The capacitor sits behind the roof shroud.")])
    assert retrieval.knowledge_retrieve("capacitor shroud").hits
    source, outcome = ingestion.knowledge_source_upsert(data={"source_id": "kb.roof_ac", "status": "inactive", "city_code": "110100"})
    assert outcome == "updated" and source.status == "inactive"
    assert set(KnowledgeChunk.objects.values_list("status", "city_code")) == {("inactive", "110100")}
    assert retrieval.knowledge_retrieve("capacitor shroud").hits == []
    hidden = retrieval.knowledge_retrieve("capacitor shroud", filters=RetrievalFilters(include_inactive=True))
    assert [h.chunk.source_id for h in hidden.hits] == ["kb.roof_ac"]
    # The same metadata again is a no-op.
    assert ingestion.knowledge_source_upsert(data={"source_id": "kb.roof_ac", "status": "inactive"})[1] == "unchanged"


def test_metadata_upsert_of_a_new_version_rechunks_the_stored_content() -> None:
    ingestion.knowledge_ingest([record(text="The capacitor sits behind the roof shroud.")])
    before = set(KnowledgeChunk.objects.values_list("chunk_id", flat=True))
    source, outcome = ingestion.knowledge_source_upsert(data={"source_id": "kb.roof_ac", "version": 2})
    assert outcome == "updated" and source.version == 2 and source.content.startswith("The capacitor")
    assert set(KnowledgeChunk.objects.values_list("source_version", flat=True)) == {2}
    assert not before & set(KnowledgeChunk.objects.values_list("chunk_id", flat=True))


def test_metadata_upsert_reports_every_problem() -> None:
    with pytest.raises(ApplicationError) as caught:
        ingestion.knowledge_source_upsert(
            data={"source_id": "kb.new", "title": "", "doc_type": "Bad Type", "effective_from": "2026-01-01T00:00:00"}
        )
    fields = {p["field"] for p in caught.value.details["problems"]}
    assert {"title", "doc_type", "effective_from"} <= fields
    assert not KnowledgeSource.objects.exists()


def test_chunk_batch_checks_dimensions_and_embeds_missing_vectors() -> None:
    ingestion.knowledge_source_upsert(data={"source_id": "kb.batch", "title": "Batch", "doc_type": "faq"})
    vector = [0.0] * 384
    vector[7] = 2.0
    source, written = ingestion.knowledge_chunks_batch(
        source_id="kb.batch",
        chunks=[{"text": "Night parking is free.", "embedding": vector}, {"text": "Day parking costs 2 per 30 minutes.", "heading": "Day"}],
    )
    assert written == 2 and source.ingest_total == 2
    stored = list(KnowledgeChunk.objects.order_by("ordinal"))
    assert [c.ordinal for c in stored] == [0, 1]
    assert np.isclose(stored[0].vector[7], 1.0)  # normalised
    with pytest.raises(ApplicationError) as caught:
        ingestion.knowledge_chunks_batch(source_id="kb.batch", chunks=[{"text": "x", "embedding": [0.1] * 12}])
    assert caught.value.code == "dimension_mismatch" and caught.value.details["expected_dim"] == 384
    with pytest.raises(NotFound):
        ingestion.knowledge_chunks_batch(source_id="kb.missing", chunks=[{"text": "x"}])
    # replace=True swaps the whole set.
    ingestion.knowledge_chunks_batch(source_id="kb.batch", chunks=[{"text": "Only this."}], replace=True)
    assert list(KnowledgeChunk.objects.values_list("text", flat=True)) == ["Only this."]


def test_background_ingest_runs_after_commit_and_is_idempotent(django_capture_on_commit_callbacks) -> None:  # noqa: ANN001
    with django_capture_on_commit_callbacks(execute=True):
        report = ingestion.knowledge_ingest_background([record()])
        assert KnowledgeSource.objects.get().ingest_status == IngestStatus.PENDING
    source = KnowledgeSource.objects.get()
    assert report.queued == [source.pk]
    assert source.ingest_status == IngestStatus.DONE and source.ingest_done == source.ingest_total > 1
    pks = set(KnowledgeChunk.objects.values_list("pk", flat=True))
    # A redelivered task finds the source done and changes nothing.
    assert ingest_sources(source_pks=[source.pk])["skipped"] == [source.pk]
    assert set(KnowledgeChunk.objects.values_list("pk", flat=True)) == pks


def test_background_failure_is_recorded_on_the_source(monkeypatch, django_capture_on_commit_callbacks) -> None:  # noqa: ANN001
    class Broken(HashingEmbedder):
        def embed(self, texts):  # noqa: ANN001, ANN202
            raise RuntimeError("model server down")

    with django_capture_on_commit_callbacks(execute=True):
        ingestion.knowledge_ingest_background([record()])
        monkeypatch.setattr(ingestion, "knowledge_embedder", lambda: Broken())
    source = KnowledgeSource.objects.get()
    assert source.ingest_status == IngestStatus.FAILED
    assert "model server down" in source.ingest_error
    assert AuditEvent.objects.filter(event_type="knowledge_ingest_failed").count() == 1
    # The admin's re-ingest action queues it again; with a working embedder it completes.
    monkeypatch.setattr(ingestion, "knowledge_embedder", lambda: HashingEmbedder())
    with django_capture_on_commit_callbacks(execute=True):
        ingestion.knowledge_sources_reingest(source_pks=[source.pk])
    source.refresh_from_db()
    assert source.ingest_status == IngestStatus.DONE and source.chunks.count() > 1


def test_retrieval_index_is_cached_until_knowledge_changes() -> None:
    ingestion.knowledge_ingest([record(text="The capacitor sits behind the roof shroud.")])
    first = retrieval.knowledge_retrieve("capacitor")
    second = retrieval.knowledge_retrieve("capacitor")
    assert first.trace["index_rebuilt"] is True and second.trace["index_rebuilt"] is False
    ingestion.knowledge_ingest([record("kb.other", text="Capacitor replacement steps.", title="Other")])
    third = retrieval.knowledge_retrieve("capacitor")
    assert third.trace["index_rebuilt"] is True and third.trace["corpus_chunks"] == 2


@pytest.mark.django_db(transaction=True)  # real commits: an index built after a commit is trusted
def test_other_processes_writes_show_after_the_recheck_interval_own_writes_at_once(settings) -> None:  # noqa: ANN001
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    settings.KNOWLEDGE_INDEX_RECHECK_SECONDS = 3600
    ingestion.knowledge_ingest([record(text="The capacitor sits behind the roof shroud.")])
    assert retrieval.knowledge_retrieve("capacitor").trace["index_rebuilt"] is True
    with CaptureQueriesContext(connection) as captured:
        assert retrieval.knowledge_retrieve("capacitor").trace["index_rebuilt"] is False
    assert not [q for q in captured.captured_queries if "conversations_knowledgesource" in q["sql"]]
    # This process's own write is seen at once, whatever the interval.
    ingestion.knowledge_ingest([record("kb.other", text="Capacitor replacement steps.", title="Other")])
    assert retrieval.knowledge_retrieve("capacitor").trace["corpus_chunks"] == 2
    # Another process's write (no invalidation here) is seen once the interval has passed.
    KnowledgeChunk.objects.filter(source_key="kb.other").delete()
    KnowledgeSource.objects.filter(source_id="kb.other").delete()
    assert retrieval.knowledge_retrieve("capacitor").trace["corpus_chunks"] == 2
    settings.KNOWLEDGE_INDEX_RECHECK_SECONDS = 0
    after = retrieval.knowledge_retrieve("capacitor")
    assert after.trace["index_rebuilt"] is True and after.trace["corpus_chunks"] == 1


@pytest.mark.django_db(transaction=True)  # real commits
def test_a_committed_write_leaves_later_transactions_trusting_the_index(settings) -> None:  # noqa: ANN001
    """Turns retrieve inside their own transaction: once the write committed, the index is trusted there."""
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    settings.KNOWLEDGE_INDEX_RECHECK_SECONDS = 3600
    ingestion.knowledge_ingest([record(text="The capacitor sits behind the roof shroud.")])
    with transaction.atomic():
        assert retrieval.knowledge_retrieve("capacitor").trace["index_rebuilt"] is True
    with transaction.atomic(), CaptureQueriesContext(connection) as captured:
        assert retrieval.knowledge_retrieve("capacitor").trace["corpus_chunks"] == 1
    assert not [q for q in captured.captured_queries if "conversations_knowledgesource" in q["sql"]]


def test_an_index_built_inside_a_rolled_back_write_is_not_trusted_afterwards(settings) -> None:  # noqa: ANN001
    from django.db import transaction

    class Rollback(Exception):
        pass

    settings.KNOWLEDGE_INDEX_RECHECK_SECONDS = 3600
    ingestion.knowledge_ingest([record(text="The capacitor sits behind the roof shroud.")])
    assert retrieval.knowledge_retrieve("capacitor").trace["corpus_chunks"] == 1
    with pytest.raises(Rollback), transaction.atomic():
        ingestion.knowledge_ingest([record("kb.other", text="Capacitor replacement steps.", title="Other")])
        assert retrieval.knowledge_retrieve("capacitor").trace["corpus_chunks"] == 2
        raise Rollback
    assert retrieval.knowledge_retrieve("capacitor").trace["corpus_chunks"] == 1


def test_retrieval_filters_effective_time_and_rejects_bad_input() -> None:
    ingestion.knowledge_ingest(
        [
            record("kb.old", text="Night rate is 1 per hour.", effective_from=datetime(2026, 1, 1, tzinfo=UTC),
                   effective_to=datetime(2026, 4, 1, tzinfo=UTC)),
            record("kb.new", text="Night rate is 2 per hour.", effective_from=datetime(2026, 4, 1, tzinfo=UTC)),
        ]
    )
    at = retrieval.knowledge_retrieve("night rate", filters=RetrievalFilters(at_time=datetime(2026, 4, 1, tzinfo=UTC)))
    assert [h.chunk.source_id for h in at.hits] == ["kb.new"]
    before = retrieval.knowledge_retrieve("night rate", filters=RetrievalFilters(at_time=datetime(2026, 3, 31, 23, 59, tzinfo=UTC)))
    assert [h.chunk.source_id for h in before.hits] == ["kb.old"]
    for kwargs in ({"mode": "fuzzy"}, {"top_k": 0}, {"top_k": 51}, {"query_vector": [0.1, 0.2]}):
        with pytest.raises(ApplicationError):
            retrieval.knowledge_retrieve("night", **kwargs)
    with pytest.raises(ApplicationError):
        retrieval.knowledge_retrieve("   ")


def test_pgvector_backend_agrees_with_numpy() -> None:
    """On PostgreSQL with pgvector (DATABASE_URL), HNSW retrieval ranks like exact numpy search."""
    from conversations.knowledge import vectors

    vectors.reset()
    if not vectors.column_available():
        if os.environ.get("CONCIERGE_REQUIRE_PGVECTOR"):
            pytest.fail("CONCIERGE_REQUIRE_PGVECTOR is set but the pgvector column is not available")
        pytest.skip("needs PostgreSQL with the pgvector extension")
    ingestion.knowledge_ingest(
        [
            record(f"kb.doc{i}", text=f"Topic {i}: the capacitor {'and contactor ' * (i % 3)}note {i}.",
                   city_code=("310100" if i % 2 else None), doc_type=("faq" if i % 3 else "reference"))
            for i in range(30)
        ]
    )
    assert KnowledgeChunk.objects.exclude(**{"pk__in": []}).count() == 30
    for query, filters in (("capacitor contactor", RetrievalFilters()),
                           ("capacitor note 7", RetrievalFilters(city_code="310100", doc_type="faq"))):
        for mode in ("vector", "hybrid"):
            exact = retrieval.knowledge_retrieve(query, filters=filters, mode=mode, top_k=5, backend="numpy")
            hnsw = retrieval.knowledge_retrieve(query, filters=filters, mode=mode, top_k=5)
            assert hnsw.trace["backend"] == "pgvector"
            assert [h.chunk.chunk_id for h in hnsw.hits] == [h.chunk.chunk_id for h in exact.hits]
            assert [round(h.score, 5) for h in hnsw.hits] == [round(h.score, 5) for h in exact.hits]
