"""Filters, deterministic top-k, hybrid ranking and its fallbacks."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conversations.knowledge.engine.embedder import HashingEmbedder
from conversations.knowledge.engine.search import (
    MASKS_KEPT,
    ChunkSnapshot,
    KnowledgeIndex,
    RetrievalFilters,
    SearchOptions,
    exact_top_k,
    exclusion_reason,
    filter_chunks,
    matches,
    top_k_indices,
)

T0 = datetime(2025, 1, 1, tzinfo=UTC)
T1 = datetime(2025, 3, 1, tzinfo=UTC)


def chunk(chunk_id: str, text: str = "text", **fields: object) -> ChunkSnapshot:
    base = ChunkSnapshot(
        chunk_id=chunk_id,
        source_id=f"src.{chunk_id}",
        source_version=1,
        title="",
        heading="",
        text=text,
        doc_type="faq",
        source_type="manual",
        city_code=None,
        lot_codes=(),
        effective_from=None,
        effective_to=None,
        status="active",
        ordinal=0,
    )
    return replace(base, **fields)


# ---------------------------------------------------------------- filters


def test_no_filters_match_active_chunks_only() -> None:
    assert matches(chunk("a"), RetrievalFilters())
    inactive = chunk("b", status="inactive")
    assert not matches(inactive, RetrievalFilters())
    assert exclusion_reason(inactive, RetrievalFilters()) == "status is inactive"
    assert matches(inactive, RetrievalFilters(include_inactive=True))


def test_doc_type_and_source_type() -> None:
    c = chunk("a", doc_type="rule_explain", source_type="biz_derived")
    assert matches(c, RetrievalFilters(doc_type="rule_explain"))
    assert not matches(c, RetrievalFilters(doc_type="faq"))
    assert matches(c, RetrievalFilters(source_type="biz_derived"))
    assert not matches(c, RetrievalFilters(source_type="manual"))


def test_city_code_matches_same_city_or_unscoped_chunk() -> None:
    shanghai = chunk("a", city_code="310100")
    general = chunk("b", city_code=None)
    beijing = chunk("c", city_code="110100")
    kept = filter_chunks([shanghai, general, beijing], RetrievalFilters(city_code="310100"))
    assert kept == [shanghai, general]


def test_lot_code_matches_listed_lot_or_empty_list() -> None:
    listed = chunk("a", lot_codes=("LOT-1", "LOT-2"))
    other = chunk("b", lot_codes=("LOT-9",))
    unscoped = chunk("c", lot_codes=())
    kept = filter_chunks([listed, other, unscoped], RetrievalFilters(lot_code="LOT-2"))
    assert kept == [listed, unscoped]
    # Without a lot filter every lot scope matches.
    assert len(filter_chunks([listed, other, unscoped], RetrievalFilters())) == 3


def test_at_time_is_half_open_and_open_ended() -> None:
    window = chunk("a", effective_from=T0, effective_to=T1)
    open_end = chunk("b", effective_from=T0)
    open_start = chunk("c", effective_to=T1)
    before = T0 - timedelta(microseconds=1)
    last = T1 - timedelta(microseconds=1)
    assert not matches(window, RetrievalFilters(at_time=before))
    assert matches(window, RetrievalFilters(at_time=T0))
    assert matches(window, RetrievalFilters(at_time=last))
    assert not matches(window, RetrievalFilters(at_time=T1))
    assert matches(open_end, RetrievalFilters(at_time=T1 + timedelta(days=999)))
    assert matches(open_start, RetrievalFilters(at_time=datetime(1990, 1, 1, tzinfo=UTC)))
    assert not matches(open_start, RetrievalFilters(at_time=T1))


def test_at_time_compares_instants_across_offsets() -> None:
    window = chunk("a", effective_from=T0)
    same_instant = T0.astimezone(timezone(timedelta(hours=8)))
    assert matches(window, RetrievalFilters(at_time=same_instant))


def test_source_ids_and_empty_list_means_any() -> None:
    a, b = chunk("a"), chunk("b")
    assert filter_chunks([a, b], RetrievalFilters(source_ids=("src.b",))) == [b]
    assert RetrievalFilters(source_ids=()).source_ids is None
    assert filter_chunks([a, b], RetrievalFilters(source_ids=())) == [a, b]


def test_naive_datetimes_are_rejected() -> None:
    with pytest.raises(ValueError):
        RetrievalFilters(at_time=datetime(2025, 1, 1))  # noqa: DTZ001
    with pytest.raises(ValueError):
        chunk("a", effective_from=datetime(2025, 1, 1))  # noqa: DTZ001


def test_lot_codes_lists_become_tuples() -> None:
    assert chunk("a", lot_codes=["A"]).lot_codes == ("A",)


times = st.sampled_from([None, T0, T1, T0 + timedelta(days=10)])
chunks_strategy = st.lists(
    st.builds(
        lambda i, doc, src, city, lots, frm, to, status, sid: chunk(
            f"c{i}",
            doc_type=doc,
            source_type=src,
            city_code=city,
            lot_codes=lots,
            effective_from=frm,
            effective_to=to if (frm is None or to is None or to > frm) else None,
            status=status,
            source_id=sid,
        ),
        st.integers(0, 10**6),
        st.sampled_from(["faq", "sop"]),
        st.sampled_from(["manual", "biz_derived"]),
        st.sampled_from([None, "310100", "110100"]),
        st.lists(st.sampled_from(["L1", "L2", "L3"]), max_size=2, unique=True).map(tuple),
        times,
        times,
        st.sampled_from(["active", "inactive"]),
        st.sampled_from(["s1", "s2", "s3"]),
    ),
    max_size=25,
    unique_by=lambda c: c.chunk_id,
)
filters_strategy = st.builds(
    RetrievalFilters,
    doc_type=st.sampled_from([None, "faq", "sop", "zzz"]),
    source_type=st.sampled_from([None, "manual", "biz_derived"]),
    city_code=st.sampled_from([None, "310100", "999999"]),
    lot_code=st.sampled_from([None, "L1", "L3", "L9"]),
    at_time=st.sampled_from([None, T0, T1, T0 + timedelta(days=5), T1 + timedelta(days=1)]),
    source_ids=st.sampled_from([None, ("s1",), ("s2", "s3"), ("nope",)]),
    include_inactive=st.booleans(),
)


@settings(max_examples=150, deadline=None)
@given(chunks_strategy, filters_strategy)
def test_vectorised_mask_equals_the_predicate(
    chunks: list[ChunkSnapshot], filters: RetrievalFilters
) -> None:
    index = KnowledgeIndex(chunks)
    assert index.mask(filters).tolist() == [matches(c, filters) for c in chunks]
    assert index.mask(filters).tolist() == [matches(c, filters) for c in chunks]  # kept, same answer


def test_a_kept_mask_cannot_be_changed_by_a_caller_and_the_kept_ones_are_bounded() -> None:
    chunks = [chunk(f"c{i}", source_id=f"s{i % 3}") for i in range(6)]
    index = KnowledgeIndex(chunks)
    keep = index.mask(RetrievalFilters(source_ids=("s1",)))
    with pytest.raises(ValueError):
        keep &= False
    assert index.mask(RetrievalFilters(source_ids=("s1",))).tolist() == [False, True, False, False, True, False]
    for minute in range(MASKS_KEPT + 5):
        index.mask(RetrievalFilters(at_time=T0 + timedelta(minutes=minute)))
    assert len(index._masks) <= MASKS_KEPT


# ---------------------------------------------------------------- top-k and ties


def test_exact_top_k_matches_full_sort() -> None:
    rng = np.random.default_rng(7)
    matrix = rng.standard_normal((500, 16)).astype(np.float32)
    query = rng.standard_normal(16).astype(np.float32)
    indices, scores = exact_top_k(matrix, query, 10)
    expected = np.argsort(-(matrix @ query), kind="stable")[:10]
    assert indices.tolist() == expected.tolist()
    assert np.all(np.diff(scores) <= 0)


def test_top_k_ties_at_the_boundary_use_the_tie_rank() -> None:
    scores = np.array([0.5, 0.9, 0.5, 0.5, 0.1])
    assert top_k_indices(scores, 3).tolist() == [1, 0, 2]
    tie_rank = np.array([4, 0, 3, 1, 2])
    assert top_k_indices(scores, 3, tie_rank=tie_rank).tolist() == [1, 3, 2]
    mask = np.array([True, False, True, True, True])
    assert top_k_indices(scores, 10, mask=mask).tolist() == [0, 2, 3, 4]
    assert top_k_indices(scores, 0).tolist() == []


def test_equal_scores_break_ties_by_chunk_id_whatever_the_input_order() -> None:
    vector = np.ones(8, dtype=np.float32)
    ids = [f"id-{n:02d}" for n in range(20)]
    results = set()
    for seed in range(5):
        shuffled = ids[:]
        random.Random(seed).shuffle(shuffled)
        chunks = [chunk(i, text="same words") for i in shuffled]
        index = KnowledgeIndex(chunks, np.tile(vector, (len(chunks), 1)))
        hits = index.search("same words", query_vector=vector, top_k=5)
        results.add(tuple(h.chunk.chunk_id for h in hits))
        assert [h.rank for h in hits] == [1, 2, 3, 4, 5]
    assert results == {("id-00", "id-01", "id-02", "id-03", "id-04")}


def test_index_validates_ids_and_shapes() -> None:
    with pytest.raises(ValueError, match="unique"):
        KnowledgeIndex([chunk("a"), chunk("a")])
    with pytest.raises(ValueError, match="shape"):
        KnowledgeIndex([chunk("a")], np.ones((2, 4)))
    index = KnowledgeIndex([chunk("a")], np.ones((1, 4)))
    with pytest.raises(ValueError, match="dim"):
        index.vector_scores(np.ones(3))


# ---------------------------------------------------------------- hybrid


TEXTS = {
    "ac": "Roof air conditioner not cooling: check the run capacitor and condenser fan motor.",
    "conv": "The converter charges the house battery when shore power is connected.",
    "night": "夜间20:00至次日08:00停车免费，日间每30分钟2元。",
    "arrears": "欠费金额等于应收金额减去已付金额，欠费订单需要补缴。",
    "leave": "Annual leave requests are approved by the manager within five working days.",
}


@pytest.fixture(scope="module")
def embedder() -> HashingEmbedder:
    return HashingEmbedder()


@pytest.fixture(scope="module")
def corpus() -> list[ChunkSnapshot]:
    return [chunk(key, text=text, source_id=f"src.{key}") for key, text in TEXTS.items()]


def test_hybrid_ranks_the_relevant_chunk_first(
    embedder: HashingEmbedder, corpus: list[ChunkSnapshot]
) -> None:
    index = KnowledgeIndex.build(corpus, embedder)
    for query, expected in [
        ("AC capacitor check", "ac"),
        ("battery not charging on shore power", "conv"),
        ("夜间停车收费吗", "night"),
        ("怎么补缴欠费", "arrears"),
    ]:
        for options in (SearchOptions(), SearchOptions(fusion="rrf")):
            hits = index.search(query, query_vector=embedder.embed([query])[0], options=options)
            assert hits[0].chunk.chunk_id == expected, (query, options)
            assert hits[0].vector_score is not None and hits[0].lexical_score is not None


def test_lexical_only_when_there_are_no_embeddings(corpus: list[ChunkSnapshot]) -> None:
    index = KnowledgeIndex(corpus)
    hits = index.search("converter battery", query_vector=np.ones(384))
    assert hits[0].chunk.chunk_id == "conv"
    assert all(h.vector_score is None and h.lexical_score and h.lexical_score > 0 for h in hits)
    assert hits[0].score == hits[0].lexical_score


def test_vector_only_when_lexical_finds_nothing(
    embedder: HashingEmbedder, corpus: list[ChunkSnapshot]
) -> None:
    index = KnowledgeIndex.build(corpus, embedder)
    query = "airconditioner"  # no shared token with the corpus; char n-grams still match
    assert not index.bm25.scores(query).any()
    hits = index.search(query, query_vector=embedder.embed([query])[0], top_k=2)
    assert hits and hits[0].chunk.chunk_id == "ac"
    assert all(h.lexical_score is None and h.vector_score == h.score for h in hits)


def test_nothing_found_returns_empty(
    embedder: HashingEmbedder, corpus: list[ChunkSnapshot]
) -> None:
    assert KnowledgeIndex(corpus).search("zebra giraffe") == []
    assert KnowledgeIndex(corpus).search("   ") == []
    index = KnowledgeIndex.build(corpus, embedder)
    assert (
        index.search(
            "converter", query_vector=np.zeros(384), filters=RetrievalFilters(doc_type="x")
        )
        == []
    )
    assert index.search("converter", top_k=0) == []


def test_modes_force_one_signal(embedder: HashingEmbedder, corpus: list[ChunkSnapshot]) -> None:
    index = KnowledgeIndex.build(corpus, embedder)
    vector = embedder.embed(["converter"])[0]
    lexical = index.search("converter", query_vector=vector, options=SearchOptions(mode="lexical"))
    assert all(h.vector_score is None for h in lexical)
    vector_only = index.search(
        "converter", query_vector=vector, options=SearchOptions(mode="vector")
    )
    assert all(h.lexical_score is None for h in vector_only)
    floor = index.search("converter", query_vector=vector, options=SearchOptions(min_score=0.9))
    assert all(h.score >= 0.9 for h in floor)


def test_filters_apply_before_ranking(
    embedder: HashingEmbedder, corpus: list[ChunkSnapshot]
) -> None:
    scoped = [replace(c, status="inactive") if c.chunk_id == "conv" else c for c in corpus]
    index = KnowledgeIndex.build(scoped, embedder)
    vector = embedder.embed(["converter battery"])[0]
    assert all(
        h.chunk.chunk_id != "conv" for h in index.search("converter battery", query_vector=vector)
    )
    hits = index.search(
        "converter battery", query_vector=vector, filters=RetrievalFilters(include_inactive=True)
    )
    assert hits[0].chunk.chunk_id == "conv"


def test_same_query_same_results(embedder: HashingEmbedder, corpus: list[ChunkSnapshot]) -> None:
    index = KnowledgeIndex.build(corpus, embedder)
    vector = embedder.embed(["停车 capacitor"])[0]
    first = index.search("停车 capacitor", query_vector=vector, top_k=5)
    again = KnowledgeIndex.build(list(reversed(corpus)), embedder).search(
        "停车 capacitor", query_vector=vector, top_k=5
    )
    assert [(h.chunk.chunk_id, h.score) for h in first] == [
        (h.chunk.chunk_id, h.score) for h in again
    ]
