"""The REST API's JSON renderer."""

from __future__ import annotations

from typing import Any

from rest_framework import renderers

from config.jsoncodec import dumps

_LINE_SEPARATOR, _PARAGRAPH_SEPARATOR = "\u2028".encode(), "\u2029".encode()


class JSONRenderer(renderers.JSONRenderer):
    """DRF's JSON renderer, encoding its compact UTF-8 form with `config.jsoncodec`.

    A turn's answer is the conversation's whole view (about 8 KB); the standard library's
    encoder took longer over it than the view took to build. The output is the bytes DRF
    would send; values JSON has no type for go through DRF's own encoder. An indented
    response (`Accept: application/json; indent=2`, the browsable API) or other settings
    take DRF's path.
    """

    def render(self, data: Any, accepted_media_type: str | None = None, renderer_context: dict | None = None) -> bytes:
        if data is None:
            return b""
        if self.ensure_ascii or not self.compact or self.get_indent(accepted_media_type, renderer_context or {}) is not None:
            return super().render(data, accepted_media_type, renderer_context)
        body = dumps(data, default=self.encoder_class().default)
        # As DRF does: escaped, so the JSON is also valid JavaScript.
        return body.replace(_LINE_SEPARATOR, b"\\u2028").replace(_PARAGRAPH_SEPARATOR, b"\\u2029")
