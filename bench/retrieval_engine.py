"""Benchmark the knowledge engine: exact numpy top-k latency and hybrid retrieval quality.

Run: .venv/bin/python bench/retrieval_engine.py [--sizes 1000,10000,100000] [--queries 200]

Corpora are the shipped knowledge packs (real text, hashing embeddings) padded with random unit
vectors and synthetic filler text up to each size, so real queries still have real answers.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conversations.knowledge.engine import (  # noqa: E402
    ChunkSnapshot,
    HashingEmbedder,
    KnowledgeIndex,
    SearchOptions,
    exact_top_k,
    pack_snapshots,
)

DIM = 384
TOP_K = 10
# Real questions with the pack source that should answer them (for the hit-rate columns).
REAL_QUERIES = [
    ("where is the capacitor on the roof AC", "rv_diagnostic.component_locations"),
    ("roof AC runs but does not cool", "rv_diagnostic.roof_ac_not_cooling"),
    ("how do I test a compressor winding", "rv_diagnostic.capacitor_compressor_howto"),
    ("converter not charging the house battery", "rv_diagnostic.electrical_systems"),
    ("slide out motor will not move", "rv_diagnostic.slide_outs"),
    ("水泵不工作怎么办", "rv_diagnostic.zh_quick_reference"),
    ("minimum rear setback for a house", "permit_form.setbacks"),
    ("egress window size for a basement bedroom", "permit_form.fire_egress"),
    ("who may do electrical work", "permit_form.electrical_work"),
    ("when to involve HR harassment", "manager_assistant.conflict_and_hr"),
    ("how often should one-on-ones happen", "manager_assistant.one_on_ones"),
    ("夜间停车收费吗", "parking_help_desk.billing_basics_zh"),
    ("停了31分钟要交多少钱", "parking_help_desk.caps_free_minutes"),
    ("欠费怎么查询", "parking_help_desk.arrears_faq"),
    ("规则换版本了按哪个版本计费", "parking_help_desk.rule_versions"),
    ("fee mismatch needs review", "parking_help_desk.disputes_verification"),
]
FILLER_WORDS = [
    "invoice",
    "shipment",
    "warehouse",
    "pallet",
    "forklift",
    "cargo",
    "manifest",
    "customs",
    "tariff",
    "freight",
    "route",
    "depot",
    "carrier",
    "dock",
    "container",
    "schedule",
    "delivery",
    "parcel",
    "courier",
    "logistics",
    "inventory",
]


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile of a list of numbers."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def random_unit(rows: int, rng: np.random.Generator) -> np.ndarray:
    """Random float32 unit vectors."""
    matrix = rng.standard_normal((rows, DIM), dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix


def filler_chunks(count: int, seed: int) -> list[ChunkSnapshot]:
    """Synthetic unrelated chunks so the lexical index has a realistic amount of text."""
    rnd = random.Random(seed)
    return [
        ChunkSnapshot(
            chunk_id=f"filler-{i:07d}",
            source_id=f"filler.{i // 20}",
            source_version=1,
            title="Logistics note",
            heading="",
            text=" ".join(rnd.choices(FILLER_WORDS, k=24)),
            doc_type="reference",
            source_type="biz_derived",
            city_code=None,
            lot_codes=(),
            effective_from=None,
            effective_to=None,
            status="active",
            ordinal=i % 20,
        )
        for i in range(count)
    ]


def time_ms(fn, repeats: int) -> list[float]:
    """Wall-clock milliseconds of each call."""
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def bench_exact(size: int, queries: int, rng: np.random.Generator) -> tuple[float, float]:
    """p50/p95 ms of exact_top_k over a random (size, 384) float32 matrix."""
    matrix = random_unit(size, rng)
    probes = random_unit(queries, rng)
    exact_top_k(matrix, probes[0], TOP_K)  # warm-up
    times = []
    for probe in probes:
        start = time.perf_counter()
        exact_top_k(matrix, probe, TOP_K)
        times.append((time.perf_counter() - start) * 1000)
    return percentile(times, 50), percentile(times, 95)


def bench_index(size: int, rng: np.random.Generator, embedder: HashingEmbedder) -> dict[str, float]:
    """Full KnowledgeIndex.search latency and quality on packs padded to `size` chunks."""
    real = pack_snapshots()
    filler = filler_chunks(max(0, size - len(real)), seed=size)
    chunks = real + filler
    matrix = np.vstack(
        [embedder.embed([c.search_text for c in real]), random_unit(len(filler), rng)]
    )
    index = KnowledgeIndex(chunks, matrix, embedder_name=embedder.name)
    start = time.perf_counter()
    _ = index.bm25
    bm25_build = (time.perf_counter() - start) * 1000
    vectors = embedder.embed([q for q, _ in REAL_QUERIES])
    vector_only = SearchOptions(mode="vector")
    vec_times: list[float] = []
    hyb_times: list[float] = []
    recall_vector: list[float] = []
    overlap_hybrid: list[float] = []
    hit_vector = hit_hybrid = 0
    for (query, expected), vector in zip(REAL_QUERIES, vectors, strict=True):
        exact_ids, exact_scores = exact_top_k(index.matrix, vector, TOP_K)
        exact_set = {int(i) for i, s in zip(exact_ids, exact_scores, strict=True) if s > 0}
        vec_times += time_ms(
            lambda q=query, v=vector: index.search(
                q, query_vector=v, top_k=TOP_K, options=vector_only
            ),
            5,
        )
        hyb_times += time_ms(
            lambda q=query, v=vector: index.search(q, query_vector=v, top_k=TOP_K), 5
        )
        vec_hits = index.search(query, query_vector=vector, top_k=TOP_K, options=vector_only)
        hyb_hits = index.search(query, query_vector=vector, top_k=TOP_K)
        position = {c.chunk_id: i for i, c in enumerate(chunks)}
        vec_set = {position[h.chunk.chunk_id] for h in vec_hits}
        hyb_set = {position[h.chunk.chunk_id] for h in hyb_hits}
        recall_vector.append(len(vec_set & exact_set) / max(1, len(exact_set)))
        overlap_hybrid.append(len(hyb_set & exact_set) / max(1, len(exact_set)))
        hit_vector += any(h.chunk.source_id == expected for h in vec_hits[:3])
        hit_hybrid += any(h.chunk.source_id == expected for h in hyb_hits[:3])
    return {
        "bm25_build_ms": bm25_build,
        "vector_p50": percentile(vec_times, 50),
        "vector_p95": percentile(vec_times, 95),
        "hybrid_p50": percentile(hyb_times, 50),
        "hybrid_p95": percentile(hyb_times, 95),
        "recall_vector": statistics.mean(recall_vector),
        "overlap_hybrid": statistics.mean(overlap_hybrid),
        "hit3_vector": hit_vector / len(REAL_QUERIES),
        "hit3_hybrid": hit_hybrid / len(REAL_QUERIES),
    }


def main() -> None:
    """Print the benchmark tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rng = np.random.default_rng(20260222)
    embedder = HashingEmbedder()

    print(
        f"exact numpy top-{TOP_K} (float32 matrix·query via einsum + argpartition), dim {DIM}, {args.queries} random queries"
    )
    print(f"{'chunks':>8} {'p50 ms':>8} {'p95 ms':>8}")
    for size in sizes:
        p50, p95 = bench_exact(size, args.queries, rng)
        print(f"{size:>8} {p50:>8.3f} {p95:>8.3f}")

    print()
    print(
        f"KnowledgeIndex.search on the packs padded with random vectors, {len(REAL_QUERIES)} real queries\n"
        "recall@10 = share of the exact vector top-10 (positive scores) that the search returns;\n"
        "hit@3 = the expected pack source is among the top 3"
    )
    header = (
        f"{'chunks':>8} {'vec p50':>8} {'vec p95':>8} {'hyb p50':>8} {'hyb p95':>8} "
        f"{'bm25 build':>10} {'recall@10 vec':>13} {'hyb∩exact@10':>12} {'hit@3 vec':>9} {'hit@3 hyb':>9}"
    )
    print(header)
    for size in sizes:
        r = bench_index(size, rng, embedder)
        print(
            f"{size:>8} {r['vector_p50']:>8.2f} {r['vector_p95']:>8.2f} {r['hybrid_p50']:>8.2f} "
            f"{r['hybrid_p95']:>8.2f} {r['bm25_build_ms']:>8.0f}ms {r['recall_vector']:>13.2f} "
            f"{r['overlap_hybrid']:>12.2f} {r['hit3_vector']:>9.2f} {r['hit3_hybrid']:>9.2f}"
        )


if __name__ == "__main__":
    main()
