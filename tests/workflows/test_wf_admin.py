"""Supervisors in Django admin: the queue, deciding with a reason, read-only audit, plan upload."""

from __future__ import annotations

import json
import re

import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.admin.utils import label_for_field

from billing.services import parking_order_verify
from tests.support.helpers import plan_document
from workflows.admin import REASON_REQUIRED
from workflows.engine.gates import CONFIDENCE_THRESHOLD
from workflows.models import AuditEvent, Review, Run, WebhookDelivery, WebhookEndpoint, WorkflowPlan
from workflows.review_summary import (
    GENERIC_READER,
    CheckWording,
    SubjectReader,
    readable,
    reader_for,
    reasons_shown,
    signal_rows,
)
from workflows.services import reviews, runs
from workflows.services.runs import Actor

SNAKE_CASE = re.compile(r"\b[a-z]+_[a-z_]+\b")
TITLE_CASED = re.compile(r"[a-z] [A-Z][a-z]")  # "Waiting Review": a second word capitalised

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
    by_workflow = admin_client_sup.get("/admin/workflows/review/?workflow=project_intake").content.decode()
    assert "Project intake" in by_workflow and "Needs clarification" in by_workflow  # filter and column in words


def test_decide_page_requires_a_reason_and_records_the_decision(admin_client_sup, person, plans) -> None:  # noqa: ANN001
    review = _pending(person)
    url = f"/admin/workflows/review/{review.pk}/decide/"
    page = admin_client_sup.get(url)
    assert page.status_code == 200 and "qualify" in page.content.decode()
    # what each outcome applies is said by the option's name
    assert "Approve: applies “Needs clarification”" in page.content.decode()
    missing_reason = admin_client_sup.post(url, {"outcome": "approve", "reason": ""})
    assert missing_reason.status_code == 200 and Review.objects.get(pk=review.pk).is_pending
    # the error stands at the top with the focus, linked to its field
    html = missing_reason.content.decode()
    assert 'id="decision-errors" class="errornote" role="alert" tabindex="-1" autofocus' in html
    assert html.index("decision-errors") < html.index("What is under review") and 'href="#id_reason_group"' in html
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



# --- what a review says: its subject in words, its signals against the thresholds -----------


def _section(html: str, test_id: str) -> str:
    """The visible text of one part of the page (tags dropped), to check it reads as words."""
    start = html.index(f'data-testid="{test_id}"')
    end = html.index("</table>", start) if test_id == "review-signals" else html.index('</div>', html.index("</table>", start))
    return re.sub(r"<[^>]+>", " ", html[start:end].split(">", 1)[1])


def _assert_reads_as_words(text: str) -> None:
    assert "{" not in text and "}" not in text and "&quot;" not in text, text
    assert not SNAKE_CASE.findall(text), SNAKE_CASE.findall(text)


def _fee_gate_review(api) -> Review:  # noqa: ANN001
    """A fee mismatch as a person meets it: in a conversation, at the plan's gate (which has no QA step)."""
    started = api.post("/api/v1/conversations", {"workflow_id": "parking_help_desk"}, format="json").json()
    api.post(f"/api/v1/conversations/{started['id']}/messages",
             {"text": "Please verify order SCN-020, I think I was overcharged"}, format="json")
    return Review.objects.get(status="pending", workflow_id="parking_help_desk")


def test_a_fee_mismatch_reads_as_the_order_and_its_two_amounts(admin_client_sup, plans) -> None:  # noqa: ANN001
    review = parking_order_verify(order_no="SCN-020").review
    for url in (f"/admin/workflows/review/{review.pk}/change/", f"/admin/workflows/review/{review.pk}/decide/"):
        html = admin_client_sup.get(url).content.decode()
        summary = _section(html, "review-summary")
        for expected in ("SCN-020", "沪A10020", "Shanghai (310100)", "Pudong lot 1 (SH-PD-001)", "Entry", "2026-03-06 13:00",
                         "Exit", "2026-03-06 16:10", "Recorded on the order", "18.00", "Simulated by the rule", "14.00",
                         "SH-PD-DAY, version 1", "The rule gives 4.00 less than the order records."):
            assert expected in summary, (expected, summary)
        _assert_reads_as_words(summary)
        # The stored JSON is still there for whoever needs it, folded away in a details element.
        raw = html.index("order_total_amount")
        assert html.rfind("<details", 0, raw) > html.rfind("</details>", 0, raw)


def test_an_intake_review_shows_the_intake_document_and_signals_against_the_engines_threshold(admin_client_sup, person, plans) -> None:  # noqa: ANN001
    review = _pending(person)
    html = admin_client_sup.get(f"/admin/workflows/review/{review.pk}/change/").content.decode()
    summary = _section(html, "review-summary")
    assert "Intake document" in summary and "Summary" in summary and "Goal" in summary
    _assert_reads_as_words(summary)
    signals = _section(html, "review-signals")
    assert "Confidence" in signals and "0.50" in signals and f"≥ {CONFIDENCE_THRESHOLD:.2f}" in signals
    assert "QA check" in signals and "passed" in signals  # the intake's QA node ran
    assert "does not meet it" in signals and "web app" in signals
    _assert_reads_as_words(signals)
    assert "intent confidence 0.5 is below 0.8" in html  # the recommendation's reason


