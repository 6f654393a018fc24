"""OpenAPI generation: drf-spectacular's AutoSchema plus the errors every operation can answer.

Each view declares its success bodies (and its 409s, where a conflict is possible) with
`@extend_schema`; the error answers shared by all operations are added here, once, all
in the `Error` component's shape. So are two rules validation enforces that spectacular
cannot read from the code: the 64-bit bound of ids in paths (config.errors.ApiErrorMiddleware)
and a request serializer's rules across fields (its `schema_rules`, e.g. an `anyOf`).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular import openapi
from drf_spectacular.authentication import SessionScheme
from drf_spectacular.utils import OpenApiResponse

from config.serializers import ID_MAX, ErrorSerializer

COMMON_ERRORS = {
    400: "The request is not valid: a body, path or query value that is malformed or out of range "
         "(`details` names each problem).",
    401: "No valid credentials: send `Authorization: Token <key>`.",
    403: "Your role may not do this.",
    404: "Not found, or not yours to see.",
    429: "Too many requests: retry later.",
}
BODY_ERRORS = {415: "The body is not JSON (or form data)."}
# What IdField and the middleware accept: a positive 64-bit integer (a bigint column's range).
ID_SCHEMA = {"type": "integer", "format": "int64", "minimum": 1, "maximum": ID_MAX}


class ProjectSessionScheme(SessionScheme):
    """config.authentication.SessionAuthentication is DRF's (only its CSRF failure's code differs):
    the same `cookieAuth` scheme (spectacular matches the session scheme by exact class)."""

    target_class = "config.authentication.SessionAuthentication"


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
        self._bound_path_ids(operation)
        if "requestBody" in operation:
            self._add_request_rules()
        error = {"application/json": {"schema": self.resolve_serializer(ErrorSerializer, "response").ref}}
        errors = {**COMMON_ERRORS, **(BODY_ERRORS if "requestBody" in operation else {})}
        responses = operation.setdefault("responses", {})
        for code, description in errors.items():
            responses.setdefault(str(code), {"description": description, "content": error})
        operation["responses"] = dict(sorted(responses.items()))
        return operation

    def _bound_path_ids(self, operation: dict) -> None:
        # Every `<int:...>` in the URLs is an id, refused beyond ID_SCHEMA's range before any view runs;
        # spectacular reads only "integer" from the converter.
        for parameter in operation.get("parameters", []):
            if parameter["in"] == "path" and parameter["schema"].get("type") == "integer":
                parameter["schema"] = dict(ID_SCHEMA)

    def _add_request_rules(self) -> None:
        # A rule across fields (a serializer's validate()) has no field to carry it: the serializer
        # states it as JSON Schema keywords, merged into its request component.
        serializer = self.get_request_serializer()
        rules = getattr(serializer, "schema_rules", None)
        if rules and not isinstance(serializer, dict):
            component = self.resolve_serializer(serializer, "request")
            if component.schema is not None:
                component.schema.update(rules)
