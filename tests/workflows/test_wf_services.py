"""Run services: walking plans with the database, reviews, consent and the audit trail."""

from __future__ import annotations

import pytest

from config.errors import Conflict
from workflows import selectors
from workflows.models import AuditEvent, ConsentRecord, Review, Run, RunDocument
from workflows.services import plans as plan_services
from workflows.services import reviews, runs
from workflows.services.runs import Actor

GOOD = {"qa_pass": True, "confidence": 0.92, "missing_critical": False, "intent_class": "web_app"}
INTAKE_SLOTS = {"summary": "An online bakery shop", "goal": "Sell cakes online", "users": "local customers", "constraints": "3 months"}


def start_intake(owner, **signals):  # noqa: ANN001, ANN003, ANN201
    return runs.run_start(workflow_id="project_intake", owner=owner, signals=signals)


@pytest.mark.django_db
def test_walk_project_intake_audits_every_snapshot_and_choice(plans, person) -> None:  # noqa: ANN001
    actor = Actor.of(person)
    run = start_intake(person).run
    out = runs.run_signals_update(
        run=Run.objects.get(pk=run.pk), actor=actor, signals={"slots": INTAKE_SLOTS, "intake_ready": True, "confidence": 0.92, "intent_class": "web_app"}
    )
    assert out.run.current_step == "review_plan"
    assert [c.option.option_id for c in out.auto_choices] == ["submit_intake", "run_qa", "qa_passed", "qualify", "present_plan"]
    with pytest.raises(runs.ConsentRequired):
        runs.run_option_choose(run=Run.objects.get(pk=run.pk), option_id="accept_plan", actor=actor)
    done = runs.run_option_choose(run=Run.objects.get(pk=run.pk), option_id="accept_plan", actor=actor, consent=True)
    assert done.run.status == Run.Status.COMPLETED
    consent = ConsentRecord.objects.get(run=run)
    assert consent.option_id == "accept_plan" and consent.given_by == person

    decisions = list(AuditEvent.objects.filter(run=run, event_type="decision").order_by("id"))
    assert [d.chosen_option_id for d in decisions] == [
        "submit_intake", "run_qa", "qa_passed", "qualify", "present_plan", "accept_plan", "complete",
    ]
    assert all(d.options_snapshot for d in decisions)
    assert {d.selection_mode for d in decisions} == {"auto", "user_confirmed"}
    gate = next(d for d in decisions if d.chosen_option_id == "qualify")
    assert gate.payload["gate"]["kind"] == "auto"
    assert gate.signals["confidence"] == 0.92 and gate.signals["qa_pass"] is True
    refused = AuditEvent.objects.get(run=run, event_type="consent_missing")
    assert refused.chosen_option_id == "accept_plan"
    consent_event = AuditEvent.objects.get(run=run, event_type="consent_recorded")
    accepted = AuditEvent.objects.get(run=run, chosen_option_id="accept_plan", event_type="decision")
    assert consent_event.id < accepted.id  # consent recorded before the effects
    assert RunDocument.objects.filter(run=run, key="project_plan").exists()


@pytest.mark.django_db
def test_refused_choice_is_audited_and_changes_nothing(plans, person) -> None:  # noqa: ANN001
    run = start_intake(person).run
    before = Run.objects.get(pk=run.pk)
    with pytest.raises(runs.OptionNotAvailable) as error:
        runs.run_option_choose(run=Run.objects.get(pk=run.pk), option_id="accept_plan", actor=Actor.of(person))
    assert error.value.details["available_options"] == ["ask_more_questions"]
    after = Run.objects.get(pk=run.pk)
    assert (after.state, after.version) == (before.state, before.version)
    event = AuditEvent.objects.get(run=run, event_type="choice_refused")
    assert event.chosen_option_id == "accept_plan" and event.outcome == "refused"
    assert [o["option_id"] for o in event.options_snapshot] == ["submit_intake", "ask_more_questions"]


@pytest.mark.django_db
def test_unclear_gate_opens_one_review_and_supervisor_override_moves_the_run(plans, person, supervisor) -> None:  # noqa: ANN001
    run = start_intake(person).run
    out = runs.run_signals_update(
        run=Run.objects.get(pk=run.pk), actor=Actor.of(person), signals={"slots": INTAKE_SLOTS, "intake_ready": True, "confidence": 0.55, "intent_class": "web_app"}
    )
    assert out.run.status == Run.Status.WAITING_REVIEW and out.run.current_step == "intake_gate"
    review = Review.objects.get(run=run)
    assert review.recommended_option_id == "request_clarification"
    assert review.reject_option_id == "reject_out_of_scope"
    assert review.signals["confidence"] == 0.55
    assert len(review.recommendation_reasons) in (1, 2)
    # Publishing again does not open a second review.
    runs.run_signals_update(run=Run.objects.get(pk=run.pk), actor=Actor.of(person), signals={"note": 1})
    assert Review.objects.filter(run=run).count() == 1
    with pytest.raises(runs.OptionNotAvailable):
        runs.run_option_choose(run=Run.objects.get(pk=run.pk), option_id="qualify", actor=Actor.of(person))

    reviews.review_decide(review_id=review.pk, outcome="override", option_id="qualify", reason="Clear enough for me", user=supervisor)
    run.refresh_from_db()
    assert run.current_step == "review_plan" and run.status == Run.Status.ACTIVE
    review.refresh_from_db()
    assert review.status == Review.Status.OVERRIDDEN and review.decided_by == supervisor
    decision = AuditEvent.objects.get(run=run, chosen_option_id="qualify", event_type="decision")
    assert AuditEvent.objects.filter(review=review, event_type="review_decided").count() == 1
    assert decision.selection_mode == "supervisor_override" and decision.payload["overrode_recommendation"] is True
    with pytest.raises(Conflict) as error:
        reviews.review_decide(review_id=review.pk, outcome="approve", reason="again", user=supervisor)
    assert error.value.code == "already_decided"


