"""Many supervisors deciding at the same moment: exactly one decision stands.

Runs on whatever database the suite runs on: SQLite (a file, IMMEDIATE transactions)
by default, PostgreSQL when DATABASE_URL points there (.ci/run does both).
"""

from __future__ import annotations

import pytest
from django.db import connection, transaction

from config.errors import ApplicationError
from tests.support.helpers import run_together
from workflows.demo import load_shipped_plans
from workflows.models import AuditEvent, Review, Run
from workflows.services import reviews, runs
from workflows.services.runs import Actor

THREADS = 8


def _race(fn, count: int = THREADS) -> list:  # noqa: ANN001
    return [_judged(r) for r in run_together(fn, count, timeout=60)]


def _judged(result: object) -> tuple:
    if isinstance(result, ApplicationError):
        return (result.code, result.status_code)
    if isinstance(result, Exception):
        return ("crash", repr(result))  # reported by the assertions
    return ("ok", result)


@pytest.mark.django_db(transaction=True)
def test_concurrent_decisions_leave_exactly_one(person, django_user_model) -> None:  # noqa: ANN001
    from workflows.demo import make_supervisor

    load_shipped_plans()
    supervisors = []
    for i in range(THREADS):
        user = django_user_model.objects.create_user(username=f"sup{i}", password="x")
        make_supervisor(user)
        supervisors.append(django_user_model.objects.get(pk=user.pk))
    run = runs.run_start(workflow_id="project_intake", owner=person).run
    runs.run_signals_update(
        run=Run.objects.get(pk=run.pk), actor=Actor.of(person),
        signals={"slots": {"summary": "s", "goal": "g", "users": "u"}, "intake_ready": True, "confidence": 0.3, "intent_class": "web_app"},
    )
    review = Review.objects.get(run=run)
    outcomes = ["approve", "reject", "override"]

    def decide(i: int) -> str:
        extra = {"option_id": "qualify"} if outcomes[i % 3] == "override" else {}
        decided = reviews.review_decide(
            review_id=review.pk, outcome=outcomes[i % 3], reason=f"supervisor {i}", user=supervisors[i], **extra
        )
        return decided.status

    results = _race(decide)
    assert not [r for r in results if r[0] == "crash"], results
    winners = [r for r in results if r[0] == "ok"]
    assert len(winners) == 1, results
    assert all(r == ("already_decided", 409) for r in results if r[0] != "ok"), results
    review.refresh_from_db()
    assert review.status == winners[0][1]
    assert AuditEvent.objects.filter(review=review, event_type="review_decided").count() == 1
    run.refresh_from_db()
    assert run.status != Run.Status.WAITING_REVIEW
    decisions = AuditEvent.objects.filter(run=run, step_id="intake_gate", event_type="decision")
    assert decisions.count() == 1
    assert connection.vendor in ("sqlite", "postgresql")


@pytest.mark.django_db(transaction=True)
def test_concurrent_choices_on_one_run_advance_it_once(person) -> None:  # noqa: ANN001
    load_shipped_plans()
    run = runs.run_start(workflow_id="manager_assistant", owner=person).run
    actor = Actor.of(person)

    def finish(_: int) -> str:
        with transaction.atomic():
            locked = runs.run_for_update(run.pk)
            return runs.run_option_choose(run=locked, option_id="finish", actor=actor).run.current_step

    results = _race(finish, 6)
    assert [r for r in results if r[0] == "ok"] == [("ok", "done")], results
    assert {r[0] for r in results if r[0] != "ok"} <= {"option_not_available", "needs_system_intervention", "concurrent_update"}
    assert AuditEvent.objects.filter(run=run, event_type="decision", chosen_option_id="finish").count() == 1
