"""Shipped knowledge packs: every file parses with valid front matter and is retrievable."""

from __future__ import annotations

from pathlib import Path

import pytest

from conversations.knowledge.engine.embedder import HashingEmbedder
from conversations.knowledge.engine.packs import (
    PACKS_ROOT,
    PackError,
    build_pack_index,
    load_pack,
    load_packs,
    pack_names,
    pack_snapshots,
    pack_source_ids,
)
from conversations.knowledge.engine.records import parse_front_matter
from conversations.knowledge.engine.search import RetrievalFilters

EXPECTED_PACKS = ["manager_assistant", "parking_help_desk", "permit_form", "rv_diagnostic"]
REQUIRED_KEYS = {"source_id", "title", "doc_type", "source_type", "version", "locale"}
PACK_FILES = sorted(PACKS_ROOT.glob("*/*.md"))


def test_the_four_packs_ship_with_their_files() -> None:
    """At least four documents each; the RV desk's has one or two per system it guides (issue 16)."""
    assert pack_names() == EXPECTED_PACKS
    for name in EXPECTED_PACKS:
        assert 4 <= len(load_pack(name)) <= 24, name


@pytest.mark.parametrize("path", PACK_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_pack_file_has_valid_front_matter(path: Path) -> None:
    front = parse_front_matter(path.read_text(encoding="utf-8"))
    assert set(front.fields) >= REQUIRED_KEYS, REQUIRED_KEYS - set(front.fields)
    assert front.fields["source_type"] == "manual"
    assert front.fields["locale"] in ("en", "zh")
    assert isinstance(front.fields["version"], int) and front.fields["version"] >= 1
    assert str(front.fields["source_id"]).startswith(f"{path.parent.name}.")
    assert len(front.body.split()) > 80 or len(front.body) > 600, "a pack file needs substance"


def test_all_packs_load_with_unique_sources_and_chunks() -> None:
    documents = load_packs()
    ids = [d.record.source_id for d in documents]
    assert len(ids) == len(set(ids))
    snapshots = pack_snapshots()
    assert {s.source_id for s in snapshots} == set(ids)
    assert all(s.text.strip() and s.heading for s in snapshots)


def test_bilingual_packs_have_chinese_and_english() -> None:
    for name in ("parking_help_desk", "rv_diagnostic"):
        locales = {d.record.locale for d in load_pack(name)}
        assert locales == {"en", "zh"}, name


def test_permit_pack_says_it_is_a_demo_code_book() -> None:
    for document in load_pack("permit_form"):
        assert "DEMO" in document.record.text, document.path


def test_pack_source_ids_scope_retrieval() -> None:
    ids = pack_source_ids("manager_assistant")
    assert ids and all(i.startswith("manager_assistant.") for i in ids)


def test_invalid_pack_file_is_reported_with_path_and_line(tmp_path: Path) -> None:
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "bad.md").write_text("---\ntitle: T\ndoc_type: Not Valid\n---\nbody\n")
    with pytest.raises(PackError, match=r"demo/bad.md: line 3, field 'doc_type'"):
        load_pack("demo", root=tmp_path)
    (tmp_path / "demo" / "bad.md").write_text(
        "---\nsource_id: other.x\ntitle: T\ndoc_type: faq\n---\nbody\n"
    )
    with pytest.raises(PackError, match="must start with 'demo.'"):
        load_pack("demo", root=tmp_path)


QUESTIONS = [
    ("rv_diagnostic", "where is the capacitor on the roof AC", "rv_diagnostic.component_locations"),
    (
        "rv_diagnostic",
        "how do I test a compressor winding",
        "rv_diagnostic.capacitor_compressor_howto",
    ),
    ("rv_diagnostic", "converter not charging the battery", "rv_diagnostic.electrical_systems"),
    ("rv_diagnostic", "水泵不工作怎么办", "rv_diagnostic.zh_quick_reference"),
    ("permit_form", "minimum rear setback", "permit_form.setbacks"),
    ("permit_form", "egress window for a basement bedroom", "permit_form.fire_egress"),
    ("permit_form", "who can do electrical work", "permit_form.electrical_work"),
    ("manager_assistant", "harassment complaint involve HR", "manager_assistant.conflict_and_hr"),
    ("manager_assistant", "sick leave medical note", "manager_assistant.leave_and_absence"),
    ("parking_help_desk", "夜间停车收费吗", "parking_help_desk.billing_basics_zh"),
    ("parking_help_desk", "欠费怎么查询", "parking_help_desk.arrears_faq"),
    ("parking_help_desk", "规则换版本了按哪个版本计费", "parking_help_desk.rule_versions"),
    (
        "parking_help_desk",
        "fee mismatch supervisor review",
        "parking_help_desk.disputes_verification",
    ),
]


def test_pack_questions_retrieve_the_right_source() -> None:
    embedder = HashingEmbedder()
    index = build_pack_index(embedder=embedder)
    for pack, question, expected in QUESTIONS:
        filters = RetrievalFilters(source_ids=pack_source_ids(pack))
        hits = index.search(
            question, query_vector=embedder.embed([question])[0], filters=filters, top_k=3
        )
        assert expected in [h.chunk.source_id for h in hits], (
            question,
            [h.chunk.source_id for h in hits],
        )
        assert all(h.chunk.source_id.startswith(f"{pack}.") for h in hits)
