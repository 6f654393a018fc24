"""What a workflow produces, rendered for people: reports, forms, email drafts, invitations."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from django.utils import formats, timezone, translation
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext_lazy, pgettext
from markdown_it import MarkdownIt

from workflows.models import RunDocument

from .models import Conversation

# The conversation's locale -> the language its pages and documents speak.
PAGE_LANGUAGES = {"en": "en", "zh": "zh-hans", "ru": "ru", "es": "es"}


def page_language(locale: str | None) -> str:
    """Django's language code for a conversation locale ("zh-hans", "zh-CN" -> "zh-hans")."""
    return PAGE_LANGUAGES.get((locale or "en").lower().split("-")[0].split("_")[0], "en")

# What each document is called, through the message catalog (every language a conversation speaks).
PAGE_LABELS = {
    "final_report": gettext_lazy("Final report (complaint / cause / correction)"),
    "labor_estimate": gettext_lazy("Labor estimate"),
    "completed_form": gettext_lazy("Completed permit form"),
    "email_draft": gettext_lazy("Email draft"),
    "calendar_invite": gettext_lazy("Calendar invitation"),
    "intake_document": gettext_lazy("Intake document"),
    "project_plan": gettext_lazy("Project plan"),
}


def page_label(key: str, locale: str | None = None) -> str:
    """A document's name in the active language, or in `locale`'s (a conversation's)."""
    if locale is None:
        return str(PAGE_LABELS.get(key) or key.replace("_", " ").capitalize())
    with translation.override(page_language(locale)):
        return page_label(key)


def available(conversation: Conversation) -> list[dict[str, Any]]:
    """The newest version of each document the conversation's run produced."""
    latest: dict[str, RunDocument] = {}
    for doc in RunDocument.objects.filter(run_id=conversation.run_id).order_by("key", "version"):
        latest[doc.key] = doc
    out_of_date = stale(conversation) if latest else {}
    return [
        {"key": key, "version": doc.version, "label": page_label(key), "stale": out_of_date.get(key)}
        for key, doc in sorted(latest.items()) if key != "diagnosis"
    ]


# Field names as people read them, per language (a field without one is shown by its key in words).
FIELD_LABELS = {
    "summary": ("Summary", "项目概述"),
    "goal": ("Goal", "目标"),
    "users": ("Users", "用户"),
    "constraints": ("Constraints", "约束条件"),
}


def _field(key: str, lang: int) -> str:
    return FIELD_LABELS[key][lang] if key in FIELD_LABELS else key.replace("_", " ").title()


def _markdown_lines(title: str, content: dict[str, Any], lang: int = 0) -> str:
    lines = [f"# {title}", ""]
    for key, value in content.items():
        if isinstance(value, list):
            lines.append(f"## {_field(key, lang)}")
            for item in value:
                if isinstance(item, dict):
                    lines.append("- " + "; ".join(f"{k}: {v}" for k, v in item.items() if v not in (None, "")))
                else:
                    lines.append(f"- {item}")
            lines.append("")
        elif value not in (None, "", {}):
            lines.append(f"**{_field(key, lang)}:** {value}" if not lang else f"**{_field(key, lang)}：** {value}")
            lines.append("")  # a paragraph each: Markdown would run the fields together
    return "\n".join(lines) + "\n"


# The report's headings in the conversation's language (the report is written in it).
REPORT_WORDS = {
    "en": {"title": "Final report", "system": "System", "complaint": "Complaint", "cause": "Cause",
           "not_isolated": "Not isolated yet", "correction": "Correction", "none": "None recommended yet",
           "unknown": "Still unknown", "suspected": "Suspected", "unchecked": "Not checked yet",
           "ruled_out": "Ruled out", "labor": "Labor", "total": "Total", "confirmed": "confirmed",
           "draft": "draft, not confirmed", "findings": "Findings", "h": "h"},
    "zh": {"title": "最终报告", "system": "系统", "complaint": "故障描述", "cause": "原因", "not_isolated": "尚未定位",
           "correction": "处理", "none": "暂无建议", "unknown": "仍未确定", "suspected": "疑似原因",
           "unchecked": "尚未检查", "ruled_out": "已排除", "labor": "工时", "total": "合计", "confirmed": "已确认",
           "draft": "草稿，未确认", "findings": "检查结果", "h": "小时"},
    "ru": {"title": "Итоговый отчёт", "system": "Система", "complaint": "Жалоба", "cause": "Причина",
           "not_isolated": "Пока не найдена", "correction": "Исправление", "none": "Пока нет рекомендаций",
           "unknown": "Пока неизвестно", "suspected": "Предполагается", "unchecked": "Ещё не проверено",
           "ruled_out": "Исключено", "labor": "Работы", "total": "Итого", "confirmed": "подтверждено",
           "draft": "черновик, не подтверждено", "findings": "Результаты проверок", "h": "ч"},
    "es": {"title": "Informe final", "system": "Sistema", "complaint": "Avería", "cause": "Causa",
           "not_isolated": "Aún no aislada", "correction": "Corrección", "none": "Ninguna recomendada aún",
           "unknown": "Aún se desconoce", "suspected": "Sospecha", "unchecked": "Sin comprobar",
           "ruled_out": "Descartado", "labor": "Mano de obra", "total": "Total", "confirmed": "confirmado",
           "draft": "borrador, sin confirmar", "findings": "Hallazgos", "h": "h"},
}


