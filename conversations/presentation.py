"""What the chat pages show a person, in the conversation's language: labels instead of slot
keys, dates and amounts as people write them, blockers as sentences, and the plan's progress
as it happened.

The API keeps the engine's codes (`blockers`, slot names, ISO times): integrators read those.
This module only turns them into words, through Django's message catalog (`locale/`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date, datetime
from typing import Any

from django.utils import formats, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, pgettext

from workflows import engine as wf

from .documents import page_language
from .engine.config import ConversationConfig, FormQuestionSpec
from .engine.plain_words import answer_shown, question_label
from .engine.slots import slot_label

# --- slot values --------------------------------------------------------------------------

_ISO_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")
_ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
YES_NO = {"yes": gettext_lazy("Yes"), "no": gettext_lazy("No")}


def format_moment(value: str) -> str:
    """An ISO date-time as people read it in the page's language ("Sun 29 Nov 2026, 10:00")."""
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return value
    # Translators: a date and time in the side panel (Django date format characters).
    return formats.date_format(moment, pgettext("side panel date", "D j M Y, H:i"))


def format_minutes(minutes: int) -> str:
    """A length of time in hours and minutes ("3 h 30 min")."""
    hours, rest = divmod(minutes, 60)
    if hours and rest:
        return _("%(hours)d h %(minutes)d min") % {"hours": hours, "minutes": rest}
    if hours:
        return _("%(hours)d h") % {"hours": hours}
    return _("%(minutes)d min") % {"minutes": rest}


def format_value(name: str, value: Any, question: FormQuestionSpec | None, lang: str) -> str:
    """A slot's value for people: a form answer as the replies say it (a choice's label, a number
    with its unit's word), yes / no, a date, a length of time."""
    text = str(value)
    if question is not None and question.answer_type == "yes_no" and text.lower() in YES_NO:
        return str(YES_NO[text.lower()])
    if question is not None:
        return answer_shown(question, text, lang)
    if _ISO_TIME.match(text):
        return format_moment(text)
    if _ISO_DAY.match(text):  # a day alone ("visit_day"): in words, as a moment is
        return formats.date_format(date.fromisoformat(text), pgettext("side panel day", "D j M Y"))
    if name.endswith("_minutes") and text.isdigit():
        return format_minutes(int(text))
    return text


def _label(name: str, question: FormQuestionSpec | None, config: ConversationConfig, lang: str) -> str:
    """A detail's name: its question's short name, else (in another language than English) the
    question itself, else the slot's label."""
    label = question_label(question, lang) if question is not None else ""
    if not label and question is not None and lang != "en":
        label = wf.localize(dict(question.question), lang).rstrip("？?").strip()
    label = label or slot_label(config.slot_spec(name), lang)
    return label[:1].upper() + label[1:]


def slot_rows(state: Mapping[str, Any], config: ConversationConfig, lang: str) -> list[dict[str, str]]:
    """The side panel's "What I know": each slot's label, value and where it came from."""
    questions = {q.slot: q for q in (config.form.questions if config.form else ()) if q.slot}
    return [{
        "label": _label(name, questions.get(name), config, lang),
        "value": format_value(name, slot["value"], questions.get(name), lang),
        "source": _source(slot, config, lang),
        "confirmed": slot["status"] == "valid",
    } for name, slot in state["slots"].items()]


def _source(slot: Mapping[str, Any], config: ConversationConfig, lang: str) -> str:
    if slot.get("source") == "tool" and slot.get("record"):
        record_slot, _sep, record = str(slot["record"]).partition("=")
        what = slot_label(config.slot_spec(record_slot), lang) if record else ""
        return _("from %(what)s %(record)s") % {"what": what, "record": record or record_slot}
    return _("you said it in message %(turn)s") % {"turn": slot["source_turn"]}


# --- the plan's progress -------------------------------------------------------------------

STEP_STATUS = {
    "done": gettext_lazy("done"),
    "current": gettext_lazy("now"),
    "ahead": gettext_lazy("not yet"),
    "not_needed": gettext_lazy("not needed"),
}


def step_rows(state: Mapping[str, Any], plan: wf.Plan) -> list[dict[str, str]]:
    """The plan's steps with what happened to each. A gate the run passed without a supervisor's
    review is "not needed", not a review done; the closing step is listed once it is reached."""
    reviewed_step = (state.get("review") or {}).get("step_id")
    rows = []
    for step in state["plan_steps"]:
        if step["type"] == "end" and step["status"] == "ahead":
            continue
        status = step["status"]
        if status == "done" and plan.node(step["id"]).gate is not None and step["id"] != reviewed_step:
            status = "not_needed"
        rows.append({"label": step["label"], "status": status, "status_text": str(STEP_STATUS[status])})
    return rows


