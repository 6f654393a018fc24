"""Knowledge REST endpoints: source upsert, chunk batches, filtered retrieval.

Writes (ingestion) are for operators and supervisors (403 otherwise, checked before the body
is read); any authenticated user may retrieve.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.errors import validated_input
from config.schema import conflict
from config.serializers import POSITIVE_INT_MAX, AwareDateTimeField, JSONInput
from workflows.permissions import HoldsRequiredPerms

from .engine import RetrievalFilters
from .models import IngestStatus, KnowledgeSource, KnowledgeStatus
from .services import ingestion, retrieval


class IngestOut(serializers.Serializer):
    status = serializers.ChoiceField(choices=IngestStatus.choices)
    total = serializers.IntegerField(help_text="Chunks to embed.")
    done = serializers.IntegerField(help_text="Chunks embedded so far.")
    error = serializers.CharField(allow_null=True)


class SourceOut(serializers.Serializer):
    source_id = serializers.CharField()
    title = serializers.CharField(allow_blank=True)
    doc_type = serializers.CharField(allow_blank=True)
    source_type = serializers.CharField(allow_blank=True)
    city_code = serializers.CharField(allow_null=True, allow_blank=True, help_text="null: every city.")
    lot_codes = serializers.ListField(child=serializers.CharField())
    effective_from = serializers.DateTimeField(allow_null=True)
    effective_to = serializers.DateTimeField(allow_null=True)
    source = serializers.CharField(allow_blank=True)
    version = serializers.IntegerField()
    status = serializers.ChoiceField(choices=KnowledgeStatus.choices)
    locale = serializers.CharField(allow_null=True)
    metadata = serializers.DictField()
    content_hash = serializers.CharField(allow_blank=True)
    embedder = serializers.CharField(allow_null=True)
    chunk_count = serializers.IntegerField()
    ingest = IngestOut()


class SourceUpsertOut(SourceOut):
    outcome = serializers.CharField(help_text="created | updated | unchanged")


def source_out(source: KnowledgeSource, *, outcome: str | None = None) -> dict[str, Any]:
    body = {
        "source_id": source.source_id,
        "title": source.title,
        "doc_type": source.doc_type,
        "source_type": source.source_type,
        "city_code": source.city_code,
        "lot_codes": list(source.lot_codes or []),
        "effective_from": source.effective_from.isoformat() if source.effective_from else None,
        "effective_to": source.effective_to.isoformat() if source.effective_to else None,
        "source": source.source,
        "version": source.version,
        "status": source.status,
        "locale": source.locale or None,
        "metadata": source.metadata,
        "content_hash": source.content_hash,
        "embedder": source.embedder or None,
        "chunk_count": source.chunks.count(),
        "ingest": {
            "status": source.ingest_status,
            "total": source.ingest_total,
            "done": source.ingest_done,
            "error": source.ingest_error or None,
        },
    }
    if outcome is not None:
        body["outcome"] = outcome
    return body


class SourceIn(JSONInput):
    # Field-level rules (codes, ISO times with offsets, ranges) live in the engine's record
    # validator, which reports every problem at once; the serializer only shapes types.
    source_id = serializers.CharField(max_length=128)
    title = serializers.CharField(max_length=300, required=False)
    doc_type = serializers.CharField(max_length=64, required=False)
    source_type = serializers.CharField(max_length=64, required=False)
    city_code = serializers.CharField(max_length=32, required=False, allow_null=True, allow_blank=True)
    lot_codes = serializers.ListField(child=serializers.CharField(max_length=64), required=False)
    effective_from = serializers.CharField(required=False, allow_null=True, allow_blank=True)
    effective_to = serializers.CharField(required=False, allow_null=True, allow_blank=True)
    source = serializers.CharField(max_length=500, required=False, allow_blank=True)
    version = serializers.IntegerField(min_value=1, max_value=POSITIVE_INT_MAX, required=False)
    status = serializers.ChoiceField(choices=KnowledgeStatus.choices, required=False)
    locale = serializers.CharField(max_length=16, required=False, allow_null=True)
    metadata = serializers.DictField(required=False)
    content = serializers.CharField(required=False, trim_whitespace=False)


class KnowledgeSourceApi(APIView):
    permission_classes = [IsAuthenticated, HoldsRequiredPerms]
    required_perms = {"POST": ("conversations.add_knowledgesource", "conversations.change_knowledgesource")}

    @extend_schema(
        request=SourceIn,
        responses={
            201: OpenApiResponse(SourceUpsertOut, description="The source was created."),
            200: OpenApiResponse(SourceUpsertOut, description="The source was updated or is unchanged."),
        },
        summary="Upsert a knowledge source; with `content` it is chunked and embedded (operators, supervisors)",
    )
    def post(self, request: Request) -> Response:
        data = validated_input(SourceIn, request.data)
        source, outcome = ingestion.knowledge_source_upsert(data=data, user=request.user)
        code = status.HTTP_201_CREATED if outcome == "created" else status.HTTP_200_OK
        return Response(source_out(source, outcome=outcome), status=code)


class ChunkIn(JSONInput):
    chunk_id = serializers.CharField(max_length=64, required=False)
    ordinal = serializers.IntegerField(min_value=0, max_value=POSITIVE_INT_MAX, required=False)
    heading = serializers.CharField(max_length=500, required=False, allow_blank=True)
    text = serializers.CharField()
    embedding = serializers.ListField(child=serializers.FloatField(), required=False, allow_null=True)


class ChunkBatchIn(JSONInput):
    source_id = serializers.CharField(max_length=128)
    embedder = serializers.CharField(max_length=64, required=False)
    replace = serializers.BooleanField(required=False, default=False)
    chunks = ChunkIn(many=True, allow_empty=False, max_length=ingestion.MAX_BATCH_CHUNKS)


class ChunkBatchOut(serializers.Serializer):
    written = serializers.IntegerField(help_text="Chunks written.")
    source = SourceOut()


class KnowledgeChunkBatchApi(APIView):
    permission_classes = [IsAuthenticated, HoldsRequiredPerms]
    required_perms = {"POST": ("conversations.add_knowledgechunk", "conversations.change_knowledgesource")}

    @extend_schema(
        request=ChunkBatchIn,
        responses={200: ChunkBatchOut, **conflict("Some chunk ids belong to another source (`chunk_id_taken`).")},
        summary="Add or replace a source's chunks; embeddings are checked for dimension (operators, supervisors)",
    )
    def post(self, request: Request) -> Response:
        data = validated_input(ChunkBatchIn, request.data)
        source, written = ingestion.knowledge_chunks_batch(
            source_id=data["source_id"],
            chunks=data["chunks"],
            embedder_name=data.get("embedder"),
            replace=data["replace"],
            user=request.user,
        )
        return Response({"written": written, "source": source_out(source)})


class RetrieveIn(JSONInput):
    """A retrieval request: give `query` (text that is not all whitespace), `query_embedding` (a
    non-empty vector) or both; with neither it is a 400 naming `query`. The filters narrow the
    candidates whichever is given."""

    # validate() below as JSON Schema, for the request component (config.schema.AutoSchema).
    schema_rules = {
        "anyOf": [
            {"required": ["query"], "properties": {"query": {"pattern": r"\S"}}},
            {"required": ["query_embedding"], "properties": {"query_embedding": {"type": "array", "minItems": 1}}},
        ],
    }

    query = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=2000,
        help_text="The text to search for. Required unless `query_embedding` is given; blank counts as absent.",
    )
    top_k = serializers.IntegerField(min_value=1, max_value=retrieval.MAX_TOP_K, required=False, default=5)
    mode = serializers.ChoiceField(choices=list(retrieval.MODES), required=False, default="hybrid")
    doc_type = serializers.CharField(max_length=64, required=False, allow_null=True)
    source_type = serializers.CharField(max_length=64, required=False, allow_null=True)
    city_code = serializers.CharField(max_length=32, required=False, allow_null=True)
    lot_code = serializers.CharField(max_length=64, required=False, allow_null=True)
    at_time = AwareDateTimeField(required=False, allow_null=True)
    source_ids = serializers.ListField(
        child=serializers.CharField(max_length=128), required=False, allow_null=True, max_length=500
    )
    include_inactive = serializers.BooleanField(required=False, default=False)
    query_embedding = serializers.ListField(
        child=serializers.FloatField(), required=False, allow_null=True,
        help_text="A query vector (the embedder's dimension). Required unless `query` is given; empty or null counts as absent.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs.get("query", "").strip() and not attrs.get("query_embedding"):
            raise serializers.ValidationError({"query": ["is required (or give query_embedding)"]})
        return attrs


@extend_schema_field(OpenApiTypes.DATETIME)
class IsoDateTimeOut(serializers.Field):
    """A datetime as `isoformat()` writes it, offset kept (DRF's field would move it to UTC's "Z")."""

    def to_representation(self, value: Any) -> str:
        return value.isoformat()


class RoundedScoreOut(serializers.FloatField):
    def to_representation(self, value: Any) -> float:
        return round(float(value), 6)


class HitOut(serializers.Serializer):
    """A retrieval hit (`RetrievalHit`: the chunk and its scores)."""

    chunk_id = serializers.CharField(source="chunk.chunk_id")
    source_id = serializers.CharField(source="chunk.source_id")
    version = serializers.IntegerField(source="chunk.source_version")
    title = serializers.CharField(source="chunk.title", allow_blank=True)
    heading = serializers.CharField(source="chunk.heading", allow_blank=True)
    text = serializers.CharField(source="chunk.text", allow_blank=True)
    score = RoundedScoreOut(allow_null=True)
    vector_score = RoundedScoreOut(allow_null=True)
    lexical_score = RoundedScoreOut(allow_null=True)
    rank = serializers.IntegerField()
    doc_type = serializers.CharField(source="chunk.doc_type", allow_blank=True)
    source_type = serializers.CharField(source="chunk.source_type", allow_blank=True)
    city_code = serializers.CharField(source="chunk.city_code", allow_null=True, allow_blank=True)
    lot_codes = serializers.ListField(source="chunk.lot_codes", child=serializers.CharField())
    effective_from = IsoDateTimeOut(source="chunk.effective_from", allow_null=True)
    effective_to = IsoDateTimeOut(source="chunk.effective_to", allow_null=True)


class CitationOut(serializers.Serializer):
    """A citation (`Citation`): the source, its version and the snippet that backs the answer."""

    source_id = serializers.CharField()
    version = serializers.IntegerField()
    title = serializers.CharField(allow_blank=True)
    chunk_id = serializers.CharField()
    snippet = serializers.CharField(allow_blank=True)
    effective_from = IsoDateTimeOut(allow_null=True)
    effective_to = IsoDateTimeOut(allow_null=True)


class RetrieveOut(serializers.Serializer):
    hits = HitOut(many=True)
    citations = CitationOut(many=True)
    trace = serializers.DictField(help_text="How the hits were found: filters, candidates, scores.")


class RetrieveApi(APIView):
    @extend_schema(
        request=RetrieveIn,
        responses=RetrieveOut,
        summary="Filtered top-k retrieval with citations and a trace",
    )
    def post(self, request: Request) -> Response:
        data = validated_input(RetrieveIn, request.data)
        filters = RetrievalFilters(
            doc_type=data.get("doc_type") or None,
            source_type=data.get("source_type") or None,
            city_code=data.get("city_code") or None,
            lot_code=data.get("lot_code") or None,
            at_time=data.get("at_time"),  # aware: AwareDateTimeField refuses a time without offset
            source_ids=tuple(data["source_ids"]) if data.get("source_ids") else None,
            include_inactive=data["include_inactive"],
        )
        result = retrieval.knowledge_retrieve(
            data["query"],
            filters=filters,
            top_k=data["top_k"],
            mode=data["mode"],
            query_vector=data.get("query_embedding") or None,
        )
        return Response(RetrieveOut(result).data)
