"""The deployment checks and the OpenAPI schema are clean, and the schema describes each answer."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ERROR_CODES = ("400", "401", "403", "404", "429")


def manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    # The browser tests allow async-unsafe ORM calls in this process; a deployment never does.
    dropped = {"DJANGO_SETTINGS_MODULE", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    environment = {k: v for k, v in os.environ.items() if k not in dropped} | env
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120)


def test_deploy_check_with_production_settings_prints_no_warning() -> None:
    result = manage("check", "--deploy", DJANGO_SETTINGS_MODULE="config.settings.production",
                    SECRET_KEY=secrets.token_urlsafe(60), ALLOWED_HOSTS="x")
    assert result.returncode == 0, result.stderr
    assert (result.stdout + result.stderr).strip() == "System check identified no issues (0 silenced).", result.stdout + result.stderr


def test_spectacular_validates_the_schema_without_a_warning(tmp_path: Path) -> None:
    result = manage("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml"),
                    DJANGO_SETTINGS_MODULE="config.settings.test")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Warning" not in result.stderr and "Error" not in result.stderr, result.stderr


@pytest.fixture(scope="module")
def openapi() -> dict:
    from drf_spectacular.generators import SchemaGenerator

    return SchemaGenerator().get_schema(request=None, public=True)


def operations(openapi: dict):  # noqa: ANN201
    for path, item in openapi["paths"].items():
        for method, operation in item.items():
            yield path, method, operation


def resolve(openapi: dict, schema: dict) -> dict:
    while "$ref" in schema:
        schema = openapi["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def test_every_operation_documents_a_typed_success_body(openapi: dict) -> None:
    for path, method, operation in operations(openapi):
        success = {code: r for code, r in operation["responses"].items() if code.startswith("2")}
        assert success, (method, path)
        for code, response in success.items():
            if code == "204":
                continue
            schema = resolve(openapi, response["content"]["application/json"]["schema"])
            assert schema.get("properties"), (method, path, code, schema)  # an object with named fields


def test_every_operation_documents_its_errors_in_the_error_shape(openapi: dict) -> None:
    error = openapi["components"]["schemas"]["Error"]
    assert error["required"] == ["error"] and set(resolve(openapi, error["properties"]["error"])["required"]) == {"code", "message", "details"}
    for path, method, operation in operations(openapi):
        codes = ERROR_CODES + (("415",) if "requestBody" in operation else ())
        for code in codes:
            assert operation["responses"][code]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}, (method, path, code)


@pytest.mark.parametrize(("path", "method"), [
    ("/api/v1/reviews/{review_id}/decision", "post"), ("/api/v1/conversations/{conversation_id}/messages", "post"),
    ("/api/v1/conversations/{conversation_id}/choose", "post"), ("/api/v1/billing-rules", "post"),
    ("/api/v1/parking-orders", "post"), ("/api/v1/parking-orders/{order_no}/verify", "post"),
    ("/api/v1/knowledge/chunks/batch", "post"),
])
def test_conflicts_are_documented_where_they_happen(openapi: dict, path: str, method: str) -> None:
    assert "409" in openapi["paths"][path][method]["responses"]


def test_lists_are_documented_as_the_envelopes_they_are(openapi: dict) -> None:
    for path, method, operation in operations(openapi):
        if method != "get" or path.endswith("}"):
            continue
        body = resolve(openapi, operation["responses"]["200"]["content"]["application/json"]["schema"])
        assert body["properties"]["results"]["type"] == "array", path
        if path not in ("/api/v1/workflow-plans", "/api/v1/webhooks/{endpoint_id}/deliveries"):
            assert body["properties"]["count"]["type"] == "integer", path


def test_audit_exports_document_both_formats(openapi: dict) -> None:
    for path in ("/api/v1/audit-events", "/api/v1/conversations/{conversation_id}/audit"):
        assert set(openapi["paths"][path]["get"]["responses"]["200"]["content"]) == {"application/json", "text/csv"}


@pytest.mark.parametrize("path", ["/api/v1/conversations/{conversation_id}/messages", "/api/v1/conversations/{conversation_id}/choose"])
def test_the_idempotency_key_header_is_documented(openapi: dict, path: str) -> None:
    headers = [p for p in openapi["paths"][path]["post"]["parameters"] if p["in"] == "header"]
    assert [(h["name"], h.get("required", False)) for h in headers] == [("Idempotency-Key", False)]
