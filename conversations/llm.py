"""The model backend: any OpenAI-compatible endpoint through the official `openai` client.

It only transports: it sends the context package and returns the parsed JSON object, or
raises ModelUnavailable. Whether the answer may count is decided by the contract checks
in the concierge, never here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import openai


class ModelUnavailable(Exception):
    """The model could not give a usable JSON answer (timeout, error, garbage)."""

    def __init__(self, kind: str, detail: str):
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


@dataclass(frozen=True)
class ModelSettings:
    api_key: str
    base_url: str | None
    model: str
    timeout: float = 20.0


class OpenAIChatModel:
    """Chat Completions with JSON output, a timeout and one retry (the client's own)."""

    name = "openai"

    def __init__(self, settings: ModelSettings):
        self.settings = settings
        self.client = openai.OpenAI(
            api_key=settings.api_key, base_url=settings.base_url, timeout=settings.timeout, max_retries=1
        )

    def complete_json(self, system: str, user: str) -> dict[str, Any]:
        """Ask for one JSON object; raise ModelUnavailable when none comes back."""
        try:
            response = self.client.chat.completions.create(
                model=self.settings.model,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                response_format={"type": "json_object"},
                temperature=0,
            )
        except openai.APITimeoutError as error:
            raise ModelUnavailable("timeout", str(error)) from error
        except openai.APIError as error:
            raise ModelUnavailable("api_error", str(error)) from error
        content = response.choices[0].message.content if response.choices else None
        if not content:
            raise ModelUnavailable("empty", "the model returned no content")
        try:
            parsed = json.loads(content)
        except json.JSONDecodeError as error:
            raise ModelUnavailable("malformed_json", f"{error}: {content[:200]}") from error
        if not isinstance(parsed, dict):
            raise ModelUnavailable("malformed_json", "the answer is not a JSON object")
        return parsed


def model_from_settings() -> OpenAIChatModel | None:
    """The configured model, or None when the concierge runs offline on its rules."""
    from django.conf import settings

    if not settings.OPENAI_API_KEY:
        return None
    return OpenAIChatModel(
        ModelSettings(
            api_key=settings.OPENAI_API_KEY,
            base_url=settings.OPENAI_BASE_URL,
            model=settings.CONCIERGE_LLM_MODEL,
            timeout=settings.CONCIERGE_LLM_TIMEOUT,
        )
    )
