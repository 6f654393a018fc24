"""Pages for the person chatting (HTMX, and plain forms without JavaScript).

Each view calls one service and renders a page or the small partials HTMX swaps in.
"""

from __future__ import annotations

import json
import math

from django.conf import settings
from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_POST

from config.errors import ApplicationError
from config.throttles import ConversationRateThrottle, TurnRateThrottle, page_throttle_wait
from workflows.engine import localize
from workflows.models import RunDocument
from workflows.selectors import plan_by_id, plans_latest

from . import documents, drafts, presentation, selectors, services
from .idempotency import MAX_KEY_LENGTH, sent_once
from .models import Conversation, Message


def _request_lang(request: HttpRequest) -> str:
    """The language the person's browser asks for (LocaleMiddleware): en, zh, ru or es."""
    return selectors.reply_lang(request.LANGUAGE_CODE or "en")


# The languages a conversation can be held in, offered for a plan whose name is given in them.
_LANGUAGES = (("en", "en", "English"), ("zh", "zh-hans", "中文"), ("ru", "ru", "Русский"), ("es", "es", "Español"))
STATUS_LABELS = {
    Conversation.Status.ACTIVE: gettext_lazy("Open"),
    Conversation.Status.WAITING_REVIEW: gettext_lazy("A supervisor is reviewing"),
    Conversation.Status.COMPLETED: gettext_lazy("Finished"),
    Conversation.Status.ABORTED: gettext_lazy("Stopped"),
}
# What the page says when a person is over the API's per-person budgets (THROTTLE_RATE_TURNS,
# THROTTLE_RATE_CONVERSATIONS): the same counts as over the API, so a script cannot switch to the page.
TOO_MANY_MESSAGES = gettext_lazy("Too many messages in a short time. Wait a moment, then send yours again.")
TOO_MANY_CONVERSATIONS = gettext_lazy("Too many new conversations in a short time. Wait a while, or carry on in one of yours.")


def _languages(name: object) -> list[tuple[str, str]]:
    """(locale, label) of each language the plan speaks (its name is given in it); English and Chinese always."""
    spoken = set(name) if isinstance(name, dict) else set()
    return [(locale, label) for key, locale, label in _LANGUAGES if key in ("en", "zh") or key in spoken]


@login_required
@require_GET
def home(request: HttpRequest) -> HttpResponse:
    """Start page: one card per workflow in the person's language, and their conversations."""
    lang = _request_lang(request)
    cards, names = [], {}
    for plan in plans_latest():
        definition = plan.definition
        languages = _languages(definition.get("name"))
        names[plan.workflow_id] = localize(definition.get("name"), lang)
        cards.append({
            "workflow_id": plan.workflow_id,
            "name": names[plan.workflow_id],
            "description": localize(definition.get("description"), lang),
            "languages": languages,
            "preferred": next((locale for key, locale, _label in _LANGUAGES if key == lang), "en"),
        })
    conversations = list(Conversation.objects.filter(owner=request.user).order_by("-updated_at")[:50])
    for conversation in conversations:
        conversation.name = names.get(conversation.workflow_id) or conversation.title
        conversation.status_label = STATUS_LABELS.get(conversation.status, conversation.status)
    return render(request, "conversations/home.html", {"cards": cards, "conversations": conversations})


@login_required
@require_POST
def start(request: HttpRequest, workflow_id: str) -> HttpResponse:
    if page_throttle_wait(request, ConversationRateThrottle) is not None:
        flash.error(request, TOO_MANY_CONVERSATIONS)
        return redirect("home")
    locale = request.POST.get("locale") or presentation.page_language(_request_lang(request))
    try:
        conversation = services.conversation_start(user=request.user, workflow_id=workflow_id, locale=locale)
    except ApplicationError as error:
        flash.error(request, error.message)
        return redirect("home")
    return redirect("chat", conversation_id=conversation.pk)


def _page_context(request: HttpRequest, conversation: Conversation, error: str | None = None) -> dict:
    """What the chat page shows, its words in the conversation's language."""
    with presentation.activate_for(conversation.locale):
        return _page_words(request, conversation, error)


