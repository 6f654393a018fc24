"""Supervisors in Django admin: the queue, deciding with a reason, read-only audit, plan upload."""

from __future__ import annotations

import json

import pytest

from tests.support.helpers import plan_document
from workflows.models import AuditEvent, Review, Run, WorkflowPlan
from workflows.services import reviews, runs
from workflows.services.runs import Actor

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client_sup(client, supervisor):  # noqa: ANN001, ANN201
    client.force_login(supervisor)
    return client


def _pending(owner) -> Review:  # noqa: ANN001
    run = runs.run_start(workflow_id="project_intake", owner=owner).run
    runs.run_signals_update(
        run=Run.objects.get(pk=run.pk), actor=Actor.of(owner),
        signals={"slots": {"summary": "s", "goal": "g", "users": "u"}, "intake_ready": True, "confidence": 0.5, "intent_class": "web_app"},
    )
    return Review.objects.get(run=run)


def test_queue_lists_pending_first_with_counts(admin_client_sup, person, supervisor, plans) -> None:  # noqa: ANN001
    first = _pending(person)
    reviews.review_decide(review_id=first.pk, outcome="reject", reason="no", user=supervisor)
    second = _pending(person)
    page = admin_client_sup.get("/admin/workflows/review/")
    html = page.content.decode()
    assert page.status_code == 200
    assert "1 pending, 1 decided" in html
    assert html.index(f"/admin/workflows/review/{second.pk}/change/") < html.index(f"/admin/workflows/review/{first.pk}/change/")
    assert admin_client_sup.get("/admin/workflows/review/?status__exact=pending&age=1h").status_code == 200


def test_decide_page_requires_a_reason_and_records_the_decision(admin_client_sup, person, plans) -> None:  # noqa: ANN001
    review = _pending(person)
    url = f"/admin/workflows/review/{review.pk}/decide/"
    page = admin_client_sup.get(url)
    assert page.status_code == 200 and "qualify" in page.content.decode()
    missing_reason = admin_client_sup.post(url, {"outcome": "approve", "reason": ""})
    assert missing_reason.status_code == 200 and Review.objects.get(pk=review.pk).is_pending
    done = admin_client_sup.post(url, {"outcome": "override", "option_id": "qualify", "reason": "Good enough"})
    assert done.status_code == 302
    review.refresh_from_db()
    assert review.status == "overridden" and review.reason == "Good enough"
    again = admin_client_sup.post(url, {"outcome": "approve", "reason": "late"})
    assert "already decided" in again.content.decode()


def test_bulk_approve_asks_for_a_reason_first(admin_client_sup, person, plans) -> None:  # noqa: ANN001
    review = _pending(person)
    data = {"action": "approve_selected", "_selected_action": [review.pk]}
    confirm = admin_client_sup.post("/admin/workflows/review/", data)
    assert confirm.status_code == 200 and "Reason (required)" in confirm.content.decode()
    assert Review.objects.get(pk=review.pk).is_pending
    admin_client_sup.post("/admin/workflows/review/", {**data, "apply": "1", "reason": "Looks right"})
    review.refresh_from_db()
    assert review.status == "approved" and review.decided_option_id == "request_clarification"


def test_non_supervisor_staff_cannot_decide(client, django_user_model, person, plans) -> None:  # noqa: ANN001
    review = _pending(person)
    staff = django_user_model.objects.create_user(username="clerk", password="x", is_staff=True)
    client.force_login(staff)
    assert client.get(f"/admin/workflows/review/{review.pk}/decide/").status_code == 403


def test_audit_is_read_only_and_exports(admin_client_sup, person, plans) -> None:  # noqa: ANN001
    review = _pending(person)
    event = AuditEvent.objects.filter(run=review.run).first()
    page = admin_client_sup.get(f"/admin/workflows/auditevent/{event.pk}/change/")
    assert page.status_code == 200 and "Save" not in page.content.decode().split("submit-row")[-1][:200]
    ids = list(AuditEvent.objects.filter(run=review.run).values_list("pk", flat=True))
    exported = admin_client_sup.post("/admin/workflows/auditevent/", {"action": "export_json", "_selected_action": ids})
    assert exported["Content-Type"].startswith("application/json")
    assert len(json.loads(exported.content)["results"]) == len(ids)
    csv_export = admin_client_sup.post("/admin/workflows/auditevent/", {"action": "export_csv", "_selected_action": ids})
    assert csv_export["Content-Type"].startswith("text/csv")
    run_page = admin_client_sup.get(f"/admin/workflows/run/{review.run_id}/change/")
    assert run_page.status_code == 200 and "run_started" in run_page.content.decode()


def test_plan_upload_in_admin_shows_validation_problems(admin_client_sup, plans) -> None:  # noqa: ANN001
    doc = plan_document("permit_form")
    doc["nodes"][0]["type"] = "wormhole"
    response = admin_client_sup.post("/admin/workflows/workflowplan/add/", {"document": json.dumps(doc)})
    assert response.status_code == 200 and "$.nodes[0].type" in response.content.decode()
    doc["nodes"][0]["type"] = "conversation_step"
    doc["workflow_id"] = "permit_form_b"
    created = admin_client_sup.post("/admin/workflows/workflowplan/add/", {"document": json.dumps(doc)})
    assert created.status_code == 302
    assert WorkflowPlan.objects.filter(workflow_id="permit_form_b", version=1).exists()
