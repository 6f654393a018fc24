"""Fixtures for conversation tests: a helper to talk over REST (the demo data comes from the root conftest)."""

from __future__ import annotations

import pytest

from tests.support.fake_openai import FakeOpenAI


class Chat:
    """Drive one conversation over the REST API, keeping the last response."""

    def __init__(self, client, workflow_id: str, locale: str = "en"):  # noqa: ANN001
        self.client = client
        response = client.post("/api/v1/conversations", {"workflow_id": workflow_id, "locale": locale}, format="json")
        assert response.status_code == 201, response.content
        self.state = response.json()
        self.id = self.state["id"]
        self.last = self.state

    def say(self, text: str, **headers) -> dict:  # noqa: ANN003
        response = self.client.post(f"/api/v1/conversations/{self.id}/messages", {"text": text}, format="json", **headers)
        assert response.status_code == 201, response.content
        self.last = response.json()
        return self.last

    def choose(self, option_id: str, consent: bool = False, expect: int = 200) -> dict:
        response = self.client.post(f"/api/v1/conversations/{self.id}/choose", {"option_id": option_id, "consent": consent}, format="json")
        assert response.status_code == expect, response.content
        self.last = response.json()
        return self.last

    def get(self) -> dict:
        return self.client.get(f"/api/v1/conversations/{self.id}").json()

    def option_ids(self, eligible: bool = True) -> list[str]:
        return [o["option_id"] for o in self.get()["options"] if not eligible or o["eligibility"] == "eligible"]


@pytest.fixture
def chat(api, demo):  # noqa: ANN001, ANN201
    return lambda workflow_id, locale="en": Chat(api, workflow_id, locale)


@pytest.fixture
def model_server(settings):  # noqa: ANN001, ANN201
    """`model_server(timeout=...)`: a fake OpenAI-compatible server the concierge is pointed at."""
    servers: list[FakeOpenAI] = []

    def start(*, timeout: float) -> FakeOpenAI:
        server = FakeOpenAI()
        servers.append(server)
        settings.OPENAI_API_KEY = "test-key"
        settings.OPENAI_BASE_URL = server.base_url
        settings.CONCIERGE_LLM_MODEL = "fake-model"
        settings.CONCIERGE_LLM_TIMEOUT = timeout
        return server

    yield start
    for server in servers:
        server.close()
