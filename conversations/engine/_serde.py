"""JSON round-trip for the engine's frozen dataclasses, driven by their type hints."""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, TypeVar

T = TypeVar("T", bound="Serializable")


class FrozenDict(dict):
    """A dict that refuses mutation; still JSON-serializable, picklable and comparable."""

    def _immutable(self, *args: Any, **kwargs: Any) -> typing.NoReturn:
        raise TypeError("FrozenDict is immutable; build a new one")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _immutable  # type: ignore[assignment]
    __ior__ = _immutable  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (dict(self),))

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict) -> FrozenDict:
        return self  # immutable, so sharing is safe


def freeze(value: Any) -> Any:
    """Lists become tuples and dicts FrozenDicts, recursively (dataclasses are left as they are)."""
    if isinstance(value, FrozenDict):
        return value
    if isinstance(value, Mapping):
        return FrozenDict({k: freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    return value


def to_jsonable(value: Any) -> Any:
    """Plain JSON data (dict, list, str, int, float, bool, None) from engine values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [to_jsonable(v) for v in value]
    return value


@lru_cache(maxsize=256)
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def from_jsonable(tp: Any, data: Any) -> Any:
    """Rebuild a value of type `tp` from JSON data (tolerant of missing optional keys)."""
    if data is None:
        return None
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return from_jsonable(args[0], data) if len(args) == 1 else data
    if dataclasses.is_dataclass(tp):
        return tp.from_dict(data) if hasattr(tp, "from_dict") else data
    if origin in (tuple, list, set, frozenset) or tp in (tuple, list):
        args = typing.get_args(tp)
        item = args[0] if args else Any
        return tuple(from_jsonable(item, v) for v in data)
    if origin in (dict, Mapping) or tp is dict:
        args = typing.get_args(tp)
        item = args[1] if len(args) == 2 else Any
        return FrozenDict({str(k): from_jsonable(item, v) for k, v in data.items()})
    if tp is float and isinstance(data, int | float) and not isinstance(data, bool):
        return float(data)
    return freeze(data)


class Serializable:
    """Mixin: to_dict()/from_dict() for frozen dataclasses, and freezing of list/dict fields."""

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if isinstance(value, list | dict) and not isinstance(value, FrozenDict):
                object.__setattr__(self, f.name, freeze(value))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict."""
        return to_jsonable(self)

    @classmethod
    def from_dict(cls: type[T], data: Mapping[str, Any] | None) -> T:
        """Rebuild from to_dict() output; unknown keys are ignored, missing ones defaulted."""
        data = data or {}
        hints = _hints(cls)
        kwargs = {}
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            if f.name in data:
                kwargs[f.name] = from_jsonable(hints[f.name], data[f.name])
        return cls(**kwargs)
