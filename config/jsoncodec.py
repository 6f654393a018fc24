"""JSON encoding and decoding for the hot paths: orjson, with the standard library as its fallback.

A turn reads the run's state and the conversation's context, writes them back with the
transcript and the audit trail, and answers with the conversation's view: about 15 KB of
JSON each way. The standard library spent more on that than any single engine did; orjson
does the same work several times faster.

Both functions give what the standard library would give for anything it accepts:
- `loads` hands orjson's refusals (integers beyond 64 bits, NaN literals, lone surrogates)
  to `json.loads`, so it reads everything `json.loads` reads, to the same values.
- `dumps` writes the same JSON values as `json.dumps(..., ensure_ascii=False)`, and refuses
  datetimes, dataclasses and other types the standard encoder refuses, by handing them to
  it. Integers beyond 64 bits go the same way. Two leniencies remain: a UUID or an Enum
  member is written as its value, and NaN or an infinity as null (PostgreSQL's jsonb would
  refuse the standard library's NaN token anyway).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import orjson

# Datetimes and dataclasses, which orjson would write in its own way, go to `default`: they
# fail where the standard library's encoder fails, or take the caller's own conversion.
# Subclasses of str, int, dict and list are written as their base type, as it writes them.
_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def _refuse(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def dumps(value: Any, default: Callable[[Any], Any] | None = None) -> bytes:
    """`value` as UTF-8 JSON; `default` converts what JSON has no type for, as in `json.dumps`."""
    try:
        return orjson.dumps(value, default=default or _refuse, option=_OPTIONS)
    except TypeError:
        # orjson's refusals include some values the standard library accepts (integers
        # beyond 64 bits, a subclass of str or dict): ask it, so the answer is its answer.
        return json.dumps(value, default=default, ensure_ascii=False, separators=(",", ":")).encode()


def loads(text: str | bytes) -> Any:
    """The value `json.loads(text)` gives."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)