@pytest.mark.django_db
def test_a_pending_review_holds_its_gate_when_new_signals_would_decide_it(plans, person, supervisor) -> None:  # noqa: ANN001
    # given a gate waiting for a supervisor because the intake was unclear
    run = start_intake(person).run
    runs.run_signals_update(run=Run.objects.get(pk=run.pk), actor=Actor.of(person),
                            signals={"slots": INTAKE_SLOTS, "intake_ready": True, "confidence": 0.55, "intent_class": "web_app"})
    review = Review.objects.get(run=run, status=Review.Status.PENDING)
    # when the person says more and the signals now read as clear (the gate's rule alone would qualify it)
    out = runs.run_signals_update(run=Run.objects.get(pk=run.pk), actor=Actor.of(person),
                                  signals={"confidence": 0.95, "intent_class": "web_app"})
    # then the run still waits at the gate for that review: no automatic decision was taken instead
    assert out.run.status == Run.Status.WAITING_REVIEW and out.run.current_step == "intake_gate" and not out.auto_choices
    assert out.review == review and Review.objects.get(pk=review.pk).status == Review.Status.PENDING
    assert not AuditEvent.objects.filter(run=run, event_type="decision", chosen_option_id="qualify").exists()
    # and the supervisor's decision is what moves it
    reviews.review_decide(review_id=review.pk, outcome="approve", reason="Fine now", user=supervisor)
    assert Run.objects.get(pk=run.pk).status == Run.Status.ACTIVE


@pytest.mark.django_db
def test_qa_rework_loop_trips_the_breaker_and_offers_escalation(plans, person) -> None:  # noqa: ANN001
    # A plan version whose QA requires a field the conversation never supplies: QA fails every time.
    doc = selectors.plan_latest("project_intake").definition
    doc = {**doc, "nodes": [dict(n, required_fields=["summary", "goal", "budget"]) if n["id"] == "intake_qa" else n for n in doc["nodes"]]}
    plan_services.plan_upload(document=doc)
    run3 = start_intake(person).run
    out = runs.run_signals_update(run=Run.objects.get(pk=run3.pk), actor=Actor.of(person), signals={"slots": {"summary": "x", "goal": "y"}, "intake_ready": True})
    assert out.run.current_step == "intake_qa"
    state = out.state
    assert state.qa_failures["draft_intake"] == 2
    options = selectors.run_decision_point(out.run).options
    assert {o.option_id for o in options} == {"escalate_to_supervisor", "back_to_conversation"}
    tripped = AuditEvent.objects.filter(run=run3, event_type="decision", payload__breaker_tripped=True)
    assert tripped.count() == 1
    assert RunDocument.objects.filter(run=run3, key="intake_document").count() == 3


@pytest.mark.django_db
def test_new_intake_version_makes_the_plan_stale(plans, person) -> None:  # noqa: ANN001
    actor = Actor.of(person)
    run = start_intake(person).run
    runs.run_signals_update(run=Run.objects.get(pk=run.pk), actor=actor, signals={"slots": INTAKE_SLOTS, "intake_ready": True, **GOOD})
    runs.run_document_add(run=Run.objects.get(pk=run.pk), key="intake_document", content={"summary": "changed"}, actor=actor)
    run.refresh_from_db()
    accept = next(o for o in selectors.run_decision_point(run).options if o.option_id == "accept_plan")
    assert accept.eligibility == "blocked" and "stale input" in accept.blockers[0]
    event = AuditEvent.objects.get(run=run, event_type="document_version")
    assert "project_plan" in event.payload["stale_documents"]


@pytest.mark.django_db
def test_plan_upload_is_versioned_and_idempotent(plans) -> None:  # noqa: ANN001
    row = selectors.plan_latest("permit_form")
    again, created = plan_services.plan_upload(document=row.definition)
    assert (again.pk, created) == (row.pk, False)
    changed = {**row.definition, "description": "A new description"}
    new, created = plan_services.plan_upload(document=changed)
    assert created and new.version == row.version + 1
    row.refresh_from_db()
    assert row.definition["description"] != "A new description"  # the old version never changes


@pytest.mark.django_db
def test_audit_rows_are_append_only(plans, person) -> None:  # noqa: ANN001
    from django.db import connection, transaction

    start_intake(person)
    event = AuditEvent.objects.first()
    event.outcome = "tampered"
    with pytest.raises(PermissionError):
        event.save()
    with pytest.raises(PermissionError):
        AuditEvent.objects.filter(pk=event.pk).update(outcome="x")
    with pytest.raises(PermissionError):
        event.delete()
    with pytest.raises(Exception, match="append-only"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE workflows_auditevent SET outcome = 'x' WHERE id = %s", [event.pk])
