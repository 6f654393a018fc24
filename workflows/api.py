"""REST endpoints for workflow plans, reviews and the audit trail (thin: services decide)."""

from __future__ import annotations

import csv
import io
import json

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.errors import NotFound, validated_input, validated_query
from config.schema import conflict
from config.serializers import IdField, JSONInput

from . import selectors
from .access import access_review, is_supervisor
from .models import AuditEvent, Review, WebhookDelivery, WebhookEndpoint, WorkflowPlan
from .permissions import HoldsRequiredPerms, IsSupervisor
from .serializers import (
    AUDIT_CSV_FIELDS,
    AuditEventSerializer,
    ReviewDecisionInputSerializer,
    ReviewSerializer,
    WorkflowPlanSerializer,
    WorkflowPlanSummarySerializer,
    audit_rows,
)
from .services import plans, reviews


class WorkflowPlanListOut(serializers.Serializer):
    results = WorkflowPlanSummarySerializer(many=True)


class WorkflowPlanListApi(APIView):
    # Everyone reads plans (a person picks a workflow); only supervisors upload, and the role
    # is checked before the plan is validated: a person learns nothing from a refused upload.
    permission_classes = [IsAuthenticated, HoldsRequiredPerms]
    required_perms = {"POST": ("workflows.add_workflowplan",)}

    @extend_schema(responses=WorkflowPlanListOut, summary="List workflows (newest versions)")
    def get(self, request: Request) -> Response:
        return Response({"results": WorkflowPlanSummarySerializer(selectors.plans_latest(), many=True).data})

    @extend_schema(
        request=OpenApiTypes.OBJECT,
        responses={
            201: OpenApiResponse(WorkflowPlanSerializer, description="A new version was stored."),
            200: OpenApiResponse(WorkflowPlanSerializer, description="The plan is unchanged: its newest version."),
        },
        summary="Upload a plan (validated; a new version when it changed)",
    )
    def post(self, request: Request) -> Response:
        row, created = plans.plan_upload(document=request.data, user=request.user)
        return Response(WorkflowPlanSerializer(row).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class WorkflowPlanQueryIn(serializers.Serializer):
    version = serializers.IntegerField(required=False, min_value=1, max_value=2**31 - 1)


class WorkflowPlanDetailApi(APIView):
    @extend_schema(
        parameters=[WorkflowPlanQueryIn],
        responses=WorkflowPlanSerializer,
        summary="Read a workflow plan (newest version unless ?version=)",
    )
    def get(self, request: Request, workflow_id: str) -> Response:
        version = validated_query(WorkflowPlanQueryIn, request.query_params, code="invalid_version").get("version")
        if version:
            row = WorkflowPlan.objects.filter(workflow_id=workflow_id, version=version).first()
            if row is None:
                raise NotFound(f"Workflow '{workflow_id}' has no version {version}.", code="workflow_not_found")
        else:
            row = selectors.plan_latest(workflow_id)
        return Response(WorkflowPlanSerializer(row).data)


class ReviewQueryIn(serializers.Serializer):
    status = serializers.ChoiceField(choices=Review.Status.choices, required=False)
    workflow_id = serializers.CharField(max_length=64, required=False)
    kind = serializers.ChoiceField(choices=Review.Kind.choices, required=False)


class ReviewListOut(serializers.Serializer):
    count = serializers.IntegerField(help_text="How many reviews match (at most 500 are listed).")
    results = ReviewSerializer(many=True)


class ReviewListApi(APIView):
    permission_classes = [IsAuthenticated, IsSupervisor]

    @extend_schema(parameters=[ReviewQueryIn], responses=ReviewListOut, summary="Supervisor review queue")
    def get(self, request: Request) -> Response:
        filters = validated_query(ReviewQueryIn, request.query_params)
        reviews = Review.objects.select_related("run__conversation", "decided_by").order_by("created_at", "id")
        reviews = reviews.filter(**{name: value for name, value in filters.items() if value})
        return Response({"count": reviews.count(), "results": ReviewSerializer(reviews[:500], many=True).data})


class ReviewDetailApi(APIView):
    permission_classes = [IsAuthenticated, IsSupervisor]

    @extend_schema(responses=ReviewSerializer, summary="Read a review")
    def get(self, request: Request, review_id: int) -> Response:
        return Response(ReviewSerializer(access_review(request.user, review_id)).data)


class ReviewDecisionApi(APIView):
    permission_classes = [IsAuthenticated, IsSupervisor]

    @extend_schema(
        request=ReviewDecisionInputSerializer,
        responses={200: ReviewSerializer, **conflict("The review was already decided (`already_decided`).")},
        summary="Decide a review",
    )
    def post(self, request: Request, review_id: int) -> Response:
        data = validated_input(ReviewDecisionInputSerializer, request.data)
        review = reviews.review_decide(review_id=review_id, user=request.user, **data)
        return Response(ReviewSerializer(review).data)


def audit_response(events, fmt: str, filename: str) -> HttpResponse | Response:  # noqa: ANN001
    """The audit rows as JSON (default) or CSV."""
    rows = audit_rows(events)
    if fmt != "csv":
        return Response({"count": len(rows), "results": rows})
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=AUDIT_CSV_FIELDS)
    writer.writeheader()
    for row in rows:
        writer.writerow({k: json.dumps(v, ensure_ascii=False) if isinstance(v, dict | list) else v for k, v in row.items()})
    response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}.csv"'
    return response


