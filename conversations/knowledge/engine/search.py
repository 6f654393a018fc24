"""Filtered exact vector, BM25 and hybrid retrieval over chunk snapshots, with citations."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Literal

import numpy as np

from .cleaning import has_cjk, is_cjk, split_sentences
from .embedder import Embedder
from .lexical import BM25Index, tokenize

ACTIVE = "active"
INACTIVE = "inactive"
SearchMode = Literal["hybrid", "vector", "lexical"]
Fusion = Literal["weighted", "rrf"]
RRF_K = 60  # the constant from Cormack et al.; damps the weight of the very first ranks
SNIPPET_CHARS = 160
ELLIPSIS = "…"


@dataclass(frozen=True)
class ChunkSnapshot:
    """A stored chunk with the source metadata retrieval filters on (a read-only snapshot)."""

    chunk_id: str
    source_id: str
    source_version: int
    title: str
    heading: str
    text: str
    doc_type: str
    source_type: str
    city_code: str | None
    lot_codes: tuple[str, ...]
    effective_from: datetime | None
    effective_to: datetime | None
    status: str
    ordinal: int

    def __post_init__(self) -> None:
        if not isinstance(self.lot_codes, tuple):
            # Callers often hold lists (JSON, ORM arrays); keep the snapshot hashable.
            object.__setattr__(self, "lot_codes", tuple(self.lot_codes or ()))
        for name in ("effective_from", "effective_to"):
            value = getattr(self, name)
            if value is not None and value.utcoffset() is None:
                raise ValueError(f"ChunkSnapshot.{name} must be timezone-aware")

    @property
    def search_text(self) -> str:
        """Title, heading path and text: what is embedded and indexed for this chunk."""
        parts: list[str] = []
        for part in (self.title, self.heading, self.text):
            part = part.strip()
            if part and not any(part in seen for seen in parts):
                parts.append(part)
        return "\n".join(parts)


@dataclass(frozen=True)
class RetrievalFilters:
    """Metadata constraints; None means unconstrained. Inactive chunks are excluded by default."""

    doc_type: str | None = None
    source_type: str | None = None
    city_code: str | None = None
    lot_code: str | None = None
    at_time: datetime | None = None
    source_ids: tuple[str, ...] | None = None
    include_inactive: bool = False

    def __post_init__(self) -> None:
        if self.at_time is not None and self.at_time.utcoffset() is None:
            raise ValueError("RetrievalFilters.at_time must be timezone-aware")
        if self.source_ids is not None:
            ids = tuple(dict.fromkeys(self.source_ids))
            # An empty list from an API means "no restriction", not "match nothing".
            object.__setattr__(self, "source_ids", ids or None)


NO_FILTERS = RetrievalFilters()
MASKS_KEPT = 256  # filters whose chunk mask an index keeps


def exclusion_reason(chunk: ChunkSnapshot, filters: RetrievalFilters) -> str | None:
    """Why the chunk fails the filters, or None when it matches (the reference predicate)."""
    if not filters.include_inactive and chunk.status != ACTIVE:
        return f"status is {chunk.status}"
    if filters.doc_type is not None and chunk.doc_type != filters.doc_type:
        return f"doc_type {chunk.doc_type} is not {filters.doc_type}"
    if filters.source_type is not None and chunk.source_type != filters.source_type:
        return f"source_type {chunk.source_type} is not {filters.source_type}"
    # A chunk without a city or without lots is general knowledge and applies everywhere.
    if filters.city_code is not None and chunk.city_code not in (None, filters.city_code):
        return f"city_code {chunk.city_code} is not {filters.city_code}"
    if filters.lot_code is not None and chunk.lot_codes and filters.lot_code not in chunk.lot_codes:
        return f"lot_codes {list(chunk.lot_codes)} do not include {filters.lot_code}"
    if filters.at_time is not None:
        if chunk.effective_from is not None and filters.at_time < chunk.effective_from:
            return f"not yet effective at {filters.at_time.isoformat()}"
        if chunk.effective_to is not None and filters.at_time >= chunk.effective_to:
            return f"no longer effective at {filters.at_time.isoformat()}"
    if filters.source_ids is not None and chunk.source_id not in filters.source_ids:
        return f"source {chunk.source_id} is not among the requested sources"
    return None


def matches(chunk: ChunkSnapshot, filters: RetrievalFilters) -> bool:
    """True when the chunk satisfies every filter."""
    return exclusion_reason(chunk, filters) is None


def filter_chunks(
    chunks: Iterable[ChunkSnapshot], filters: RetrievalFilters
) -> list[ChunkSnapshot]:
    """The chunks that satisfy the filters, in their original order."""
    return [chunk for chunk in chunks if matches(chunk, filters)]


@dataclass(frozen=True)
class RetrievalHit:
    """One ranked result: fused score plus the vector and lexical evidence behind it (1-based rank)."""

    chunk: ChunkSnapshot
    score: float
    vector_score: float | None
    lexical_score: float | None
    rank: int


@dataclass(frozen=True)
class Citation:
    """What an answer cites: source, version, effective window and the most relevant snippet."""

    source_id: str
    version: int
    effective_from: datetime | None
    effective_to: datetime | None
    snippet: str
    chunk_id: str
    title: str


def top_k_indices(
    scores: np.ndarray,
    k: int,
    *,
    mask: np.ndarray | None = None,
    tie_rank: np.ndarray | None = None,
) -> np.ndarray:
    """Indices of the k best scores (desc), ties broken by `tie_rank` (default index) asc."""
    scores = np.asarray(scores)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
        valid = int(np.count_nonzero(mask))
    else:
        valid = scores.shape[0]
    k = min(k, valid)
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    if k < scores.shape[0]:
        part = np.argpartition(-scores, k - 1)[:k]
        kth = scores[part].min()
        # Take every score tied with the k-th so the tie-break, not argpartition, decides.
        candidates = np.flatnonzero(scores >= kth)
        if mask is not None:
            candidates = candidates[mask[candidates]]
    else:
        candidates = np.flatnonzero(mask) if mask is not None else np.arange(scores.shape[0])
    ties = tie_rank[candidates] if tie_rank is not None else candidates
    return candidates[np.lexsort((ties, -scores[candidates]))][:k]


def inner_products(matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Row-wise dot products of an (n, dim) matrix with a (dim,) query."""
    # einsum runs numpy's own single-threaded SIMD loop. A matrix-vector product is memory
    # bound: multi-threaded OpenBLAS gemv gains ~1.5x on an idle 2-core box but its p95 jumps
    # to 20-200 ms when the other core is busy (web workers, Celery), so steady wins.
    return np.einsum("ij,j->i", matrix, np.asarray(query, dtype=matrix.dtype))