def _hours(value: Any) -> str:
    return f"{float(value or 0):g}"


def _report(content: dict[str, Any]) -> str:
    """Complaint / cause / correction in the conversation's language; labor only when not skipped."""
    w = REPORT_WORDS.get(content.get("language", "en"), REPORT_WORDS["en"])
    lines = [f"# {w['title']}", ""]
    if content.get("system"):
        lines += [f"**{w['system']}:** {content['system']}", ""]
    lines += [f"**{w['complaint']}:** {content.get('complaint', '')}", "", f"## {w['cause']}"]
    lines += [f"- {c}" for c in content.get("cause", [])] or [f"- {w['not_isolated']}"]
    lines += ["", f"## {w['correction']}"] + ([f"- {c}" for c in content.get("correction", [])] or [f"- {w['none']}"])
    if content.get("suspected") or content.get("unchecked"):
        lines += ["", f"## {w['unknown']}"]
        lines += [f"- {w['suspected']}: {c}" for c in content.get("suspected", [])]
        lines += [f"- {w['unchecked']}: {c}" for c in content.get("unchecked", [])]
    if content.get("ruled_out"):
        lines += ["", f"## {w['ruled_out']}"] + [f"- {c}" for c in content["ruled_out"]]
    status = content.get("estimate_status", "none")
    if status in ("confirmed", "draft") and content.get("estimate_lines"):
        lines += ["", f"## {w['labor']} ({w[status]})"]
        lines += [f"- {line.get('label', '')}: {_hours(line.get('hours'))} {w['h']}" for line in content["estimate_lines"]]
        lines += [f"- **{w['total']}: {_hours(content.get('total_hours'))} {w['h']}** ({w[status]})"]
    if content.get("facts"):
        lines += ["", f"## {w['findings']}"] + [f"- {f}" for f in content["facts"]]
    return "\n".join(lines) + "\n"


ESTIMATE_WORDS = {
    "en": ("Labor estimate", {"draft": "draft", "confirmed": "confirmed", "skipped": "skipped", "none": "not drafted yet"}),
    "zh": ("工时估算", {"draft": "草稿", "confirmed": "已确认", "skipped": "已跳过", "none": "尚未起草"}),
    "ru": ("Смета работ", {"draft": "черновик", "confirmed": "подтверждена", "skipped": "пропущена", "none": "ещё не составлена"}),
    "es": ("Presupuesto de mano de obra", {"draft": "borrador", "confirmed": "confirmado", "skipped": "omitido",
                                           "none": "sin redactar"}),
}


def _estimate(content: dict[str, Any]) -> str:
    """The labor estimate as a person reads it: operations and hours, its status in words."""
    language = content.get("language", "en")
    title, statuses = ESTIMATE_WORDS.get(language, ESTIMATE_WORDS["en"])
    w = REPORT_WORDS.get(language, REPORT_WORDS["en"])
    status = content.get("status", "none")
    lines = [f"# {title} ({statuses.get(status, status)})", ""]
    lines += [f"- {line.get('label', '')}: {_hours(line.get('hours'))} {w['h']}" for line in content.get("lines", [])]
    if content.get("lines"):
        lines += ["", f"**{w['total']}: {_hours(content.get('total_hours'))} {w['h']}**"]
    return "\n".join(lines) + "\n"


def _form(content: dict[str, Any]) -> str:
    lines = [f"# {content.get('title') or 'Permit form'}", ""]
    for answer in content.get("answers", []):
        lines += [f"**{answer.get('id')} {answer.get('question', '')}**", f"{answer.get('answer', '')}", ""]
    return "\n".join(lines)


def _eml(content: dict[str, Any]) -> str:
    return (f"To: {content.get('to', '')}\nSubject: {content.get('subject', '')}\nContent-Type: text/plain; charset=utf-8\n"
            f"X-Unsent: 1\n\n{content.get('body', '')}\n")


