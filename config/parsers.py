"""The REST API's JSON parser: bounded depth and 64-bit integers.

DRF's parser hands whatever `json.load` builds to the views: a body nested a hundred
thousand levels deep reached the C scanner's recursion limit (a 500), and integers of any
size reached the database and the JSON encoder (a 500 there). Neither is a shape any
endpoint takes, so both are a 400 `malformed_request` before a view sees the body.
"""

from __future__ import annotations

import codecs
import json
from typing import Any

from django.conf import settings
from rest_framework import parsers
from rest_framework.exceptions import ParseError

MAX_DEPTH = 32  # the deepest shipped document (a workflow plan) nests 10 levels
INT_MIN, INT_MAX = -(2**63), 2**63 - 1


def _int64(text: str) -> int:
    value = int(text)
    if not INT_MIN <= value <= INT_MAX:
        raise ValueError(f"integer {text[:24]}{'...' if len(text) > 24 else ''} is beyond 64 bits")
    return value


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not valid JSON")


def depth_exceeds(document: Any, limit: int) -> bool:
    """Whether arrays and objects nest deeper than `limit` (iterative: no recursion)."""
    pending: list[tuple[Any, int]] = [(document, 1)]
    while pending:
        node, depth = pending.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        pending.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, refusing documents nested deeper than MAX_DEPTH, integers beyond
    64 bits and the NaN/Infinity literals."""

    max_depth = MAX_DEPTH

    def parse(self, stream: Any, media_type: str | None = None, parser_context: dict | None = None) -> Any:
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = codecs.getreader(encoding)(stream).read()
            document = json.loads(text, parse_int=_int64, parse_constant=_no_constant)
        except RecursionError:
            raise ParseError(f"JSON parse error - nested deeper than {self.max_depth} levels.") from None
        except ValueError as exc:  # includes UnicodeDecodeError and JSONDecodeError
            raise ParseError(f"JSON parse error - {exc}") from None
        # Only a body with more brackets than the limit can nest past it: most skip the walk.
        if text.count("[") + text.count("{") > self.max_depth and depth_exceeds(document, self.max_depth):
            raise ParseError(f"JSON parse error - nested deeper than {self.max_depth} levels.")
        return document
