"""Supervisors' screens: the review queue with decisions, runs, plans and a read-only audit."""

from __future__ import annotations

import json

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Case, Count, IntegerField, Q, Value, When
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from config.errors import ApplicationError

from .access import is_supervisor
from .api import audit_response
from .models import (
    AuditEvent,
    ConsentRecord,
    Review,
    Run,
    RunDocument,
    WebhookDelivery,
    WebhookEndpoint,
    WorkflowPlan,
)
from .review_summary import (
    LINKED_KEYS,
    qa_step_ran,
    readable_rows,
    reader_for,
    reasons_shown,
    signal_rows,
    step_label,
)
from .services import plans, reviews

# The product's own words when a reason is left out (server-side: the browser's check is not enough).
REASON_REQUIRED = "Give a reason for this decision: it is kept in the audit trail."


def _pretty(value) -> str:  # noqa: ANN001
    return format_html("<pre class='json-pretty'>{}</pre>", json.dumps(value, indent=2, ensure_ascii=False))


def _value_html(value) -> str:  # noqa: ANN001
    """One field of a document as a reader sees it: text, a list, or nested fields."""
    if isinstance(value, list):
        return format_html("<ul>{}</ul>", format_html_join("", "<li>{}</li>", ((_value_html(v),) for v in value)))
    if isinstance(value, dict):
        return format_html_join("; ", "{}: {}", ((k.replace("_", " "), _value_html(v)) for k, v in value.items() if v not in (None, "")))
    return "—" if value in (None, "") else str(value)


def review_documents(review: Review) -> list[RunDocument]:
    """The newest version of each document the run held when the review opened (what the gate decided on)."""
    if not review.run_id:
        return []
    latest: dict[str, RunDocument] = {}
    for doc in RunDocument.objects.filter(run_id=review.run_id, created_at__lte=review.created_at).order_by("key", "version"):
        latest[doc.key] = doc
    return [latest[key] for key in sorted(latest) if key != "diagnosis"]


def documents_html(docs: list[RunDocument]) -> str:
    """Each document with its fields, in the order it was written."""
    if not docs:
        return "—"
    return format_html_join("", "<section class='review-document'><h3>{} <span class='quiet'>v{}</span></h3><table>{}</table></section>", (
        (doc.key.replace("_", " ").capitalize(), doc.version, format_html_join(
            "", "<tr><th scope='row'>{}</th><td>{}</td></tr>",
            ((key.replace("_", " ").capitalize(), _value_html(value)) for key, value in (doc.content or {}).items()),
        ))
        for doc in docs
    ))


def option_label(review: Review, option_id: str) -> str:
    """An option as the review offered it, by its label rather than its id."""
    return next((o["label"] for o in review.options if o["option_id"] == option_id), option_id) or "—"


def qa_ran(review: Review) -> bool:
    """Whether the review's run went through a QA node of its plan (a fee check has none)."""
    if not review.run_id:
        return False
    return qa_step_ran(review.run.plan.definition, review.run.state.get("completed_steps", ()))


def _local_minute(value) -> str:  # noqa: ANN001
    return timezone.localtime(value).strftime("%Y-%m-%d %H:%M") if value else "—"


def review_summary_html(review: Review) -> str:
    """The subject in words (by the reader its app registered), or the documents the gate decided on, or a plain table."""
    subject = review.subject or {}
    reader = reader_for(subject)
    in_words = reader.summary_html(subject) if reader.summary_html else ""
    skip = LINKED_KEYS | (set(subject) if in_words else set())
    docs = review_documents(review)
    context = {
        "subject_summary": in_words,
        "documents": documents_html(docs) if docs else "",
        "other_rows": readable_rows(subject, skip=skip),
    }
    return render_to_string("admin/workflows/review/includes/summary.html", context)


