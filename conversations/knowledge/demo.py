"""Demo knowledge: every shipped pack, the billing rule explanations and the scenario FAQs.

Idempotent: a second run finds every content hash unchanged and writes nothing.
"""

from __future__ import annotations

from typing import Any

from .derived import knowledge_rule_explanations_sync, knowledge_scenario_faqs_sync
from .engine import load_packs
from .models import KnowledgeChunk, KnowledgeSource
from .services import IngestReport, knowledge_ingest


def seed_packs() -> IngestReport:
    """Ingest the Markdown packs under conversations/knowledge/packs/."""
    documents = load_packs()
    origins = {d.record.source_id: f"packs/{d.path}" for d in documents}
    return knowledge_ingest([d.record for d in documents], origins=origins)


def seed(stdout: Any) -> None:
    """Load packs, rule explanations for every billing rule version, and scenario FAQs."""
    for label, report in (
        ("packs", seed_packs()),
        ("rule explanations", knowledge_rule_explanations_sync()),
        ("scenario FAQs", knowledge_scenario_faqs_sync()),
    ):
        stdout.write(f"  knowledge {label}: {report.summary()}")
    stdout.write(
        f"  knowledge: {KnowledgeSource.objects.count()} sources, {KnowledgeChunk.objects.count()} chunks"
    )
