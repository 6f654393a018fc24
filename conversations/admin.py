"""Admin for conversations (read-only, with the transcript and audit trail) and knowledge."""

from __future__ import annotations

import json

from django import forms
from django.contrib import admin, messages
from django.db.models import Case, IntegerField, OuterRef, Subquery, Value, When
from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from workflows.admin import ReadOnlyAdminMixin, WorkflowFilter
from workflows.models import AuditEvent
from workflows.selectors import plan_by_id

from . import documents
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
    list_display = ["id", "title", "owner", "workflow", "status", "turn_count", "updated_at"]
    list_filter = ["status", WorkflowFilter]
    list_select_related = ["owner", "run__plan"]
    search_fields = ["title", "owner__username"]
    readonly_fields = ["owner", "workflow", "locale", "status", "title", "run_link", "turn_count", "version", "known", "documents_list",
                       "context_pretty", "created_at", "updated_at"]
    fields = readonly_fields
    inlines = [MessageInline, ConversationAuditInline]

    def has_view_permission(self, request, obj=None):  # noqa: ANN001, ANN201
        from workflows.access import is_supervisor

        return is_supervisor(request.user) or super().has_view_permission(request, obj)

    @admin.display(description="workflow", ordering="workflow_id")
    def workflow(self, obj: Conversation) -> str:
        return obj.run.plan.name

    @admin.display(description="run")
    def run_link(self, obj: Conversation) -> str:
        return format_html("<a href='{}'>Run {}</a>", reverse("admin:workflows_run_change", args=[obj.run_id]), obj.run_id)

    @admin.display(description="what the concierge knows")
    def known(self, obj: Conversation) -> str:
        """The slots and answers by their labels and values as the person's side panel shows them (in English)."""
        from . import presentation, selectors

        config = selectors.conversation_config(plan_by_id(obj.run.plan_id))
        rows = presentation.slot_rows(selectors.conversation_state(obj, lang="en"), config, "en")
        if not rows:
            return "—"
        return format_html("<table class='known'><tbody>{}</tbody></table>", format_html_join(
            "", "<tr><th scope='row'>{}</th><td>{}</td><td class='help'>{}</td></tr>",
            ((r["label"], r["value"], r["source"]) for r in rows)))

    @admin.display(description="documents")
    def documents_list(self, obj: Conversation) -> str:
        shown = documents.available(obj)
        if not shown:
            return "—"
        return format_html_join(", ", "<a href='{}'>{} (v{})</a>", (
            (reverse("document_page", args=[obj.pk, d["key"]]), d["label"], d["version"]) for d in shown))

    @admin.display(description="raw state")
    def context_pretty(self, obj: Conversation) -> str:
        # behind a disclosure: the engine's own record, for when the readable parts above are not enough
        return format_html("<details class='raw-data'><summary>The context engine's state (JSON)</summary>"
                           "<pre class='json-pretty'>{}</pre></details>", json.dumps(obj.context, indent=2, ensure_ascii=False))


class HandoffWorkflowFilter(WorkflowFilter):
    lookup = "conversation__workflow_id"


# The inbox's order of statuses: open ones first (the status column sorts by it too, not by the word).
OPEN_FIRST = Case(When(status=Handoff.Status.OPEN, then=Value(0)), default=Value(1), output_field=IntegerField())


