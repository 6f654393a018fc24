"""Pages for the person chatting (HTMX, and plain forms without JavaScript).

Each view calls one service and renders a page or the small partials HTMX swaps in.
"""

from __future__ import annotations

import json

from django.conf import settings
from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from config.errors import ApplicationError
from workflows.models import RunDocument
from workflows.selectors import plans_latest

from . import documents, selectors, services
from .models import Conversation


def _lang(request: HttpRequest, conversation: Conversation | None = None) -> str:
    if conversation is not None:
        return "zh" if conversation.locale.startswith("zh") else "en"
    return "zh" if (request.LANGUAGE_CODE or "").startswith("zh") else "en"


# The languages a conversation can be held in, offered for a plan whose name is given in them.
_LANGUAGES = (("en", "en", "English"), ("zh", "zh-hans", "中文"), ("ru", "ru", "Русский"), ("es", "es", "Español"))


def _languages(name: object) -> list[tuple[str, str]]:
    """(locale, label) of each language the plan speaks (its name is given in it); English and Chinese always."""
    spoken = set(name) if isinstance(name, dict) else set()
    return [(locale, label) for key, locale, label in _LANGUAGES if key in ("en", "zh") or key in spoken]


@login_required
@require_GET
def home(request: HttpRequest) -> HttpResponse:
    """Start page: one card per workflow, and the person's conversations."""
    lang = _lang(request)
    cards = []
    for plan in plans_latest():
        definition = plan.definition
        name, description = definition.get("name"), definition.get("description")
        cards.append({
            "workflow_id": plan.workflow_id,
            "name": (name.get(lang) or name.get("en")) if isinstance(name, dict) else name,
            "description": (description.get(lang) or description.get("en")) if isinstance(description, dict) else description,
            "languages": _languages(name),
        })
    conversations = Conversation.objects.filter(owner=request.user).order_by("-updated_at")[:50]
    return render(request, "conversations/home.html", {"cards": cards, "conversations": conversations})


@login_required
@require_POST
def start(request: HttpRequest, workflow_id: str) -> HttpResponse:
    locale = request.POST.get("locale") or ("zh-hans" if _lang(request) == "zh" else "en")
    try:
        conversation = services.conversation_start(user=request.user, workflow_id=workflow_id, locale=locale)
    except ApplicationError as error:
        flash.error(request, error.message)
        return redirect("home")
    return redirect("chat", conversation_id=conversation.pk)


def _page_context(request: HttpRequest, conversation: Conversation, error: str | None = None) -> dict:
    state = selectors.conversation_state(conversation)
    return {
        "conversation": conversation,
        "state": state,
        "transcript": selectors.conversation_messages(conversation),
        "last_message_id": conversation.messages.order_by("-id").values_list("id", flat=True).first() or 0,
        # People choose among user choices; automatic routes and the "keep talking" option need no button.
        "options": [o for o in state["options"] if not o["non_advancing"] and not o["automatic"]],
        "error": error,
        "working": conversation.messages.filter(payload__kind="pending").exists(),
        "documents": documents.available(conversation),
        "lang": _lang(request, conversation),
        # A supervisor reading someone else's conversation gets no composer and no option buttons.
        "read_only": conversation.owner_id != request.user.pk,
    }


@login_required
@require_GET
def chat(request: HttpRequest, conversation_id: int) -> HttpResponse:
    conversation = _access(request, conversation_id)
    return render(request, "conversations/chat.html", _page_context(request, conversation))


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


def _after_post(request: HttpRequest, conversation_id: int, error: str | None = None) -> HttpResponse:
    """HTMX gets the swapped parts; a plain form post goes back to the page."""
    if not request.htmx:
        if error:
            flash.error(request, error)
        return redirect(reverse("chat", args=[conversation_id]) + "#composer")
    conversation = _access(request, conversation_id)
    context = _page_context(request, conversation, error)
    after = int(request.POST.get("after") or 0)
    context["transcript"] = [m for m in context["transcript"] if m.pk > after]
    return render(request, "conversations/partials/update.html", context)


@login_required
@require_POST
def send(request: HttpRequest, conversation_id: int) -> HttpResponse:
    _access_to_post(request, conversation_id)  # someone else's conversation is a 404 (a supervisor's, a 403)
    text = request.POST.get("text", "")
    try:
        if settings.CONCIERGE_ASYNC_TURNS:
            # A worker runs the turn; the page shows the message now and the reply when it is ready.
            services.conversation_turn_queue(user=request.user, conversation_id=conversation_id, text=text)
        else:
            services.conversation_turn(user=request.user, conversation_id=conversation_id, text=text)
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
    if str(conversation.version) == request.GET.get("v"):
        return HttpResponse(status=204)
    context = _page_context(request, conversation)
    after = int(request.GET.get("after") or 0)
    context["transcript"] = [m for m in context["transcript"] if m.pk > after]
    return render(request, "conversations/partials/update.html", context)


@login_required
@require_GET
def document(request: HttpRequest, conversation_id: int, key: str) -> HttpResponse:
    conversation = _access(request, conversation_id)
    doc = RunDocument.objects.filter(run_id=conversation.run_id, key=key).order_by("-version").first()
    if doc is None:
        raise Http404("No such document yet.")
    body, content_type, filename = documents.render(conversation, doc)
    response = HttpResponse(body, content_type=content_type)
    disposition = "inline" if request.GET.get("view") else "attachment"
    response["Content-Disposition"] = f'{disposition}; filename="{filename}"'
    return response


def health(request: HttpRequest) -> HttpResponse:
    return HttpResponse(json.dumps({"status": "ok"}), content_type="application/json")
