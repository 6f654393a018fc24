"""Demo knowledge: every shipped pack (billing seeds the knowledge it derives itself).

Idempotent: a second run finds every content hash unchanged and writes nothing.
"""

from __future__ import annotations

from typing import Any

from .engine import load_packs
from .models import KnowledgeChunk, KnowledgeSource
from .services.ingestion import IngestReport, knowledge_ingest


def seed_packs() -> IngestReport:
    """Ingest the Markdown packs under conversations/knowledge/packs/."""
    documents = load_packs()
    origins = {d.record.source_id: f"packs/{d.path}" for d in documents}
    return knowledge_ingest([d.record for d in documents], origins=origins)


def seed(stdout: Any) -> None:
    """Load the packs, and say how much knowledge there is (billing's included)."""
    stdout.write(f"  knowledge packs: {seed_packs().summary()}")
    stdout.write(
        f"  knowledge: {KnowledgeSource.objects.count()} sources, {KnowledgeChunk.objects.count()} chunks"
    )
