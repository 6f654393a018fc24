"""The building blocks of the conversation config's schema (config.py declares its parts with them).

Each part of the config is a frozen pydantic dataclass: pydantic checks the shape (types, required
keys, allowed values, unknown keys) and the engine runs on the same objects. The types below also
accept the short forms authors write: a text may be a plain string (English) or {lang: text}; a
pattern set a list of regexes (any language) or {lang: [regex]}; a list of names a single name.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Mapping
from functools import cache
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BeforeValidator, ConfigDict, TypeAdapter, ValidationError
from pydantic_core import PydanticCustomError

from ._serde import FrozenDict, Serializable, freeze
from ._text import compile_pattern

S = TypeVar("S", bound="Spec")


def _localized(value: Any) -> Any:
    if value is None:
        return {}
    if isinstance(value, str):
        return {"en": value}
    if not isinstance(value, Mapping):
        raise PydanticCustomError("text", 'must be a string or a {"en": ..., "zh": ...} object')
    return value


def _compiles(pattern: str) -> str:
    try:
        compile_pattern(pattern)  # the engine's own cache: validating a plan warms it
    except re.error as exc:
        raise PydanticCustomError("regex", "invalid regex: {error}", {"error": str(exc)}) from None
    return pattern


def _patterns(value: Any) -> Any:
    if value is None:
        return {}
    if isinstance(value, str | list | tuple):
        return {"any": [value] if isinstance(value, str) else value}
    if isinstance(value, Mapping):
        return {lang: [p] if isinstance(p, str) else p for lang, p in value.items()}
    raise PydanticCustomError("patterns", 'must be a list of regexes or a {"en": [...], "zh": [...]} object')


def one_or_many(value: Any) -> Any:
    """A list of names given as one name (or none) as a list."""
    if value is None:
        return ()
    return (value,) if isinstance(value, str) else value


Localized = Annotated[Mapping[str, str], BeforeValidator(_localized)]  # {lang: text}
Regex = Annotated[str, AfterValidator(_compiles)]
Patterns = Annotated[Mapping[str, tuple[Regex, ...]], BeforeValidator(_patterns)]  # {lang: (regex, ...)}
Names = Annotated[tuple[str, ...], BeforeValidator(one_or_many)]


class Spec(Serializable):
    """Base of the config's parts: lists and dicts are frozen once validated, `from_dict` validates.
    An unknown key is refused with its path (a typo is never ignored silently)."""

    __pydantic_config__ = ConfigDict(extra="forbid")  # pydantic reads it on every part's class

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, list | dict | tuple) and not isinstance(value, FrozenDict):
                object.__setattr__(self, f.name, freeze(value))

    def _default(self, name: str, value: Any) -> None:
        """Fill an empty field from another one (a label defaults to the id), before freezing."""
        if not getattr(self, name):
            object.__setattr__(self, name, value)

    @classmethod
    def from_dict(cls: type[S], data: Mapping[str, Any] | None) -> S:
        """Validate and build from config JSON (or `to_dict()` output); raises pydantic's ValidationError."""
        return adapter(cls).validate_python(dict(data or {}))


@cache
def adapter(cls: type) -> TypeAdapter:
    """pydantic's validator of a spec class, built once."""
    return TypeAdapter(cls)


def without_refused_fields(data: Any, error: ValidationError) -> Any:
    """A copy of a document without each field pydantic refused (a wrong regex drops its language's
    list, an unknown key goes), so the rest can still be built and its references checked."""
    pruned = copy.deepcopy(data)
    for problem in error.errors(include_url=False):
        node, last = pruned, None
        for part in problem["loc"]:
            if isinstance(node, dict) and part in node:
                last = (node, part)
                node = node[part]
            elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
                node = node[part]
            else:
                break
        if last is not None and not problem["type"].startswith("missing"):
            last[0].pop(last[1], None)
    return pruned
