"""An author's mistakes are refused at upload, each with its JSON path (issue 33): a typo anywhere in a plan is
never ignored and never leaves a run blocked for good."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.support.helpers import plan_document
from workflows.models import WorkflowPlan
from workflows.services.plans import plan_problems

pytestmark = pytest.mark.django_db

Mutation = Callable[[dict[str, Any]], None]


def _add_finish_edge(condition: dict[str, Any]) -> Mutation:
    def mutate(doc: dict[str, Any]) -> None:
        doc["edges"].append({"from": "guidance", "to": "done", "option_id": "finish_when", "label": "Finish",
                             "effects_summary": "Ends the conversation.", "conditions": [condition]})
    return mutate


MISTAKES: list[tuple[str, Mutation, str, str]] = [
    ("an unknown top-level key", lambda d: d.update(colour="red"), "$.colour", "unknown key"),
    ("an unknown node key", lambda d: d["nodes"][1].update(prodcues="x"), "$.nodes[1].prodcues", "unknown key"),
    ("an unknown edge key", lambda d: d["edges"][0].update(lable="x"), "$.edges[0].lable", "unknown key"),
    ("an unknown governance key", lambda d: d["governance"].update(stalness="warn"), "$.governance.stalness", "unknown key"),
    ("an unknown task handler", lambda d: d["nodes"][1].update(task="mail.sendd"), "$.nodes[1].task",
     "unknown task handler 'mail.sendd'"),
    ("a setting its handler does not read", lambda d: d["nodes"][1].update(documnet_fields=["a"]),
     "$.nodes[1].documnet_fields", "unknown key"),
    ("an unknown edge effect", lambda d: d["edges"][0].update(effect="billing.refund"), "$.edges[0].effect",
     "unknown effect 'billing.refund'"),
    ("a typo in a condition's signal key", _add_finish_edge({"type": "equals", "key": "qa_pas", "value": True}),
     "$.edges[6].conditions[0].key", "unknown signal 'qa_pas'"),
    ("a slot nobody fills, inside a not", _add_finish_edge({"type": "not", "condition": {"type": "present", "key": "slots.employe_name"}}),
     "$.edges[6].conditions[0].condition.key", "unknown slot 'employe_name'"),
    ("action_allowed naming no declared action", lambda d: d["edges"][0]["conditions"][0].update(action="draft_emial"),
     "$.edges[0].conditions[0].action", "unknown action 'draft_emial'"),
    ("an action with no node", lambda d: d["conversation"]["actions"].append({**d["conversation"]["actions"][0], "id": "send_sms"}),
     "$.conversation.actions[2].id", "no action node runs 'send_sms'"),
    ("requires_slots naming an unknown slot", lambda d: d["conversation"]["actions"][0].update(requires_slots=["phone_numbr"]),
     "$.conversation.actions[0].requires_slots", "unknown slot 'phone_numbr'"),
    ("recommended_when naming an unknown slot", lambda d: d["conversation"]["actions"][1].update(recommended_when={"contactd": ["no"]}),
     "$.conversation.actions[1].recommended_when", "unknown slot 'contactd'"),
    ("an unknown key in a slot", lambda d: d["conversation"]["slots"]["employee_name"].update(minn=3),
     "$.conversation.slots.employee_name.minn", "unknown key"),
    ("an unknown key in a form question", lambda d: d["conversation"]["form"]["questions"][0].update(minimum=0),
     "$.conversation.form.questions[0].minimum", "unknown key"),
    ("a signal source no pack registers", lambda d: d["conversation"].update(signals_from="intake.clasify"),
     "$.conversation.signals_from", "unknown signal source 'intake.clasify'"),
    ("a document builder no pack registers",
     lambda d: d["conversation"].setdefault("documents", {}).update(memo={"kind": "handler", "handler": "memo.buld"}),
     "$.conversation.documents.memo.handler", "unknown document builder 'memo.buld'"),
    ("a node in a mode the conversation does not enable", lambda d: d["nodes"][0].update(mode="diagnostc"),
     "$.nodes[0].mode", "unknown mode 'diagnostc'"),
]


@pytest.mark.parametrize(("what", "mutate", "path", "message"), MISTAKES, ids=[m[0] for m in MISTAKES])
def test_each_mistake_is_refused_with_its_path(plans, what: str, mutate: Mutation, path: str, message: str) -> None:  # noqa: ANN001
    doc = plan_document("manager_assistant")
    assert plan_problems(doc) == []
    mutate(doc)
    found = [(p.path, p.message) for p in plan_problems(doc)]
    assert any(p == path and message in m for p, m in found), (what, found)


def test_every_mistake_of_one_upload_is_listed_and_nothing_is_stored(supervisor_api, plans) -> None:  # noqa: ANN001
    doc = plan_document("manager_assistant")
    doc["workflow_id"] = "team_lead_desk"
    for _what, mutate, _path, _message in MISTAKES:
        if "edges[6]" not in _path:
            mutate(doc)
    response = supervisor_api.post("/api/v1/workflow-plans", doc, format="json")
    assert response.status_code == 400, response.content
    paths = {p["path"] for p in response.json()["error"]["details"]["problems"]}
    assert {"$.colour", "$.nodes[1].task", "$.edges[0].effect", "$.conversation.actions[0].requires_slots"} <= paths
    assert not WorkflowPlan.objects.filter(workflow_id="team_lead_desk").exists()


def test_the_shipped_plans_declare_nothing_unknown(plans) -> None:  # noqa: ANN001
    for workflow in ("parking_help_desk", "rv_diagnostic", "manager_assistant", "permit_form", "project_intake"):
        assert plan_problems(plan_document(workflow)) == [], workflow


@pytest.mark.parametrize(("workflow", "messages"), [
    ("manager_assistant", ["my report Dana didn't show up today and didn't call", "no, I haven't talked to her yet"]),
    ("project_intake", ["we need an app for booking dentist appointments", "patients and clinic staff"]),
    ("rv_diagnostic", ["the furnace won't light", "the blower runs"]),
])
def test_every_signal_a_conversation_publishes_is_declared(person, plans, workflow: str, messages: list[str]) -> None:  # noqa: ANN001
    # a condition may test only what is declared (the check above): what the conversation publishes must be
    from conversations import services
    from workflows.handlers import signal_roots
    from workflows.models import Run

    conversation = services.conversation_start(user=person, workflow_id=workflow, locale="en")
    for text in messages:
        services.conversation_turn(user=person, conversation_id=conversation.pk, text=text)
    signals = Run.objects.get(conversation=conversation).state["signals"]
    assert signals and set(signals) <= signal_roots(), set(signals) - signal_roots()


def test_a_document_the_conversation_writes_must_be_declared(plans) -> None:  # noqa: ANN001
    from workflows.demo import PLANS_DIR
    from workflows.engine.plan_files import read_plan

    doc = read_plan(PLANS_DIR / "authored" / "equipment_loan.json")
    assert plan_problems(doc) == []
    doc["nodes"][2]["produces"] = "loan_requets"
    assert ("$.nodes[2].produces", "no document 'loan_requets' in conversation.documents") in [
        (p.path, p.message) for p in plan_problems(doc)]
    doc["conversation"]["documents"]["confirmation_email"]["body"]["en"] = "Hi {requester}"
    assert any(p.path == "$.conversation.documents.confirmation_email" and "{requester}" in p.message for p in plan_problems(doc))
