"""The project intake's pack: the intake's classification, published every turn as signals its plan's gates test
(`signals_from: "project_intake.classify"`), and the step that drafts the project plan.

Deterministic: the intent class comes from keyword families over the gathered answers,
the confidence from how clearly one family wins and how complete the answers are.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from django.utils import timezone

from workflows.handlers import StepContext, StepEffect, step_handler

from ..engine._text import is_vacuous
from . import signal_source
from .project_plan import draft_project_plan

FAMILIES: dict[str, tuple[str, ...]] = {
    "web_app": (r"\bweb\s*(?:site|app|shop|store|portal)?\b", r"\bonline\s+(?:shop|store|booking|portal)\b", r"\be-?commerce\b", r"网站", r"网店", r"在线商城", r"网页"),
    "mobile_app": (r"\bmobile\b", r"\b(?:ios|android)\b", r"\bphone\s+app\b", r"手机", r"移动应用", r"小程序", r"\bapp\b"),
    "data_pipeline": (r"\bdata\s+(?:pipeline|warehouse|platform)\b", r"\betl\b", r"\bdashboards?\b", r"\breport(?:ing)?\b", r"数据", r"报表", r"看板"),
    "internal_tool": (r"\binternal\s+tool\b", r"\bback[-\s]?office\b", r"\bworkflow\s+tool\b", r"\bcrm\b", r"\berp\b", r"内部(?:系统|工具)", r"管理系统"),
    "automation": (r"\bautomat\w+\b", r"\bbot\b", r"\bintegration\b", r"自动化", r"机器人"),
}
_COMPILED = {name: tuple(re.compile(p, re.IGNORECASE) for p in pats) for name, pats in FAMILIES.items()}
FIELDS = ("summary", "goal", "users", "constraints")


@dataclass(frozen=True)
class IntakeSignals:
    intent_class: str  # a family, "mixed" or "unknown"
    confidence: float
    missing_critical: bool

    def to_dict(self) -> dict[str, object]:
        return {"intent_class": self.intent_class, "confidence": self.confidence, "missing_critical": self.missing_critical}


def classify_intake(answers: Mapping[str, str | None], critical: tuple[str, ...] = ("summary", "goal", "users")) -> IntakeSignals:
    """Classify a project from its intake answers (a vacuous answer counts as missing)."""
    given = {f: (answers.get(f) or "").strip() for f in FIELDS}
    given = {f: v for f, v in given.items() if v and not is_vacuous(v)}  # "随便", "no idea yet" say nothing
    text = " ".join(given.values())
    scores = {name: sum(1 for p in pats if p.search(text)) for name, pats in _COMPILED.items()}
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    best, best_score = ranked[0]
    runner_up = ranked[1][1]
    filled = len(given)
    missing = any(f not in given for f in critical)
    if best_score == 0:
        return IntakeSignals("unknown", round(0.3 + 0.05 * filled, 2), missing)
    if runner_up == best_score:
        return IntakeSignals("mixed", round(0.5 + 0.05 * filled, 2), missing)
    margin = min(best_score - runner_up, 2)
    confidence = min(0.95, 0.6 + 0.05 * filled + 0.05 * margin)
    return IntakeSignals(best, round(confidence, 2), missing)


@signal_source("project_intake.classify", signals=("intake_ready", "intent_class", "confidence", "missing_critical"))
def intake_signals(slots: Mapping[str, str | None], *, form_finished: bool) -> dict[str, object]:
    """The intake is ready when its form is finished; what kind of project it is, and how sure, from its answers."""
    return {"intake_ready": form_finished, **classify_intake(slots).to_dict()}


@step_handler("intake.project_plan")
def project_plan(ctx: StepContext) -> StepEffect:
    """Draft the project plan from the newest intake document, in the conversation's language (templates, no model)."""
    from ..models import Conversation

    intake = ctx.documents.get("intake_document") or {}
    doc = ctx.state.documents.get("intake_document")
    locale = Conversation.objects.filter(pk=ctx.conversation_id).values_list("locale", flat=True).first() if ctx.conversation_id else None
    content = draft_project_plan(intake, intent_class=str(ctx.state.signals.get("intent_class") or "unknown"),
                                 language=locale or "en", intake_version=doc.version if doc else None,
                                 today=timezone.localdate())
    return StepEffect(documents={ctx.node.produces or "project_plan": content})