def _ics_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,").replace("\n", "\\n")


def _ics(content: dict[str, Any], uid: str) -> str:
    if content.get("start"):  # the day and time the person gave for the call
        start = datetime.fromisoformat(content["start"])
    else:
        start = (timezone.now() + timedelta(days=1)).replace(minute=0, second=0, microsecond=0)
    end = start + timedelta(minutes=int(content.get("duration_minutes") or 30))
    fmt = "%Y%m%dT%H%M%SZ"
    return "\r\n".join([
        "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Concierge//Manager assistant//EN", "BEGIN:VEVENT",
        f"UID:{uid}@concierge", f"DTSTAMP:{timezone.now().strftime(fmt)}", f"DTSTART:{start.astimezone(UTC).strftime(fmt)}",
        f"DTEND:{end.astimezone(UTC).strftime(fmt)}", f"SUMMARY:{_ics_escape(content.get('title', 'Call'))}",
        f"DESCRIPTION:{_ics_escape(content.get('description', ''))}", "END:VEVENT", "END:VCALENDAR", "",
    ])


def stale(conversation: Conversation) -> dict[str, str]:
    """The run's documents that are out of date, with the reason (a newer upstream version)."""
    from workflows.engine import stale_documents

    return stale_documents(conversation.run.engine_state.documents)


def _project_plan(conversation: Conversation, doc: RunDocument) -> str:
    """The plan; an older version, or one built on an older intake, says it is out of date."""
    from .engine.project_plan import render_project_plan

    documents = conversation.run.engine_state.documents
    intake = documents.get("intake_document")
    current = intake.version if intake else None
    used = (doc.upstream_versions or {}).get("intake_document")
    reason = "stale" if current is not None and used is not None and used < current else None
    return render_project_plan(doc.content or {}, stale_reason=reason, current_intake=current)


def render(conversation: Conversation, doc: RunDocument) -> tuple[str, str, str]:
    """(body, content type, file name) of a document."""
    content = doc.content or {}
    base = f"{conversation.workflow_id}-{conversation.pk}-{doc.key}-v{doc.version}"
    if doc.key == "final_report":
        return _report(content), "text/markdown; charset=utf-8", f"{base}.md"
    if doc.key == "labor_estimate":
        return _estimate(content), "text/markdown; charset=utf-8", f"{base}.md"
    if doc.key == "completed_form":
        return _form(content), "text/markdown; charset=utf-8", f"{base}.md"
    if doc.key == "email_draft":
        return _eml(content), "message/rfc822", f"{base}.eml"
    if doc.key == "calendar_invite":
        return _ics(content, base), "text/calendar; charset=utf-8", f"{base}.ics"
    if doc.key == "project_plan" and content.get("phases"):
        return _project_plan(conversation, doc), "text/markdown; charset=utf-8", f"{base}.md"
    lang = 1 if conversation.locale.startswith("zh") else 0
    title = page_label(doc.key, conversation.locale)
    return _markdown_lines(title, content, lang), "text/markdown; charset=utf-8", f"{base}.md"


# Markdown as the page shows it: raw HTML in a document is escaped, never rendered.
_MARKDOWN = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def _moment(value: datetime) -> str:
    return formats.date_format(timezone.localtime(value), pgettext("document date", "l j F Y, H:i"))


def shown(conversation: Conversation, doc: RunDocument) -> dict[str, Any]:
    """A document as the page shows it (in the active language): a report or form rendered from
    its Markdown, an email as its addressee, subject and text, an invitation as its title and time."""
    content = doc.content or {}
    title = page_label(doc.key)
    if doc.key == "email_draft":
        return {"kind": "email", "title": title, "to": content.get("to", ""), "subject": content.get("subject", ""),
                "body": content.get("body", "")}
    if doc.key == "calendar_invite":
        start = datetime.fromisoformat(content["start"]) if content.get("start") else None
        end = start + timedelta(minutes=int(content.get("duration_minutes") or 30)) if start else None
        return {"kind": "calendar", "title": title, "summary": content.get("title", ""),
                "start": _moment(start) if start else "", "end": _moment(end) if end else "",
                "description": content.get("description", "")}
    body, _type, _name = render(conversation, doc)
    heading, _newline, rest = body.partition("\n")
    if heading.startswith("# "):  # the page's own heading says it: the document's first one becomes it
        title, body = heading[2:].strip(), rest
    html: SafeString = mark_safe(_MARKDOWN.render(body))  # noqa: S308 - markdown-it escapes the text: html is off
    return {"kind": "markdown", "title": title, "html": html}
