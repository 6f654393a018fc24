"""A turn's database work: no query grows with history, and review rows are read only when a run has one."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

pytestmark = pytest.mark.django_db


def _queries(chat_, text: str) -> tuple[list[str], dict]:  # noqa: ANN001
    with CaptureQueriesContext(connection) as captured:
        body = chat_.say(text)
    return [q["sql"] for q in captured.captured_queries], body


def test_a_turn_reads_reviews_only_once_the_run_has_had_one(chat, supervisor_api, django_capture_on_commit_callbacks) -> None:  # noqa: ANN001
    c = chat("parking_help_desk")
    sql, body = _queries(c, "How is parking charged at lot SH-PD-001 on 2026-03-02 at 10:00?")
    assert body["review"] is None and not [q for q in sql if "workflows_review" in q]
    # A matching fee passes the review gate without a supervisor: still no review to read.
    c.say("verify order SCN-019")
    sql, body = _queries(c, "thanks")
    assert body["review"] is None and not [q for q in sql if "workflows_review" in q]
    body = c.say("Order SCN-020 charged 18, is that too much?")
    assert body["status"] == "waiting_review" and body["review"]["status"] == "pending"
    review_id = body["review"]["id"]
    with django_capture_on_commit_callbacks(execute=True):
        supervisor_api.post(f"/api/v1/reviews/{review_id}/decision", {"outcome": "approve", "reason": "rule is right"}, format="json")
    # Later turns still show the decided review, read in the same turn.
    sql, body = _queries(c, "thanks")
    assert body["review"]["id"] == review_id and body["review"]["status"] == "approved"
    assert body["state"]["review"] == body["review"]


def test_the_same_turn_costs_the_same_queries_late_in_a_conversation(chat) -> None:  # noqa: ANN001
    c = chat("parking_help_desk")
    phrases = ["Does plate 沪B88888 have unpaid parking?", "How is parking charged at lot SH-PD-001 on 2026-03-02 at 10:00?",
               "what about on 2026-03-03 at 15:00?", "thanks"]
    for p in phrases:  # the first round builds the process's retrieval index and plan caches
        c.say(p)
    early = [len(_queries(c, p)[0]) for p in phrases]
    for _ in range(5):
        for p in phrases:
            c.say(p)
    late = [len(_queries(c, p)[0]) for p in phrases]
    assert late == early


def test_runs_stored_before_reviews_were_counted_still_show_their_review(chat) -> None:  # noqa: ANN001
    from workflows.models import Run

    c = chat("parking_help_desk")
    review_id = c.say("verify order SCN-020")["review"]["id"]
    run = Run.objects.get(conversation__pk=c.id)
    run.state = {k: v for k, v in run.state.items() if k != "reviews_opened"}
    Run.objects.filter(pk=run.pk).update(state=run.state)
    assert c.get()["review"]["id"] == review_id


def test_a_starting_process_compiles_what_routing_reads_on_every_message() -> None:
    from config.runtime import process_started
    from conversations.engine import _text, route_intent
    from conversations.selectors import conversation_config
    from workflows.selectors import plan_by_id, plans_latest

    _text._any_of.cache_clear()
    process_started.send(sender=None)  # what config/wsgi.py and a Celery worker process send
    compiled = _text._any_of.cache_info().misses
    assert compiled > 0
    for row in plans_latest():  # a first message, in any plan, compiles no joined pattern of its own
        route_intent("does plate 粤B12345 owe anything?", domain_intents=conversation_config(plan_by_id(row.pk)).intents)
    assert _text._any_of.cache_info().misses == compiled
