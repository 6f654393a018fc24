"""The manager assistant's pack: the follow-up email and the call invitation, built from the conversation's slots."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from django.conf import settings
from django.utils import timezone

from ..engine.action_prefs import describe_when
from ..engine.catalog import say, say_in, say_n
from . import document_builder


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
