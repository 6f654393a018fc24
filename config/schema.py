"""OpenAPI generation: drf-spectacular's AutoSchema plus the errors every operation can answer.

Each view declares its success bodies (and its 409s, where a conflict is possible) with
`@extend_schema`; the error answers shared by all operations are added here, once, all
in the `Error` component's shape.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular import openapi
from drf_spectacular.utils import OpenApiResponse

from config.serializers import ErrorSerializer

COMMON_ERRORS = {
    400: "The request is not valid: a body, path or query value that is malformed or out of range "
         "(`details` names each problem).",
    401: "No valid credentials: send `Authorization: Token <key>`.",
    403: "Your role may not do this.",
    404: "Not found, or not yours to see.",
    429: "Too many requests: retry later.",
}
BODY_ERRORS = {415: "The body is not JSON (or form data)."}


def error_response(description: str) -> OpenApiResponse:
    return OpenApiResponse(ErrorSerializer, description=description)


def conflict(description: str) -> dict[int, OpenApiResponse]:
    """The 409 an operation answers when the state it acts on does not allow it."""
    return {409: error_response(description)}


class AutoSchema(openapi.AutoSchema):
    """drf-spectacular's AutoSchema; every operation also documents the common errors."""

    def get_operation_id(self) -> str:
        # The API's views are plain APIViews returning `{"count", "results"}` envelopes, which
        # spectacular cannot tell from a single object: a GET on a collection path is a list.
        operation_id = super().get_operation_id()
        if self.method == "GET" and not self.path.rstrip("/").endswith("}"):
            operation_id = operation_id.removesuffix("_retrieve") + ("" if operation_id.endswith("_list") else "_list")
        return operation_id

    def get_operation(self, path: str, path_regex: str, path_prefix: str, method: str, registry: Any) -> dict | None:
        operation = super().get_operation(path, path_regex, path_prefix, method, registry)
        if operation is None:
            return None
        error = {"application/json": {"schema": self.resolve_serializer(ErrorSerializer, "response").ref}}
        errors = {**COMMON_ERRORS, **(BODY_ERRORS if "requestBody" in operation else {})}
        responses = operation.setdefault("responses", {})
        for code, description in errors.items():
            responses.setdefault(str(code), {"description": description, "content": error})
        operation["responses"] = dict(sorted(responses.items()))
        return operation
