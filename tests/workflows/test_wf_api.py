"""Workflow plans, reviews and audit over REST, with the SPEC's error shape everywhere."""

from __future__ import annotations

import copy

import pytest
from rest_framework.test import APIClient

from tests.support.helpers import plan_document
from workflows.models import Review, Run, WorkflowPlan
from workflows.services import runs
from workflows.services.runs import Actor

pytestmark = pytest.mark.django_db


def assert_error(response, status: int, code: str | None = None) -> dict:  # noqa: ANN001
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}
    if code:
        assert body["error"]["code"] == code
    return body["error"]


def test_list_shows_the_five_workflows(api, plans) -> None:  # noqa: ANN001
    response = api.get("/api/v1/workflow-plans")
    assert response.status_code == 200
    ids = {p["workflow_id"] for p in response.json()["results"]}
    assert ids == {"parking_help_desk", "rv_diagnostic", "manager_assistant", "permit_form", "project_intake"}


def test_read_one_plan_and_a_version(api, plans) -> None:  # noqa: ANN001
    body = api.get("/api/v1/workflow-plans/project_intake").json()
    assert body["version"] == 1 and body["definition"]["start_step"] == "intake"
    assert api.get("/api/v1/workflow-plans/project_intake?version=1").status_code == 200
    assert_error(api.get("/api/v1/workflow-plans/project_intake?version=9"), 404, "workflow_not_found")
    assert_error(api.get("/api/v1/workflow-plans/nope"), 404, "workflow_not_found")


def test_invalid_upload_lists_each_problem_path_and_stores_nothing(supervisor_api, plans) -> None:  # noqa: ANN001
    doc = plan_document("permit_form")
    doc["workflow_id"] = "permit_form_v2"
    doc["nodes"][0]["type"] = "wormhole"
    doc["edges"][1]["to"] = "missing_step"
    doc["edges"][2]["conditions"] = [{"type": "equals"}]
    error = assert_error(supervisor_api.post("/api/v1/workflow-plans", doc, format="json"), 400, "invalid_plan")
    paths = [p["path"] for p in error["details"]["problems"]]
    assert "$.nodes[0].type" in paths and "$.edges[2].conditions[0].key" in paths
    assert "$.edges[2].conditions[0].value" in paths and "$.edges[1].to" in paths  # a non-advancing edge has no target
    assert supervisor_api.get("/api/v1/workflow-plans/permit_form_v2").status_code == 404


def test_an_upload_by_anyone_but_a_supervisor_is_refused_before_it_is_validated(api, operator_api, plans) -> None:  # noqa: ANN001
    bad = assert_error(api.post("/api/v1/workflow-plans", {"workflow_id": "X"}, format="json"), 403, "supervisor_required")
    assert bad["details"] == {}  # no problem list: a refused caller learns nothing about plans
    good = copy.deepcopy(plan_document("permit_form"))
    good["workflow_id"] = "permit_form_copy"
    assert_error(api.post("/api/v1/workflow-plans", good, format="json"), 403, "supervisor_required")
    assert_error(operator_api.post("/api/v1/workflow-plans", good, format="json"), 403, "supervisor_required")
    assert not WorkflowPlan.objects.filter(workflow_id="permit_form_copy").exists()


def test_supervisor_uploads_a_new_workflow_without_code(supervisor_api, plans) -> None:  # noqa: ANN001
    doc = plan_document("manager_assistant")
    doc["workflow_id"] = "team_lead_assistant"
    response = supervisor_api.post("/api/v1/workflow-plans", doc, format="json")
    assert response.status_code == 201 and response.json()["version"] == 1
    assert supervisor_api.post("/api/v1/workflow-plans", doc, format="json").status_code == 200  # unchanged
    doc["description"] = "Changed"
    assert supervisor_api.post("/api/v1/workflow-plans", doc, format="json").json()["version"] == 2