# --- why an option is not offered ----------------------------------------------------------

ACTION_BLOCKERS = {
    "too_early": gettext_lazy("Tell me a little more first."),
    "reply_asks_question": gettext_lazy("I still have a question for you first."),
    "awaiting_answer": gettext_lazy("Please answer my last question first."),
    "action_flow_open": gettext_lazy("Another action is still in progress."),
    "already_executed": gettext_lazy("This was already done in this conversation."),
    "hypothetical_situation": gettext_lazy("This sounds hypothetical rather than a real, current case."),
    "situation_not_established": gettext_lazy("It is not clear yet that this is a real, current case."),
    "not_recommended_in_reply": gettext_lazy("The guidance so far does not suggest this yet."),
    "missing_slot": gettext_lazy("A detail is still missing."),
    "step_not_completed": gettext_lazy("An earlier step is not finished yet."),
    "one_action_per_turn": gettext_lazy("One thing at a time: the other action comes first."),
    "declined": gettext_lazy("You said you don't want this."),
    "no_decision_yet": gettext_lazy("Tell me about the situation first."),
}
_CODE = re.compile(r"^(?P<code>[a-z_]+)(?::[\w.-]+)?(?::\s.*)?$")
_MISSING_KEY = re.compile(r"^(?P<key>[\w.]+) is missing$")


def blocker_sentences(blockers: list[str], config: ConversationConfig, lang: str) -> list[str]:
    """Each reason an option is blocked, as a sentence; the same sentence is said once."""
    sentences: list[str] = []
    for blocker in blockers:
        for part in str(blocker).split("; "):
            sentence = blocker_sentence(part, config, lang)
            if sentence not in sentences:
                sentences.append(sentence)
    return sentences


def effects_sentence(effects: str) -> str:
    """An option's effects as people read them: the workflow engine's "Warning: stale input: …" (a document the
    option uses was made before what it depends on changed) said in words, never as the engine's ids."""
    said, warned, warnings = effects.partition(" Warning: ")
    if not warned:
        return effects
    if any(w.strip().startswith("stale input:") for w in warnings.split(";")):
        return f"{said} " + str(_("Note: a document it uses was made before the latest changes."))
    return said


def blocker_sentence(blocker: str, config: ConversationConfig, lang: str) -> str:
    """One blocker reason in words: ask-then-act codes, a missing detail, a stale document, a
    pending review; a plan's own condition message is shown as the plan wrote it."""
    text = blocker.strip()
    match = _CODE.match(text)
    first = next((a for a in config.actions if match and text.startswith(f"one_action_per_turn:{a.id}")), None)
    if first is not None:  # what it waits for, by name
        return _("One thing at a time: “%(action)s” comes first.") % {"action": wf.localize(first.label, lang)}
    if match and match["code"] in ACTION_BLOCKERS:
        return str(ACTION_BLOCKERS[match["code"]])
    missing = _MISSING_KEY.match(text)
    if missing:
        key = missing["key"].removeprefix("slots.").removeprefix("validated_slots.")
        if key in config.slots:
            return _("I still need the %(what)s.") % {"what": slot_label(config.slot_spec(key), lang)}
        return str(_("A detail is still missing."))
    if text.startswith("stale input:"):
        return str(_("A document it uses has changed: it has to be produced again first."))
    if text.startswith("awaiting supervisor review"):
        return str(_("A supervisor is deciding this step."))
    if re.fullmatch(r"[\w.]+ must (?:be|not be).*|step '.*' is not completed yet|not allowed: .*", text):
        return str(_("Not available at this point of the conversation."))
    return text


ESTIMATE_STATUS = {
    "draft": gettext_lazy("draft"),
    "confirmed": gettext_lazy("confirmed"),
    "skipped": gettext_lazy("skipped"),
}


def estimate_view(state: Mapping[str, Any]) -> dict[str, Any] | None:
    """The labor estimate in words ("draft", "3.5 h"), or None when there is none."""
    estimate = state["estimate"]
    if estimate.get("status", "none") == "none":
        return None
    hours = _("%(hours)s h")
    return {
        "status": ESTIMATE_STATUS.get(estimate["status"], estimate["status"]),
        "total": hours % {"hours": f"{float(estimate.get('total_hours') or 0):g}"},
        "lines": [{"label": line.get("label", ""), "hours": hours % {"hours": f"{float(line.get('hours') or 0):g}"}}
                  for line in estimate.get("lines", [])],
    }


def activate_for(locale: str | None) -> translation.override:
    """Render in the conversation's language: `with activate_for(conversation.locale): ...`."""
    return translation.override(page_language(locale))