class ExportQueryIn(serializers.Serializer):
    export = serializers.ChoiceField(choices=["json", "csv"], required=False, default="json")


class AuditQueryIn(ExportQueryIn):
    run_id = IdField(required=False)
    review_id = IdField(required=False)
    event_type = serializers.CharField(max_length=40, required=False)


class AuditEventListOut(serializers.Serializer):
    count = serializers.IntegerField()
    results = AuditEventSerializer(many=True)


AUDIT_RESPONSES = {
    (200, "application/json"): AuditEventListOut,
    (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="With `export=csv`: one row per event."),
}


class AuditEventListApi(APIView):
    permission_classes = [IsAuthenticated, IsSupervisor]

    @extend_schema(parameters=[AuditQueryIn], responses=AUDIT_RESPONSES, summary="Audit trail export (supervisors)")
    def get(self, request: Request) -> HttpResponse | Response:
        query = validated_query(AuditQueryIn, request.query_params)
        export = query.pop("export")
        events = AuditEvent.objects.select_related("actor").order_by("id").filter(**query)
        return audit_response(events[:10000], export, "audit")


__all__ = ["is_supervisor"]


class WebhookIn(JSONInput):
    url = serializers.URLField(max_length=500)
    events = serializers.ListField(child=serializers.ChoiceField(choices=WebhookEndpoint.EVENTS), required=False, default=list)
    secret = serializers.CharField(required=False, min_length=16, max_length=128)


class WebhookOut(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.CharField()
    events = serializers.ListField(child=serializers.ChoiceField(choices=WebhookEndpoint.EVENTS))
    active = serializers.BooleanField()
    created_at = serializers.DateTimeField()


class WebhookCreatedOut(WebhookOut):
    secret = serializers.CharField(help_text="The signing secret, shown only in this response.")


class WebhookListOut(serializers.Serializer):
    count = serializers.IntegerField()
    results = WebhookOut(many=True)


def webhook_out(endpoint: WebhookEndpoint, *, with_secret: bool = False) -> dict:
    body = {"id": endpoint.pk, "url": endpoint.url, "events": endpoint.events, "active": endpoint.active,
            "created_at": endpoint.created_at.isoformat()}
    if with_secret:
        body["secret"] = endpoint.secret
    return body


class WebhookListApi(APIView):
    @extend_schema(responses=WebhookListOut, summary="Your webhook endpoints")
    def get(self, request: Request) -> Response:
        rows = WebhookEndpoint.objects.filter(owner=request.user)
        return Response({"count": rows.count(), "results": [webhook_out(e) for e in rows]})

    @extend_schema(request=WebhookIn, responses={201: WebhookCreatedOut}, summary="Register an endpoint (the secret is shown once)")
    def post(self, request: Request) -> Response:
        data = validated_input(WebhookIn, request.data)
        from .webhooks import new_secret, webhook_target_check

        webhook_target_check(data["url"])  # 400 when the address policy refuses it or it does not resolve

        endpoint = WebhookEndpoint.objects.create(
            owner=request.user, url=data["url"], events=sorted(set(data["events"])), secret=data.get("secret") or new_secret(),
        )
        return Response(webhook_out(endpoint, with_secret=True), status=status.HTTP_201_CREATED)


def _own_endpoint(user, endpoint_id: int) -> WebhookEndpoint:  # noqa: ANN001
    endpoint = WebhookEndpoint.objects.filter(pk=endpoint_id, owner=user).first()
    if endpoint is None:
        raise NotFound(f"Webhook endpoint {endpoint_id} not found.")
    return endpoint


class WebhookDetailApi(APIView):
    @extend_schema(responses={204: None}, summary="Remove an endpoint")
    def delete(self, request: Request, endpoint_id: int) -> Response:
        _own_endpoint(request.user, endpoint_id).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)


class WebhookDeliveryOut(serializers.Serializer):
    id = serializers.IntegerField()
    event = serializers.CharField()
    event_id = serializers.CharField()
    status = serializers.ChoiceField(choices=WebhookDelivery.Status.choices)
    attempts = serializers.IntegerField()
    last_status_code = serializers.IntegerField(allow_null=True)
    last_error = serializers.CharField(allow_null=True)
    delivered_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()


class WebhookDeliveryListOut(serializers.Serializer):
    results = WebhookDeliveryOut(many=True, help_text="The newest 200 deliveries, newest first.")


class WebhookDeliveryListApi(APIView):
    @extend_schema(responses=WebhookDeliveryListOut, summary="The delivery log of an endpoint")
    def get(self, request: Request, endpoint_id: int) -> Response:
        endpoint = _own_endpoint(request.user, endpoint_id)
        rows = endpoint.deliveries.order_by("-id")[:200]
        return Response({"results": [{
            "id": d.pk, "event": d.event, "event_id": d.event_id, "status": d.status, "attempts": d.attempts,
            "last_status_code": d.last_status_code, "last_error": d.last_error or None,
            "delivered_at": d.delivered_at.isoformat() if d.delivered_at else None, "created_at": d.created_at.isoformat(),
        } for d in rows]})
