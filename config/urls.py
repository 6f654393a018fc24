"""URL configuration: pages under /, admin under /admin/, the REST API under /api/v1/."""

from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from config.errors import api_not_found
from workflows import api as workflow_api

api_v1 = [
    path("workflow-plans", workflow_api.WorkflowPlanListApi.as_view(), name="workflow-plans"),
    path("workflow-plans/<slug:workflow_id>", workflow_api.WorkflowPlanDetailApi.as_view(), name="workflow-plan"),
    path("reviews", workflow_api.ReviewListApi.as_view(), name="reviews"),
    path("reviews/<int:review_id>", workflow_api.ReviewDetailApi.as_view(), name="review"),
    path("reviews/<int:review_id>/decision", workflow_api.ReviewDecisionApi.as_view(), name="review-decision"),
    path("audit-events", workflow_api.AuditEventListApi.as_view(), name="audit-events"),
]

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    re_path(r"^api/", api_not_found),
    path("", include("conversations.urls")),
]

handler400 = "config.errors.handler400"
handler403 = "config.errors.handler403"
handler404 = "config.errors.handler404"
handler500 = "config.errors.handler500"