def review_signals_html(review: Review) -> str:
    """Each signal beside the threshold the gate held it against."""
    rows = signal_rows(review.signals or {}, qa_ran=qa_ran(review), reader=reader_for(review.subject or {}))
    return render_to_string("admin/workflows/review/includes/signals.html", {"rows": rows})


class ReadOnlyAdminMixin:
    """State is never assigned in admin: these screens only read."""

    def has_add_permission(self, request, obj=None):  # noqa: ANN001, ANN201
        return False

    def has_change_permission(self, request, obj=None):  # noqa: ANN001, ANN201
        return False

    def has_delete_permission(self, request, obj=None):  # noqa: ANN001, ANN201
        return False


class AuditInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = AuditEvent
    fk_name = "run"
    extra = 0
    fields = ["created_at", "event_type", "step_id", "chosen_option_id", "selection_mode", "outcome", "actor_label"]
    readonly_fields = fields
    ordering = ["id"]
    show_change_link = True


def reason_field() -> forms.CharField:
    """A decision's reason: required, blank after trimming counts as missing, in the product's words."""
    return forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3, "cols": 80}), help_text="Always required; kept in the audit trail.",
        error_messages={"required": REASON_REQUIRED},
    )


class DecisionForm(forms.Form):
    outcome = forms.ChoiceField(choices=Review.Outcome.choices, widget=forms.RadioSelect,
                                error_messages={"required": "Choose approve, reject or override."})
    option_id = forms.ChoiceField(required=False, label="Override to option", help_text="Only for an override.")
    reason = reason_field()

    def __init__(self, *args, review: Review, **kwargs):  # noqa: ANN002, ANN003
        super().__init__(*args, **kwargs)
        eligible = [o for o in review.options if o.get("eligibility") == "eligible"]
        self.fields["option_id"].choices = [("", "—")] + [(o["option_id"], o["label"]) for o in eligible]
        labels = {o["option_id"]: o["label"] for o in review.options}
        # what each outcome applies, by the option's name: a supervisor never guesses what "Approve" does
        said = {Review.Outcome.APPROVE: labels.get(review.recommended_option_id), Review.Outcome.REJECT: labels.get(review.reject_option_id)}
        self.fields["outcome"].choices = [
            (value, f"{label}: applies “{said[value]}”" if said.get(value) else label) if value != Review.Outcome.OVERRIDE
            else (value, f"{label}: applies the option you choose below") for value, label in Review.Outcome.choices]

    def first_error_field(self) -> str | None:
        """The first field with an error, in the form's order (where the focus goes)."""
        return next((name for name in self.fields if name in self.errors), None)

    def clean(self):  # noqa: ANN201
        data = super().clean()
        if data.get("outcome") == Review.Outcome.OVERRIDE and not data.get("option_id"):
            self.add_error("option_id", "An override needs the option to override to.")
        return data


class BulkReasonForm(forms.Form):
    """The one reason recorded on every review a bulk action decides."""

    reason = reason_field()


class ReviewAgeFilter(admin.SimpleListFilter):
    title = "age"
    parameter_name = "age"

    def lookups(self, request, model_admin):  # noqa: ANN001, ANN201
        return [("1h", "Under an hour"), ("1d", "Under a day"), ("old", "Older than a day")]

    def queryset(self, request, queryset):  # noqa: ANN001, ANN201
        now = timezone.now()
        if self.value() == "1h":
            return queryset.filter(created_at__gte=now - timezone.timedelta(hours=1))
        if self.value() == "1d":
            return queryset.filter(created_at__gte=now - timezone.timedelta(days=1))
        if self.value() == "old":
            return queryset.filter(created_at__lt=now - timezone.timedelta(days=1))
        return queryset


def workflow_names() -> dict[str, str]:
    """Each workflow's name as its newest plan version gives it, by workflow id (one query)."""
    return dict(WorkflowPlan.objects.order_by("workflow_id", "version").values_list("workflow_id", "name"))


