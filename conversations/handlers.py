"""Step handlers fed by the conversation: documents the context engine prepared."""

from __future__ import annotations

from workflows.handlers import StepContext, StepEffect, step_handler


def prepared_document(ctx: StepContext) -> StepEffect:
    """Write the node's document from what the conversation prepared (report, form, estimate)."""
    if not ctx.node.produces:
        return StepEffect()
    prepared = ctx.state.signals.get("prepared") or {}
    return StepEffect(documents={ctx.node.produces: dict(prepared.get(ctx.node.produces) or {})})


for _name in ("conversation.document", "rv.labor_estimate", "rv.final_report", "permit.generate_form"):
    step_handler(_name)(prepared_document)