def test_a_gate_without_a_qa_step_never_speaks_of_qa(admin_client_sup, api, plans) -> None:  # noqa: ANN001
    review = _fee_gate_review(api)
    assert "QA did not pass" in review.recommendation_reasons  # what the engine says of any qa_pass=False
    for url in (f"/admin/workflows/review/{review.pk}/change/", f"/admin/workflows/review/{review.pk}/decide/"):
        html = admin_client_sup.get(url).content.decode()
        assert not re.search(r"\bQA\b", html)  # as a word: a random CSRF token may hold the letters
        signals = _section(html, "review-signals")
        assert "Amounts agree" in signals and "does not meet it" in signals
        assert "differs from 14.00" in html  # the check's own account stays
        assert "SCN-020" in _section(html, "review-summary")


def test_any_other_subject_reads_as_a_table_of_labels_and_values(admin_client_sup, plans) -> None:  # noqa: ANN001
    review = Review.objects.create(
        workflow_id="permit_form", step_id="check", title="A permit to check",
        subject={"permit_type": "residential", "floor_count": 3, "extra_notes": ["north side", "no basement"],
                 "applicant": {"first_name": "Li", "phone_no": None}, "needs_fire_check": True},
        options=[{"option_id": "ok", "label": "Accept", "eligibility": "eligible"}], recommended_option_id="ok",
    )
    html = admin_client_sup.get(f"/admin/workflows/review/{review.pk}/change/").content.decode()
    summary = _section(html, "review-summary")
    for expected in ("Permit type", "residential", "Floor count", "3", "north side, no basement", "First name: Li", "Needs fire check", "yes"):
        assert expected in summary, (expected, summary)
    _assert_reads_as_words(summary)


def test_signal_rows_use_the_engines_threshold_and_name_qa_only_after_a_qa_step() -> None:
    signals = {"qa_pass": False, "confidence": 0.62, "missing_critical": True, "intent_class": "unknown", "policy_risk": None}
    with_qa = {row.name: row for row in signal_rows(signals, qa_ran=True)}
    assert with_qa["Confidence"].value == "0.62" and with_qa["Confidence"].held_against == f"≥ {CONFIDENCE_THRESHOLD:.2f}"
    assert with_qa["QA check"].value == "did not pass" and with_qa["QA check"].met is False
    assert with_qa["Critical information"].met is False and with_qa["Intent class"].met is False
    assert "Policy risk" not in with_qa  # not reported: no row
    without_qa = [row.name for row in signal_rows(signals, qa_ran=False)]
    assert "Step's check" in without_qa and not any("QA" in name for name in without_qa)
    assert reasons_shown(["the amounts differ", "QA did not pass"], qa_ran=False) == ["the amounts differ"]
    assert reasons_shown(["QA did not pass"], qa_ran=True) == ["QA did not pass"]
    assert readable({"first_name": "Li", "tags": ["a", "b"]}) == "First name: Li; Tags: a, b"


def test_a_subjects_reader_words_its_steps_check_and_its_own_signals() -> None:
    reader = SubjectReader("permit", recognizes=lambda subject: "permit_no" in subject,
                           check=CheckWording("Papers complete", "must be complete", passed="yes", failed="no"),
                           labels={"fire_check": "Fire inspection"}, expected={"fire_check": "done"})
    signals = {"qa_pass": False, "confidence": 0.9, "fire_check": "pending", "floor_count": 3}
    rows = {row.name: row for row in signal_rows(signals, qa_ran=False, reader=reader)}
    assert (rows["Papers complete"].value, rows["Papers complete"].held_against, rows["Papers complete"].met) == ("no", "must be complete", False)
    assert (rows["Fire inspection"].held_against, rows["Fire inspection"].met) == ("done", False)
    assert (rows["Floor count"].held_against, rows["Floor count"].met) == ("—", None)
    assert signal_rows(signals, qa_ran=True, reader=reader)[1].name == "QA check"  # a QA node's check is the QA check
    # A subject no app registered a reader for reads with the generic one: a table of its fields.
    assert reader_for({"permit_type": "residential"}) is GENERIC_READER and GENERIC_READER.summary_html is None


# --- a decision's reason: the product's own words, checked by the server ---------------------


@pytest.mark.parametrize("reason", ["", "   "])
def test_deciding_without_a_reason_is_refused_in_the_products_words(admin_client_sup, person, plans, reason) -> None:  # noqa: ANN001
    review = _pending(person)
    url = f"/admin/workflows/review/{review.pk}/decide/"
    assert "novalidate" in admin_client_sup.get(url).content.decode()  # the server answers, not the browser
    page = admin_client_sup.post(url, {"outcome": "approve", "reason": reason})
    assert page.status_code == 200 and REASON_REQUIRED in page.content.decode()
    assert Review.objects.get(pk=review.pk).is_pending
    no_option = admin_client_sup.post(url, {"outcome": "override", "reason": "because"})
    assert "An override needs the option to override to." in no_option.content.decode()


