"""Tokenizer and BM25 sanity."""

from __future__ import annotations

import pytest

from conversations.knowledge.engine.lexical import BM25Index, light_stem, tokenize


def test_english_tokens_are_lowercased_stemmed_without_stopwords() -> None:
    assert tokenize("The Capacitors are TESTED and the wires") == ["capacitor", "test", "wir"]
    assert light_stem("batteries") == "battery"
    assert light_stem("stopped") == light_stem("stop")
    assert light_stem("wiring") == light_stem("wire") == light_stem("wired")


def test_where_is_kept_for_location_questions() -> None:
    assert tokenize("where is the converter") == ["wher", "converter"]


def test_chinese_tokens_are_unigrams_and_bigrams() -> None:
    tokens = tokenize("夜间免费的")
    assert {"夜", "间", "免", "费", "夜间", "间免", "免费", "费的"} <= set(tokens)
    assert "的" not in tokens  # particle unigram dropped


def test_mixed_script_is_split_at_script_boundaries() -> None:
    assert tokenize("lot免费30分钟") == ["lot", "免", "费", "免费", "30", "分", "钟", "分钟"]


CORPUS = [
    "Roof air conditioner capacitor test and replacement",
    "Converter charges the house battery from shore power",
    "夜间20:00至次日08:00停车免费",
    "欠费订单需要补缴",
    "The capacitor capacitor capacitor capacitor stores charge in a long long long long text about many things",
]


def test_bm25_ranks_relevant_document_first() -> None:
    index = BM25Index(CORPUS)
    assert index.top_k("capacitor replacement", 2)[0][0] == 0
    assert index.top_k("battery charging", 1)[0][0] == 1
    assert index.top_k("夜间停车", 1)[0][0] == 2
    assert index.top_k("欠费怎么办", 1)[0][0] == 3


def test_bm25_unknown_terms_score_zero_and_are_not_returned() -> None:
    index = BM25Index(CORPUS)
    assert not index.scores("zebra giraffe").any()
    assert index.top_k("zebra", 5) == []
    assert index.idf("zebra") == 0.0


def test_bm25_rare_terms_weigh_more_and_scores_are_non_negative() -> None:
    index = BM25Index(CORPUS)
    assert index.idf("converter") > index.idf("capacitor") > 0
    assert (index.scores("capacitor the charge") >= 0).all()


def test_bm25_ties_break_by_index_and_empty_corpus() -> None:
    index = BM25Index(["fuse panel", "fuse panel", "other"])
    assert [i for i, _ in index.top_k("fuse", 3)] == [0, 1]
    assert index.top_k("fuse", 3)[0][1] == pytest.approx(index.top_k("fuse", 3)[1][1])
    assert BM25Index([]).top_k("fuse", 3) == []
