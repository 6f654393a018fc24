"""The Content-Security-Policy (django-csp): strict on every page, and nothing inline that it would block."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


def directives(response) -> dict[str, list[str]]:  # noqa: ANN001
    policy = response["Content-Security-Policy"]
    return {part.split()[0]: part.split()[1:] for part in policy.split(";") if part.strip()}


def test_pages_carry_a_strict_policy(person) -> None:  # noqa: ANN001
    client = Client()
    for response in (client.get("/login/"), (client.force_login(person), client.get("/"))[1]):
        assert response.status_code == 200
        policy = directives(response)
        assert policy["default-src"] == ["'self'"]
        assert policy["script-src"] == ["'self'"] and policy["style-src"] == ["'self'"]  # no nonce unless a page uses one
        assert policy["frame-ancestors"] == ["'none'"] and policy["object-src"] == ["'none'"]
        assert "'unsafe-inline'" not in response["Content-Security-Policy"]
        assert "'unsafe-eval'" not in response["Content-Security-Policy"]


def test_templates_have_no_inline_script_style_or_eval() -> None:
    for template in (ROOT / "templates").rglob("*.html"):
        if template.parts[-2] == "drf_spectacular":
            continue  # its inline blocks carry the nonce (next test)
        text = template.read_text(encoding="utf-8")
        assert not re.search(r"<script(?![^>]*\bsrc=)", text), template
        assert not re.search(r"\sstyle=|<style", text), template
        assert not re.search(r"""\bon[a-z]+=|hx-on|hx-vals=['"]js:""", text), template
    for module in ROOT.glob("*/**/admin.py"):
        assert "style=" not in module.read_text(encoding="utf-8"), module


def test_the_api_docs_inline_blocks_carry_the_nonce_of_their_response() -> None:
    response = Client().get("/api/docs/")
    assert response.status_code == 200
    nonce = re.search(r"'nonce-([^']+)'", directives(response)["script-src"][1]).group(1)
    assert directives(response)["style-src"] == ["'self'", f"'nonce-{nonce}'"]
    html = response.content.decode()
    inline = re.findall(r"<(script|style)( nonce=\"([^\"]*)\")?>", html)
    assert inline and all(found_nonce == nonce for _, _, found_nonce in inline)


def test_the_admin_is_under_the_policy_too(supervisor) -> None:  # noqa: ANN001
    supervisor.is_staff = True
    supervisor.save()
    client = Client()
    client.force_login(supervisor)
    response = client.get("/admin/workflows/review/")
    assert response.status_code == 200
    assert directives(response)["script-src"] == ["'self'"]
    assert "css/admin.css" in response.content.decode()