def test_malformed_json_and_unauthenticated_requests_have_the_error_shape(api, supervisor_api, plans) -> None:  # noqa: ANN001
    response = supervisor_api.post("/api/v1/workflow-plans", "{not json", content_type="application/json")
    assert_error(response, 400, "malformed_request")
    assert_error(api.post("/api/v1/workflow-plans", "{not json", content_type="application/json"), 403, "supervisor_required")
    assert_error(APIClient().get("/api/v1/workflow-plans"), 401, "not_authenticated")
    bad_token = APIClient()
    bad_token.credentials(HTTP_AUTHORIZATION="Token nope")
    assert_error(bad_token.get("/api/v1/workflow-plans"), 401, "authentication_failed")
    assert_error(api.get("/api/v1/no-such-endpoint"), 404, "not_found")
    assert_error(api.delete("/api/v1/workflow-plans"), 405, "method_not_allowed")


def _pending_review(owner) -> Review:  # noqa: ANN001
    run = runs.run_start(workflow_id="project_intake", owner=owner).run
    runs.run_signals_update(
        run=Run.objects.get(pk=run.pk), actor=Actor.of(owner),
        signals={"slots": {"summary": "s", "goal": "g", "users": "u"}, "intake_ready": True, "confidence": 0.4, "intent_class": "unknown"},
    )
    return Review.objects.get(run=run)


def test_review_queue_is_for_supervisors(api, supervisor_api, person, plans) -> None:  # noqa: ANN001
    review = _pending_review(person)
    assert_error(api.get("/api/v1/reviews?status=pending"), 403, "supervisor_required")
    body = supervisor_api.get("/api/v1/reviews?status=pending").json()
    assert body["count"] == 1 and body["results"][0]["id"] == review.pk
    assert body["results"][0]["recommended_option_id"] == "request_clarification"
    assert supervisor_api.get("/api/v1/reviews?status=approved").json()["count"] == 0
    assert_error(supervisor_api.get("/api/v1/reviews?status=maybe"), 400, "invalid_filter")


def test_decide_a_review_once(api, supervisor_api, person, plans) -> None:  # noqa: ANN001
    review = _pending_review(person)
    url = f"/api/v1/reviews/{review.pk}/decision"
    assert_error(api.post(url, {"outcome": "approve", "reason": "ok"}, format="json"), 403)
    assert_error(supervisor_api.post(url, {"outcome": "approve"}, format="json"), 400, "validation_error")
    assert_error(supervisor_api.post(url, {"outcome": "maybe", "reason": "x"}, format="json"), 400, "validation_error")
    assert_error(supervisor_api.post(url, {"outcome": "override", "reason": "x"}, format="json"), 400, "option_required")
    assert_error(
        supervisor_api.post(url, {"outcome": "override", "option_id": "teleport", "reason": "x"}, format="json"), 400, "option_not_available"
    )
    response = supervisor_api.post(url, {"outcome": "reject", "reason": "Not something we build"}, format="json")
    assert response.status_code == 200
    assert response.json()["status"] == "rejected" and response.json()["decided_option_id"] == "reject_out_of_scope"
    assert_error(supervisor_api.post(url, {"outcome": "approve", "reason": "late"}, format="json"), 409, "already_decided")
    assert_error(supervisor_api.post("/api/v1/reviews/999999/decision", {"outcome": "approve", "reason": "x"}, format="json"), 404)


def test_audit_export_json_and_csv(supervisor_api, api, person, plans) -> None:  # noqa: ANN001
    review = _pending_review(person)
    rows = supervisor_api.get(f"/api/v1/audit-events?run_id={review.run_id}").json()["results"]
    assert [r["event_type"] for r in rows][:2] == ["run_started", "decision"]
    assert rows[1]["options_snapshot"][0]["option_id"] == "submit_intake"
    csv_response = supervisor_api.get(f"/api/v1/audit-events?run_id={review.run_id}&export=csv")
    assert csv_response["Content-Type"].startswith("text/csv")
    lines = csv_response.content.decode().splitlines()
    assert lines[0].startswith("id,event_type,created_at") and len(lines) > len(rows)  # quoted JSON may wrap
    assert_error(api.get("/api/v1/audit-events"), 403)


def test_schema_and_docs_are_served(api) -> None:  # noqa: ANN001
    schema = api.get("/api/schema/")
    assert schema.status_code == 200 and b"/api/v1/workflow-plans" in schema.content
    assert api.get("/api/docs/").status_code == 200