class WorkflowFilter(admin.SimpleListFilter):
    """Rows by workflow, named as its plan names it rather than by id; `lookup` is the path to the workflow id."""

    title = "workflow"
    parameter_name = "workflow"
    lookup = "workflow_id"

    def lookups(self, request, model_admin):  # noqa: ANN001, ANN201
        ids = model_admin.model._default_manager.order_by().values_list(self.lookup, flat=True).distinct()
        names = workflow_names()
        named = [(workflow_id, names.get(workflow_id) or workflow_id.replace("_", " ").capitalize()) for workflow_id in ids if workflow_id]
        return sorted(named, key=lambda pair: pair[1])

    def queryset(self, request, queryset):  # noqa: ANN001, ANN201
        return queryset.filter(**{self.lookup: self.value()}) if self.value() else queryset


class RunWorkflowFilter(WorkflowFilter):
    lookup = "plan__workflow_id"


# The queue's order of statuses: pending ones first (the status column sorts by it too, not by the word).
PENDING_FIRST = Case(When(status=Review.Status.PENDING, then=Value(0)), default=Value(1), output_field=IntegerField())


@admin.register(Review)
class ReviewAdmin(admin.ModelAdmin):
    list_display = ["status_badge", "decide_link", "title", "workflow", "recommended", "created"]
    list_display_links = ["title"]
    list_filter = ["status", "kind", WorkflowFilter, ReviewAgeFilter]
    list_select_related = ["decided_by", "run__plan"]
    search_fields = ["title", "workflow_id", "step_id", "reason"]
    actions = ["approve_selected", "reject_selected"]
    fieldsets = [
        (None, {"fields": ["status_badge", "kind", "workflow", "step", "conversation_link", "created_at"]}),
        # "wide-field": the section's heading names the one field, so the field takes the whole width
        ("What is under review", {"fields": ["summary"], "classes": ["wide-field"]}),
        ("Signals", {"fields": ["signals_table"], "classes": ["wide-field"]}),
        ("Recommendation", {"fields": ["recommendation", "options_table"]}),
        ("Decision", {"fields": ["decided_option", "decided_by", "decided_at", "reason"]}),
        ("Raw data", {"fields": ["raw_data"], "classes": ["collapse", "wide-field"]}),
    ]
    readonly_fields = [field for _, section in fieldsets for field in section["fields"]]
    inlines = []

    def get_fieldsets(self, request, obj=None):  # noqa: ANN001, ANN201
        # A pending review has no decision yet: no section of dashes.
        pending = obj is not None and obj.is_pending
        return [section for section in self.fieldsets if not (pending and section[0] == "Decision")]

    def get_ordering(self, request):  # noqa: ANN001, ANN201
        # Pending first, oldest first within each status.
        return [PENDING_FIRST.asc(), "created_at"]

    def has_add_permission(self, request):  # noqa: ANN001, ANN201
        return False

    def has_delete_permission(self, request, obj=None):  # noqa: ANN001, ANN201
        return False

    def has_change_permission(self, request, obj=None):  # noqa: ANN001, ANN201
        return False  # decisions go through the Decide form, never through field edits

    def has_view_permission(self, request, obj=None):  # noqa: ANN001, ANN201
        return is_supervisor(request.user) or super().has_view_permission(request, obj)

    def changelist_view(self, request, extra_context=None):  # noqa: ANN001, ANN201
        counts = Review.objects.aggregate(
            pending=Count("id", filter=Q(status=Review.Status.PENDING)),
            decided=Count("id", filter=~Q(status=Review.Status.PENDING)),
        )
        extra_context = {**(extra_context or {}), "title": f"Review queue — {counts['pending']} pending, {counts['decided']} decided"}
        return super().changelist_view(request, extra_context)

    @admin.display(description="status", ordering=PENDING_FIRST)
    def status_badge(self, obj: Review) -> str:
        # Colours in static/css/admin.css: the Content-Security-Policy allows no inline styles.
        return format_html("<strong class='status-{}'>{}</strong>", obj.status, obj.get_status_display())

    @admin.display(description="")
    def decide_link(self, obj: Review) -> str:
        if not obj.is_pending:
            return "—"
        return format_html("<a class='button' href='{}'>Decide</a>", reverse("admin:workflows_review_decide", args=[obj.pk]))

    @admin.display(description="conversation")
    def conversation_link(self, obj: Review) -> str:
        conversation = getattr(obj.run, "conversation", None) if obj.run_id else None
        if conversation is None:
            return "—"
        url = reverse("admin:conversations_conversation_change", args=[conversation.pk])
        return format_html("<a href='{}'>{}</a>", url, conversation)

    @admin.display(description="opened", ordering="created_at")
    def created(self, obj: Review) -> str:
        return _local_minute(obj.created_at)

    @admin.display(description="workflow", ordering="workflow_id")
    def workflow(self, obj: Review) -> str:
        return obj.run.plan.name if obj.run_id else obj.workflow_id.replace("_", " ").capitalize()

    @admin.display(description="step")
    def step(self, obj: Review) -> str:
        return step_label(obj.run.plan.definition, obj.step_id) if obj.run_id else obj.step_id

    @admin.display(description="what is under review")
    def summary(self, obj: Review) -> str:
        return review_summary_html(obj)

    @admin.display(description="signals")
    def signals_table(self, obj: Review) -> str:
        return review_signals_html(obj)

    @admin.display(description="subject and signals as stored")
    def raw_data(self, obj: Review) -> str:
        return _pretty({"subject": obj.subject, "signals": obj.signals})

    @admin.display(description="recommendation")
    def recommendation(self, obj: Review) -> str:
        reasons = format_html_join("", "<li>{}</li>", ((r,) for r in reasons_shown(obj.recommendation_reasons, qa_ran=qa_ran(obj))))
        return format_html("<strong>{}</strong><ul class='review-reasons'>{}</ul>", option_label(obj, obj.recommended_option_id), reasons)

    @admin.display(description="recommended", ordering="recommended_option_id")
    def recommended(self, obj: Review) -> str:
        return option_label(obj, obj.recommended_option_id)

    @admin.display(description="decided option")
    def decided_option(self, obj: Review) -> str:
        return option_label(obj, obj.decided_option_id) if obj.decided_option_id else "—"

    @admin.display(description="options offered")
    def options_table(self, obj: Review) -> str:
        rows = format_html_join(
            "",
            "<tr><td>{}{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (o["label"], " (recommended)" if o["option_id"] == obj.recommended_option_id else "", o["eligibility"],
                 o.get("effects_summary", ""), "; ".join(o.get("blockers", [])) or "—")
                for o in obj.options
            ),
        )
        return format_html(
            "<table class='review-options'><thead><tr><th>Option</th><th>Eligibility</th><th>Effects</th><th>Blockers</th></tr></thead>"
            "<tbody>{}</tbody></table>", rows,
        )

    def get_urls(self):  # noqa: ANN201
        decide = self.admin_site.admin_view(self.decide_view)
        return [path("<int:review_id>/decide/", decide, name="workflows_review_decide"), *super().get_urls()]

    def change_view(self, request, object_id, form_url="", extra_context=None):  # noqa: ANN001, ANN201
        review = self.get_object(request, object_id)
        if review is not None:
            # The review's own title as the heading; the subtitle is where the next step is, if any.
            decide = format_html(
                "<a class='button' href='{}'>Decide this review</a>", reverse("admin:workflows_review_decide", args=[review.pk])
            ) if review.is_pending and is_supervisor(request.user) else ""
            extra_context = {**(extra_context or {}), "title": f"Review {review.pk}: {review.title}", "subtitle": decide}
        return super().change_view(request, object_id, form_url, extra_context)

    def decide_view(self, request: HttpRequest, review_id: int) -> HttpResponse:
        if not is_supervisor(request.user):
            raise PermissionDenied
        review = get_object_or_404(Review, pk=review_id)
        form = DecisionForm(request.POST or None, review=review)
        if request.method == "POST" and form.is_valid():
            try:
                reviews.review_decide(
                    review_id=review.pk, user=request.user, outcome=form.cleaned_data["outcome"],
                    reason=form.cleaned_data["reason"], option_id=form.cleaned_data["option_id"] or None,
                )
            except ApplicationError as error:
                form.add_error(None, error.message)
            else:
                self.message_user(request, f"Review {review.pk} decided.", messages.SUCCESS)
                return HttpResponseRedirect(reverse("admin:workflows_review_change", args=[review.pk]))
        context = {
            **self.admin_site.each_context(request),
            "title": f"Decide: {review.title}",
            "review": review,
            "form": form,
            "opts": self.model._meta,
            "options_table": self.options_table(review),
            "recommendation": self.recommendation(review),
            "signals": self.signals_table(review),
            "summary": self.summary(review),
            "raw_data": self.raw_data(review),
            "conversation_link": self.conversation_link(review) if review.run_id else "",
        }
        return TemplateResponse(request, "admin/workflows/review/decide.html", context)

    def _bulk(self, request, queryset, outcome: str) -> HttpResponse | None:  # noqa: ANN001
        if not is_supervisor(request.user):
            raise PermissionDenied
        form = BulkReasonForm(request.POST if "apply" in request.POST else None)
        if form.is_valid():
            self._bulk_decide(request, queryset, outcome, form.cleaned_data["reason"])
            return None  # back to the queue, with what happened in the messages
        context = {
            **self.admin_site.each_context(request),
            "title": f"{outcome.title()} {queryset.count()} review(s)",
            "items": [(review, option_label(review, review.recommended_option_id)) for review in queryset],
            "form": form,
            "action": request.POST.get("action"),
            "outcome": outcome,
            "opts": self.model._meta,
            "selected": request.POST.getlist(admin.helpers.ACTION_CHECKBOX_NAME),
        }
        return TemplateResponse(request, "admin/workflows/review/bulk_reason.html", context)

    def _bulk_decide(self, request, queryset, outcome: str, reason: str) -> None:  # noqa: ANN001
        done = 0
        for review in queryset.filter(status=Review.Status.PENDING):
            try:
                reviews.review_decide(review_id=review.pk, outcome=outcome, reason=reason, user=request.user)
                done += 1
            except ApplicationError as error:
                self.message_user(request, f"Review {review.pk}: {error.message}", messages.ERROR)
        self.message_user(request, f"{done} review(s) decided ({outcome}).", messages.SUCCESS)

    @admin.action(description="Approve the recommendation (asks for a reason)")
    def approve_selected(self, request, queryset):  # noqa: ANN001, ANN201
        return self._bulk(request, queryset, "approve")

    @admin.action(description="Reject (asks for a reason)")
    def reject_selected(self, request, queryset):  # noqa: ANN001, ANN201
        return self._bulk(request, queryset, "reject")


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ["id", "created_at", "event_type", "run", "step_id", "chosen_option_id", "selection_mode", "outcome", "actor_label"]
    list_filter = ["event_type", "selection_mode"]
    list_select_related = ["run__plan"]
    search_fields = ["chosen_option_id", "step_id", "actor_label"]
    actions = ["export_json", "export_csv"]
    readonly_fields = [
        "event_type", "created_at", "run", "conversation", "review", "step_id", "chosen_option_id", "selection_mode",
        "outcome", "actor", "actor_label", "snapshot_pretty", "signals_pretty", "payload_pretty",
    ]
    fields = readonly_fields

    def get_actions(self, request):  # noqa: ANN001, ANN201
        # Exports are read-only; Django hides actions when nothing can be changed, so list them here.
        return {name: (getattr(self.__class__, name), name, getattr(self.__class__, name).short_description) for name in self.actions}

    @admin.display(description="options snapshot")
    def snapshot_pretty(self, obj: AuditEvent) -> str:
        return _pretty(obj.options_snapshot)

    @admin.display(description="signals")
    def signals_pretty(self, obj: AuditEvent) -> str:
        return _pretty(obj.signals)

    @admin.display(description="payload")
    def payload_pretty(self, obj: AuditEvent) -> str:
        return _pretty(obj.payload)

    @admin.action(description="Export selected as JSON")
    def export_json(self, request, queryset):  # noqa: ANN001, ANN201
        response = audit_response(queryset.order_by("id"), "json", "audit")
        body = json.dumps(response.data, ensure_ascii=False, indent=2, default=str)
        out = HttpResponse(body, content_type="application/json; charset=utf-8")
        out["Content-Disposition"] = 'attachment; filename="audit.json"'
        return out

    @admin.action(description="Export selected as CSV")
    def export_csv(self, request, queryset):  # noqa: ANN001, ANN201
        return audit_response(queryset.order_by("id"), "csv", "audit")


class DocumentInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = RunDocument
    extra = 0
    fields = ["key", "version", "upstream_versions", "content", "created_at"]
    readonly_fields = fields


class ConsentInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = ConsentRecord
    extra = 0
    fields = ["step_id", "option_id", "given_by", "actor_role", "given_at"]
    readonly_fields = fields


@admin.register(Run)
class RunAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ["id", "plan_name", "owner", "status", "step", "updated_at"]
    list_filter = ["status", RunWorkflowFilter]
    list_select_related = ["plan", "owner"]
    readonly_fields = ["plan", "owner", "status", "current_step", "version", "state_pretty", "created_at", "updated_at"]
    fields = readonly_fields
    inlines = [DocumentInline, ConsentInline, AuditInline]

    def has_view_permission(self, request, obj=None):  # noqa: ANN001, ANN201
        return is_supervisor(request.user) or super().has_view_permission(request, obj)

    @admin.display(description="plan", ordering="plan__workflow_id")
    def plan_name(self, obj: Run) -> str:
        return f"{obj.plan.name}, version {obj.plan.version}"

    @admin.display(description="current step", ordering="current_step")
    def step(self, obj: Run) -> str:
        return step_label(obj.plan.definition, obj.current_step)

    @admin.display(description="state")
    def state_pretty(self, obj: Run) -> str:
        return _pretty(obj.state)


