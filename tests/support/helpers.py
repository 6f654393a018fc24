"""Helpers shared by tests (fixtures live in the root conftest.py)."""

from __future__ import annotations

import json
from pathlib import Path

PLANS_DIR = Path(__file__).resolve().parents[2] / "workflows" / "plans"


def plan_document(workflow_id: str) -> dict:
    return json.loads((PLANS_DIR / f"{workflow_id}.json").read_text(encoding="utf-8"))


def client_for(user):  # noqa: ANN001, ANN201
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client
