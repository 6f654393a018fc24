"""What a workflow produces, rendered for people: reports, forms, email drafts, invitations."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from email import policy as email_policy
from email.message import EmailMessage
from typing import Any
from zoneinfo import ZoneInfo

import icalendar
from django.utils import formats, timezone, translation
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext, gettext_lazy, pgettext
from markdown_it import MarkdownIt

from workflows.models import RunDocument
from workflows.selectors import plan_by_id

from .engine import ConversationConfig
from .engine.plan_documents import document_title
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


def page_label(key: str, locale: str | None = None, config: ConversationConfig | None = None) -> str:
    """A document's name in the active language, or in `locale`'s (a conversation's): the title its plan gives
    it, else the shipped workflows' names."""
    if config is not None and (title := document_title(config, key, locale or translation.get_language() or "en")):
        return title
    if locale is None:
        return str(PAGE_LABELS.get(key) or key.replace("_", " ").capitalize())
    with translation.override(page_language(locale)):
        return page_label(key)


def _config(conversation: Conversation) -> ConversationConfig:
    from .selectors import conversation_config

    return conversation_config(plan_by_id(conversation.run.plan_id))


def available(conversation: Conversation) -> list[dict[str, Any]]:
    """The newest version of each document the conversation's run produced."""
    latest: dict[str, RunDocument] = {}
    for doc in RunDocument.objects.filter(run_id=conversation.run_id).order_by("key", "version"):
        latest[doc.key] = doc
    out_of_date = stale(conversation) if latest else {}
    config = _config(conversation) if latest else None
    return [
        {"key": key, "version": doc.version, "label": page_label(key, config=config), "stale": out_of_date.get(key)}
        for key, doc in sorted(latest.items()) if key != "diagnosis"
    ]


# Field names as people read them (a field without one is shown by its key in words).
FIELD_LABELS = {
    "summary": gettext_lazy("Summary"),
    "goal": gettext_lazy("Goal"),
    "users": gettext_lazy("Users"),
    "constraints": gettext_lazy("Constraints"),
}


def _field(key: str) -> str:
    return str(FIELD_LABELS[key]) if key in FIELD_LABELS else key.replace("_", " ").title()


def _field_line(label: str, value: Any) -> str:
    """'**Goal:** …' / '**目标：** …' in the active language."""
    return gettext("**{label}:** {value}").format(label=label, value=value)


def _markdown_lines(title: str, content: dict[str, Any], locale: str | None = None) -> str:
    with translation.override(page_language(locale)):
        lines = [f"# {title}", ""]
        for key, value in content.items():
            if isinstance(value, list):
                lines.append(f"## {_field(key)}")
                for item in value:
                    if isinstance(item, dict):
                        lines.append("- " + "; ".join(f"{k}: {v}" for k, v in item.items() if v not in (None, "")))
                    else:
                        lines.append(f"- {item}")
                lines.append("")
            elif value not in (None, "", {}):
                lines.append(_field_line(_field(key), value))
                lines.append("")  # a paragraph each: Markdown would run the fields together
    return "\n".join(lines) + "\n"


def _hours(value: Any) -> str:
    return pgettext("labor", "{hours} h").format(hours=f"{float(value or 0):g}")


def _labor_line(line: dict[str, Any]) -> str:
    return pgettext("labor", "{operation}: {hours}").format(operation=line.get("label", ""), hours=_hours(line.get("hours")))


def _labor_status(status: str) -> str:
    """A labor estimate's status in words, in the active language."""
    return {"draft": pgettext("labor estimate", "draft"), "confirmed": pgettext("labor estimate", "confirmed"),
            "skipped": pgettext("labor estimate", "skipped"), "none": pgettext("labor estimate", "not drafted yet")}.get(status, status)


def _report(content: dict[str, Any]) -> str:
    """Complaint / cause / correction in the conversation's language (the report is written in it); labor only when not skipped."""
    with translation.override(page_language(content.get("language"))):
        lines = ["# " + pgettext("final report", "Final report"), ""]
        if content.get("system"):
            lines += [_field_line(pgettext("final report", "System"), content["system"]), ""]
        lines += [_field_line(pgettext("final report", "Complaint"), content.get("complaint", "")), "",
                  "## " + pgettext("final report", "Cause")]
        lines += [f"- {c}" for c in content.get("cause", [])] or ["- " + pgettext("final report", "Not isolated yet")]
        lines += ["", "## " + pgettext("final report", "Correction")]
        lines += [f"- {c}" for c in content.get("correction", [])] or ["- " + pgettext("final report", "None recommended yet")]
        if content.get("suspected") or content.get("unchecked"):
            lines += ["", "## " + pgettext("final report", "Still unknown")]
            lines += ["- " + pgettext("final report", "Suspected: {cause}").format(cause=c) for c in content.get("suspected", [])]
            lines += ["- " + pgettext("final report", "Not checked yet: {cause}").format(cause=c) for c in content.get("unchecked", [])]
        if content.get("ruled_out"):
            lines += ["", "## " + pgettext("final report", "Ruled out")] + [f"- {c}" for c in content["ruled_out"]]
        status = content.get("estimate_status", "none")
        if status in ("confirmed", "draft") and content.get("estimate_lines"):
            said = pgettext("final report", "confirmed") if status == "confirmed" else pgettext("final report", "draft, not confirmed")
            lines += ["", "## " + pgettext("final report", "Labor ({status})").format(status=said)]
            lines += ["- " + _labor_line(line) for line in content["estimate_lines"]]
            total = pgettext("labor", "Total: {hours}").format(hours=_hours(content.get("total_hours")))
            lines += [f"- **{total}**" + pgettext("final report", " ({status})").format(status=said)]
        if content.get("facts"):
            lines += ["", "## " + pgettext("final report", "Findings")] + [f"- {f}" for f in content["facts"]]
        for other in content.get("also", []):  # each other system diagnosed, with its own complaint and findings
            lines += ["", "## " + pgettext("final report", "Also diagnosed: {system}").format(system=other.get("system", "")), "",
                      _field_line(pgettext("final report", "Complaint"), other.get("complaint", "")), ""]
            lines += ["- " + pgettext("final report", "Cause: {cause}").format(cause=c) for c in other.get("cause", [])] \
                or ["- " + pgettext("final report", "Cause: {cause}").format(cause=pgettext("final report", "Not isolated yet"))]
            lines += ["- " + pgettext("final report", "Correction: {correction}").format(correction=c) for c in other.get("correction", [])]
            lines += ["- " + pgettext("final report", "Finding: {finding}").format(finding=f) for f in other.get("facts", [])]
    return "\n".join(lines) + "\n"


def _estimate(content: dict[str, Any]) -> str:
    """The labor estimate as a person reads it: operations and hours, its status in words."""
    with translation.override(page_language(content.get("language"))):
        status = _labor_status(content.get("status", "none"))
        lines = ["# " + pgettext("labor estimate", "Labor estimate ({status})").format(status=status), ""]
        lines += ["- " + _labor_line(line) for line in content.get("lines", [])]
        if content.get("lines"):
            lines += ["", "**" + pgettext("labor", "Total: {hours}").format(hours=_hours(content.get("total_hours"))) + "**"]
    return "\n".join(lines) + "\n"


def _form(content: dict[str, Any]) -> str:
    lines = [f"# {content['title']}", ""] if content.get("title") else []
    for answer in content.get("answers", []):
        number = answer.get("id") if re.fullmatch(r"[\d.]+", str(answer.get("id"))) else ""  # a form's own numbering ("3.1.1")
        lines += [f"**{(number + ' ') if number else ''}{answer.get('question', '')}**", f"{answer.get('answer', '')}", ""]
    return "\n".join(lines)


def _fields(content: dict[str, Any]) -> str:
    lines = [f"# {content.get('title') or ''}", ""]
    for item in content.get("fields", []):
        lines.append(_field_line(item.get("label") or item.get("id"), item.get("value") or "—"))
        lines.append("")
    return "\n".join(lines)


def _eml(content: dict[str, Any]) -> str:
    """The draft as a mail client opens it: headers encoded and folded by the standard library (a Chinese
    subject as RFC 2047 words), an empty To: line when no address was given, marked unsent."""
    message = EmailMessage(policy=email_policy.SMTP)
    message["To"] = content.get("to") or ""
    message["Subject"] = content.get("subject") or ""
    message["X-Unsent"] = "1"  # Outlook and Thunderbird open it as a draft to send
    message.set_content(str(content.get("body") or ""), cte="8bit")  # readable as text, not base64
    return message.as_bytes().decode("utf-8")  # bytes keep the 8bit body (a str generator would re-encode it)


def _ics(content: dict[str, Any], uid: str) -> str:
    """The invitation as a calendar reads it (icalendar: escaping, folding, the time zone's VTIMEZONE)."""
    calendar = icalendar.Calendar()
    calendar.add("prodid", "-//Concierge//Manager assistant//EN")
    calendar.add("version", "2.0")
    event = icalendar.Event()
    event.add("uid", f"{uid}@concierge")
    event.add("dtstamp", timezone.now().astimezone(UTC))
    if content.get("date") and not content.get("start"):  # a day with no time said: an all-day entry, the time to be agreed
        day = date.fromisoformat(content["date"])
        event.add("dtstart", day)
        event.add("dtend", day + timedelta(days=1))
    else:  # the day and time the person gave for the call, in the zone they were said in; else tomorrow at this hour
        start = (datetime.fromisoformat(content["start"]) if content.get("start")
                 else (timezone.now() + timedelta(days=1)).replace(minute=0, second=0, microsecond=0))
        if content.get("timezone"):
            start = start.astimezone(ZoneInfo(content["timezone"]))
        event.add("dtstart", start)
        event.add("dtend", start + timedelta(minutes=int(content.get("duration_minutes") or 30)))
    event.add("summary", content.get("title") or "Call")
    event.add("description", content.get("description") or "")
    calendar.add_component(event)
    calendar.add_missing_timezones()
    return calendar.to_ical().decode("utf-8")


def stale(conversation: Conversation) -> dict[str, str]:
    """The run's documents that are out of date, with the reason (a newer upstream version)."""
    from workflows.engine import stale_documents

    return stale_documents(conversation.run.engine_state.documents)


def _project_plan(conversation: Conversation, doc: RunDocument) -> str:
    """The plan; an older version, or one built on an older intake, says it is out of date."""
    from .packs.project_plan import render_project_plan

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
    if "answers" in content:  # a form's answers (the permit form, any plan's answers document)
        return _form(content), "text/markdown; charset=utf-8", f"{base}.md"
    if doc.key == "email_draft" or {"subject", "body"} <= set(content):
        return _eml(content), "message/rfc822", f"{base}.eml"
    if "fields" in content:
        return _fields(content), "text/markdown; charset=utf-8", f"{base}.md"
    if doc.key == "calendar_invite":
        return _ics(content, base), "text/calendar; charset=utf-8", f"{base}.ics"
    if doc.key == "project_plan" and content.get("phases"):
        return _project_plan(conversation, doc), "text/markdown; charset=utf-8", f"{base}.md"
    title = page_label(doc.key, conversation.locale, _config(conversation))
    return _markdown_lines(title, content, conversation.locale), "text/markdown; charset=utf-8", f"{base}.md"


# Markdown as the page shows it: raw HTML in a document is escaped, never rendered.
_MARKDOWN = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def _moment(value: datetime) -> str:
    return formats.date_format(timezone.localtime(value), pgettext("document date", "l j F Y, H:i"))


def shown(conversation: Conversation, doc: RunDocument) -> dict[str, Any]:
    """A document as the page shows it (in the active language): a report or form rendered from
    its Markdown, an email as its addressee, subject and text, an invitation as its title and time."""
    content = doc.content or {}
    title = page_label(doc.key, config=_config(conversation))
    if doc.key == "email_draft" or {"subject", "body"} <= set(content):
        return {"kind": "email", "title": title, "to": content.get("to", ""), "subject": content.get("subject", ""),
                "body": content.get("body", "")}
    if doc.key == "calendar_invite":
        start = datetime.fromisoformat(content["start"]) if content.get("start") else None
        end = start + timedelta(minutes=int(content.get("duration_minutes") or 30)) if start else None
        return {"kind": "calendar", "title": title, "summary": content.get("title", ""),
                "start": _moment(start) if start else content.get("when", ""), "end": _moment(end) if end else "",
                "description": content.get("description", "")}
    body, _type, _name = render(conversation, doc)
    heading, _newline, rest = body.partition("\n")
    if heading.startswith("# "):  # the page's own heading says it: the document's first one becomes it
        title, body = heading[2:].strip(), rest
    html: SafeString = mark_safe(_MARKDOWN.render(body))  # noqa: S308 - markdown-it escapes the text: html is off
    return {"kind": "markdown", "title": title, "html": html}