class PlanUploadForm(forms.ModelForm):
    """Upload a plan as JSON; the engine's validation problems show on the form."""

    document = forms.CharField(widget=forms.Textarea(attrs={"rows": 24, "style": "font-family:monospace;width:100%"}), label="Plan JSON")

    class Meta:
        model = WorkflowPlan
        fields = []

    def clean_document(self) -> dict:
        try:
            document = json.loads(self.cleaned_data["document"])
        except json.JSONDecodeError as error:
            raise forms.ValidationError(f"Not valid JSON: {error}") from error
        problems = plans.plan_problems(document)
        if problems:
            raise forms.ValidationError([f"{p.path}: {p.message}" for p in problems])
        return document


@admin.register(WorkflowPlan)
class WorkflowPlanAdmin(admin.ModelAdmin):
    list_display = ["workflow_id", "version", "name", "created_by", "created_at"]
    list_filter = ["workflow_id"]
    list_select_related = ["created_by"]
    readonly_fields = ["workflow_id", "version", "name", "description", "checksum", "created_by", "created_at", "definition_pretty"]

    def get_form(self, request, obj=None, **kwargs):  # noqa: ANN001, ANN003, ANN201
        if obj is None:
            kwargs["form"] = PlanUploadForm
        return super().get_form(request, obj, **kwargs)

    def get_fields(self, request, obj=None):  # noqa: ANN001, ANN201
        return ["document"] if obj is None else self.readonly_fields

    def get_readonly_fields(self, request, obj=None):  # noqa: ANN001, ANN201
        return [] if obj is None else self.readonly_fields

    def has_change_permission(self, request, obj=None):  # noqa: ANN001, ANN201
        return False  # a stored version never changes; upload a new one

    def has_delete_permission(self, request, obj=None):  # noqa: ANN001, ANN201
        return False

    def save_model(self, request, obj, form, change):  # noqa: ANN001, ANN201
        row, created = plans.plan_upload(document=form.cleaned_data["document"], user=request.user)
        obj.pk = row.pk
        obj.refresh_from_db()  # the stored version, new or the identical one, is what the admin shows
        if not created:
            self.message_user(request, f"Unchanged: identical to {row}.", messages.INFO)

    @admin.display(description="definition")
    def definition_pretty(self, obj: WorkflowPlan) -> str:
        return _pretty(obj.definition)


class DeliveryInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = WebhookDelivery
    extra = 0
    fields = ["created_at", "event", "status", "attempts", "last_status_code", "last_error", "delivered_at"]
    readonly_fields = fields
    ordering = ["-id"]
    max_num = 0


class WebhookEndpointForm(forms.ModelForm):
    url = forms.URLField(max_length=500, assume_scheme="https")

    class Meta:
        model = WebhookEndpoint
        fields = ["owner", "url", "events", "active"]

    def clean_url(self) -> str:
        """The same address policy as the API's registration."""
        from .webhooks import WebhookTargetRefused, webhook_target_check

        url = self.cleaned_data["url"]
        try:
            webhook_target_check(url)
        except WebhookTargetRefused as refusal:
            raise forms.ValidationError(refusal.message, code=refusal.code) from refusal
        return url


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(admin.ModelAdmin):
    form = WebhookEndpointForm
    list_display = ["url", "owner", "events", "active", "created_at"]
    list_filter = ["active"]
    list_select_related = ["owner"]
    exclude = ["secret"]
    inlines = [DeliveryInline]


def event_label(event: str) -> str:
    """A webhook event in words: 'review.pending' → 'Review pending' (the code stays on the delivery's page)."""
    return event.replace(".", " ").replace("_", " ").capitalize()


