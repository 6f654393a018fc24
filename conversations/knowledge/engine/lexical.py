"""BM25 over an in-memory corpus snapshot, tokenising English words and Chinese n-grams."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

from .cleaning import iter_segments

# "where" is deliberately not a stopword: "where is the converter?" must favour location notes.
ENGLISH_STOPWORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "which",
        "who",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
    }
)
# Only particles that carry no meaning on their own; 不 (not) and 无 (none) are kept on purpose.
CHINESE_STOP_CHARS = frozenset("的了吗呢吧啊呀么着过")


def light_stem(word: str) -> str:
    """Cheap, consistent English suffix stripping (plurals, -ing, -ed, final e)."""
    if len(word) <= 3 or not word.isalpha():
        return word
    for suffix, replacement in (
        ("ies", "y"),
        ("sses", "ss"),
        ("ss", "ss"),
        ("us", "us"),
        ("is", "is"),
        ("s", ""),
    ):
        if word.endswith(suffix):
            word = word[: len(word) - len(suffix)] + replacement
            break
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: len(word) - len(suffix)]
            if word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]  # stopped -> stop, running -> run
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]  # wire / wired / wiring all meet at "wir"
    return word


def tokenize(text: str) -> list[str]:
    """Lexical tokens: stemmed English words without stopwords; CJK character unigrams and bigrams."""
    tokens: list[str] = []
    for kind, segment in iter_segments(text):
        if kind == "cjk":
            tokens.extend(char for char in segment if char not in CHINESE_STOP_CHARS)
            tokens.extend(segment[i : i + 2] for i in range(len(segment) - 1))
        elif segment not in ENGLISH_STOPWORDS:
            tokens.append(light_stem(segment))
    return tokens


class BM25Index:
    """Okapi BM25 scores for every document of a fixed corpus, computed with numpy postings."""

    def __init__(
        self,
        documents: Sequence[str],
        *,
        k1: float = 1.2,
        b: float = 0.75,
        tokenizer: Callable[[str], list[str]] = tokenize,
    ) -> None:
        self.k1 = k1
        self.b = b
        self.tokenizer = tokenizer
        self.size = len(documents)
        counts = [Counter(tokenizer(document)) for document in documents]
        lengths = np.array([sum(c.values()) for c in counts], dtype=np.float32)
        self.average_length = float(lengths.mean()) if self.size and lengths.sum() else 1.0
        norm = k1 * (1.0 - b + b * lengths / self.average_length)
        docs_by_term: dict[str, list[int]] = {}
        tfs_by_term: dict[str, list[float]] = {}
        for index, counter in enumerate(counts):
            for term, tf in counter.items():
                docs_by_term.setdefault(term, []).append(index)
                tfs_by_term.setdefault(term, []).append(tf)
        # Store the length-normalised tf part per posting so a query is a weighted sum.
        self._postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._idf: dict[str, float] = {}
        for term, docs in docs_by_term.items():
            doc_ids = np.array(docs, dtype=np.int64)
            tf = np.array(tfs_by_term[term], dtype=np.float32)
            weights = tf * (k1 + 1.0) / (tf + norm[doc_ids])
            self._postings[term] = (doc_ids, weights.astype(np.float32))
            df = len(docs)
            # BM25+ style idf that never goes negative for very common terms.
            self._idf[term] = math.log(1.0 + (self.size - df + 0.5) / (df + 0.5))

    def idf(self, term: str) -> float:
        """Inverse document frequency of a token (0.0 for a token absent from the corpus)."""
        return self._idf.get(term, 0.0)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every document for the query, float32 array of shape (size,)."""
        out = np.zeros(self.size, dtype=np.float32)
        for term in dict.fromkeys(self.tokenizer(query)):
            posting = self._postings.get(term)
            if posting is not None:
                doc_ids, weights = posting
                out[doc_ids] += np.float32(self._idf[term]) * weights
        return out

    def top_k(self, query: str, k: int) -> list[tuple[int, float]]:
        """Best k (document index, score) pairs with score > 0, ties broken by index."""
        scores = self.scores(query)
        hits = np.flatnonzero(scores > 0)
        order = hits[np.lexsort((hits, -scores[hits]))][:k]
        return [(int(index), float(scores[index])) for index in order]
