"""The turn's batched writes (config.writes) and compiled hot reads (config.queries), on the real database."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from config.errors import Conflict
from config.queries import _NOT_COMPILABLE, compiled_rows
from config.writes import WriteBatch
from conversations.models import Conversation, Message
from workflows.models import AuditEvent, Run

pytestmark = pytest.mark.django_db


class Stale(Exception):
    pass


def _conversation(chat) -> Conversation:  # noqa: ANN001
    return Conversation.objects.select_related("run").get(pk=chat("parking_help_desk").id)


def test_a_batch_sends_updates_and_inserts_and_gives_keys_in_order(chat) -> None:  # noqa: ANN001
    conversation = _conversation(chat)
    run = conversation.run
    batch = WriteBatch()
    batch.update(Run, run.pk, version=run.version, values={"current_step": "somewhere", "version": run.version + 1}, stale=Stale())
    batch.update(Conversation, conversation.pk, version=conversation.version,
                 values={"title": "批量 title", "version": conversation.version + 1}, stale=Stale())
    messages = [Message(conversation=conversation, role="user", text=f"m{i} 你好", turn_index=90 + i, payload={"i": i, "zh": "好"})
                for i in range(3)]
    events = [AuditEvent(event_type="test", run=run, conversation=conversation, payload={"n": i}) for i in range(4)]
    batch.insert(messages)
    batch.insert(events)
    with CaptureQueriesContext(connection) as captured:
        batch.flush()
    assert len(captured) == (1 if connection.vendor == "postgresql" else 4)
    assert not batch
    for obj in messages + events:
        assert obj.pk is not None and not obj._state.adding
    stored = list(Message.objects.filter(turn_index__gte=90).order_by("pk"))
    assert [m.pk for m in stored] == [m.pk for m in messages]
    assert [m.payload for m in stored] == [{"i": i, "zh": "好"} for i in range(3)]
    assert [e.payload["n"] for e in AuditEvent.objects.filter(event_type="test").order_by("pk")] == [0, 1, 2, 3]
    assert Run.objects.get(pk=run.pk).current_step == "somewhere"
    assert Conversation.objects.get(pk=conversation.pk).title == "批量 title"


def test_a_stale_version_raises_and_the_transaction_keeps_nothing(chat) -> None:  # noqa: ANN001
    conversation = _conversation(chat)
    before = (Message.objects.count(), AuditEvent.objects.count(), conversation.run.version)
    batch = WriteBatch()
    batch.update(Run, conversation.run.pk, version=conversation.run.version, values={"version": conversation.run.version + 1}, stale=Stale())
    batch.update(Conversation, conversation.pk, version=conversation.version + 7, values={"title": "lost"},
                 stale=Conflict("changed", code="concurrent_update"))
    batch.insert([Message(conversation=conversation, role="user", text="lost", turn_index=99)])
    batch.insert([AuditEvent(event_type="lost", run=conversation.run)])
    with pytest.raises(Conflict), transaction.atomic():
        batch.flush()
    assert (Message.objects.count(), AuditEvent.objects.count(), Run.objects.get(pk=conversation.run.pk).version) == before
    assert Conversation.objects.get(pk=conversation.pk).title != "lost"


def test_an_empty_batch_sends_nothing() -> None:
    with CaptureQueriesContext(connection) as captured:
        WriteBatch().flush()
    assert len(captured) == 0


def _with_run(pk: int):  # noqa: ANN202
    return Conversation.objects.select_related("run").order_by().filter(pk=pk)


def test_compiled_rows_match_the_orm_and_reuse_their_sql(chat) -> None:  # noqa: ANN001
    first, second = _conversation(chat), _conversation(chat)
    compiled = []
    for conversation in (first, second):
        [row] = compiled_rows("test: conversation with run", _with_run, conversation.pk)
        assert row.pk == conversation.pk and row.context == conversation.context and row.created_at == conversation.created_at
        with CaptureQueriesContext(connection) as captured:
            assert row.run.state == conversation.run.state and row.run.pk == conversation.run_id
        assert len(captured) == 0  # the run came with the conversation
        assert not row._state.adding and row._state.db == "default"
        compiled.append(connection._compiled_querysets["test: conversation with run"])
    assert compiled[0] is compiled[1]  # compiled once, run twice
    assert compiled_rows("test: conversation with run", _with_run, 2**40) == []


def test_arguments_compiled_rows_cannot_place_are_left_to_the_orm(chat) -> None:  # noqa: ANN001
    from datetime import UTC, datetime

    conversation = _conversation(chat)
    transformed = lambda pk: _with_run(pk + 1)  # noqa: E731 - the argument does not reach the SQL as given
    assert [c.pk for c in compiled_rows("test: transformed", transformed, conversation.pk - 1)] == [conversation.pk]
    assert [c.pk for c in compiled_rows("test: float", _with_run, float(conversation.pk))] == [conversation.pk]
    # A datetime reaches PostgreSQL as given (compiled) and SQLite as text (left to the ORM):
    # either way the rows are the ORM's, and a naive datetime is never compiled.
    since = lambda at: Conversation.objects.filter(created_at__lte=at).order_by("pk")  # noqa: E731
    later = datetime(2999, 1, 1, tzinfo=UTC)
    assert [c.pk for c in compiled_rows("test: since", since, later)] == [c.pk for c in since(later)]
    assert compiled_rows("test: since", since, datetime(2000, 1, 1, tzinfo=UTC)) == []
    compiled = connection._compiled_querysets["test: since"] is not _NOT_COMPILABLE
    assert compiled == (connection.vendor == "postgresql")
    # A probe out of an integer column's range, or an argument also used altered (a LIKE
    # pattern), is not compiled either: the ORM answers.
    by_turn = lambda n: Message.objects.filter(conversation=conversation, turn_index=n)  # noqa: E731
    assert [m.pk for m in compiled_rows("test: by turn", by_turn, 0)] == [m.pk for m in by_turn(0)] != []
    titled = lambda t: Conversation.objects.filter(title__icontains=t).order_by("pk")  # noqa: E731
    word = conversation.title.split()[0].lower()
    assert [c.pk for c in compiled_rows("test: titled", titled, word)] == [c.pk for c in titled(word)] != []
    assert connection._compiled_querysets["test: titled"] is _NOT_COMPILABLE
    with pytest.warns(RuntimeWarning):  # the ORM's own warning: the naive value took the ORM's path
        naive = datetime(2999, 1, 1)  # noqa: DTZ001 - on purpose
        assert len(compiled_rows("test: since", since, naive)) == len(list(since(later)))


def test_conversation_ids_beyond_the_key_range_are_refused(api, person, demo) -> None:  # noqa: ANN001
    from config.errors import NotFound
    from conversations import services

    for cid in (2**63, 10**30):
        # The API refuses an id no column can hold (issue 13: a 400, not a lookup)...
        response = api.post(f"/api/v1/conversations/{cid}/messages", {"text": "hi"}, format="json")
        assert response.status_code == 400 and set(response.json()["error"]["details"]) == {"conversation_id"}
        assert api.get(f"/api/v1/conversations/{cid}").status_code == 400
        # ...and the compiled lookup underneath still finds nothing rather than failing.
        with pytest.raises(NotFound):
            services.access_conversation(person, cid)


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
