"""Step handlers fed by the conversation: documents the context engine prepared."""

from __future__ import annotations

from django.utils import timezone

from workflows.handlers import StepContext, StepEffect, step_handler


def prepared_document(ctx: StepContext) -> StepEffect:
    """Write the node's document from what the conversation prepared (report, form, estimate)."""
    if not ctx.node.produces:
        return StepEffect()
    prepared = ctx.state.signals.get("prepared") or {}
    return StepEffect(documents={ctx.node.produces: dict(prepared.get(ctx.node.produces) or {})})


for _name in ("conversation.document", "rv.labor_estimate", "rv.final_report", "permit.generate_form"):
    step_handler(_name)(prepared_document)


@step_handler("intake.project_plan")
def project_plan(ctx: StepContext) -> StepEffect:
    """Draft the project plan from the newest intake document, in the conversation's language (templates, no model)."""
    from .engine.project_plan import draft_project_plan
    from .models import Conversation

    intake = ctx.documents.get("intake_document") or {}
    doc = ctx.state.documents.get("intake_document")
    locale = Conversation.objects.filter(pk=ctx.conversation_id).values_list("locale", flat=True).first() if ctx.conversation_id else None
    content = draft_project_plan(intake, intent_class=str(ctx.state.signals.get("intent_class") or "unknown"),
                                 language=locale or "en", intake_version=doc.version if doc else None,
                                 today=timezone.localdate())
    return StepEffect(documents={ctx.node.produces or "project_plan": content})
