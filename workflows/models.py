"""Workflow plans, runs, documents, reviews, consent and the append-only audit log."""

from __future__ import annotations

from contextlib import suppress

from django.conf import settings
from django.db import models
from django.utils.functional import cached_property

from config.fields import JSONField, ValuesInsertJSONField

from .engine import RunState


class WorkflowPlan(models.Model):
    """One immutable version of a workflow plan document."""

    workflow_id = models.SlugField(max_length=64)
    version = models.PositiveIntegerField()
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    definition = JSONField()
    checksum = models.CharField(max_length=64)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["workflow_id", "-version"]
        constraints = [models.UniqueConstraint(fields=["workflow_id", "version"], name="plan_version_unique")]

    def __str__(self) -> str:
        return f"{self.workflow_id} v{self.version}"


class Run(models.Model):
    """A walk through one plan version; its state changes only by compare-and-swap on `version`."""

    class Status(models.TextChoices):
        ACTIVE = "active"
        WAITING_REVIEW = "waiting_review", "Waiting for review"
        COMPLETED = "completed"

    plan = models.ForeignKey(WorkflowPlan, on_delete=models.PROTECT, related_name="runs")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="workflow_runs")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.ACTIVE)
    current_step = models.CharField(max_length=64)
    state = JSONField(default=dict)
    version = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["owner", "-created_at"]), models.Index(fields=["status"])]

    def __str__(self) -> str:
        return f"Run {self.pk} of {self.plan}"

    def refresh_from_db(self, *args: object, **kwargs: object) -> None:
        super().refresh_from_db(*args, **kwargs)
        with suppress(AttributeError):
            del self.engine_state  # parsed from the old `state`

    @cached_property
    def engine_state(self) -> RunState:
        """The stored state as the engine reads it, parsed once per instance (a turn reads it
        several times); the services that write `state` set it along."""
        return RunState.from_dict(self.state)


class RunDocument(models.Model):
    """A version of a document a run produced, with the upstream versions it was built on."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="documents")
    key = models.CharField(max_length=64)
    version = models.PositiveIntegerField()
    content = JSONField(default=dict)
    upstream_versions = JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "key", "-version"]
        constraints = [models.UniqueConstraint(fields=["run", "key", "version"], name="run_document_version_unique")]

    def __str__(self) -> str:
        return f"{self.key} v{self.version}"


class Review(models.Model):
    """A decision waiting for a supervisor: a gate the engine could not decide, or a fee mismatch."""

    class Status(models.TextChoices):
        PENDING = "pending"
        APPROVED = "approved"
        REJECTED = "rejected"
        OVERRIDDEN = "overridden"

    class Kind(models.TextChoices):
        GATE = "gate", "Workflow gate"
        FEE_VERIFICATION = "fee_verification", "Fee verification"

    class Outcome(models.TextChoices):
        APPROVE = "approve"
        REJECT = "reject"
        OVERRIDE = "override"

    kind = models.CharField(max_length=32, choices=Kind.choices, default=Kind.GATE)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    run = models.ForeignKey(Run, null=True, blank=True, on_delete=models.PROTECT, related_name="reviews")
    workflow_id = models.SlugField(max_length=64, blank=True)
    step_id = models.CharField(max_length=64, blank=True)
    title = models.CharField(max_length=200)
    subject = JSONField(default=dict, blank=True)
    options = JSONField(default=list)
    signals = JSONField(default=dict)
    recommended_option_id = models.CharField(max_length=64, blank=True)
    recommendation_reasons = JSONField(default=list)
    reject_option_id = models.CharField(max_length=64, blank=True)
    decided_option_id = models.CharField(max_length=64, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="decided_reviews"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        permissions = [("decide_review", "Can decide reviews (approve, reject, override)")]
        indexes = [models.Index(fields=["status", "created_at"])]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "step_id"],
                condition=models.Q(status="pending"),
                name="one_pending_review_per_run_step",
            )
        ]

    def __str__(self) -> str:
        return f"Review {self.pk}: {self.title} ({self.status})"

    @property
    def is_pending(self) -> bool:
        return self.status == self.Status.PENDING


class ConsentRecord(models.Model):
    """Explicit consent for an option, recorded before the option's effects run."""

    run = models.ForeignKey(Run, on_delete=models.PROTECT, related_name="consents")
    step_id = models.CharField(max_length=64)
    option_id = models.CharField(max_length=64)
    given_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT)
    actor_role = models.CharField(max_length=20)
    given_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-given_at"]

    def __str__(self) -> str:
        return f"consent to {self.option_id} by {self.given_by_id}"


