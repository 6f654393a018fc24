"""Supervisors' knowledge screens: sources with ingest progress, read-only chunks, re-ingest.

State is read-only here; sources come from packs, billing, the command and the API, and the
one write (re-ingest) is an action that calls the same service as everything else.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import Count, QuerySet
from django.http import HttpRequest
from django.utils.html import format_html

from .models import KnowledgeChunk, KnowledgeSource
from .services.ingestion import knowledge_sources_reingest


class ReadOnlyMixin:
    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


class ChunkInline(ReadOnlyMixin, admin.TabularInline):
    model = KnowledgeChunk
    fields = ["ordinal", "chunk_id", "heading", "excerpt", "embedder", "dim"]
    readonly_fields = fields
    ordering = ["ordinal"]
    extra = 0
    show_change_link = True

    @admin.display(description="text")
    def excerpt(self, obj: KnowledgeChunk) -> str:
        return obj.text if len(obj.text) <= 160 else obj.text[:159] + "…"


@admin.register(KnowledgeSource)
class KnowledgeSourceAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = [
        "source_id", "title", "doc_type", "source_type", "city_code", "version", "status",
        "ingest_badge", "progress", "chunk_total", "updated_at",
    ]
    list_filter = ["ingest_status", "status", "doc_type", "source_type", "city_code"]
    search_fields = ["source_id", "title", "source"]
    ordering = ["source_id"]
    inlines = [ChunkInline]
    actions = ["reingest_in_background"]
    fields = [
        "source_id", "title", "doc_type", "source_type", "version", "status", "locale", "city_code",
        "lot_codes", "effective_from", "effective_to", "source", "metadata", "content_hash", "embedder",
        "ingest_status", "ingest_total", "ingest_done", "ingest_error", "ingested_at", "created_at",
        "updated_at", "content",
    ]
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[KnowledgeSource]:
        return super().get_queryset(request).annotate(chunk_count=Count("chunks"))

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        # The change page is a read-only view; actions need view permission only.
        return False

    @admin.display(description="chunks", ordering="chunk_count")
    def chunk_total(self, obj: KnowledgeSource) -> int:
        return getattr(obj, "chunk_count", 0)

    @admin.display(description="ingest", ordering="ingest_status")
    def ingest_badge(self, obj: KnowledgeSource) -> str:
        # Colours in static/css/admin.css: the Content-Security-Policy allows no inline styles.
        title = obj.ingest_error or obj.get_ingest_status_display()
        return format_html('<span class="ingest-{}" title="{}">{}</span>', obj.ingest_status, title, obj.get_ingest_status_display())

    @admin.display(description="progress")
    def progress(self, obj: KnowledgeSource) -> str:
        if not obj.ingest_total:
            return "—"
        return f"{obj.ingest_done}/{obj.ingest_total} ({100 * obj.ingest_done // obj.ingest_total}%)"

    @admin.action(description="Re-ingest selected sources in the background", permissions=["view"])
    def reingest_in_background(self, request: HttpRequest, queryset: QuerySet[KnowledgeSource]) -> None:
        pks = knowledge_sources_reingest(
            source_pks=list(queryset.values_list("pk", flat=True)), user=request.user
        )
        self.message_user(
            request, f"Queued {len(pks)} source(s) for re-ingestion; progress shows in the list.",
            messages.SUCCESS,
        )


@admin.register(KnowledgeChunk)
class KnowledgeChunkAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["chunk_id", "source_key", "source_version", "ordinal", "heading", "doc_type", "status", "embedder"]
    list_filter = ["doc_type", "status", "embedder"]
    search_fields = ["chunk_id", "source_key", "heading", "text"]
    list_select_related = ["source"]
    fields = [
        "chunk_id", "source", "source_key", "source_version", "ordinal", "heading", "text", "title",
        "doc_type", "source_type", "city_code", "lot_codes", "effective_from", "effective_to", "status",
        "embedder", "dim", "created_at",
    ]
    readonly_fields = fields
