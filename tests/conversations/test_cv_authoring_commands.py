"""The authoring kit's commands (issue 33): `check_plan` validates a plan file and shows what sample messages are
read as; `test_dialogues --plan` runs an author's dialogues on a plan not uploaded yet, leaving nothing behind."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.support.helpers import plan_document
from workflows.models import WorkflowPlan

pytestmark = pytest.mark.django_db


def _write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_check_plan_lists_every_problem_with_its_path(tmp_path: Path) -> None:
    doc = plan_document("manager_assistant")
    doc["nodes"][1]["task"] = "mail.sendd"
    doc["conversation"]["actions"][0]["requires_slots"] = ["phone_numbr"]
    out = io.StringIO()
    with pytest.raises(CommandError, match="2 problem"):
        call_command("check_plan", str(_write(tmp_path / "plan.json", doc)), stdout=out)
    assert "$.nodes[1].task: unknown task handler 'mail.sendd'" in out.getvalue()
    assert "$.conversation.actions[0].requires_slots: unknown slot 'phone_numbr'" in out.getvalue()


def test_check_plan_says_which_slot_each_sample_fills(tmp_path: Path) -> None:
    out = io.StringIO()
    call_command("check_plan", str(_write(tmp_path / "plan.json", plan_document("manager_assistant"))), "--in-order",
                 "--say", "my report Dana didn't show up today and didn't call",
                 "--say", "set up a call with her on Thursday at 2pm", stdout=out)
    text = out.getvalue()
    assert "manager_assistant: valid" in text and "slots: employee_name=Dana" in text
    assert "call_time=14:00" in text


def test_check_plan_refuses_a_file_that_is_not_a_plan(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(CommandError, match="broken.json"):
        call_command("check_plan", str(broken), stdout=io.StringIO())


def test_test_dialogues_runs_on_a_plan_not_uploaded_and_rolls_it_back(tmp_path: Path, plans) -> None:  # noqa: ANN001
    doc = plan_document("manager_assistant")
    doc["workflow_id"] = "team_lead_desk"
    dialogues = [{"id": "tl-1", "workflow": "team_lead_desk", "locale": "en", "turns": [
        {"user": "my report Dana didn't show up today and didn't call", "expect": {"slots": {"employee_name": "Dana"}}}]}]
    out = io.StringIO()
    call_command("test_dialogues", str(_write(tmp_path / "d.json", dialogues)), "--plan", str(_write(tmp_path / "p.json", doc)),
                 "--check", stdout=out)
    assert "team_lead_desk [en]: 1/1 passed" in out.getvalue()
    assert not WorkflowPlan.objects.filter(workflow_id="team_lead_desk").exists()
    doc["edges"][0]["effect"] = "billing.refund"
    with pytest.raises(CommandError, match=r"\$\.edges\[0\]\.effect"):
        call_command("test_dialogues", str(tmp_path / "d.json"), "--plan", str(_write(tmp_path / "p.json", doc)), stdout=io.StringIO())


AUTHORED = Path(__file__).resolve().parents[2] / "workflows" / "plans" / "authored"


@pytest.mark.parametrize("workflow", sorted(p.name.removesuffix(".json") for p in AUTHORED.glob("*.json") if ".dialogues" not in p.name))
def test_a_workflow_made_of_plan_data_only_passes_its_dialogues(plans, workflow: str) -> None:  # noqa: ANN001
    # issue 33's proof: a plan written from the docs, uploaded as is, holds its conversations on both generators
    out = io.StringIO()
    call_command("test_dialogues", str(AUTHORED / f"{workflow}.dialogues.json"), "--plan", str(AUTHORED / f"{workflow}.json"),
                 "--generator", "both", "--check", stdout=out)
    assert "FAILED" not in out.getvalue() and f"{workflow} [zh-hans]" in out.getvalue(), out.getvalue()


def test_the_authoring_guide_names_every_handler_signal_and_question_key() -> None:
    import dataclasses

    from conversations.engine.config import ConversationConfig, DocumentSpec, FormQuestionSpec
    from conversations.packs import builder_names, source_names
    from workflows.handlers import signal_roots, task_names

    guide = (Path(__file__).resolve().parents[2] / "docs" / "authoring.md").read_text(encoding="utf-8")
    keys = {f.name for spec in (ConversationConfig, FormQuestionSpec, DocumentSpec) for f in dataclasses.fields(spec)}
    named = set(task_names()) | set(signal_roots()) | keys | builder_names() | source_names()
    assert not {name for name in named if f"`{name}`" not in guide and name not in guide.replace("`", " ").split()}