class AuditEventQuerySet(models.QuerySet):
    def update(self, **kwargs):  # noqa: ANN003
        raise PermissionError("audit events are append-only")

    def delete(self):
        raise PermissionError("audit events are append-only")


class AuditEvent(models.Model):
    """One append-only audit row: a decision point with its options snapshot, or another event."""

    class SelectionMode(models.TextChoices):
        AUTO = "auto", "Automatic"
        RECOMMENDED = "recommended"
        USER_CONFIRMED = "user_confirmed", "Confirmed by the person"
        SUPERVISOR_OVERRIDE = "supervisor_override", "Supervisor's override"

    event_type = models.CharField(max_length=40)
    # No single-column indexes on run and conversation: the (run, id) and (conversation, id)
    # indexes below serve those lookups, and each index costs every insert (several per turn).
    run = models.ForeignKey(Run, null=True, blank=True, on_delete=models.PROTECT, related_name="audit_events", db_index=False)
    conversation = models.ForeignKey(
        "conversations.Conversation", null=True, blank=True, on_delete=models.PROTECT, related_name="audit_events", db_index=False
    )
    review = models.ForeignKey(Review, null=True, blank=True, on_delete=models.PROTECT, related_name="audit_events")
    step_id = models.CharField(max_length=64, blank=True)
    options_snapshot = ValuesInsertJSONField(default=list, blank=True)
    chosen_option_id = models.CharField(max_length=64, blank=True)
    selection_mode = models.CharField(max_length=24, choices=SelectionMode.choices, blank=True)
    outcome = models.CharField(max_length=40, blank=True)
    signals = ValuesInsertJSONField(default=dict, blank=True)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT)
    actor_label = models.CharField(max_length=120, blank=True)
    payload = ValuesInsertJSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    objects = AuditEventQuerySet.as_manager()

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["run", "id"]), models.Index(fields=["conversation", "id"])]

    def __str__(self) -> str:
        return f"{self.event_type} {self.chosen_option_id or ''}".strip()

    def save(self, *args, **kwargs):  # noqa: ANN002, ANN003
        if self.pk is not None:
            raise PermissionError("audit events are append-only")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):  # noqa: ANN002, ANN003
        raise PermissionError("audit events are append-only")


class WebhookEndpoint(models.Model):
    """An integrator's URL that receives signed events about their conversations."""

    EVENTS = ("review.pending", "review.decided", "conversation.completed", "action.executed")

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="webhook_endpoints")
    url = models.URLField(max_length=500)
    secret = models.CharField(max_length=128)
    events = JSONField(default=list, help_text="event names; empty means all")
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.url

    def wants(self, event: str) -> bool:
        return self.active and (not self.events or event in self.events)


class WebhookDelivery(models.Model):
    """One event sent (or being sent) to one endpoint, with every attempt's outcome."""

    class Status(models.TextChoices):
        PENDING = "pending"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=40)
    event_id = models.CharField(max_length=64)
    payload = JSONField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    last_status_code = models.PositiveIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "webhook deliveries"
        ordering = ["-created_at"]
        constraints = [models.UniqueConstraint(fields=["endpoint", "event_id"], name="one_delivery_per_event_and_endpoint")]
        indexes = [models.Index(fields=["status", "next_attempt_at"])]

    def __str__(self) -> str:
        return f"{self.event} → {self.endpoint_id} ({self.status})"
