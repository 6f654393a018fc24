"""URL configuration: pages under /, admin under /admin/, the REST API under /api/v1/."""

from django.contrib import admin
from django.urls import include, path, re_path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from billing import api as billing_api
from config.errors import api_not_found
from config.health import ready
from conversations import api as conversation_api
from conversations.knowledge.urls import api_urlpatterns as knowledge_api
from workflows import api as workflow_api

api_v1 = [
    path("workflow-plans", workflow_api.WorkflowPlanListApi.as_view(), name="workflow-plans"),
    path("workflow-plans/<slug:workflow_id>", workflow_api.WorkflowPlanDetailApi.as_view(), name="workflow-plan"),
    path("reviews", workflow_api.ReviewListApi.as_view(), name="reviews"),
    path("reviews/<int:review_id>", workflow_api.ReviewDetailApi.as_view(), name="review"),
    path("reviews/<int:review_id>/decision", workflow_api.ReviewDecisionApi.as_view(), name="review-decision"),
    path("audit-events", workflow_api.AuditEventListApi.as_view(), name="audit-events"),
    path("webhooks", workflow_api.WebhookListApi.as_view(), name="webhooks"),
    path("webhooks/<int:endpoint_id>", workflow_api.WebhookDetailApi.as_view(), name="webhook"),
    path("webhooks/<int:endpoint_id>/deliveries", workflow_api.WebhookDeliveryListApi.as_view(), name="webhook-deliveries"),
    path("conversations", conversation_api.ConversationListApi.as_view(), name="conversations"),
    path("conversations/<int:conversation_id>", conversation_api.ConversationDetailApi.as_view(), name="conversation"),
    path("conversations/<int:conversation_id>/messages", conversation_api.MessageApi.as_view(), name="conversation-messages"),
    path("conversations/<int:conversation_id>/choose", conversation_api.ChooseApi.as_view(), name="conversation-choose"),
    path("conversations/<int:conversation_id>/audit", conversation_api.AuditApi.as_view(), name="conversation-audit"),
    path("", include(knowledge_api)),
    path("billing-rules", billing_api.BillingRuleListApi.as_view(), name="billing-rules"),
    path("billing-rules/simulate", billing_api.SimulateApi.as_view(), name="billing-simulate"),
    path("billing-rules/<slug:rule_code>", billing_api.BillingRuleDetailApi.as_view(), name="billing-rule"),
    path("parking-orders", billing_api.OrderListApi.as_view(), name="parking-orders"),
    path("parking-orders/<str:order_no>", billing_api.OrderDetailApi.as_view(), name="parking-order"),
    path("parking-orders/<str:order_no>/verify", billing_api.VerifyApi.as_view(), name="parking-order-verify"),
    path("arrears-orders", billing_api.ArrearsApi.as_view(), name="arrears-orders"),
    path("cities", billing_api.CityListApi.as_view(), name="cities"),
    path("lots", billing_api.LotListApi.as_view(), name="lots"),
]

admin.site.site_header = "Concierge administration"
admin.site.site_title = "Concierge admin"
admin.site.index_title = "Supervision"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    re_path(r"^api/", api_not_found),
    path("favicon.ico", RedirectView.as_view(url="/static/favicon.svg", permanent=True)),
    path("readyz", ready, name="ready"),
    path("", include("conversations.urls")),
]

handler400 = "config.errors.handler400"
handler403 = "config.errors.handler403"
handler404 = "config.errors.handler404"
handler500 = "config.errors.handler500"
