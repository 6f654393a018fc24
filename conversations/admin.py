"""Admin for conversations (read-only, with the transcript and audit trail) and knowledge."""

from __future__ import annotations

import json

from django.contrib import admin
from django.utils.html import format_html

from workflows.admin import ReadOnlyAdminMixin
from workflows.models import AuditEvent

from .knowledge import admin as knowledge_admin  # noqa: F401  registers the knowledge screens
from .models import Conversation, Message


class MessageInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = Message
    extra = 0
    fields = ["turn_index", "role", "text", "created_at"]
    readonly_fields = fields
    ordering = ["id"]


class ConversationAuditInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = AuditEvent
    fk_name = "conversation"
    extra = 0
    fields = ["created_at", "event_type", "step_id", "chosen_option_id", "selection_mode", "outcome", "actor_label"]
    readonly_fields = fields
    ordering = ["id"]
    show_change_link = True
    verbose_name_plural = "audit trail"


@admin.register(Conversation)
class ConversationAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ["id", "title", "owner", "workflow_id", "status", "turn_count", "updated_at"]
    list_filter = ["status", "workflow_id"]
    list_select_related = ["owner"]
    search_fields = ["title", "owner__username"]
    readonly_fields = ["owner", "workflow_id", "locale", "status", "title", "run_link", "turn_count", "version", "context_pretty", "created_at", "updated_at"]
    fields = readonly_fields
    inlines = [MessageInline, ConversationAuditInline]

    def has_view_permission(self, request, obj=None):  # noqa: ANN001, ANN201
        from workflows.access import is_supervisor

        return is_supervisor(request.user) or super().has_view_permission(request, obj)

    @admin.display(description="run")
    def run_link(self, obj: Conversation) -> str:
        from django.urls import reverse

        return format_html("<a href='{}'>Run {}</a>", reverse("admin:workflows_run_change", args=[obj.run_id]), obj.run_id)

    @admin.display(description="context state")
    def context_pretty(self, obj: Conversation) -> str:
        return format_html("<pre class='json-pretty'>{}</pre>", json.dumps(obj.context, indent=2, ensure_ascii=False))
