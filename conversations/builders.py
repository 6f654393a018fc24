"""Documents a workflow's pack builds in code, named by its plan (`"kind": "handler", "handler": name`).

Most documents are declared as data (`conversation.documents`: answers, fields, email templates). A document
that needs more than a template (the manager assistant's invitation, whose start is the next such hour to
come) is built here and registered under a name; a plan names it, and a name nothing registers is refused at
upload. A builder takes the conversation's slots and returns the document's content.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from django.conf import settings
from django.utils import timezone

from .engine.action_prefs import describe_when
from .engine.catalog import say, say_in, say_n

Builder = Callable[..., dict[str, Any]]  # (slots, *, lang, owner) -> content
_BUILDERS: dict[str, Builder] = {}


def document_builder(name: str) -> Callable[[Builder], Builder]:
    """Register a builder under the name plans give it."""

    def register(fn: Builder) -> Builder:
        _BUILDERS[name] = fn
        return fn

    return register


def builder_names() -> frozenset[str]:
    return frozenset(_BUILDERS)


def build_with(name: str, slots: Mapping[str, str], *, lang: str, owner: str) -> dict[str, Any]:
    """The content the named builder makes (validation has made sure it exists)."""
    return _BUILDERS[name](slots, lang=lang, owner=owner)


def builder_problems(document: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A plan's documents naming a builder nothing registers (checked at upload beside the rest)."""
    conversation = document.get("conversation")
    documents = conversation.get("documents") if isinstance(conversation, Mapping) else None
    if not isinstance(documents, Mapping):
        return []
    known = ", ".join(sorted(_BUILDERS))
    return [(f"$.conversation.documents.{key}.handler", f"unknown document builder {spec.get('handler')!r}; known: {known}")
            for key, spec in documents.items()
            if isinstance(spec, Mapping) and spec.get("kind") == "handler" and spec.get("handler") not in _BUILDERS]


# --- the manager assistant's pack: the follow-up email and the call invitation ---------------------------------


def _when(slots: Mapping[str, str], lang: str) -> tuple[str | None, str | None, str]:
    day, at = slots.get("call_day"), slots.get("call_time")
    return day, at, describe_when(day, at, lang)


@document_builder("manager_assistant.email_draft")
def manager_email(slots: Mapping[str, str], *, lang: str, owner: str) -> dict[str, Any]:
    """The follow-up email, in the conversation's language: the employee's name and the day and time said for the
    call; never the manager's own description of the case, never an address nobody gave."""
    employee = slots.get("employee_name")
    day, _at, when = _when(slots, lang)
    if day:
        ask = say(lang, "Could we talk on {when}? If that doesn't suit you, please suggest another time.", when=when)
    elif when:
        ask = say(lang, "Could we talk {when}? If that doesn't suit you, please suggest another time.", when=when)
    else:
        ask = say(lang, "Could we find a time to talk this week? Please let me know what suits you.")
    body = say(lang, "Hi {name},\n\nI'd like to follow up with you about what happened recently at work. {ask}\n\nBest regards,\n{owner}",
               name=employee or say_in(lang, "a greeting without a name", "there"), ask=ask, owner=owner)
    return {"to": slots.get("employee_email") or "", "subject": say(lang, "Following up: a quick conversation"), "body": body}


@document_builder("manager_assistant.calendar_invite")
def manager_invitation(slots: Mapping[str, str], *, lang: str, owner: str) -> dict[str, Any]:
    """The call invitation in the manager's time zone: a start only when a time was said (the next such hour to
    come when no day was), a day only when only a day was (contract 10: never an hour nobody gave)."""
    employee = slots.get("employee_name")
    day, at, when = _when(slots, lang)
    title = say(lang, "Call with {name}", name=employee) if employee else say_in(lang, "an invitation's title", "Call")
    called = title if employee else say_in(lang, "an invitation's description", "Call")
    minutes = int(slots.get("call_minutes") or 30)
    zone = settings.CONCIERGE_TIMEZONE  # the manager's time zone: the day and time are theirs, said in their words
    if day:
        description = say_n(lang, "{title} on {when} ({zone}), {n} minute.", "{title} on {when} ({zone}), {n} minutes.", minutes,
                            title=called, when=when, zone=zone)
    elif when:
        description = say_n(lang, "{title} {when} ({zone}), {n} minute.", "{title} {when} ({zone}), {n} minutes.", minutes,
                            title=called, when=when, zone=zone)
    else:
        description = say(lang, "{title} (time to be agreed).", title=called)
    invite: dict[str, Any] = {"title": title, "attendee": employee or "", "duration_minutes": minutes,
                              "description": description, "when": when, "timezone": zone}
    if at:
        local_now = timezone.now().astimezone(ZoneInfo(zone))
        on = date.fromisoformat(day) if day else local_now.date()
        start = datetime.combine(on, time.fromisoformat(at), tzinfo=ZoneInfo(zone))
        if not day and start <= local_now:  # "at 3pm" with no day: the next 3pm to come
            start += timedelta(days=1)
        invite["start"] = start.isoformat()
    elif day:
        invite["date"] = day
    return invite
