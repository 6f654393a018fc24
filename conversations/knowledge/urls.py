"""Knowledge API routes; config/urls.py includes `api_urlpatterns` under /api/v1/."""

from __future__ import annotations

from django.urls import path

from . import api

api_urlpatterns = [
    path("knowledge/sources", api.KnowledgeSourceApi.as_view(), name="knowledge-sources"),
    path("knowledge/chunks/batch", api.KnowledgeChunkBatchApi.as_view(), name="knowledge-chunks-batch"),
    path("retrieve", api.RetrieveApi.as_view(), name="retrieve"),
]
