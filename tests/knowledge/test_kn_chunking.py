"""Cleaning and chunking: Markdown noise, headings, CJK sizes, overlap, determinism."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conversations.knowledge.engine.chunking import (
    ChunkingConfig,
    chunk_markdown,
    make_chunk_id,
    pack_section,
    split_sections,
)
from conversations.knowledge.engine.cleaning import (
    clean_text,
    has_cjk,
    normalize_whitespace,
    split_sentences,
    strip_markdown,
    weighted_length,
)

DOC = """# Roof AC

Intro about the **roof** unit, see [the manual](https://example.com/manual).

## Capacitor

The capacitor is a *metal can* in the control box.

```
# not a heading inside a fence
```

### Testing

- discharge it first
- measure C to HERM

## 夜间收费

夜间20:00至次日08:00免费。
"""


def test_clean_text_strips_markdown_noise_but_keeps_words() -> None:
    text = clean_text(
        "## Title\n\nSome **bold** and _italic_ and `code` with [a link](http://x.y).\n\n---\n"
    )
    assert text == "Title\n\nSome bold and italic and code with a link."


def test_strip_markdown_keeps_snake_case_and_tables() -> None:
    out = strip_markdown("| Lot | Fee |\n|---|---|\n| lot_code_a | 2 yuan |\n")
    assert out.splitlines() == ["Lot | Fee", "lot_code_a | 2 yuan"]


def test_normalize_whitespace_collapses_spaces_and_blank_lines() -> None:
    raw = "a\u00a0 \t b\r\n\r\n\r\n\r\nc\u200b d  \n"
    assert normalize_whitespace(raw) == "a b\n\nc d"


def test_split_sentences_latin_and_cjk() -> None:
    text = "Check the fuse, e.g. the 15 A one. Then test 3.5 V! 然后检查电容。好的"
    assert split_sentences(text) == [
        "Check the fuse, e.g. the 15 A one.",
        "Then test 3.5 V!",
        "然后检查电容。",
        "好的",
    ]


def test_weighted_length_counts_cjk_double() -> None:
    assert weighted_length("ab中文", 2) == 6
    assert weighted_length("ab中文", 1) == 4
    assert has_cjk("lot 夜间") and not has_cjk("lot A")


def test_sections_follow_heading_levels_and_ignore_fenced_hashes() -> None:
    paths = [section.heading_path for section in split_sections(DOC)]
    assert paths == [
        ("Roof AC",),
        ("Roof AC", "Capacitor"),
        ("Roof AC", "Capacitor", "Testing"),
        ("Roof AC", "夜间收费"),
    ]


def test_chunks_carry_heading_path_ordinal_and_clean_text() -> None:
    drafts = chunk_markdown(DOC, source_id="rv.ac", version=1)
    assert [d.ordinal for d in drafts] == list(range(len(drafts)))
    assert drafts[0].heading == "Roof AC"
    assert drafts[0].text == "Intro about the roof unit, see the manual."
    testing = next(d for d in drafts if d.heading_path[-1] == "Testing")
    assert testing.text == "- discharge it first\n- measure C to HERM"
    assert "# not a heading inside a fence" in drafts[1].text
    assert drafts[-1].heading == "Roof AC > 夜间收费"


def test_chunk_ids_are_deterministic_and_depend_on_inputs() -> None:
    first = chunk_markdown(DOC, source_id="rv.ac", version=1)
    again = chunk_markdown(DOC, source_id="rv.ac", version=1)
    assert [d.chunk_id for d in first] == [d.chunk_id for d in again]
    assert len({d.chunk_id for d in first}) == len(first)
    other_source = chunk_markdown(DOC, source_id="rv.other", version=1)
    other_version = chunk_markdown(DOC, source_id="rv.ac", version=2)
    assert first[0].chunk_id != other_source[0].chunk_id
    assert first[0].chunk_id != other_version[0].chunk_id
    assert make_chunk_id("s", 0, "t") == make_chunk_id("s", 0, "t")
    assert make_chunk_id("s", 0, "t") != make_chunk_id("s", 1, "t")


def test_long_english_section_is_split_within_limit_with_overlap() -> None:
    config = ChunkingConfig(max_chars=120, overlap_chars=40)
    sentences = [f"Sentence number {i} talks about the converter fuse." for i in range(12)]
    chunks = pack_section(" ".join(sentences), config)
    assert len(chunks) > 3
    assert all(len(chunk) <= 120 for chunk in chunks)
    # Overlap: each chunk after the first starts with text that ended the previous one.
    for previous, current in zip(chunks, chunks[1:], strict=False):
        assert previous.endswith(current.split(".")[0] + ".")
    # Nothing is lost.
    joined = " ".join(chunks)
    assert all(sentence in joined for sentence in sentences)


def test_long_cjk_section_respects_weighted_size() -> None:
    config = ChunkingConfig(max_chars=60, overlap_chars=10, cjk_weight=2)
    body = "日间每30分钟2元，单日封顶20元。" * 8
    chunks = pack_section(body, config)
    assert len(chunks) > 2
    assert all(weighted_length(chunk, 2) <= 60 for chunk in chunks)
    # CJK sentences are joined without spaces.
    assert " " not in chunks[0]


def test_oversized_token_is_hard_split() -> None:
    config = ChunkingConfig(max_chars=50, overlap_chars=0)
    chunks = pack_section("x" * 180, config)
    assert [len(c) for c in chunks] == [50, 50, 50, 30]
    cjk = pack_section("夜" * 60, config)
    assert all(weighted_length(c, 2) <= 50 for c in cjk)
    assert "".join(cjk) == "夜" * 60


def test_config_rejects_bad_limits() -> None:
    with pytest.raises(ValueError):
        ChunkingConfig(max_chars=10)
    with pytest.raises(ValueError):
        ChunkingConfig(max_chars=100, overlap_chars=80)


def test_empty_and_heading_only_documents_have_no_chunks() -> None:
    assert chunk_markdown("", source_id="s") == []
    assert chunk_markdown("# Only\n\n## Headings\n", source_id="s") == []


words = st.sampled_from(["fuse", "converter", "电容", "夜间收费。", "breaker.", "12V", "泵"])
paragraph = st.lists(words, min_size=1, max_size=60).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(st.lists(paragraph, min_size=1, max_size=6), st.integers(min_value=40, max_value=200))
def test_every_chunk_fits_the_limit(paragraphs: list[str], max_chars: int) -> None:
    config = ChunkingConfig(max_chars=max_chars, overlap_chars=max_chars // 4)
    doc = "# T\n\n" + "\n\n".join(paragraphs)
    drafts = chunk_markdown(doc, source_id="p", config=config)
    assert drafts
    assert all(weighted_length(d.text, 2) <= max_chars for d in drafts)
    assert drafts == chunk_markdown(doc, source_id="p", config=config)
