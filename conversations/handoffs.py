"""Human handoff: a person asks for a member of staff, a supervisor answers in the conversation, then hands it back.

While a handoff is open the context says so (`ContextState.handed_off`, read with the
conversation, so a turn costs no extra query): the person's messages are stored and shown,
the concierge says once that a member of staff will answer, and nothing else runs (no
engine, no model, no choices). Supervisors see open handoffs first in the admin inbox,
reply there (the reply is a message of the conversation, marked as written by a human) and
hand the conversation back, after which the concierge picks up where it was. Every step is
audited: `handoff_opened`, `handoff_replied`, `handoff_closed`.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from config.errors import ApplicationError, Conflict, NotFound
from workflows.audit import audit_record

from .engine import ContextState
from .engine.catalog import say
from .models import Conversation, Handoff, Message


def handoff_open(conversation: Conversation, *, user, reason: str) -> Handoff:  # noqa: ANN001
    """Open a handoff inside the caller's transaction (the conversation is locked); an open one is kept."""
    handoff = Handoff.objects.filter(conversation=conversation, status=Handoff.Status.OPEN).first()
    if handoff is None:
        handoff = Handoff.objects.create(conversation=conversation, reason=reason[:2000])
        audit_record("handoff_opened", run=conversation.run, conversation=conversation, actor=user,
                     payload={"handoff_id": handoff.pk, "reason": reason[:500]})
    return handoff


def _locked(handoff_id: int) -> tuple[Handoff, Conversation]:
    handoff = Handoff.objects.filter(pk=handoff_id).first()
    if handoff is None:
        raise NotFound(f"No handoff {handoff_id}.", code="handoff_not_found")
    conversation = Conversation.objects.select_for_update().select_related("run").get(pk=handoff.conversation_id)
    handoff = Handoff.objects.select_for_update().get(pk=handoff_id)
    if handoff.status != Handoff.Status.OPEN:
        raise Conflict("This handoff is closed: the concierge has the conversation again.", code="handoff_closed")
    return handoff, conversation


def handoff_reply(*, handoff_id: int, user, text: str) -> Message:  # noqa: ANN001
    """A member of staff answers the person, in the conversation, as a human."""
    text = (text or "").replace("\x00", "").strip()
    if not text:
        raise ApplicationError("A reply needs some text.", code="validation_error", details={"text": ["required"]})
    with transaction.atomic():
        handoff, conversation = _locked(handoff_id)
        message = Message.objects.create(conversation=conversation, role=Message.Role.ASSISTANT, text=text[:4000],
                                         turn_index=conversation.turn_count,
                                         payload={"kind": "human", "by": user.get_username()})
        _touch(conversation)
        audit_record("handoff_replied", run=conversation.run, conversation=conversation, actor=user,
                     payload={"handoff_id": handoff.pk, "message_id": message.pk})
    return message


def handoff_close(*, handoff_id: int, user) -> Handoff:  # noqa: ANN001
    """Hand the conversation back to the concierge, which resumes where it was."""
    with transaction.atomic():
        handoff, conversation = _locked(handoff_id)
        handoff.status, handoff.closed_at, handoff.closed_by = Handoff.Status.CLOSED, timezone.now(), user
        handoff.save(update_fields=["status", "closed_at", "closed_by"])
        state = ContextState.from_dict(conversation.context).evolve(handed_off=False)
        back = say(conversation.locale, "The concierge is back: a member of staff handed this conversation back. How can I help?")
        Message.objects.create(conversation=conversation, role=Message.Role.ASSISTANT, text=back,
                               turn_index=conversation.turn_count, payload={"kind": "handed_back"})
        _touch(conversation, context=state.to_dict())
        audit_record("handoff_closed", run=conversation.run, conversation=conversation, actor=user,
                     payload={"handoff_id": handoff.pk})
    return handoff


def _touch(conversation: Conversation, **values) -> None:  # noqa: ANN003
    """A new version of the conversation, so a turn or a model answer read before this one does not overwrite it."""
    Conversation.objects.filter(pk=conversation.pk).update(version=conversation.version + 1, updated_at=timezone.now(), **values)


def open_handoff_id(conversation: Conversation) -> int | None:
    return Handoff.objects.filter(conversation=conversation, status=Handoff.Status.OPEN).values_list("pk", flat=True).first()
