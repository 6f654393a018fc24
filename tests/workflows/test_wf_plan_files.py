"""A plan held as a folder (plan.json and one file per system) is the same document as one file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workflows.demo import PLANS_DIR
from workflows.engine.plan_files import PlanFileError, plan_path, read_plan, split_plan


def test_the_rv_desk_is_one_file_per_system_assembled_at_load() -> None:
    folder = plan_path(PLANS_DIR, "rv_diagnostic")
    assert folder.is_dir() and not (PLANS_DIR / "rv_diagnostic.json").exists()
    document = read_plan(folder)
    procedures = document["conversation"]["diagnostic"]["procedures"]
    assert [p["id"] for p in procedures] == json.loads((folder / "plan.json").read_text())["conversation"]["diagnostic"]["procedures"]
    assert {f.stem for f in (folder / "systems").glob("*.json")} == {p["id"] for p in procedures}
    assert max(f.stat().st_size for f in (folder / "systems").glob("*.json")) < 150_000


def test_splitting_and_reading_back_gives_the_same_plan(tmp_path: Path) -> None:
    document = read_plan(plan_path(PLANS_DIR, "rv_diagnostic"))
    split_plan(document, tmp_path / "copy")
    assert read_plan(tmp_path / "copy") == document


def test_a_system_file_with_another_id_or_broken_json_is_refused_with_its_path(tmp_path: Path) -> None:
    split_plan(read_plan(plan_path(PLANS_DIR, "rv_diagnostic")), tmp_path / "copy")
    furnace = tmp_path / "copy" / "systems" / "furnace.json"
    furnace.write_text(json.dumps({**json.loads(furnace.read_text()), "id": "heater"}))
    with pytest.raises(PlanFileError, match="furnace"):
        read_plan(tmp_path / "copy")
    furnace.write_text("{not json")
    with pytest.raises(PlanFileError, match="furnace.json"):
        read_plan(tmp_path / "copy")


def test_overlapping_evidence_rules_are_reported() -> None:
    from conversations.engine import ConversationConfig
    from conversations.engine.plan_lint import overlapping_evidence

    conversation = {"diagnostic": {"procedures": [{"id": "pump", "label": "Pump", "steps": [{"id": "s1", "question": "?"}],
                                                   "evidence": [{"id": "runs", "patterns": {"en": [r"pump\s+runs"]}},
                                                                {"id": "hums", "patterns": {"en": [r"pump\s+(?:runs|hums)"]}},
                                                                {"id": "dead", "patterns": {"en": [r"pump\s+dead"]}}]}]}}
    overlaps = overlapping_evidence(ConversationConfig.from_dict(conversation))
    assert [(o.rule, o.other) for o in overlaps] == [("runs", "hums")]
