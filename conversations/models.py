"""Conversations and their messages; the context state lives here as JSON."""

from __future__ import annotations

from contextlib import suppress
from datetime import datetime

from django.conf import settings
from django.db import models
from django.utils.functional import cached_property

from config.fields import JSONField, ValuesInsertJSONField

from .engine.state import ContextState


class Conversation(models.Model):
    """A person's conversation on a workflow; one run of that workflow's plan drives it."""

    class Status(models.TextChoices):
        ACTIVE = "active"
        WAITING_REVIEW = "waiting_review", "Waiting for review"
        COMPLETED = "completed"
        ABORTED = "aborted"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="conversations")
    run = models.OneToOneField("workflows.Run", on_delete=models.PROTECT, related_name="conversation")
    workflow_id = models.SlugField(max_length=64)
    locale = models.CharField(max_length=16, default="en")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.ACTIVE)
    title = models.CharField(max_length=200, blank=True)
    context = JSONField(default=dict)
    version = models.PositiveIntegerField(default=0)
    turn_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]
        indexes = [models.Index(fields=["owner", "-updated_at"])]

    def __str__(self) -> str:
        return self.title or f"Conversation {self.pk}"

    def refresh_from_db(self, *args: object, **kwargs: object) -> None:
        super().refresh_from_db(*args, **kwargs)
        with suppress(AttributeError):
            del self.context_state  # parsed from the old `context`

    @cached_property
    def context_state(self) -> ContextState:
        """The stored context as the engine reads it, parsed once per instance; the services
        that write `context` set it along."""
        return ContextState.from_dict(self.context)


class Message(models.Model):
    """One message of a transcript."""

    class Role(models.TextChoices):
        USER = "user"
        ASSISTANT = "assistant"
        SYSTEM = "system"

    # Indexed by (conversation, turn_index) below, which serves lookups by conversation too.
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="messages", db_index=False)
    role = models.CharField(max_length=16, choices=Role.choices)
    text = models.TextField()
    turn_index = models.PositiveIntegerField()
    payload = ValuesInsertJSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["conversation", "id"]
        indexes = [
            models.Index(fields=["conversation", "turn_index"]),
            # The sweep of overdue queued turns reads only the few rows still waiting, not the transcript.
            models.Index(fields=["created_at"], condition=models.Q(payload__kind="pending"), name="message_pending_since"),
        ]

    def __str__(self) -> str:
        return f"{self.role}: {self.text[:40]}"

    @property
    def waiting_since(self) -> datetime:
        """When a queued turn was handed to the workers: when it was sent, or its last "Try again"."""
        queued_at = (self.payload or {}).get("queued_at")
        return datetime.fromisoformat(queued_at) if queued_at else self.created_at


class Handoff(models.Model):
    """A conversation handed to a member of staff: the concierge stays quiet until it is handed back."""

    class Status(models.TextChoices):
        OPEN = "open"
        CLOSED = "closed"

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="handoffs")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    reason = models.TextField(blank=True, help_text="What the person wrote when they asked for a human.")
    opened_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    closed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        # Newest first; the admin inbox puts open ones before closed ones itself (HandoffAdmin):
        # sorting by the status string would put "closed" before "open".
        ordering = ["-opened_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["conversation"], condition=models.Q(status="open"),
                                               name="one_open_handoff_per_conversation")]

    def __str__(self) -> str:
        return f"Handoff {self.pk} of conversation {self.conversation_id} ({self.status})"


class IdempotencyRecord(models.Model):
    """The first response to a post with an Idempotency-Key; a retry gets it back unchanged."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    key = models.CharField(max_length=200)
    endpoint = models.CharField(max_length=200)
    request_hash = models.CharField(max_length=64)
    status_code = models.PositiveSmallIntegerField()  # 0 while the first request is still working
    response = JSONField(null=True)
    # False while a turn waits for the model: `response` is then the provisional (rules) one.
    completed = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "key", "endpoint"], name="idempotency_unique")]

    def __str__(self) -> str:
        return f"{self.endpoint} {self.key}"


from .knowledge.models import *  # noqa: E402,F401,F403  (registers the knowledge models)
