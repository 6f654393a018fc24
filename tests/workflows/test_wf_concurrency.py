"""Many supervisors deciding at the same moment: exactly one decision stands.

Runs on whatever database the suite runs on: SQLite (a file, IMMEDIATE transactions)
by default, PostgreSQL when DATABASE_URL points there (.ci/run does both).
"""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections

from config.errors import ApplicationError
from workflows import services
from workflows.demo import load_shipped_plans
from workflows.models import AuditEvent, Review, Run
from workflows.services import Actor

THREADS = 8


def _race(fn, count: int = THREADS) -> list:  # noqa: ANN001
    barrier = threading.Barrier(count)
    results: list = [None] * count

    def worker(i: int) -> None:
        try:
            barrier.wait()
            results[i] = ("ok", fn(i))
        except ApplicationError as error:
            results[i] = (error.code, error.status_code)
        except Exception as error:  # noqa: BLE001 - reported by the assertion below
            results[i] = ("crash", repr(error))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


@pytest.mark.django_db(transaction=True)
def test_concurrent_decisions_leave_exactly_one(person, django_user_model) -> None:  # noqa: ANN001
    from workflows.demo import make_supervisor

    load_shipped_plans()
    supervisors = []
    for i in range(THREADS):
        user = django_user_model.objects.create_user(username=f"sup{i}", password="x")
        make_supervisor(user)
        supervisors.append(django_user_model.objects.get(pk=user.pk))
    run = services.run_start(workflow_id="project_intake", owner=person).run
    services.run_signals_update(
        run_id=run.pk, actor=Actor.of(person),
        signals={"slots": {"summary": "s", "goal": "g", "users": "u"}, "intake_ready": True, "confidence": 0.3, "intent_class": "web_app"},
    )
    review = Review.objects.get(run=run)
    outcomes = ["approve", "reject", "override"]

    def decide(i: int) -> str:
        extra = {"option_id": "qualify"} if outcomes[i % 3] == "override" else {}
        decided = services.review_decide(
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
    run = services.run_start(workflow_id="manager_assistant", owner=person).run
    actor = Actor.of(person)

    def finish(_: int) -> str:
        return services.run_option_choose(run_id=run.pk, option_id="finish", actor=actor).run.current_step

    results = _race(finish, 6)
    assert [r for r in results if r[0] == "ok"] == [("ok", "done")], results
    assert {r[0] for r in results if r[0] != "ok"} <= {"option_not_available", "needs_system_intervention", "concurrent_update"}
    assert AuditEvent.objects.filter(run=run, event_type="decision", chosen_option_id="finish").count() == 1
