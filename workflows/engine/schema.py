"""Shared pieces of the document schemas (plans here, conversation configs in the context engine).

The shape of a document (types, required keys, allowed values, unknown keys) is declared once, as
pydantic dataclasses; pydantic collects every mismatch. This module turns pydantic's errors into the
problems users see: a JSON path (`$.nodes[2].type`) and a short message in the project's wording.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import PlainValidator, ValidationError
from pydantic_core import PydanticCustomError

_ID_RE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


def _identifier(value: Any) -> str:
    if not isinstance(value, str) or not _ID_RE.match(value):
        raise PydanticCustomError("identifier", "must be a lowercase identifier (a-z, 0-9, _; starting with a letter)")
    return value


def _text(value: Any) -> str | dict[str, str]:
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, Mapping) and value and all(
        isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in value.items()
    ):
        return dict(value)
    raise PydanticCustomError("text", 'must be a non-empty string or a {"en": ..., "zh": ...} object')


Identifier = Annotated[str, PlainValidator(_identifier)]
Text = Annotated[str | Mapping[str, str], PlainValidator(_text)]  # plain text, or {"en": ..., "zh": ...}


def localize(text: Text | None, locale: str = "en") -> str:
    """Pick the text for a locale ("zh-hans" matches "zh"), falling back to English."""
    if text is None:
        return ""
    if isinstance(text, str):
        return text
    lang = (locale or "en").lower().split("-")[0]
    return text.get(lang) or text.get("en") or next(iter(text.values()), "")


# pydantic's error types in the project's wording; any other type keeps pydantic's own message
_MESSAGES = {
    "missing": "is required",
    "missing_argument": "is required",
    "extra_forbidden": "unknown key",
    "unexpected_keyword_argument": "unknown key",  # the same, in a pydantic dataclass
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "string_type": "must be a string",
    "int_type": "must be an integer",
    "int_parsing": "must be an integer",
    "int_from_float": "must be an integer",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "list_type": "must be a list",
    "tuple_type": "must be a list",
    "dict_type": "must be an object",
    "mapping_type": "must be an object",
    "dataclass_type": "must be an object",
    "model_type": "must be an object",
    "typed_dict_type": "must be an object",
}


def json_path(loc: tuple[str | int, ...]) -> str:
    """`("nodes", 2, "type")` as `$.nodes[2].type`."""
    return "$" + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)


def _message(error: Mapping[str, Any]) -> str:
    kind, ctx = error["type"], error.get("ctx") or {}
    if kind == "literal_error":
        return f"must be one of {ctx['expected']}"
    if kind == "too_short":
        return "must not be empty"
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        return error["msg"].replace("Input should be", "must be")
    return _MESSAGES.get(kind, error["msg"])


def problems_from(error: ValidationError, prefix: tuple[str | int, ...] = ()) -> list[tuple[str, str]]:
    """Every mismatch pydantic found, as (JSON path, message), in document order."""
    return [(json_path(prefix + tuple(e["loc"])), _message(e)) for e in error.errors(include_url=False)]