class WebhookEventFilter(admin.SimpleListFilter):
    title = "event"
    parameter_name = "event"

    def lookups(self, request, model_admin):  # noqa: ANN001, ANN201
        events = WebhookDelivery.objects.order_by("event").values_list("event", flat=True).distinct()
        return [(event, event_label(event)) for event in events]

    def queryset(self, request, queryset):  # noqa: ANN001, ANN201
        return queryset.filter(event=self.value()) if self.value() else queryset


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ["id", "event_name", "endpoint", "status", "attempts", "last_status_code", "created_at", "delivered_at"]
    list_filter = ["status", WebhookEventFilter]
    list_select_related = ["endpoint"]
    readonly_fields = ["endpoint", "event", "event_id", "status", "attempts", "last_status_code", "last_error", "next_attempt_at", "delivered_at", "created_at", "payload"]
    actions = ["retry_now"]

    def get_actions(self, request):  # noqa: ANN001, ANN201
        return {"retry_now": (WebhookDeliveryAdmin.retry_now, "retry_now", WebhookDeliveryAdmin.retry_now.short_description)}

    @admin.display(description="event", ordering="event")
    def event_name(self, obj: WebhookDelivery) -> str:
        return event_label(obj.event)

    @admin.action(description="Retry the selected pending deliveries now")
    def retry_now(self, request, queryset):  # noqa: ANN001, ANN201
        from .tasks import deliver_webhook

        for delivery in queryset.filter(status=WebhookDelivery.Status.PENDING):
            deliver_webhook.delay(delivery.pk)
        self.message_user(request, "Queued.")
