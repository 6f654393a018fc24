"""Output shapes of the workflow API (input is validated by the services)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from config.serializers import JSONInput

from .models import AuditEvent, Review, WorkflowPlan


class WorkflowPlanSummarySerializer(serializers.ModelSerializer):
    steps = serializers.SerializerMethodField()

    class Meta:
        model = WorkflowPlan
        fields = ["workflow_id", "version", "name", "description", "steps", "created_at"]

    def get_steps(self, obj: WorkflowPlan) -> int:
        return len(obj.definition.get("nodes", []))


class WorkflowPlanSerializer(WorkflowPlanSummarySerializer):
    class Meta(WorkflowPlanSummarySerializer.Meta):
        fields = [*WorkflowPlanSummarySerializer.Meta.fields, "checksum", "definition"]


class ReviewSerializer(serializers.ModelSerializer):
    decided_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    run_id = serializers.IntegerField(read_only=True, allow_null=True)
    conversation_id = serializers.SerializerMethodField()

    class Meta:
        model = Review
        fields = [
            "id", "kind", "status", "workflow_id", "step_id", "title", "run_id", "conversation_id", "subject",
            "options", "signals", "recommended_option_id", "recommendation_reasons", "reject_option_id",
            "decided_option_id", "decided_by", "decided_at", "reason", "created_at",
        ]

    def get_conversation_id(self, obj: Review) -> int | None:
        conversation = getattr(obj.run, "conversation", None) if obj.run_id else None
        return conversation.pk if conversation else obj.subject.get("conversation_id")


class ReviewDecisionInputSerializer(JSONInput):
    outcome = serializers.ChoiceField(choices=Review.Outcome.choices)
    reason = serializers.CharField(allow_blank=False, max_length=2000, trim_whitespace=True)
    option_id = serializers.CharField(required=False, allow_blank=False, max_length=64)


class AuditEventSerializer(serializers.ModelSerializer):
    actor = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)

    class Meta:
        model = AuditEvent
        fields = [
            "id", "event_type", "created_at", "run_id", "conversation_id", "review_id", "step_id",
            "options_snapshot", "chosen_option_id", "selection_mode", "outcome", "signals", "actor",
            "actor_label", "payload",
        ]


AUDIT_CSV_FIELDS = AuditEventSerializer.Meta.fields


def audit_rows(events: Any) -> list[dict[str, Any]]:
    return AuditEventSerializer(events, many=True).data
