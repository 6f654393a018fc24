"""`manage.py ingest_knowledge`: Markdown files and directories, JSONL, per-line and per-file
errors with nothing written, re-runs that change nothing, and --background; the admin screens."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

import conversations.knowledge.admin  # noqa: F401  (registers the admin until conversations/admin.py imports it)
from conversations.knowledge.models import IngestStatus, KnowledgeChunk, KnowledgeSource
from conversations.knowledge.services import index
from workflows.models import AuditEvent

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_demo_data")]  # knowledge starts empty

MARKDOWN = """---
source_id: kb.{slug}
title: {title}
doc_type: reference
version: {version}
---

# {title}

The capacitor sits behind the roof shroud. {extra}
"""


def _md(folder: Path, slug: str, title: str, version: int = 1, extra: str = "") -> Path:
    path = folder / f"{slug}.md"
    path.write_text(MARKDOWN.format(slug=slug, title=title, version=version, extra=extra), encoding="utf-8")
    return path


def _jsonl(path: Path, rows: list) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return path


def _run(*args: str) -> str:
    out = io.StringIO()
    call_command("ingest_knowledge", *args, stdout=out)
    return out.getvalue()


@pytest.fixture(autouse=True)
def _fresh_index():  # noqa: ANN202
    index.invalidate_index()
    yield
    index.invalidate_index()


def test_ingests_directories_and_jsonl_then_reruns_change_nothing(tmp_path) -> None:  # noqa: ANN001
    docs = tmp_path / "docs"
    (docs / "nested").mkdir(parents=True)
    _md(docs, "roof", "Roof AC")
    _md(docs / "nested", "slides", "Slide outs")
    (docs / "notes.txt").write_text("ignored", encoding="utf-8")
    lines = _jsonl(tmp_path / "faq.jsonl", [
        {"source_id": "faq.night", "title": "夜间停车", "text": "夜间停车免费。", "doc_type": "faq", "city_code": "310100",
         "lot_codes": ["SH-PD-001"], "source": "billing:faq"},
        {"source_id": "faq.cap", "title": "Caps", "text": "Daily cap is 20.", "doc_type": "faq", "version": 4},
    ])
    output = _run(str(docs), str(lines))
    assert "4 record(s) from 3 file(s) are valid" in output and "4 created" in output
    night = KnowledgeSource.objects.get(source_id="faq.night")
    assert (night.source, night.city_code, night.source_type) == ("billing:faq", "310100", "biz_derived")
    assert KnowledgeSource.objects.get(source_id="kb.roof").source.endswith("roof.md")
    assert KnowledgeSource.objects.get(source_id="kb.roof").source_type == "manual"
    assert KnowledgeSource.objects.get(source_id="faq.cap").version == 4
    events = AuditEvent.objects.count()
    assert "0 created, 0 updated, 4 unchanged" in _run(str(docs), str(lines))
    assert AuditEvent.objects.count() == events
    # An edited file replaces only its own source's chunks.
    _md(docs, "roof", "Roof AC", version=2, extra="Check the contactor too.")
    assert "1 updated, 3 unchanged" in _run(str(docs), str(lines))
    assert set(KnowledgeChunk.objects.filter(source_key="kb.roof").values_list("source_version", flat=True)) == {2}


def test_bad_jsonl_lists_line_errors_and_writes_nothing(tmp_path) -> None:  # noqa: ANN001
    good = _md(tmp_path, "roof", "Roof AC")
    bad = _jsonl(tmp_path / "bad.jsonl", [
        {"source_id": "ok.one", "title": "One", "text": "fine", "doc_type": "faq"},
        "{not json",
        {"source_id": "bad two", "title": "", "text": "x", "doc_type": "faq"},
        {"source_id": "ok.three", "title": "Three", "text": "fine", "doc_type": "faq", "effective_from": "2026-01-01"},
    ])
    with pytest.raises(CommandError) as caught:
        _run(str(good), str(bad))
    message = str(caught.value)
    assert "nothing was written" in message
    assert f"{bad}:2: invalid JSON" in message
    assert f"{bad}:3: source_id:" in message and f"{bad}:3: title:" in message
    assert f"{bad}:4: effective_from:" in message
    assert not KnowledgeSource.objects.exists() and not KnowledgeChunk.objects.exists()


def test_bad_markdown_and_missing_paths_are_reported(tmp_path) -> None:  # noqa: ANN001
    broken = tmp_path / "broken.md"
    broken.write_text("---\ntitle: No id or type\nversion: zero\n---\n\nBody.\n", encoding="utf-8")
    with pytest.raises(CommandError) as caught:
        _run(str(broken), str(tmp_path / "missing.md"), str(tmp_path / "x.csv"))
    message = str(caught.value)
    assert f"{broken}:1: doc_type: is required" in message
    assert f"{broken}:3: version:" in message
    assert "missing.md: no such file or directory" in message
    assert not KnowledgeSource.objects.exists()


def test_duplicate_source_ids_across_files_are_refused(tmp_path) -> None:  # noqa: ANN001
    first = _md(tmp_path, "roof", "Roof AC")
    other = _jsonl(tmp_path / "dup.jsonl", [{"source_id": "kb.roof", "title": "Again", "text": "x", "doc_type": "faq"}])
    with pytest.raises(CommandError, match="also in"):
        _run(str(first), str(other))
    assert not KnowledgeSource.objects.exists()


def test_background_queues_the_task(tmp_path, django_capture_on_commit_callbacks) -> None:  # noqa: ANN001
    path = _md(tmp_path, "roof", "Roof AC")
    with django_capture_on_commit_callbacks(execute=True):
        output = _run(str(path), "--background")
    assert "1 queued for background ingestion" in output
    source = KnowledgeSource.objects.get()
    assert source.ingest_status == IngestStatus.DONE and source.chunks.count() == source.ingest_total == 1


def test_dry_run_writes_nothing(tmp_path) -> None:  # noqa: ANN001
    assert "Dry run" in _run(str(_md(tmp_path, "roof", "Roof AC")), "--dry-run")
    assert not KnowledgeSource.objects.exists()


def test_admin_lists_progress_and_reingests_in_background(admin_client, tmp_path, django_capture_on_commit_callbacks) -> None:  # noqa: ANN001
    _run(str(_md(tmp_path, "roof", "Roof AC")))
    source = KnowledgeSource.objects.get()
    page = admin_client.get("/admin/conversations/knowledgesource/")
    html = page.content.decode()
    assert page.status_code == 200 and "kb.roof" in html and "1/1 (100%)" in html
    detail = admin_client.get(f"/admin/conversations/knowledgesource/{source.pk}/change/")
    assert detail.status_code == 200 and "The capacitor sits behind the roof shroud" in detail.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            "/admin/conversations/knowledgesource/",
            {"action": "reingest_in_background", "_selected_action": [source.pk]},
        )
    assert response.status_code == 302
    source.refresh_from_db()
    assert source.ingest_status == IngestStatus.DONE
    assert AuditEvent.objects.filter(event_type="knowledge_reingest_queued").count() == 1
    assert admin_client.get("/admin/conversations/knowledgechunk/").status_code == 200
