"""JSON encoding for the hot paths: orjson, with the standard library as its fallback.

A turn writes the run's state and the conversation's context back with the transcript and
the audit trail, and answers with the conversation's view: about 20 KB of JSON. The
standard library's encoder spent more on that than any single engine did; orjson does the
same work several times faster.

`dumps` writes the same JSON values as `json.dumps(..., ensure_ascii=False)`, and refuses
datetimes, dataclasses and other types the standard encoder refuses, by handing them to it.
Integers beyond 64 bits go the same way. Two leniencies remain: a UUID or an Enum member is
written as its value, and NaN or an infinity as null (PostgreSQL's jsonb would refuse the
standard library's NaN token anyway).

Decoding stays with the standard library: orjson reads integers beyond 64 bits as floats.
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

