"""Admin for conversations (read-only, with the transcript and audit trail) and knowledge."""

from __future__ import annotations

import json

from django import forms
from django.contrib import admin
from django.utils.html import format_html, format_html_join

from workflows.admin import ReadOnlyAdminMixin
from workflows.models import AuditEvent

from .handoffs import handoff_close, handoff_reply
from .knowledge import admin as knowledge_admin  # noqa: F401  registers the knowledge screens
from .models import Conversation, Handoff, Message


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


class HandoffForm(forms.ModelForm):
    """The supervisor's answer to the person, and whether to hand the conversation back."""

    reply = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 4, "cols": 80}),
                            help_text="Posted into the conversation as a message from a member of staff.")
    hand_back = forms.BooleanField(required=False, label="Hand back to the concierge",
                                   help_text="The concierge resumes where it was; the person is told.")

    class Meta:
        model = Handoff
        fields: list[str] = []

    def clean(self):  # noqa: ANN201
        data = super().clean()
        if self.instance.status != Handoff.Status.OPEN:
            raise forms.ValidationError("This handoff is closed: the concierge has the conversation again.")
        if not (data.get("reply") or "").strip() and not data.get("hand_back"):
            raise forms.ValidationError("Write a reply to the person, or hand the conversation back (or both).")
        return data


@admin.register(Handoff)
class HandoffAdmin(admin.ModelAdmin):
    """The handoff inbox: conversations handed to a person, open ones first, newest first."""

    form = HandoffForm
    list_display = ["id", "status", "opened_at", "conversation_link", "owner", "workflow", "reason_short"]
    list_filter = ["status", "conversation__workflow_id"]
    list_select_related = ["conversation__owner"]
    ordering = ["status", "-opened_at"]
    readonly_fields = ["status", "opened_at", "conversation_link", "owner", "reason", "transcript", "closed_at", "closed_by"]
    fields = [*readonly_fields, "reply", "hand_back"]

    def has_add_permission(self, request, obj=None):  # noqa: ANN001, ANN201
        return False

    def has_delete_permission(self, request, obj=None):  # noqa: ANN001, ANN201
        return False

    @admin.display(description="conversation")
    def conversation_link(self, obj: Handoff) -> str:
        from django.urls import reverse

        url = reverse("admin:conversations_conversation_change", args=[obj.conversation_id])
        return format_html("<a href='{}'>#{} {}</a>", url, obj.conversation_id, obj.conversation.title or obj.conversation.workflow_id)

    @admin.display(description="person")
    def owner(self, obj: Handoff) -> str:
        return obj.conversation.owner.get_username()

    @admin.display(description="workflow")
    def workflow(self, obj: Handoff) -> str:
        return obj.conversation.workflow_id

    @admin.display(description="asked")
    def reason_short(self, obj: Handoff) -> str:
        return obj.reason[:80]

    @admin.display(description="transcript")
    def transcript(self, obj: Handoff) -> str:
        rows = format_html_join("", "<li><strong>{}</strong>: {}</li>",
                                ((_speaker(m), m.text) for m in obj.conversation.messages.order_by("id")))
        return format_html("<ol class='handoff-transcript'>{}</ol>", rows)

    def save_model(self, request, obj, form, change) -> None:  # noqa: ANN001
        if form.cleaned_data.get("reply", "").strip():
            handoff_reply(handoff_id=obj.pk, user=request.user, text=form.cleaned_data["reply"])
        if form.cleaned_data.get("hand_back"):
            handoff_close(handoff_id=obj.pk, user=request.user)


def _speaker(message: Message) -> str:
    if message.role == Message.Role.USER:
        return "Person"
    return f"Staff ({message.payload.get('by')})" if message.payload.get("kind") == "human" else "Concierge"
