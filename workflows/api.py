"""REST endpoints for workflow plans, reviews and the audit trail (thin: services decide)."""

from __future__ import annotations

import csv
import io
import json

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.errors import ApplicationError, NotFound, validated_input

from . import services
from .access import access_review, is_supervisor, require_supervisor
from .models import AuditEvent, Review, WebhookEndpoint, WorkflowPlan
from .serializers import (
    AUDIT_CSV_FIELDS,
    AuditEventSerializer,
    ReviewDecisionInputSerializer,
    ReviewSerializer,
    WorkflowPlanSerializer,
    WorkflowPlanSummarySerializer,
    audit_rows,
)


class WorkflowPlanListApi(APIView):
    @extend_schema(responses=WorkflowPlanSummarySerializer(many=True), summary="List workflows (newest versions)")
    def get(self, request: Request) -> Response:
        return Response({"results": WorkflowPlanSummarySerializer(services.plans_latest(), many=True).data})

    @extend_schema(
        request=OpenApiTypes.OBJECT,
        responses={201: WorkflowPlanSerializer, 200: WorkflowPlanSerializer},
        summary="Upload a plan (validated; a new version when it changed)",
    )
    def post(self, request: Request) -> Response:
        document = request.data
        # Validation is pure and reveals nothing, so every caller learns what is wrong with a plan.
        services.plan_check(document)
        require_supervisor(request.user)
        row, created = services.plan_upload(document=document, user=request.user)
        return Response(WorkflowPlanSerializer(row).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class WorkflowPlanDetailApi(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("version", int, required=False)],
        responses=WorkflowPlanSerializer,
        summary="Read a workflow plan (newest version unless ?version=)",
    )
    def get(self, request: Request, workflow_id: str) -> Response:
        version = request.query_params.get("version")
        if version:
            if not version.isdigit():
                raise ApplicationError("version must be a positive integer.", code="invalid_version")
            row = WorkflowPlan.objects.filter(workflow_id=workflow_id, version=int(version)).first()
            if row is None:
                raise NotFound(f"Workflow '{workflow_id}' has no version {version}.", code="workflow_not_found")
        else:
            row = services.plan_latest(workflow_id)
        return Response(WorkflowPlanSerializer(row).data)


class ReviewListApi(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("status", str, required=False, enum=Review.Status.values),
            OpenApiParameter("workflow_id", str, required=False),
            OpenApiParameter("kind", str, required=False, enum=Review.Kind.values),
        ],
        responses=ReviewSerializer(many=True),
        summary="Supervisor review queue",
    )
    def get(self, request: Request) -> Response:
        require_supervisor(request.user)
        reviews = Review.objects.select_related("run__conversation", "decided_by").order_by("created_at", "id")
        wanted = request.query_params.get("status")
        if wanted:
            if wanted not in Review.Status.values:
                raise ApplicationError(f"status must be one of {', '.join(Review.Status.values)}.", code="invalid_filter")
            reviews = reviews.filter(status=wanted)
        for name in ("workflow_id", "kind"):
            if request.query_params.get(name):
                reviews = reviews.filter(**{name: request.query_params[name]})
        return Response({"count": reviews.count(), "results": ReviewSerializer(reviews[:500], many=True).data})


class ReviewDetailApi(APIView):
    @extend_schema(responses=ReviewSerializer, summary="Read a review")
    def get(self, request: Request, review_id: int) -> Response:
        return Response(ReviewSerializer(access_review(request.user, review_id)).data)


class ReviewDecisionApi(APIView):
    @extend_schema(request=ReviewDecisionInputSerializer, responses=ReviewSerializer, summary="Decide a review")
    def post(self, request: Request, review_id: int) -> Response:
        require_supervisor(request.user)
        data = validated_input(ReviewDecisionInputSerializer, request.data)
        review = services.review_decide(review_id=review_id, user=request.user, **data)
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


class AuditEventListApi(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("run_id", int, required=False),
            OpenApiParameter("review_id", int, required=False),
            OpenApiParameter("event_type", str, required=False),
            OpenApiParameter("export", str, required=False, enum=["json", "csv"]),
        ],
        responses=AuditEventSerializer(many=True),
        summary="Audit trail export (supervisors)",
    )
    def get(self, request: Request) -> HttpResponse | Response:
        require_supervisor(request.user)
        events = AuditEvent.objects.select_related("actor").order_by("id")
        for name in ("run_id", "review_id", "event_type"):
            value = request.query_params.get(name)
            if value:
                if name.endswith("_id") and not value.isdigit():
                    raise ApplicationError(f"{name} must be an integer.", code="invalid_filter")
                events = events.filter(**{name: value})
        return audit_response(events[:10000], request.query_params.get("export", "json"), "audit")


__all__ = ["is_supervisor"]


class WebhookIn(serializers.Serializer):
    url = serializers.URLField(max_length=500)
    events = serializers.ListField(child=serializers.ChoiceField(choices=WebhookEndpoint.EVENTS), required=False, default=list)
    secret = serializers.CharField(required=False, min_length=16, max_length=128)


def webhook_out(endpoint: WebhookEndpoint, *, with_secret: bool = False) -> dict:
    body = {"id": endpoint.pk, "url": endpoint.url, "events": endpoint.events, "active": endpoint.active,
            "created_at": endpoint.created_at.isoformat()}
    if with_secret:
        body["secret"] = endpoint.secret
    return body


class WebhookListApi(APIView):
    @extend_schema(responses=OpenApiTypes.OBJECT, summary="Your webhook endpoints")
    def get(self, request: Request) -> Response:
        rows = WebhookEndpoint.objects.filter(owner=request.user)
        return Response({"count": rows.count(), "results": [webhook_out(e) for e in rows]})

    @extend_schema(request=WebhookIn, responses={201: OpenApiTypes.OBJECT}, summary="Register an endpoint (the secret is shown once)")
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


class WebhookDeliveryListApi(APIView):
    @extend_schema(responses=OpenApiTypes.OBJECT, summary="The delivery log of an endpoint")
    def get(self, request: Request, endpoint_id: int) -> Response:
        endpoint = _own_endpoint(request.user, endpoint_id)
        rows = endpoint.deliveries.order_by("-id")[:200]
        return Response({"results": [{
            "id": d.pk, "event": d.event, "event_id": d.event_id, "status": d.status, "attempts": d.attempts,
            "last_status_code": d.last_status_code, "last_error": d.last_error or None,
            "delivered_at": d.delivered_at.isoformat() if d.delivered_at else None, "created_at": d.created_at.isoformat(),
        } for d in rows]})