def exact_top_k(
    matrix: np.ndarray, query: np.ndarray, k: int, *, mask: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Exact inner-product top-k over a float32 matrix: (indices, scores), best first."""
    scores = inner_products(matrix, query)
    indices = top_k_indices(scores, k, mask=mask)
    return indices, scores[indices]


class _Codes:
    """A categorical column as integer codes for vectorised equality filters."""

    def __init__(self, values: Sequence[str | None]) -> None:
        self.lookup: dict[str | None, int] = {}
        self.codes = np.fromiter(
            (self.lookup.setdefault(value, len(self.lookup)) for value in values),
            dtype=np.int32,
            count=len(values),
        )

    def equals(self, value: str | None) -> np.ndarray:
        code = self.lookup.get(value)
        if code is None:
            return np.zeros(self.codes.shape[0], dtype=bool)
        return self.codes == code

    def isin(self, values: Iterable[str | None]) -> np.ndarray:
        codes = [self.lookup[value] for value in values if value in self.lookup]
        return np.isin(self.codes, np.array(codes, dtype=np.int32))


@dataclass(frozen=True)
class SearchOptions:
    """Ranking knobs: mode, fusion method, the vector share of a weighted fusion, a score floor."""

    mode: SearchMode = "hybrid"
    fusion: Fusion = "weighted"
    vector_weight: float = 0.5
    min_score: float | None = None
    rrf_depth: int = 100


DEFAULT_SEARCH = SearchOptions()


@dataclass(frozen=True)
class _Scored:
    index: int
    score: float
    vector_score: float | None
    lexical_score: float | None


class KnowledgeIndex:
    """An immutable in-memory corpus: chunk snapshots, optional unit embeddings, lazy BM25."""

    def __init__(
        self,
        chunks: Sequence[ChunkSnapshot],
        embeddings: np.ndarray | None = None,
        *,
        embedder_name: str | None = None,
    ) -> None:
        self.chunks: tuple[ChunkSnapshot, ...] = tuple(chunks)
        self.embedder_name = embedder_name
        n = len(self.chunks)
        ids = [chunk.chunk_id for chunk in self.chunks]
        if len(set(ids)) != n:
            raise ValueError("chunk ids must be unique within an index")
        self.matrix: np.ndarray | None = None
        if embeddings is not None:
            matrix = np.ascontiguousarray(embeddings, dtype=np.float32)
            if matrix.ndim != 2 or matrix.shape[0] != n:
                raise ValueError(f"embeddings must have shape ({n}, dim), got {matrix.shape}")
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            self.matrix = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
        # Rank of each chunk id in sorted order: the deterministic tie-break key.
        self.tie_rank = np.empty(n, dtype=np.int64)
        self.tie_rank[np.argsort(np.array(ids, dtype=object), kind="stable")] = np.arange(n)
        self._masks: dict[RetrievalFilters, np.ndarray] = {}
        self._doc_type = _Codes([c.doc_type for c in self.chunks])
        self._source_type = _Codes([c.source_type for c in self.chunks])
        self._city = _Codes([c.city_code for c in self.chunks])
        self._source = _Codes([c.source_id for c in self.chunks])
        self._active = np.array([c.status == ACTIVE for c in self.chunks], dtype=bool)
        self._no_lots = np.array([not c.lot_codes for c in self.chunks], dtype=bool)
        lots: dict[str, list[int]] = {}
        for index, chunk in enumerate(self.chunks):
            for lot in chunk.lot_codes:
                lots.setdefault(lot, []).append(index)
        self._lots = {lot: np.array(rows, dtype=np.int64) for lot, rows in lots.items()}
        # float64 POSIX seconds keep microsecond instants distinct for centuries around now.
        self._from = np.array(
            [c.effective_from.timestamp() if c.effective_from else -np.inf for c in self.chunks],
            dtype=np.float64,
        )
        self._to = np.array(
            [c.effective_to.timestamp() if c.effective_to else np.inf for c in self.chunks],
            dtype=np.float64,
        )
        self._bm25: BM25Index | None = None

    @classmethod
    def build(
        cls, chunks: Sequence[ChunkSnapshot], embedder: Embedder | None = None
    ) -> KnowledgeIndex:
        """Index chunks, embedding their search text with `embedder` when one is given."""
        if embedder is None:
            return cls(chunks)
        texts = [chunk.search_text for chunk in chunks]
        return cls(chunks, embedder.embed(texts), embedder_name=embedder.name)

    def __len__(self) -> int:
        return len(self.chunks)

    @property
    def bm25(self) -> BM25Index:
        """The BM25 index over the chunks' search text, built on first use."""
        if self._bm25 is None:
            self._bm25 = BM25Index([chunk.search_text for chunk in self.chunks])
        return self._bm25

    def mask(self, filters: RetrievalFilters = NO_FILTERS) -> np.ndarray:
        """Vectorised `matches` over every chunk: a read-only boolean array of shape (n,).

        The index never changes and turns repeat their filters (a rule's source, a pack), so
        each filter's mask is worked out once; a bounded number are kept.
        """
        keep = self._masks.get(filters)
        if keep is None:
            keep = self._mask(filters)
            keep.setflags(write=False)
            if len(self._masks) >= MASKS_KEPT:
                self._masks.clear()
            self._masks[filters] = keep
        return keep

    def _mask(self, filters: RetrievalFilters) -> np.ndarray:
        n = len(self.chunks)
        keep = np.ones(n, dtype=bool) if filters.include_inactive else self._active.copy()
        if filters.doc_type is not None:
            keep &= self._doc_type.equals(filters.doc_type)
        if filters.source_type is not None:
            keep &= self._source_type.equals(filters.source_type)
        if filters.city_code is not None:
            keep &= self._city.equals(filters.city_code) | self._city.equals(None)
        if filters.lot_code is not None:
            lot = self._no_lots.copy()
            rows = self._lots.get(filters.lot_code)
            if rows is not None:
                lot[rows] = True
            keep &= lot
        if filters.at_time is not None:
            t = filters.at_time.timestamp()
            keep &= (self._from <= t) & (t < self._to)
        if filters.source_ids is not None:
            keep &= self._source.isin(filters.source_ids)
        return keep

    def vector_scores(self, query_vector: np.ndarray) -> np.ndarray:
        """Cosine similarity of every chunk to the (normalised) query vector."""
        if self.matrix is None:
            raise ValueError("this index has no embeddings")
        query = np.asarray(query_vector, dtype=np.float32).reshape(-1)
        if query.shape[0] != self.matrix.shape[1]:
            raise ValueError(f"query dim {query.shape[0]} != index dim {self.matrix.shape[1]}")
        norm = float(np.linalg.norm(query))
        if norm == 0:
            return np.zeros(len(self), dtype=np.float32)
        return inner_products(self.matrix, query / norm)

    def search(
        self,
        query: str,
        *,
        query_vector: np.ndarray | None = None,
        filters: RetrievalFilters = NO_FILTERS,
        top_k: int = 5,
        options: SearchOptions = DEFAULT_SEARCH,
    ) -> list[RetrievalHit]:
        """Rank chunks matching the filters; falls back to one signal when the other is silent."""
        if top_k <= 0 or not self.chunks:
            return []
        keep = self.mask(filters)
        if not keep.any():
            return []
        vector = None
        if (
            options.mode != "lexical"
            and query_vector is not None
            and self.matrix is not None
            and float(np.linalg.norm(query_vector)) > 0
        ):
            vector = self.vector_scores(query_vector)
        lexical = None
        if options.mode != "vector" and query.strip():
            lexical = self.bm25.scores(query)
            if not (lexical[keep] > 0).any():
                lexical = None
        if vector is None and lexical is None:
            return []
        if vector is None:
            scored = self._rank(lexical, keep & (lexical > 0), top_k, None, lexical)  # type: ignore[operator]
        elif lexical is None:
            scored = self._rank(vector, keep & (vector > 0), top_k, vector, None)
        elif options.fusion == "rrf":
            fused = self._rrf(vector, lexical, keep, options.rrf_depth)
            scored = self._rank(fused, keep & (fused > 0), top_k, vector, lexical)
        else:
            lex_max = float(lexical[keep].max())
            w = options.vector_weight
            fused = w * np.clip(vector, 0.0, 1.0) + (1.0 - w) * (lexical / lex_max)
            scored = self._rank(fused, keep & (fused > 0), top_k, vector, lexical)
        if options.min_score is not None:
            scored = [item for item in scored if item.score >= options.min_score]
        return [
            RetrievalHit(
                chunk=self.chunks[item.index],
                score=item.score,
                vector_score=item.vector_score,
                lexical_score=item.lexical_score,
                rank=rank,
            )
            for rank, item in enumerate(scored, start=1)
        ]

    def _rrf(
        self, vector: np.ndarray, lexical: np.ndarray, keep: np.ndarray, depth: int
    ) -> np.ndarray:
        fused = np.zeros(len(self), dtype=np.float64)
        for scores, eligible in ((vector, keep & (vector > 0)), (lexical, keep & (lexical > 0))):
            ranked = top_k_indices(scores, depth, mask=eligible, tie_rank=self.tie_rank)
            fused[ranked] += 1.0 / (RRF_K + np.arange(1, ranked.shape[0] + 1))
        return fused

    def _rank(
        self,
        scores: np.ndarray,
        eligible: np.ndarray,
        top_k: int,
        vector: np.ndarray | None,
        lexical: np.ndarray | None,
    ) -> list[_Scored]:
        rows = top_k_indices(scores, top_k, mask=eligible, tie_rank=self.tie_rank)
        return [
            _Scored(
                index=int(row),
                score=float(scores[row]),
                vector_score=None if vector is None else float(vector[row]),
                lexical_score=None if lexical is None else float(lexical[row]),
            )
            for row in rows
        ]


_WS_RE = re.compile(r"\s+")
_CJK_BREAK_RE = re.compile(r"(?<=[。！？；：，、])\s+(?=\S)")


def _flatten(text: str) -> str:
    # Snippets are one line; newlines between CJK sentences vanish, elsewhere become spaces.
    if has_cjk(text):
        text = _CJK_BREAK_RE.sub("", text)
    return _WS_RE.sub(" ", text).strip()


def _cut(text: str, start: int, end: int) -> tuple[int, int]:
    """Move a window's ends off the middle of Latin words."""
    if 0 < start < len(text) and not is_cjk(text[start]) and not text[start - 1].isspace():
        space = text.find(" ", start, end)
        if space != -1:
            start = space + 1
    if 0 < end < len(text) and not is_cjk(text[end - 1]) and not text[end].isspace():
        space = text.rfind(" ", start, end)
        if space > start:
            end = space
    return start, end


@lru_cache(maxsize=1024)
def _passages(text: str) -> tuple[str, tuple[tuple[str, frozenset[str]], ...]]:
    """A chunk's flattened text and its sentences with their terms: the same chunks are cited
    turn after turn, so they are split and tokenized once."""
    flat = _flatten(text)
    sentences = [_flatten(s) for s in split_sentences(text)] or [flat]
    return flat, tuple((sentence, frozenset(tokenize(sentence))) for sentence in sentences)


def _sentence_bounds(flat: str, sentences: Sequence[str]) -> list[tuple[int, int]]:
    """Where each sentence starts and ends in the flattened text (in order; ones not found are left out)."""
    bounds, position = [], 0
    for sentence in sentences:
        found = flat.find(sentence, position) if sentence else -1
        if found >= 0:
            position = found + len(sentence)
            bounds.append((found, position))
    return bounds


def best_snippet(text: str, query: str, max_chars: int = SNIPPET_CHARS) -> str:
    """The passage of `text` most relevant to `query`, at most `max_chars` characters."""
    flat, passages = _passages(text)
    if len(flat) <= max_chars:
        return flat
    terms = set(tokenize(query))
    sentences = [sentence for sentence, _ in passages]
    overlaps = [len(terms & tokens) for _, tokens in passages]
    best = max(range(len(sentences)), key=lambda i: (overlaps[i], -i))
    # Locate the best sentence in the flattened text, then grow the window around it.
    anchor = flat.find(sentences[best]) if sentences[best] else 0
    anchor = max(anchor, 0)
    sentence_end = anchor + len(sentences[best])
    budget = max_chars - 2  # room for an ellipsis on each side
    if sentence_end - anchor > budget:
        # The sentence alone is too long: centre on the first query term found in it.
        lowered = flat.lower()
        hits = [lowered.find(term, anchor, sentence_end) for term in terms]
        hits = [h for h in hits if h >= 0]
        focus = min(hits) if hits else anchor
        start = max(anchor, focus - budget // 3)
        end = min(len(flat), start + budget)
    else:
        # Whole sentences around the best one: the following ones first, then the preceding ones
        # as room is left, so that a snippet neither starts nor stops mid-sentence.
        bounds = _sentence_bounds(flat, sentences)
        end = max((e for _s, e in bounds if sentence_end <= e <= anchor + budget), default=sentence_end)
        start = min((s for s, _e in bounds if end - budget <= s <= anchor), default=anchor)
    start, end = _cut(flat, start, end)
    snippet = flat[start:end].strip()
    prefix = ELLIPSIS if start > 0 else ""
    suffix = ELLIPSIS if end < len(flat) else ""
    return f"{prefix}{snippet}{suffix}"[:max_chars]


def _answer_with_its_question(chunk: ChunkSnapshot, query: str, max_chars: int) -> str:
    """The snippet; an FAQ answer quoted from its start comes after its question ("Does a partial
    payment count? Yes. …", not a bare "Yes. …")."""
    question = chunk.heading.rsplit(">", 1)[-1].strip()
    if not question.endswith(("?", "？")) or len(question) > max_chars // 3:
        return best_snippet(chunk.text, query, max_chars)
    snippet = best_snippet(chunk.text, query, max_chars - len(question) - 1)
    if snippet.startswith(ELLIPSIS):
        return best_snippet(chunk.text, query, max_chars)
    return f"{question}{'' if question.endswith('？') else ' '}{snippet}"


def citation_for(
    hit: RetrievalHit | ChunkSnapshot, query: str, *, max_chars: int = SNIPPET_CHARS
) -> Citation:
    """Citation for a hit (or chunk) with the snippet that best answers the query."""
    chunk = hit.chunk if isinstance(hit, RetrievalHit) else hit
    return Citation(
        source_id=chunk.source_id,
        version=chunk.source_version,
        effective_from=chunk.effective_from,
        effective_to=chunk.effective_to,
        snippet=_answer_with_its_question(chunk, query, max_chars),
        chunk_id=chunk.chunk_id,
        title=chunk.title,
    )


def citations_for(
    hits: Sequence[RetrievalHit],
    query: str,
    *,
    max_chars: int = SNIPPET_CHARS,
    per_source: int | None = None,
) -> list[Citation]:
    """Citations in hit order, keeping at most `per_source` per source when given."""
    out: list[Citation] = []
    counts: dict[str, int] = {}
    for hit in hits:
        seen = counts.get(hit.chunk.source_id, 0)
        if per_source is not None and seen >= per_source:
            continue
        counts[hit.chunk.source_id] = seen + 1
        out.append(citation_for(hit, query, max_chars=max_chars))
    return out
