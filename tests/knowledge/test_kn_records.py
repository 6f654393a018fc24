"""JSONL knowledge records and Markdown front matter: validation with line and field."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import pytest

from conversations.knowledge.engine.records import (
    KnowledgeRecordError,
    RecordError,
    load_jsonl_records,
    parse_front_matter,
    parse_jsonl_records,
    parse_markdown_record,
    record_snapshots,
)

GOOD = {
    "source_id": "faq.night",
    "title": "Night parking",
    "text": "夜间20:00至次日08:00免费。",
    "doc_type": "faq",
    "city_code": "310100",
    "lot_codes": ["LOT-A", "LOT-B"],
    "effective_from": "2025-01-01T00:00:00+08:00",
    "effective_to": None,
    "version": 2,
    "owner": "ops",
}


def line(**changes: object) -> str:
    data = {**GOOD, **changes}
    return json.dumps({k: v for k, v in data.items() if v is not ...}, ensure_ascii=False)


def test_valid_record_is_parsed_with_defaults_and_extra_metadata() -> None:
    parsed = parse_jsonl_records(line() + "\n\n")
    assert parsed.ok
    (record,) = parsed.records
    assert record.source_id == "faq.night"
    assert record.version == 2
    assert record.source_type == "biz_derived"
    assert record.lot_codes == ("LOT-A", "LOT-B")
    assert record.effective_from == datetime(2025, 1, 1, tzinfo=timezone(timedelta(hours=8)))
    assert record.effective_to is None
    assert record.status == "active"
    assert record.metadata == {"owner": "ops"}


def test_content_is_accepted_for_text_and_source_id_is_derived() -> None:
    parsed = parse_jsonl_records([line(text=..., content="Body", source_id=...)])
    (record,) = parsed.records
    assert record.text == "Body"
    assert record.source_id.startswith("src-")
    again = parse_jsonl_records([line(text=..., content="Body", source_id=...)])
    assert again.records[0].source_id == record.source_id


def test_errors_name_line_and_field() -> None:
    lines = [
        line(),
        "{not json",
        "[1, 2]",
        line(source_id="x2", title=""),
        line(source_id="x3", effective_from="2025-01-01T00:00:00"),
        line(source_id="x4", lot_codes=[1, 2]),
        line(source_id="x5", version=0, doc_type="FAQ!"),
        line(
            source_id="x6",
            effective_from="2025-02-01T00:00:00+00:00",
            effective_to="2025-01-01T00:00:00+00:00",
        ),
        line(),
        line(source_id="x8", status="archived", text="   "),
    ]
    parsed = parse_jsonl_records(lines)
    assert [r.source_id for r in parsed.records] == ["faq.night"]
    found = {(e.line, e.field) for e in parsed.errors}
    assert found == {
        (2, None),
        (3, None),
        (4, "title"),
        (5, "effective_from"),
        (6, "lot_codes"),
        (7, "version"),
        (7, "doc_type"),
        (8, "effective_to"),
        (9, "source_id"),
        (10, "status"),
        (10, "text"),
    }
    naive = next(e for e in parsed.errors if e.line == 5)
    assert "UTC offset" in naive.message
    assert str(naive).startswith("line 5, field 'effective_from':")
    duplicate = next(e for e in parsed.errors if e.line == 9)
    assert "first on line 1" in duplicate.message


def test_load_raises_with_every_error() -> None:
    with pytest.raises(KnowledgeRecordError) as excinfo:
        load_jsonl_records([line(), "{", line(source_id="b", doc_type=None)])
    assert excinfo.value.errors == (
        RecordError(2, None, excinfo.value.errors[0].message),
        RecordError(3, "doc_type", "is required"),
    )
    assert "line 2" in str(excinfo.value)


def test_bom_and_crlf_are_tolerated() -> None:
    assert parse_jsonl_records("\ufeff" + line() + "\r\n").ok
    assert parse_front_matter("\ufeff---\r\ntitle: T\r\n---\r\nbody").fields == {"title": "T"}


def test_lot_codes_string_and_numeric_city_are_normalised() -> None:
    (record,) = load_jsonl_records([line(lot_codes="A, B,A", city_code=310100)])
    assert record.lot_codes == ("A", "B")
    assert record.city_code == "310100"


FRONT = """---
source_id: pack.doc
title: "Doc: with colon"
doc_type: faq
source_type: manual
version: 3
locale: zh
lot_codes: [A, B]
tags:
  - one
  - two
effective_from: 2025-01-01T00:00:00+00:00
---

# Heading

Body text.
"""


def test_front_matter_fields_and_body() -> None:
    front = parse_front_matter(FRONT)
    assert front.fields["title"] == "Doc: with colon"
    assert front.fields["version"] == 3
    assert front.fields["lot_codes"] == ["A", "B"]
    assert front.fields["tags"] == ["one", "two"]
    assert front.field_lines["doc_type"] == 4
    assert front.body.strip().startswith("# Heading")
    record = parse_markdown_record(FRONT)
    assert record.source_type == "manual"
    assert record.locale == "zh"
    assert record.effective_from == datetime(2025, 1, 1, tzinfo=UTC)
    assert record.metadata == {"tags": ["one", "two"]}


def test_front_matter_errors_point_at_the_line() -> None:
    with pytest.raises(KnowledgeRecordError) as missing:
        parse_front_matter("# no front matter")
    assert missing.value.errors[0].line == 1
    with pytest.raises(KnowledgeRecordError) as unclosed:
        parse_front_matter("---\ntitle: x\n")
    assert "not closed" in unclosed.value.errors[0].message
    with pytest.raises(KnowledgeRecordError) as bad:
        parse_markdown_record("---\ntitle: T\ndoc_type: Bad Type\nversion: -1\n---\nbody\n")
    assert {(e.line, e.field) for e in bad.value.errors} == {(3, "doc_type"), (4, "version")}
    with pytest.raises(KnowledgeRecordError) as empty:
        parse_markdown_record("---\ntitle: T\ndoc_type: faq\n---\n\n")
    assert [(e.line, e.field) for e in empty.value.errors] == [(5, "text")]


def test_record_snapshots_carry_metadata() -> None:
    record = parse_markdown_record(FRONT)
    (snapshot,) = record_snapshots(record)
    assert snapshot.source_id == "pack.doc"
    assert snapshot.source_version == 3
    assert snapshot.heading == "Heading"
    assert snapshot.text == "Body text."
    assert snapshot.lot_codes == ("A", "B")
    assert snapshot.doc_type == "faq"
    assert snapshot.status == "active"