def test_a_bulk_decision_without_a_reason_stays_on_its_page_with_the_products_words(admin_client_sup, person, plans) -> None:  # noqa: ANN001
    review = _pending(person)
    data = {"action": "approve_selected", "_selected_action": [review.pk], "apply": "1", "reason": "  "}
    page = admin_client_sup.post("/admin/workflows/review/", data)
    assert page.status_code == 200 and REASON_REQUIRED in page.content.decode()
    assert "Needs clarification" in page.content.decode()  # the recommended option by its label
    assert Review.objects.get(pk=review.pk).is_pending


# --- names ----------------------------------------------------------------------------------


def test_every_admin_screen_is_named_in_words(admin_client_sup) -> None:  # noqa: ANN001
    index = admin_client_sup.get("/admin/").content.decode()
    assert "Webhook deliveries" in index and "deliverys" not in index.lower()
    for label in ("workflows", "conversations", "billing"):
        for model in apps.get_app_config(label).get_models():
            if not admin.site.is_registered(model):
                continue
            plural = str(model._meta.verbose_name_plural)
            assert "_" not in plural and not plural.endswith("ys") and plural != model.__name__, plural
            model_admin = admin.site.get_model_admin(model)
            for field in model_admin.list_display:
                column = str(label_for_field(field, model, model_admin))
                assert "_" not in column, (model.__name__, field, column)
            # Choices read as words: "Fee verification", not the value title-cased ("Fee Verification").
            for model_field in model._meta.get_fields():
                for value, label in getattr(model_field, "choices", None) or ():
                    assert "_" not in str(label) and not TITLE_CASED.search(str(label)), (model.__name__, value, label)


def _visible(html: str) -> str:
    """The changelist as read: its text without tags (links' query strings name ids, which is fine)."""
    content = html[html.index('id="content"'):]
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", content))


def test_the_review_kind_filter_reads_in_words(admin_client_sup, plans) -> None:  # noqa: ANN001
    parking_order_verify(order_no="SCN-020")
    text = _visible(admin_client_sup.get("/admin/workflows/review/").content.decode())
    assert "By kind All Workflow gate Fee verification" in text, text
    assert "Fee Verification" not in text
    assert admin_client_sup.get("/admin/workflows/review/?kind__exact=fee_verification").context["cl"].result_count == 1


def test_changelists_name_workflows_statuses_and_events_in_words(admin_client_sup, api, plans) -> None:  # noqa: ANN001
    _fee_gate_review(api)  # a conversation waiting for a review, its run, and its review
    endpoint = WebhookEndpoint.objects.create(owner=Run.objects.get().owner, url="https://hooks.example.com/c", secret="s")
    WebhookDelivery.objects.create(endpoint=endpoint, event="review.pending", event_id="e1", payload={})
    pages = {name: _visible(admin_client_sup.get(f"/admin/{name}/").content.decode())
             for name in ("conversations/conversation", "workflows/run", "workflows/review", "workflows/webhookdelivery")}
    for name, text in pages.items():
        assert not SNAKE_CASE.findall(text), (name, SNAKE_CASE.findall(text))
    assert "By workflow All Parking help desk" in pages["conversations/conversation"]
    assert "Parking help desk Waiting for review" in pages["conversations/conversation"]  # the workflow column, the status
    assert "Parking help desk, version 1" in pages["workflows/run"] and "Waiting for review" in pages["workflows/run"]
    assert "By event All Review pending" in pages["workflows/webhookdelivery"] and "review.pending" not in pages["workflows/webhookdelivery"]
    filtered = admin_client_sup.get("/admin/workflows/webhookdelivery/?event=review.pending")
    assert filtered.context["cl"].result_count == 1
    assert admin_client_sup.get("/admin/conversations/conversation/?workflow=parking_help_desk").context["cl"].result_count == 1


def test_the_status_columns_sort_pending_and_open_first_not_alphabetically(admin_client_sup, person, supervisor, plans) -> None:  # noqa: ANN001
    decided = _pending(person)
    reviews.review_decide(review_id=decided.pk, outcome="approve", reason="fine", user=supervisor)
    pending = _pending(person)
    html = admin_client_sup.get("/admin/workflows/review/?o=1").content.decode()  # the status column, ascending
    assert html.index(f"/admin/workflows/review/{pending.pk}/change/") < html.index(f"/admin/workflows/review/{decided.pk}/change/")


def test_the_conversation_page_reads_as_the_conversation_with_the_raw_state_behind_a_disclosure(admin_client_sup, api, plans) -> None:  # noqa: ANN001
    _fee_gate_review(api)
    conversation = apps.get_model("conversations", "Conversation").objects.get()
    html = admin_client_sup.get(f"/admin/conversations/conversation/{conversation.pk}/change/").content.decode()
    known = html[html.index("<table class='known'>"):html.index("</table>", html.index("<table class='known'>"))]
    assert "Order number" in known and "SCN-020" in known and "order_no" not in known  # by label, as the panel shows it
    raw = html.index("<details class='raw-data'>")
    assert raw < html.index("schema_version") and html.index("<table class='known'>") < raw  # the JSON only behind its summary
