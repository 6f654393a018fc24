"""One error family for the whole product, and the handlers that give it the JSON shape.

Every API error is `{"error": {"code", "message", "details"}}` with a fitting status,
including 404 and 500.
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import PermissionDenied, SuspiciousOperation
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions as drf_exceptions
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_default_handler

from config.serializers import ID_MAX

logger = logging.getLogger(__name__)


class ApplicationError(Exception):
    """A domain error with a stable code, a message for people and structured details."""

    status_code = status.HTTP_400_BAD_REQUEST
    code = "invalid_request"

    def __init__(self, message: str, *, code: str | None = None, details: Any = None, status_code: int | None = None):
        super().__init__(message)
        self.message = message
        self.code = code or self.code
        self.details = details if details is not None else {}
        if status_code is not None:
            self.status_code = status_code


class NotFound(ApplicationError):
    status_code = status.HTTP_404_NOT_FOUND
    code = "not_found"


class Forbidden(ApplicationError):
    status_code = status.HTTP_403_FORBIDDEN
    code = "forbidden"


class Conflict(ApplicationError):
    status_code = status.HTTP_409_CONFLICT
    code = "conflict"


def validated_input(serializer_class: Any, data: Any) -> dict[str, Any]:
    """Validate a request body with a DRF serializer; problems become a 400 in the error shape,
    each under its path in the body (`version.effective_from`, `chunks[2].text`)."""
    serializer = serializer_class(data=data)
    if not serializer.is_valid():
        raise drf_exceptions.ValidationError(error_paths(serializer.errors))
    return serializer.validated_data


def error_paths(errors: Any, prefix: str = "") -> dict[str, Any]:
    """A serializer's errors with those of nested serializers under their dotted path
    (a list field's errors by item index stay under the field's own name)."""
    if isinstance(errors, dict) and not any(isinstance(k, int) for k in errors):
        items = ((f"{prefix}.{k}" if prefix else str(k), v) for k, v in errors.items())
    elif isinstance(errors, list) and any(isinstance(e, dict) for e in errors):
        items = ((f"{prefix}[{i}]", e) for i, e in enumerate(errors))
    else:
        return {prefix: errors}
    flat: dict[str, Any] = {}
    for path, value in items:
        flat.update(error_paths(value, path) if value else {})
    return flat


def validated_query(serializer_class: Any, params: Any, *, code: str = "invalid_filter") -> dict[str, Any]:
    """Validate query parameters with a DRF serializer; problems become a 400 naming each parameter.

    Read as a plain dict, so an empty value (`?run_id=`) is validated like any other, as the
    schema describes it, instead of being taken for an absent parameter (DRF's form reading).
    """
    serializer = serializer_class(data=params.dict() if hasattr(params, "dict") else dict(params))
    if not serializer.is_valid():
        raise ApplicationError("The query parameters are not valid.", code=code, details=serializer.errors)
    return serializer.validated_data


def error_body(code: str, message: str, details: Any = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details if details is not None else {}}}


_DRF_CODES = {
    drf_exceptions.NotAuthenticated: "not_authenticated",
    drf_exceptions.AuthenticationFailed: "authentication_failed",
    drf_exceptions.PermissionDenied: "forbidden",
    drf_exceptions.NotFound: "not_found",
    drf_exceptions.MethodNotAllowed: "method_not_allowed",
    drf_exceptions.NotAcceptable: "not_acceptable",
    drf_exceptions.UnsupportedMediaType: "unsupported_media_type",
    drf_exceptions.Throttled: "throttled",
    drf_exceptions.ParseError: "malformed_request",
    drf_exceptions.ValidationError: "validation_error",
}


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF exception handler: every error in the product's JSON shape."""
    if isinstance(exc, ApplicationError):
        return Response(error_body(exc.code, exc.message, exc.details), status=exc.status_code)
    if isinstance(exc, SuspiciousOperation):  # too many fields, body too big, bad host...
        return Response(error_body("bad_request", str(exc) or "The request was refused."), status=400)
    if isinstance(exc, Http404):
        exc = drf_exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = drf_exceptions.PermissionDenied()
    elif isinstance(exc, DjangoValidationError):
        exc = drf_exceptions.ValidationError(exc.message_dict if hasattr(exc, "message_dict") else exc.messages)
    response = drf_default_handler(exc, context)
    if response is None:
        logger.exception("unhandled API error", exc_info=exc)
        return Response(error_body("server_error", "An internal error occurred."), status=500)
    code = next((c for cls, c in _DRF_CODES.items() if isinstance(exc, cls)), "error")
    if isinstance(exc, drf_exceptions.PermissionDenied) and isinstance(exc.get_codes(), str) and exc.get_codes() != exc.default_code:
        code = exc.get_codes()  # a permission class's own code, e.g. supervisor_required
    if isinstance(exc, drf_exceptions.ValidationError):
        message, details = "The request is not valid.", response.data
    elif isinstance(exc, drf_exceptions.Throttled):
        # DRF has set the Retry-After header from the same wait (whole seconds, rounded up).
        message, details = str(exc.detail), {"retry_after": exc.wait}
    else:
        message, details = str(getattr(exc, "detail", exc)), {}
    response.data = error_body(code, message, details)
    return response


def _wants_json(request) -> bool:  # noqa: ANN001
    return request.path.startswith("/api/")


def handler404(request, exception=None):  # noqa: ANN001, ANN201
    if _wants_json(request):
        return JsonResponse(error_body("not_found", "Not found."), status=404)
    from django.views.defaults import page_not_found

    return page_not_found(request, exception)


def handler500(request):  # noqa: ANN001, ANN201
    if _wants_json(request):
        return JsonResponse(error_body("server_error", "An internal error occurred."), status=500)
    from django.views.defaults import server_error

    return server_error(request)


def handler403(request, exception=None):  # noqa: ANN001, ANN201
    if _wants_json(request):
        return JsonResponse(error_body("forbidden", "You do not have permission."), status=403)
    from django.views.defaults import permission_denied

    return permission_denied(request, exception)


def handler400(request, exception=None):  # noqa: ANN001, ANN201
    if _wants_json(request):
        return JsonResponse(error_body("bad_request", "Bad request."), status=400)
    from django.views.defaults import bad_request

    return bad_request(request, exception)


@csrf_exempt  # nothing happens here: a POST to an unknown path is a 404, not a CSRF failure page
def api_not_found(request, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN201
    """Catch-all under /api/: unknown paths answer in the JSON error shape for every method, even with DEBUG."""
    return JsonResponse(error_body("not_found", f"No API endpoint at {request.path}."), status=404)


def csrf_failure(request, reason: str = ""):  # noqa: ANN001, ANN201
    """CSRF_FAILURE_VIEW: the JSON error shape under /api/, Django's page elsewhere."""
    if _wants_json(request):
        return JsonResponse(error_body("csrf_failed", f"CSRF verification failed: {reason}"), status=403)
    from django.views.csrf import csrf_failure as page

    return page(request, reason=reason)


def _out_of_range_ids(view_kwargs: dict[str, Any]) -> dict[str, list[str]]:
    # `<int:...>` path converters take any number of digits (never a sign), so 0 too; ids start at 1,
    # as IdField has it for the same id in a query string and the schema says (config.schema.ID_SCHEMA).
    ints = {name: value for name, value in view_kwargs.items() if isinstance(value, int) and not isinstance(value, bool)}
    return {name: [f"must be at most {ID_MAX}." if value > ID_MAX else "must be at least 1."]
            for name, value in ints.items() if not 1 <= value <= ID_MAX}


def _has_nul(request) -> bool:  # noqa: ANN001
    if "\x00" in request.path or "%00" in request.META.get("QUERY_STRING", "") or "\x00" in request.META.get("QUERY_STRING", ""):
        return True
    if request.method in ("POST", "PUT", "PATCH") and request.content_type == "application/json":
        body = request.body
        return b"\\u0000" in body or b"\x00" in body
    return False


class ApiErrorMiddleware:
    """Under /api/: NUL characters and path ids outside 1..2**63-1 are a 400, unhandled exceptions the
    JSON 500 shape (even with DEBUG on)."""

    def __init__(self, get_response):  # noqa: ANN001
        self.get_response = get_response

    def __call__(self, request):  # noqa: ANN001, ANN204
        if _wants_json(request) and _has_nul(request):
            # PostgreSQL text cannot hold NUL; refuse it up front instead of failing deep inside.
            return JsonResponse(error_body("invalid_characters", "The request contains a NUL character."), status=400)
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):  # noqa: ANN001, ANN201
        # No column holds more than 64 bits, no id is below 1: such an id in a path is bad input, not a lookup.
        if _wants_json(request) and (problems := _out_of_range_ids(view_kwargs)):
            return JsonResponse(error_body("validation_error", "The request is not valid.", problems), status=400)
        return None

    def process_exception(self, request, exception):  # noqa: ANN001, ANN201
        if not _wants_json(request) or isinstance(exception, Http404 | PermissionDenied):
            return None
        logger.exception("unhandled API error", exc_info=exception)
        return JsonResponse(error_body("server_error", "An internal error occurred."), status=500)
