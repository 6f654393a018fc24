"""The error knowledge services raise for input they cannot take (an HTTP 400)."""

from __future__ import annotations

from config.errors import ApplicationError


class InvalidKnowledge(ApplicationError):
    code = "validation_error"
