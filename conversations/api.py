"""Conversation endpoints (thin: validate, call one service, serialize)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.permissions import SAFE_METHODS, BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.errors import error_body, validated_input, validated_query
from config.schema import conflict
from config.serializers import ID_MAX, JSONInput
from config.throttles import ConversationRateThrottle, TurnRateThrottle
from workflows.access import is_supervisor
from workflows.api import AUDIT_RESPONSES, ExportQueryIn, audit_response
from workflows.models import AuditEvent

from . import selectors, services
from .access import posts_for_another
from .idempotency import idempotency_await, idempotency_known, idempotency_store_final, idempotent
from .models import Conversation, Message

IDEMPOTENCY_HEADER = "HTTP_IDEMPOTENCY_KEY"
IDEMPOTENCY_PARAMETER = OpenApiParameter(
    "Idempotency-Key",
    {"type": "string", "maxLength": 200},
    OpenApiParameter.HEADER,
    description="A retry with the same key (and body) gets the first response back instead of acting twice; "
                "the same key with another body is a 409 `idempotency_key_reused`.",
)


class StartIn(JSONInput):
    workflow_id = serializers.SlugField(max_length=64)
    locale = serializers.RegexField(
        r"^([eE][nN]|[zZ][hH]|[rR][uU]|[eE][sS])", required=False, max_length=16,
        help_text="en, zh-hans, ru or es (a tag starting with one of them, e.g. zh-CN, is read as it).",
    )


class MessageIn(JSONInput):
    text = serializers.CharField(max_length=services.MAX_TEXT, trim_whitespace=True)


class ChooseIn(JSONInput):
    option_id = serializers.CharField(max_length=64)
    consent = serializers.BooleanField(required=False, default=False)


class SpeaksAsOwner(BasePermission):
    """Turns and choices are the owner's: a supervisor reads another's conversation, never posts in it."""

    message = "Only the person whose conversation this is may post in it; supervisors read it."
    code = "not_conversation_owner"

    def has_permission(self, request: Request, view: APIView) -> bool:
        return request.method in SAFE_METHODS or not posts_for_another(request.user, view.kwargs["conversation_id"])


# --- output shapes: what services.conversation_state and the views below return ---------


class SlotOut(serializers.Serializer):
    value = serializers.JSONField()
    source_turn = serializers.IntegerField(help_text="The turn that gave the value.")
    status = serializers.CharField(help_text="unverified | valid | invalid")
    raw = serializers.CharField(allow_blank=True, help_text="The words the value was read from.")


class FactOut(serializers.Serializer):
    id = serializers.CharField()
    key = serializers.CharField()
    type = serializers.CharField(help_text="measurement | observation | finding")
    source = serializers.CharField(help_text="user | inference | tool")
    value = serializers.JSONField()
    turn = serializers.IntegerField()
    step_id = serializers.CharField(allow_null=True)
    superseded_by = serializers.CharField(allow_null=True)


class HypothesisOut(serializers.Serializer):
    id = serializers.CharField()
    description = serializers.CharField()
    status = serializers.CharField(help_text="active | confirmed | eliminated")
    confidence = serializers.CharField(help_text="high | medium | low")
    supporting_facts = serializers.ListField(child=serializers.CharField())
    contradicting_facts = serializers.ListField(child=serializers.CharField())


class ContradictionOut(serializers.Serializer):
    id = serializers.CharField()
    fact_a = serializers.CharField()
    fact_b = serializers.CharField()
    resolution = serializers.CharField(allow_null=True)


class TopicOut(serializers.Serializer):
    topic = serializers.CharField()
    submode = serializers.CharField()
    return_step_id = serializers.CharField(allow_null=True, help_text="The step a side question returns to.")
    turn = serializers.IntegerField()


class PlanStepOut(serializers.Serializer):
    id = serializers.CharField()
    label = serializers.CharField()
    type = serializers.CharField()
    status = serializers.ChoiceField(choices=["current", "done", "ahead"])


class EstimateLineOut(serializers.Serializer):
    label = serializers.CharField()
    hours = serializers.FloatField()
    hypothesis_id = serializers.CharField(allow_null=True)


class EstimateOut(serializers.Serializer):
    status = serializers.CharField(help_text="none | draft | confirmed | skipped")
    lines = EstimateLineOut(many=True)
    confirmed_hours = serializers.FloatField(allow_null=True)
    drafted_turn = serializers.IntegerField(allow_null=True)
    decided_turn = serializers.IntegerField(allow_null=True)
    total_hours = serializers.FloatField()


class OptionOut(serializers.Serializer):
    option_id = serializers.CharField()
    label = serializers.CharField()
    description = serializers.CharField(allow_blank=True)
    target_step_id = serializers.CharField(allow_null=True)
    eligibility = serializers.ChoiceField(choices=["eligible", "blocked"])
    blockers = serializers.ListField(child=serializers.CharField())
    kind = serializers.CharField(help_text="auto | user_choice | blocked")
    requires_consent = serializers.BooleanField()
    effects_summary = serializers.CharField(allow_blank=True)
    non_advancing = serializers.BooleanField()
    outcome = serializers.CharField(allow_null=True)
    recommended = serializers.BooleanField()
    escalation = serializers.BooleanField()
    automatic = serializers.BooleanField()


class SelectionOut(serializers.Serializer):
    mode = serializers.CharField(help_text="auto | present | blocked | none")
    option_id = serializers.CharField(allow_null=True)
    recommended_option_id = serializers.CharField(allow_null=True)
    reasons = serializers.ListField(child=serializers.CharField())


class ReviewSummaryOut(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    title = serializers.CharField(help_text="What is under review, as the supervisor's queue shows it.")
    decided_option_id = serializers.CharField(allow_null=True)
    decided_label = serializers.CharField(allow_null=True)
    step_id = serializers.CharField(allow_null=True, help_text="the gate step under review")
    reason = serializers.CharField(allow_null=True)


class FinalizedAnswerOut(serializers.Serializer):
    question_id = serializers.CharField()
    question = serializers.CharField()
    answer = serializers.CharField(allow_blank=True)
    turn = serializers.IntegerField()
    section = serializers.CharField(allow_null=True)
    needs_review = serializers.BooleanField()


class ClarifyingQAOut(serializers.Serializer):
    question = serializers.CharField()
    related_question_id = serializers.CharField()
    answer = serializers.CharField(allow_null=True, allow_blank=True)
    asked_turn = serializers.IntegerField()
    answered_turn = serializers.IntegerField(allow_null=True)


class ClarifyingThreadOut(serializers.Serializer):
    question_id = serializers.CharField()
    entries = ClarifyingQAOut(many=True)


class FormOut(serializers.Serializer):
    finalized_answers = FinalizedAnswerOut(many=True)
    active_thread = ClarifyingThreadOut(allow_null=True)
    archived_threads = ClarifyingThreadOut(many=True)


class IsolationOut(serializers.Serializer):
    complete = serializers.BooleanField()
    finding = serializers.CharField(allow_null=True)
    invalidated = serializers.BooleanField()
    previous_findings = serializers.ListField(child=serializers.CharField())


class HandoffStateOut(serializers.Serializer):
    status = serializers.CharField()
    id = serializers.IntegerField(allow_null=True)


class ConversationStateOut(serializers.Serializer):
    id = serializers.IntegerField()
    workflow_id = serializers.CharField()
    plan_version = serializers.IntegerField()
    locale = serializers.CharField()
    status = serializers.ChoiceField(choices=Conversation.Status.choices)
    mode = serializers.CharField()
    submode = serializers.CharField()
    current_step = serializers.CharField(help_text="The workflow run's step.")
    current_step_label = serializers.CharField()
    procedure_step = serializers.CharField(allow_null=True, help_text="The diagnostic check or form question being worked on.")
    slots = serializers.DictField(child=SlotOut(), help_text="By slot name.")
    facts = FactOut(many=True)
    hypotheses = HypothesisOut(many=True)
    contradictions = ContradictionOut(many=True)
    topic_stack = TopicOut(many=True)
    completed_steps = serializers.ListField(child=serializers.CharField())
    plan_steps = PlanStepOut(many=True)
    estimate = EstimateOut()
    options = OptionOut(many=True, help_text="available_options[] at the current step.")
    selection = SelectionOut()
    review = ReviewSummaryOut(allow_null=True, help_text="The run's latest supervisor review, if any.")
    documents = serializers.ListField(child=serializers.CharField())
    stale_documents = serializers.DictField(
        child=serializers.CharField(), help_text="Documents out of date until regenerated (built on an older version of what they use), with the reason.")
    gate_signals = serializers.DictField(
        help_text="The classification signals a gate decides on (qa_pass, confidence, intent_class, missing_critical...), as they stand.")
    form = FormOut()
    isolation = IsolationOut()
    handoff = HandoffStateOut(allow_null=True, help_text="Open while a member of staff has the conversation (the concierge stays quiet).")
    turn_count = serializers.IntegerField()
    updated_at = serializers.DateTimeField()


class MessageOut(serializers.Serializer):
    id = serializers.IntegerField()
    role = serializers.ChoiceField(choices=Message.Role.choices)
    text = serializers.CharField(allow_blank=True)
    turn_index = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    kind = serializers.CharField()


class MessageListOut(serializers.Serializer):
    count = serializers.IntegerField()
    results = MessageOut(many=True)


class ConversationWithMessagesOut(ConversationStateOut):
    messages = MessageOut(many=True)


class ReplyOut(serializers.Serializer):
    text = serializers.CharField(allow_blank=True)
    kind = serializers.CharField(help_text="reply | clarifying_question")
    asks_question = serializers.BooleanField()
    facts = serializers.ListField(child=serializers.CharField())
    evidence = serializers.ListField(child=serializers.CharField())
    conclusion = serializers.CharField(allow_blank=True)
    sources = serializers.ListField(child=serializers.CharField())
    citations = serializers.ListField(child=serializers.DictField())
    intent = serializers.CharField(allow_null=True)
    routed_intent = serializers.CharField(allow_null=True)
    submode = serializers.CharField()
    decision = serializers.ChoiceField(choices=["continue", "ask", "abort"])
    reply_action = serializers.CharField(allow_null=True)
    question = serializers.CharField(allow_null=True)
    backend = serializers.CharField(help_text="rules | openai")


class TurnOut(ConversationStateOut):
    reply = ReplyOut()
    execution_path = serializers.DictField(help_text="Intent, steps taken, tools called, retrieval hits, contract violations.")
    state = ConversationStateOut(help_text="The new state again (also at the top level).")


class ConversationSummaryOut(serializers.Serializer):
    id = serializers.IntegerField()
    workflow_id = serializers.CharField()
    title = serializers.CharField(allow_blank=True)
    status = serializers.ChoiceField(choices=Conversation.Status.choices)
    owner = serializers.CharField()
    turn_count = serializers.IntegerField()
    updated_at = serializers.DateTimeField()


class ConversationListOut(serializers.Serializer):
    count = serializers.IntegerField(help_text="How many are listed (the 200 most recently updated).")
    results = ConversationSummaryOut(many=True)


class MessageQueryIn(serializers.Serializer):
    after = serializers.IntegerField(required=False, min_value=0, max_value=ID_MAX, help_text="Only messages with a larger id.")


def message_out(message: Message) -> dict[str, Any]:
    return {"id": message.pk, "role": message.role, "text": message.text, "turn_index": message.turn_index,
            "created_at": message.created_at.isoformat(), "kind": message.payload.get("kind", "message")}


def turn_response(result: services.TurnResult) -> dict[str, Any]:
    """The body of a turn: the reply and the new state (also under "state")."""
    state = selectors.conversation_state(result.conversation, review=result.review, decision=result.decision)
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
    body = selectors.conversation_state(conversation)
    body["messages"] = [message_out(m) for m in selectors.conversation_messages(conversation)]
    return body


def choice_response(conversation: Conversation) -> dict[str, Any]:
    """The body of a choice: the new state and the note the choice added to the transcript."""
    body = selectors.conversation_state(conversation)
    body["messages"] = [message_out(conversation.messages.order_by("-id").first())]
    return body


class ConversationListApi(APIView):
    throttle_classes = [*APIView.throttle_classes, ConversationRateThrottle]  # starting one counts; listing does not

    @extend_schema(responses=ConversationListOut, summary="Your conversations (supervisors see all)")
    def get(self, request: Request) -> Response:
        rows = Conversation.objects.select_related("owner").order_by("-updated_at")
        if not is_supervisor(request.user):
            rows = rows.filter(owner=request.user)
        results = [{"id": c.pk, "workflow_id": c.workflow_id, "title": c.title, "status": c.status, "owner": c.owner.username,
                    "turn_count": c.turn_count, "updated_at": c.updated_at.isoformat()} for c in rows[:200]]
        return Response({"count": len(results), "results": results})

    @extend_schema(request=StartIn, responses={201: ConversationWithMessagesOut}, summary="Start a conversation on a workflow (honours Idempotency-Key)")
    def post(self, request: Request) -> Response:
        data = validated_input(StartIn, request.data)
        body = {"workflow_id": data["workflow_id"], "locale": data.get("locale")}
        with idempotent(user=request.user, key=request.META.get(IDEMPOTENCY_HEADER), endpoint="conversations", body=body) as claim:
            if claim.replay is not None:
                return Response(claim.replay[1], status=claim.replay[0])
            response = start_response(services.conversation_start(user=request.user, **data))
            claim.store(201, response)
        return Response(response, status=201)


class ConversationDetailApi(APIView):
    @extend_schema(responses=ConversationStateOut, summary="A conversation's state")
    def get(self, request: Request, conversation_id: int) -> Response:
        return Response(selectors.conversation_state(selectors.access_conversation(request.user, conversation_id)))


class MessageApi(APIView):
    permission_classes = [IsAuthenticated, SpeaksAsOwner]
    throttle_classes = [*APIView.throttle_classes, TurnRateThrottle]  # sending counts; reading the transcript does not

    @extend_schema(parameters=[MessageQueryIn], responses=MessageListOut, summary="The transcript")
    def get(self, request: Request, conversation_id: int) -> Response:
        conversation = selectors.access_conversation(request.user, conversation_id)
        after = validated_query(MessageQueryIn, request.query_params).get("after")
        messages = selectors.conversation_messages(conversation, after)
        return Response({"count": len(messages), "results": [message_out(m) for m in messages]})

    @extend_schema(
        request=MessageIn,
        parameters=[IDEMPOTENCY_PARAMETER],
        responses={
            201: TurnOut,
            **conflict("The conversation is complete, changed meanwhile, or the Idempotency-Key was used with another body."),
        },
        summary="Send one message (honours Idempotency-Key)",
    )
    def post(self, request: Request, conversation_id: int) -> Response:
        data = validated_input(MessageIn, request.data)
        key, endpoint = request.META.get(IDEMPOTENCY_HEADER), f"conversations/{conversation_id}/messages"
        # The model reads the message before any lock; a retry whose answer is stored skips it.
        turn = services.turn_request(user=request.user, conversation_id=conversation_id, text=data["text"],
                                     understand=not idempotency_known(request.user, key, endpoint))
        with idempotent(user=request.user, key=key, endpoint=endpoint, body={"text": turn.text}) as claim:
            if claim.replay is not None and not claim.in_progress:
                return Response(claim.replay[1], status=claim.replay[0])
            if not claim.in_progress:
                result = services.conversation_turn_apply(turn)
                response = turn_response(result)
                claim.store(201, response, final=result.model_turn is None)  # the rules reply, until the model's
        if claim.in_progress:  # the same request is still waiting for its model answer elsewhere
            status_code, response = idempotency_await(claim, wait_seconds=services.model_wait_seconds())
            return Response(response, status=status_code)
        if result.model_turn is not None:
            result = services.conversation_turn_finish(result, turn)
            response = turn_response(result)
            idempotency_store_final(claim, 201, response)
        return Response(response, status=201)


class ChooseApi(APIView):
    permission_classes = [IsAuthenticated, SpeaksAsOwner]

    @extend_schema(
        request=ChooseIn,
        parameters=[IDEMPOTENCY_PARAMETER],
        responses={
            200: ConversationWithMessagesOut,
            **conflict("`option_not_available`, `consent_required`, a complete conversation, or a reused Idempotency-Key."),
        },
        summary="Choose an offered option (409 when not available or consent is missing)",
    )
    def post(self, request: Request, conversation_id: int) -> Response:
        data = validated_input(ChooseIn, request.data)
        body = {"option_id": data["option_id"], "consent": bool(data["consent"])}
        endpoint = f"conversations/{conversation_id}/choose"
        with idempotent(user=request.user, key=request.META.get(IDEMPOTENCY_HEADER), endpoint=endpoint, body=body) as claim:
            if claim.replay is not None:
                return Response(claim.replay[1], status=claim.replay[0])
            chosen = services.conversation_choose(user=request.user, conversation_id=conversation_id, **data)
            if chosen.refusal is not None:  # audited, and stored for the key, before it is raised
                refusal = chosen.refusal
                claim.store(refusal.status_code, error_body(refusal.code, refusal.message, refusal.details))
            else:
                response = choice_response(chosen.conversation)
                claim.store(200, response)
        chosen.raise_refusal()
        return Response(response, status=200)


class AuditApi(APIView):
    @extend_schema(parameters=[ExportQueryIn], responses=AUDIT_RESPONSES, summary="The conversation's audit trail (?export=csv)")
    def get(self, request: Request, conversation_id: int) -> Response:
        conversation = selectors.access_conversation(request.user, conversation_id)
        export = validated_query(ExportQueryIn, request.query_params)["export"]
        events = AuditEvent.objects.filter(run_id=conversation.run_id).select_related("actor").order_by("id")
        return audit_response(events, export, f"conversation-{conversation_id}-audit")
