"""Knowledge depends on nothing above it, and a serving process builds its index at start-up."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from config.runtime import process_started, warm_up
from conversations.knowledge.engine import KnowledgeRecord
from conversations.knowledge.services import index, ingestion, retrieval

ROOT = Path(__file__).resolve().parents[2]


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):  # function-level imports count too: a cycle is a cycle
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def test_knowledge_never_imports_billing() -> None:
    files = [*sorted((ROOT / "conversations" / "knowledge").rglob("*.py")), ROOT / "conversations" / "dialogues.py"]
    offenders = {
        str(path.relative_to(ROOT)): sorted(m for m in _imported_modules(path) if m.split(".")[0] == "billing")
        for path in files
    }
    assert {path: modules for path, modules in offenders.items() if modules} == {}


def test_knowledge_services_never_import_the_tasks_back_at_load_time() -> None:
    tasks = ROOT / "conversations" / "knowledge" / "tasks.py"
    top_level = {
        node.module for node in ast.parse(tasks.read_text(encoding="utf-8")).body
        if isinstance(node, ast.ImportFrom) and node.module
    }
    assert not {m for m in top_level if "services" in m}


@pytest.fixture
def _fresh_index():  # noqa: ANN202
    index.invalidate_index()
    yield
    index.invalidate_index()


@pytest.mark.django_db
@pytest.mark.usefixtures("_fresh_index")
def test_a_starting_process_builds_the_index_before_the_first_retrieval() -> None:
    ingestion.knowledge_ingest([KnowledgeRecord(source_id="kb.roof", title="Roof AC", text="The capacitor is in the control box.", doc_type="reference")])
    index.invalidate_index()
    process_started.send(sender=None)  # what config/wsgi.py and a Celery worker process send
    first = retrieval.knowledge_retrieve("capacitor")
    assert first.hits and first.trace["index_rebuilt"] is False


@pytest.mark.django_db
@pytest.mark.usefixtures("_fresh_index")
def test_a_failed_warm_up_leaves_the_index_to_the_first_retrieval(monkeypatch, caplog) -> None:  # noqa: ANN001
    def down(**kwargs):  # noqa: ANN003, ANN202
        raise ConnectionError("database not reachable")

    monkeypatch.setattr(index, "knowledge_index", down)
    warm_up()  # logs, does not raise: the server still starts
    assert "_warm_index did not warm up at start-up (database not reachable)" in caplog.text
    assert retrieval.knowledge_retrieve("capacitor").trace["index_rebuilt"] is True  # built on first use