class HandoffForm(forms.ModelForm):
    """The supervisor's answer to the person, and whether to hand the conversation back."""

    reply = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 4, "cols": 80}),
                            help_text="Posted into the conversation as a message from a member of staff.")
    # Set by the "Hand back to the concierge" button rather than shown as a box to tick.
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
    change_form_template = "admin/conversations/handoff/change_form.html"
    list_display = ["status_badge", "opened", "who_and_where", "what_they_said", "answer_link"]
    list_display_links = ["opened"]
    list_filter = ["status", HandoffWorkflowFilter]
    list_select_related = ["conversation__owner"]
    search_fields = ["reason", "conversation__title", "conversation__owner__username"]
    readonly_fields = ["status_badge", "opened_at", "conversation_link", "owner", "request", "transcript", "closed_at", "closed_by"]

    def get_ordering(self, request):  # noqa: ANN001, ANN201
        # Open first whatever the statuses are called ("closed" sorts before "open"), newest first.
        return [OPEN_FIRST.asc(), "-opened_at", "-id"]

    def get_queryset(self, request):  # noqa: ANN001, ANN201
        last_from_person = Message.objects.filter(conversation=OuterRef("conversation"), role=Message.Role.USER).order_by("-id")
        return super().get_queryset(request).annotate(last_person_text=Subquery(last_from_person.values("text")[:1]))

    def get_fields(self, request, obj=None):  # noqa: ANN001, ANN201
        # An open handoff ends with the reply box; a closed one is history, with who closed it and when.
        shown = ["status_badge", "opened_at", "conversation_link", "owner", "request", "transcript"]
        if obj is not None and obj.status == Handoff.Status.OPEN:
            return [*shown, "reply"]
        return [*shown, "closed_at", "closed_by"]

    def has_add_permission(self, request, obj=None):  # noqa: ANN001, ANN201
        return False

    def has_delete_permission(self, request, obj=None):  # noqa: ANN001, ANN201
        return False

    def changelist_view(self, request, extra_context=None):  # noqa: ANN001, ANN201
        waiting = Handoff.objects.filter(status=Handoff.Status.OPEN).count()
        extra_context = {**(extra_context or {}), "title": f"Handoff inbox — {waiting} open"}
        return super().changelist_view(request, extra_context)

    def change_view(self, request, object_id, form_url="", extra_context=None):  # noqa: ANN001, ANN201
        handoff = self.get_object(request, object_id)
        if handoff is not None:  # the heading says whose conversation it is; no second heading under it
            title = f"Handoff {handoff.pk}: {handoff.conversation.owner.get_username()} in “{handoff.conversation}”"
            extra_context = {**(extra_context or {}), "title": title, "subtitle": ""}
        return super().change_view(request, object_id, form_url, extra_context)

    @admin.display(description="status", ordering=OPEN_FIRST)
    def status_badge(self, obj: Handoff) -> str:
        return format_html("<strong class='status-{}'>{}</strong>", obj.status, obj.get_status_display())

    @admin.display(description="conversation")
    def conversation_link(self, obj: Handoff) -> str:
        admin_url = reverse("admin:conversations_conversation_change", args=[obj.conversation_id])
        chat_url = reverse("chat", args=[obj.conversation_id])
        return format_html("<a href='{}'>#{} {}</a> <span class='quiet'>(<a href='{}'>chat page</a>)</span>",
                           admin_url, obj.conversation_id, obj.conversation.title or obj.conversation.workflow_id, chat_url)

    @admin.display(description="person, conversation", ordering="conversation__owner__username")
    def who_and_where(self, obj: Handoff) -> str:
        return format_html("{}<br><span class='quiet'>{}</span>", obj.conversation.owner.get_username(), obj.conversation)

    @admin.display(description="their request")
    def request(self, obj: Handoff) -> str:
        return obj.reason or "—"

    @admin.display(description="person")
    def owner(self, obj: Handoff) -> str:
        return obj.conversation.owner.get_username()

    @admin.display(description="opened", ordering="opened_at")
    def opened(self, obj: Handoff) -> str:
        return _local_minute(obj.opened_at)

    @admin.display(description="what they said")
    def what_they_said(self, obj: Handoff) -> str:
        # Their request, and their latest message when they wrote more since (what they are waiting on).
        latest = getattr(obj, "last_person_text", "") or ""
        if not latest or latest == obj.reason:
            return _shortened(obj.reason)
        return format_html("{}<br><span class='quiet'>Latest: {}</span>", _shortened(obj.reason), _shortened(latest))

    @admin.display(description="")
    def answer_link(self, obj: Handoff) -> str:
        label = "Answer" if obj.status == Handoff.Status.OPEN else "Read"
        return format_html("<a class='button' href='{}'>{}</a>", reverse("admin:conversations_handoff_change", args=[obj.pk]), label)

    @admin.display(description="transcript")
    def transcript(self, obj: Handoff) -> str:
        rows = format_html_join("", "<li><strong class='{}'>{}</strong> <span class='quiet'>{}</span><br><span class='msg-text'>{}</span></li>",
                                ((*_speaker(m), _local_minute(m.created_at), m.text) for m in obj.conversation.messages.order_by("id")))
        return format_html("<ol class='handoff-transcript'>{}</ol>", rows)

    def save_model(self, request, obj, form, change) -> None:  # noqa: ANN001
        # Through the handoff services: they lock the conversation, write the message and audit it.
        if form.cleaned_data.get("reply", "").strip():
            handoff_reply(handoff_id=obj.pk, user=request.user, text=form.cleaned_data["reply"])
        if form.cleaned_data.get("hand_back"):
            handoff_close(handoff_id=obj.pk, user=request.user)

    def construct_change_message(self, request, form, formsets, add=False):  # noqa: ANN001, ANN201
        return [{"changed": {"fields": [name for name in ("reply", "hand_back") if form.cleaned_data.get(name)]}}]

    def response_change(self, request, obj):  # noqa: ANN001, ANN201
        # What happened in words, then back where the supervisor works next: the inbox once handed back.
        obj.refresh_from_db()
        if obj.status == Handoff.Status.CLOSED:
            self.message_user(request, f"Conversation #{obj.conversation_id} handed back to the concierge; {self.owner(obj)} was told.", messages.SUCCESS)
            return HttpResponseRedirect(reverse("admin:conversations_handoff_changelist"))
        self.message_user(request, f"Reply sent to {self.owner(obj)}.", messages.SUCCESS)
        return HttpResponseRedirect(reverse("admin:conversations_handoff_change", args=[obj.pk]))


def _shortened(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else f"{text[:limit - 1]}…"


def _local_minute(value) -> str:  # noqa: ANN001
    return timezone.localtime(value).strftime("%Y-%m-%d %H:%M")


def _speaker(message: Message) -> tuple[str, str]:
    """(css class, who) for one message of the transcript."""
    if message.role == Message.Role.USER:
        return "speaker-person", "Person"
    if message.payload.get("kind") == "human":
        return "speaker-staff", f"Staff ({message.payload.get('by')})"
    return "speaker-concierge", "Concierge"