def _page_words(request: HttpRequest, conversation: Conversation, error: str | None) -> dict:
    state = selectors.conversation_state(conversation)
    lang = selectors.reply_lang(conversation.locale)
    plan = plan_by_id(conversation.run.plan_id)
    config = selectors.conversation_config(plan)
    # People choose among user choices; automatic routes and the "keep talking" option need no button.
    options = [{**o, "reasons": presentation.blocker_sentences(o["blockers"], config, lang),
                "effects_summary": presentation.effects_sentence(o["effects_summary"])}
               for o in state["options"] if not o["non_advancing"] and not o["automatic"]]
    transcript = _with_delays(selectors.conversation_messages(conversation))
    being_written = drafts.draft_of(conversation.pk)
    if being_written is not None:  # the model is writing this reply: the page shows its draft, then the stored reply
        transcript = [m for m in transcript if m.pk != being_written["answer_id"]]
    return {
        "conversation": conversation,
        "state": state,
        "transcript": transcript,
        "last_message_id": transcript[-1].pk if transcript else 0,
        "reply_wait_seconds": round(services.model_wait_seconds()),
        "reply_being_written": being_written is not None,
        "options": options,
        "steps": presentation.step_rows(state, plan),
        "slot_rows": presentation.slot_rows(state, config, lang),
        "estimate": presentation.estimate_view(state),
        "error": error,
        "working": conversation.messages.filter(payload__kind="pending").exists(),
        "documents": documents.available(conversation),
        # A supervisor reading someone else's conversation gets no composer and no option buttons.
        "read_only": conversation.owner_id != request.user.pk,
    }


def _with_delays(transcript: list[Message]) -> list[Message]:
    """Each waiting turn learns in how many seconds the page says it is taking longer than usual
    (counted on the server: the page's copy of a message is replaced at every update)."""
    now = timezone.now()
    for message in transcript:
        if message.payload.get("kind") == "pending":
            waited = (now - message.waiting_since).total_seconds()
            message.delayed_in = max(0, math.ceil(settings.CONCIERGE_TURN_DELAYED_AFTER - waited))
    return transcript


def _render(request: HttpRequest, conversation: Conversation, template: str, context: dict) -> HttpResponse:
    """A conversation's page or partial, in the conversation's language (not the browser's)."""
    with presentation.activate_for(conversation.locale):
        return render(request, template, context)


@login_required
@require_GET
def chat(request: HttpRequest, conversation_id: int) -> HttpResponse:
    conversation = _access(request, conversation_id)
    return _render(request, conversation, "conversations/chat.html", _page_context(request, conversation))


def _access(request: HttpRequest, conversation_id: int) -> Conversation:
    try:
        return selectors.access_conversation(request.user, conversation_id)
    except ApplicationError as error:
        raise Http404(error.message) from error


def _access_to_post(request: HttpRequest, conversation_id: int) -> Conversation:
    """The conversation if the user may speak in it: someone else's is a 404, and a
    supervisor, who reads every conversation, may not post in the person's name (403)."""
    conversation = _access(request, conversation_id)
    if conversation.owner_id != request.user.pk:
        raise PermissionDenied("Only the person whose conversation this is may post in it.")
    return conversation


def _after_post(request: HttpRequest, conversation_id: int, error: str | None = None,
                after: int | None = None) -> HttpResponse:
    """HTMX gets the swapped parts; a plain form post goes back to the page."""
    if not request.htmx:
        if error:
            flash.error(request, error)
        return redirect(reverse("chat", args=[conversation_id]) + "#composer")
    conversation = _access(request, conversation_id)
    context = _page_context(request, conversation, error)
    after = int(request.POST.get("after") or 0) if after is None else after
    context["transcript"] = [m for m in context["transcript"] if m.pk > after]
    return _render(request, conversation, "conversations/partials/update.html", context)


