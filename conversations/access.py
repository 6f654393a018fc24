"""Who may speak in a conversation: its owner. Supervisors read every conversation but never
post turns or choices in the person's name."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from workflows.access import is_supervisor

from .models import Conversation

MAX_KEY = 2**63  # a key beyond the column's range finds nothing (PostgreSQL would refuse it)


def posts_for_another(user: AbstractBaseUser | AnonymousUser, conversation_id: int) -> bool:
    """Whether a supervisor would post into a conversation someone else owns.

    Anyone else reaches only their own conversations (`access_conversation` answers 404), so
    only supervisors cost a query here, and a conversation that does not exist is left to
    that 404 as well.
    """
    if not is_supervisor(user) or not 0 < int(conversation_id) < MAX_KEY:
        return False
    owner_id = Conversation.objects.filter(pk=conversation_id).values_list("owner_id", flat=True).first()
    return owner_id is not None and owner_id != user.pk
