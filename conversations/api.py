"""Conversation endpoints (thin: validate, call one service, serialize)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import SAFE_METHODS, BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.errors import validated_input
from workflows.access import is_supervisor
from workflows.api import audit_response
from workflows.models import AuditEvent

from . import services
from .access import posts_for_another
from .models import Conversation, Message

IDEMPOTENCY_HEADER = "HTTP_IDEMPOTENCY_KEY"


class StartIn(serializers.Serializer):
    workflow_id = serializers.SlugField(max_length=64)
    locale = serializers.CharField(required=False, max_length=16)


class MessageIn(serializers.Serializer):
    text = serializers.CharField(max_length=services.MAX_TEXT, trim_whitespace=True)


class ChooseIn(serializers.Serializer):
    option_id = serializers.CharField(max_length=64)
    consent = serializers.BooleanField(required=False, default=False)


class SpeaksAsOwner(BasePermission):
    """Turns and choices are the owner's: a supervisor reads another's conversation, never posts in it."""

    message = "Only the person whose conversation this is may post in it; supervisors read it."
    code = "not_conversation_owner"

    def has_permission(self, request: Request, view: APIView) -> bool:
        return request.method in SAFE_METHODS or not posts_for_another(request.user, view.kwargs["conversation_id"])


def message_out(message: Message) -> dict[str, Any]:
    return {"id": message.pk, "role": message.role, "text": message.text, "turn_index": message.turn_index,
            "created_at": message.created_at.isoformat(), "kind": message.payload.get("kind", "message")}


def turn_response(result: services.TurnResult) -> dict[str, Any]:
    """The body of a turn: the reply and the new state (also under "state")."""
    state = services.conversation_state(result.conversation)
    reply = {
        **result.reply.to_dict(),
        "intent": result.outcome.resolved_intent or result.outcome.intent,
        "routed_intent": result.outcome.intent,
        "submode": result.outcome.submode,
        "decision": result.outcome.decision,
        "reply_action": result.outcome.reply_action,
        "question": result.outcome.question or result.outcome.next_step_question,
        "backend": result.backend,
    }
    return {**state, "reply": reply, "execution_path": result.execution_path, "state": state}


def start_response(conversation: Conversation) -> dict[str, Any]:
    """The body of a new conversation: its state and the greeting."""
    body = services.conversation_state(conversation)
    body["messages"] = [message_out(m) for m in services.conversation_messages(conversation)]
    return body


def choice_response(conversation: Conversation) -> dict[str, Any]:
    """The body of a choice: the new state and the note the choice added to the transcript."""
    body = services.conversation_state(conversation)
    body["messages"] = [message_out(conversation.messages.order_by("-id").first())]
    return body


class ConversationListApi(APIView):
    @extend_schema(responses=OpenApiTypes.OBJECT, summary="Your conversations (supervisors see all)")
    def get(self, request: Request) -> Response:
        rows = Conversation.objects.select_related("owner").order_by("-updated_at")
        if not is_supervisor(request.user):
            rows = rows.filter(owner=request.user)
        results = [{"id": c.pk, "workflow_id": c.workflow_id, "title": c.title, "status": c.status, "owner": c.owner.username,
                    "turn_count": c.turn_count, "updated_at": c.updated_at.isoformat()} for c in rows[:200]]
        return Response({"count": len(results), "results": results})

    @extend_schema(request=StartIn, responses={201: OpenApiTypes.OBJECT}, summary="Start a conversation on a workflow (honours Idempotency-Key)")
    def post(self, request: Request) -> Response:
        data = validated_input(StartIn, request.data)
        code, body = services.conversation_start_once(user=request.user, idempotency_key=request.META.get(IDEMPOTENCY_HEADER),
                                                      respond=start_response, **data)
        return Response(body, status=code)


class ConversationDetailApi(APIView):
    @extend_schema(responses=OpenApiTypes.OBJECT, summary="A conversation's state")
    def get(self, request: Request, conversation_id: int) -> Response:
        return Response(services.conversation_state(services.access_conversation(request.user, conversation_id)))


class MessageApi(APIView):
    permission_classes = [IsAuthenticated, SpeaksAsOwner]

    @extend_schema(responses=OpenApiTypes.OBJECT, summary="The transcript")
    def get(self, request: Request, conversation_id: int) -> Response:
        conversation = services.access_conversation(request.user, conversation_id)
        after = request.query_params.get("after")
        messages = services.conversation_messages(conversation, int(after) if after and after.isdigit() else None)
        return Response({"count": len(messages), "results": [message_out(m) for m in messages]})

    @extend_schema(request=MessageIn, responses={201: OpenApiTypes.OBJECT}, summary="Send one message (honours Idempotency-Key)")
    def post(self, request: Request, conversation_id: int) -> Response:
        data = validated_input(MessageIn, request.data)
        code, body = services.conversation_turn(
            user=request.user, conversation_id=conversation_id, text=data["text"],
            idempotency_key=request.META.get(IDEMPOTENCY_HEADER), respond=turn_response,
        )
        return Response(body, status=code)


class ChooseApi(APIView):
    permission_classes = [IsAuthenticated, SpeaksAsOwner]

    @extend_schema(request=ChooseIn, responses=OpenApiTypes.OBJECT, summary="Choose an offered option (409 when not available or consent is missing)")
    def post(self, request: Request, conversation_id: int) -> Response:
        data = validated_input(ChooseIn, request.data)
        code, body = services.conversation_choose(
            user=request.user, conversation_id=conversation_id, idempotency_key=request.META.get(IDEMPOTENCY_HEADER),
            respond=choice_response, **data,
        )
        return Response(body, status=code)


class AuditApi(APIView):
    @extend_schema(responses=OpenApiTypes.OBJECT, summary="The conversation's audit trail (?export=csv)")
    def get(self, request: Request, conversation_id: int) -> Response:
        conversation = services.access_conversation(request.user, conversation_id)
        events = AuditEvent.objects.filter(run_id=conversation.run_id).select_related("actor").order_by("id")
        return audit_response(events, request.query_params.get("export", "json"), f"conversation-{conversation_id}-audit")