@login_required
@require_POST
def send(request: HttpRequest, conversation_id: int) -> HttpResponse:
    _access_to_post(request, conversation_id)  # someone else's conversation is a 404 (a supervisor's, a 403)
    if page_throttle_wait(request, TurnRateThrottle) is not None:
        return _after_post(request, conversation_id, TOO_MANY_MESSAGES)
    text = request.POST.get("text", "")
    retry = request.POST.get("retry", "")
    try:
        if retry.isdigit():
            # "Try again" on a failed turn: the same message waits for a worker again; it is sent
            # back to the page (it comes before the last message the page shows).
            services.conversation_turn_retry(user=request.user, conversation_id=conversation_id, message_id=int(retry))
            return _after_post(request, conversation_id, after=int(retry) - 1)
        # The page's key for these words: a copy sent again after a lost answer is the same message, answered once.
        with sent_once(user=request.user, key=request.POST.get("sent_key", "")[:MAX_KEY_LENGTH] or None,
                       endpoint=f"page/{conversation_id}/send", body={"text": text}) as already_sent:
            if already_sent:  # the page gets what the conversation holds: that message and its reply
                return _after_post(request, conversation_id)
            if settings.CONCIERGE_ASYNC_TURNS:
                # A worker runs the turn; the page shows the message now and the reply when it is ready.
                services.conversation_turn_queue(user=request.user, conversation_id=conversation_id, text=text)
            else:
                services.conversation_turn(user=request.user, conversation_id=conversation_id, text=text, show_draft=True)
    except ApplicationError as error:
        return _after_post(request, conversation_id, error.message)
    return _after_post(request, conversation_id)


@login_required
@require_POST
def choose(request: HttpRequest, conversation_id: int) -> HttpResponse:
    _access_to_post(request, conversation_id)
    option_id = request.POST.get("option_id", "")
    consent = request.POST.get("consent") == "yes"
    try:
        services.conversation_choose(user=request.user, conversation_id=conversation_id, option_id=option_id,
                                     consent=consent).raise_refusal()
    except ApplicationError as error:
        return _after_post(request, conversation_id, error.message)
    return _after_post(request, conversation_id)


@login_required
@require_GET
def updates(request: HttpRequest, conversation_id: int) -> HttpResponse:
    """Polled by the page: new messages and the side panel, or 204 when nothing changed."""
    conversation = _access(request, conversation_id)
    if request.GET.get("waiting") and services.turn_overdue_sweep(conversation_id=conversation.pk) != services.TurnSweep():
        # The page waits for a turn (without beat, this is what finds a lost one): one failed, or
        # answered here because the broker is down, changed the version, and the page shows it.
        conversation = _access(request, conversation_id)
    if str(conversation.version) == request.GET.get("v"):
        return HttpResponse(status=204)
    context = _page_context(request, conversation)
    after = int(request.GET.get("after") or 0)
    context["transcript"] = [m for m in context["transcript"] if m.pk > after]
    return _render(request, conversation, "conversations/partials/update.html", context)


@login_required
@require_GET
def draft(request: HttpRequest, conversation_id: int) -> HttpResponse:
    """Asked by the page while it waits for a reply: the reply as the model writes it so far
    (unchecked: the stored message replaces it), or 204 when none is being written."""
    conversation = _access(request, conversation_id)
    written = drafts.draft_of(conversation.pk)
    if written is None:
        return HttpResponse(status=204)
    return JsonResponse(written, headers={"Cache-Control": "no-store"})


def _newest_document(conversation: Conversation, key: str) -> RunDocument:
    doc = RunDocument.objects.filter(run_id=conversation.run_id, key=key).order_by("-version").first()
    if doc is None:
        raise Http404("No such document yet.")
    return doc


@login_required
@require_GET
def document(request: HttpRequest, conversation_id: int, key: str) -> HttpResponse:
    conversation = _access(request, conversation_id)
    doc = _newest_document(conversation, key)
    body, content_type, filename = documents.render(conversation, doc)
    response = HttpResponse(body, content_type=content_type)
    disposition = "inline" if request.GET.get("view") else "attachment"
    response["Content-Disposition"] = f'{disposition}; filename="{filename}"'
    return response


@login_required
@require_GET
def document_page(request: HttpRequest, conversation_id: int, key: str) -> HttpResponse:
    """A document shown in the page as what it is (a report, a form, an email, an invitation), with download beside it."""
    conversation = _access(request, conversation_id)
    doc = _newest_document(conversation, key)
    with presentation.activate_for(conversation.locale):
        shown = documents.shown(conversation, doc)
    return _render(request, conversation, "conversations/document.html",
                   {"conversation": conversation, "doc": doc, "shown": shown})


def health(request: HttpRequest) -> HttpResponse:
    return HttpResponse(json.dumps({"status": "ok"}), content_type="application/json")
