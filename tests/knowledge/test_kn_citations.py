"""Citations: fields and the most relevant snippet, bounded and CJK aware."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from conversations.knowledge.engine.search import (
    ChunkSnapshot,
    RetrievalHit,
    best_snippet,
    citation_for,
    citations_for,
)

LONG_EN = (
    "Roof AC units are sealed systems charged at the factory. "
    "Clean the return filters every month during the cooling season. "
    "The run capacitor is in the electrical box under the shroud, next to the compressor, "
    "and must be discharged before it is touched. "
    "Walk only on the framed parts of the roof and use a footed ladder."
)
LONG_ZH = (
    "每个停车场按照所属城市和车场配置的计费规则收费。"
    "时间窗口写作开始时间到结束时间，结束时间早于开始时间表示跨越午夜。"
    "免费分钟在一次停车中只抵扣一次，从入场时刻开始抵扣，停车31分钟超出免费时间1分钟，应收2元。"
    "封顶金额按每个计费段、每个本地自然日分别计算，跨天后重新计算。"
)


def snapshot(text: str, **extra: object) -> ChunkSnapshot:
    fields: dict[str, object] = {
        "chunk_id": "c1",
        "source_id": "pack.doc",
        "source_version": 3,
        "title": "Doc",
        "heading": "H",
        "text": text,
        "doc_type": "faq",
        "source_type": "manual",
        "city_code": None,
        "lot_codes": (),
        "effective_from": datetime(2025, 1, 1, tzinfo=UTC),
        "effective_to": None,
        "status": "active",
        "ordinal": 0,
    }
    fields.update(extra)
    return ChunkSnapshot(**fields)  # type: ignore[arg-type]


def test_citation_fields_come_from_the_chunk() -> None:
    chunk = snapshot("Short answer.")
    hit = RetrievalHit(chunk=chunk, score=1.0, vector_score=0.5, lexical_score=2.0, rank=1)
    citation = citation_for(hit, "answer")
    assert citation.source_id == "pack.doc"
    assert citation.version == 3
    assert citation.effective_from == datetime(2025, 1, 1, tzinfo=UTC)
    assert citation.effective_to is None
    assert citation.chunk_id == "c1"
    assert citation.title == "Doc"
    assert citation.snippet == "Short answer."
    assert citation_for(chunk, "answer") == citation


def test_english_snippet_picks_the_matching_sentence() -> None:
    snippet = best_snippet(LONG_EN, "where is the capacitor")
    assert len(snippet) <= 160
    assert "run capacitor is in the electrical box" in snippet
    assert snippet.startswith("…")
    # Window edges fall on word boundaries.
    body = snippet.strip("…")
    assert body.split(" ")[0] in LONG_EN.split(" ")
    assert body.split(" ")[-1] in LONG_EN.split(" ")


def test_chinese_snippet_picks_the_matching_sentence() -> None:
    snippet = best_snippet(LONG_ZH, "停车31分钟要交多少钱")
    assert len(snippet) <= 160
    assert "停车31分钟超出免费时间1分钟" in snippet


def test_snippet_without_overlap_starts_at_the_beginning() -> None:
    snippet = best_snippet(LONG_EN, "zebra")
    assert snippet.startswith("Roof AC units")
    assert snippet.endswith("…")


def test_newlines_are_flattened() -> None:
    assert best_snippet("- step one\n- step two", "step") == "- step one - step two"
    assert best_snippet("第一句。\n第二句。", "第二") == "第一句。第二句。"


def test_citations_for_keeps_order_and_limits_per_source() -> None:
    a1 = snapshot("alpha one", chunk_id="a1")
    a2 = snapshot("alpha two", chunk_id="a2")
    b1 = snapshot("beta", chunk_id="b1", source_id="pack.other")
    hits = [RetrievalHit(c, 1.0 - i / 10, None, 1.0, i + 1) for i, c in enumerate([a1, a2, b1])]
    assert [c.chunk_id for c in citations_for(hits, "alpha")] == ["a1", "a2", "b1"]
    assert [c.chunk_id for c in citations_for(hits, "alpha", per_source=1)] == ["a1", "b1"]


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.sampled_from(["capacitor", "夜间", "免费。", "fuse.", "a", "breaker", "\n", "收费"]),
        max_size=120,
    ),
    st.sampled_from(["capacitor", "夜间免费", "fuse breaker", ""]),
    st.integers(min_value=20, max_value=200),
)
def test_snippet_never_exceeds_the_limit(words: list[str], query: str, limit: int) -> None:
    text = " ".join(words)
    snippet = best_snippet(text, query, limit)
    assert len(snippet) <= limit
    if text.strip():
        assert snippet.strip("…").strip()


def test_a_snippet_holds_whole_sentences_around_the_best_one() -> None:
    text = ("夜间时段按次收费，每晚封顶二十元。白天按每三十分钟两元计算。比如停车三十一分钟，超出免费时间一分钟，按一个单位收费。"
            "月卡用户不在此列。发票可在出口处索取，也可以在小程序里申请电子发票，开票需要提供车牌号和停车日期。")
    snippet = best_snippet(text, "停车三十一分钟多少钱", 80)
    assert "比如停车三十一分钟" in snippet
    body = snippet.strip("…")
    assert body[0] in "夜白比月发" and body[-1] == "。", snippet  # it starts and ends where a sentence does
    english = ("Night stays are charged once. The day rate is two yuan per half hour, and started units round up. "
               "For example, 31 minutes is one unit over the free time. Monthly pass holders are exempt.")
    snippet = best_snippet(english, "31 minutes over the free time", 120)
    assert snippet.strip("…").startswith(("The day rate", "For example")) and snippet.rstrip("…").endswith(".")


def test_an_faq_answer_is_quoted_after_its_question() -> None:
    zh = snapshot("算。比如应收10元只付了6元，这笔订单欠费4元，会出现在欠费列表中。", heading="欠费常见问题 > 部分支付算欠费吗？")
    assert citation_for(zh, "部分支付算欠费吗").snippet == "部分支付算欠费吗？算。比如应收10元只付了6元，这笔订单欠费4元，会出现在欠费列表中。"
    en = snapshot("Yes. If 10 yuan was due and 6 was paid, the order owes 4.", heading="Arrears FAQ > Does a partial payment count?")
    assert citation_for(en, "partial payment").snippet.startswith("Does a partial payment count? Yes. If 10 yuan")
    plain = snapshot("Night stays are charged once.", heading="Rules > Night rates")
    assert citation_for(plain, "night").snippet == "Night stays are charged once."
    long = snapshot(LONG_EN, heading="FAQ > Where is the capacitor?")
    snippet = citation_for(long, "capacitor").snippet
    assert len(snippet) <= 160 and (snippet.startswith("Where is the capacitor? ") or snippet.startswith("…"))
