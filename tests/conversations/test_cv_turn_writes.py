"""A turn's writes: compare-and-set on the run and the conversation, all or nothing."""

from __future__ import annotations

import pytest
from django.db import transaction

from config.errors import Conflict
from conversations.models import Conversation, Message
from workflows.models import AuditEvent, Run

pytestmark = pytest.mark.django_db


def test_a_stale_conversation_version_rolls_back_everything_the_turn_wrote(chat) -> None:  # noqa: ANN001
    from conversations.services import _save_conversation
    from workflows.services.runs import Actor, StaleRunState, run_signals_update

    c = chat("parking_help_desk")
    conversation = Conversation.objects.select_related("run").get(pk=c.id)
    before = (Message.objects.count(), AuditEvent.objects.count(), Run.objects.get(pk=conversation.run_id).version)
    with pytest.raises(Conflict), transaction.atomic():
        run = run_signals_update(run=conversation.run, signals={"intent": None}, actor=Actor.of(conversation.owner))
        Message.objects.create(conversation=conversation, role="user", text="lost", turn_index=99)
        Conversation.objects.filter(pk=conversation.pk).update(version=conversation.version + 7)  # someone else moved it
        _save_conversation(conversation, conversation.context_state, run.run)
    assert (Message.objects.count(), AuditEvent.objects.count(), Run.objects.get(pk=conversation.run_id).version) == before
    # and a run read at an old version is refused the same way
    stale_run = Run.objects.get(pk=conversation.run_id)
    Run.objects.filter(pk=stale_run.pk).update(version=stale_run.version + 1)
    with pytest.raises(StaleRunState), transaction.atomic():
        run_signals_update(run=stale_run, signals={"intent": None}, actor=Actor.of(conversation.owner))


def test_conversation_ids_beyond_the_key_range_are_refused(api, person, demo) -> None:  # noqa: ANN001
    from config.errors import NotFound
    from conversations import selectors

    for cid in (2**63, 10**30):
        # The API refuses an id no column can hold (a 400, not a lookup)...
        response = api.post(f"/api/v1/conversations/{cid}/messages", {"text": "hi"}, format="json")
        assert response.status_code == 400 and set(response.json()["error"]["details"]) == {"conversation_id"}
        assert api.get(f"/api/v1/conversations/{cid}").status_code == 400
        # ...and the lookup underneath finds nothing rather than failing.
        with pytest.raises(NotFound):
            selectors.access_conversation(person, cid)


def test_a_tool_refusal_inside_a_turn_is_a_reply_and_keeps_the_turn(chat) -> None:  # noqa: ANN001
    """Verifying an order still in progress is refused by the tool; the turn itself commits."""
    from datetime import UTC, datetime

    from billing.models import FeeVerification, ParkingOrder

    ParkingOrder.objects.create(order_no="LIVE-001", plate_no="沪C12345", city_code="310100", lot_code="SH-PD-001",
                                entry_time=datetime(2026, 3, 2, 1, 0, tzinfo=UTC), exit_time=None)
    c = chat("parking_help_desk")
    body = c.say("verify order LIVE-001")
    assert body["execution_path"]["tools_called"] == ["billing.fee_verify"]
    assert not FeeVerification.objects.filter(order__order_no="LIVE-001").exists()
    assert body["turn_count"] == 1 and Message.objects.filter(conversation_id=c.id, turn_index=1).count() == 2
    assert c.say("How is parking charged at lot SH-PD-001 on 2026-03-02 at 10:00?")["turn_count"] == 2


def test_a_turn_writes_its_audit_rows_in_one_insert_in_order(chat) -> None:  # noqa: ANN001
    """The run's decisions, the fee verification and the turn itself: one INSERT, in the order they happened."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    c = chat("parking_help_desk")
    last = AuditEvent.objects.order_by("-id").values_list("id", flat=True).first()
    with CaptureQueriesContext(connection) as captured:
        c.say("verify order SCN-019")
    inserts = [q["sql"] for q in captured if q["sql"].startswith('INSERT INTO "workflows_auditevent"')]
    assert len(inserts) == 1
    events = list(AuditEvent.objects.filter(id__gt=last).order_by("id").values_list("event_type", flat=True))
    assert events[0] == "fee_verified" and "decision" in events and events[-1] == "turn"


def test_audit_rows_written_together_are_all_or_nothing() -> None:
    from workflows.audit import audit_record, audit_together

    before = AuditEvent.objects.count()
    with pytest.raises(RuntimeError), transaction.atomic(), audit_together():
        audit_record("probe", actor_label="test")
        with audit_together():  # an inner block joins the outer one
            audit_record("probe", actor_label="test")
        assert AuditEvent.objects.count() == before  # nothing inserted before the block ends
        raise RuntimeError("the work failed")
    assert AuditEvent.objects.count() == before
    with transaction.atomic(), audit_together():
        audit_record("probe", actor_label="test")
        audit_record("probe", actor_label="test")
    assert AuditEvent.objects.count() == before + 2
