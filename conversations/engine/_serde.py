"""JSON round-trip for the engine's frozen dataclasses, driven by their type hints."""

from __future__ import annotations

import dataclasses
import operator
import types
import typing
from collections.abc import Callable, Mapping
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


_SCALARS = frozenset({str, int, float, bool, type(None)})


def freeze(value: Any) -> Any:
    """Lists become tuples and dicts FrozenDicts, recursively (dataclasses are left as they are)."""
    if type(value) in _SCALARS:  # most values, and checked without the Mapping ABC
        return value
    if isinstance(value, FrozenDict):
        return value
    if isinstance(value, Mapping):
        return FrozenDict({k: freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    return value


def to_jsonable(value: Any) -> Any:
    """Plain JSON data (dict, list, str, int, float, bool, None) from engine values."""
    value_type = type(value)
    if value_type in _SCALARS:  # most values: checked first, by exact type
        return value
    encode = _ENCODERS.get(value_type)
    if encode is None:
        encode = _ENCODERS[value_type] = _encoder_for(value_type)
    return encode(value)


# How each type is written, worked out once per type: a state holds thousands of values of a few dozen types.
_ENCODERS: dict[type, Callable[[Any], Any]] = {}


def _encoder_for(value_type: type) -> Callable[[Any], Any]:
    names = _dataclass_field_names(value_type)
    if names is not None:
        read = operator.attrgetter(*names) if names else (lambda value: ())
        if len(names) == 1:
            return lambda value: {names[0]: to_jsonable(read(value))}
        return lambda value: {name: item if type(item) in _SCALARS else to_jsonable(item)
                              for name, item in zip(names, read(value), strict=True)}
    if issubclass(value_type, Mapping):
        return lambda value: {str(k): to_jsonable(v) for k, v in value.items()}
    if issubclass(value_type, list | tuple | set | frozenset):
        return lambda value: [to_jsonable(v) for v in value]
    return lambda value: value


@lru_cache(maxsize=512)
def _dataclass_field_names(cls: type) -> tuple[str, ...] | None:
    """The field names of a dataclass type, None for any other type (looked up once per type)."""
    if not dataclasses.is_dataclass(cls):
        return None
    return tuple(f.name for f in dataclasses.fields(cls))


@lru_cache(maxsize=256)
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


@lru_cache(maxsize=512)
def _container_fields(cls: type) -> tuple[str, ...]:
    """The fields of a dataclass that may hold a list or a dict: every field but those typed as scalars (a
    str, int, float, bool or None, or a union of them), which freezing would only look at (values of small
    dataclasses are made by the thousand in a turn)."""
    names = _dataclass_field_names(cls) or ()
    hints = _hints(cls)
    return tuple(name for name in names if not _scalar_type(hints.get(name, Any)))


def _scalar_type(tp: Any) -> bool:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        return all(_scalar_type(arg) for arg in typing.get_args(tp))
    return tp in _SCALARS


def from_jsonable(tp: Any, data: Any) -> Any:
    """Rebuild a value of type `tp` from JSON data (tolerant of missing optional keys)."""
    return _decoder(tp)(data)


def _none_safe(decode: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda data: None if data is None else decode(data)


@lru_cache(maxsize=512)
def _decoder(tp: Any) -> Callable[[Any], Any]:
    """A function rebuilding values of type `tp`, worked out once per type (a state has thousands of values)."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return _decoder(args[0]) if len(args) == 1 else _none_safe(lambda data: data)
    if dataclasses.is_dataclass(tp):
        return _none_safe(tp.from_dict) if hasattr(tp, "from_dict") else _none_safe(lambda data: data)
    if origin in (tuple, list, set, frozenset) or tp in (tuple, list):
        args = typing.get_args(tp)
        item = _decoder(args[0] if args else Any)
        return _none_safe(lambda data: tuple(item(v) for v in data))
    if origin in (dict, Mapping) or tp is dict:
        args = typing.get_args(tp)
        value = _decoder(args[1] if len(args) == 2 else Any)
        return _none_safe(lambda data: FrozenDict({str(k): value(v) for k, v in data.items()}))
    if tp is float:
        return _none_safe(lambda data: float(data) if isinstance(data, int | float) and not isinstance(data, bool) else freeze(data))
    return freeze  # None stays None


_MISSING = object()


@lru_cache(maxsize=256)
def _field_readers(cls: type) -> tuple[tuple[str, Callable[[Any], Any], Any, Callable[[], Any] | None], ...]:
    """Per field: its name, its decoder, and its default value or default factory (_MISSING when it has none)."""
    hints = _hints(cls)
    return tuple(
        (f.name, _top_level_decoder(hints[f.name]),
         _MISSING if f.default is dataclasses.MISSING else f.default,
         None if f.default_factory is dataclasses.MISSING else f.default_factory)
        for f in dataclasses.fields(cls)
    )


def _top_level_decoder(tp: Any) -> Callable[[Any], Any]:
    """A field's decoder whose value is frozen as `Serializable.__post_init__` would freeze it. Only the
    decoders that pass data through as it is (a union of types, a dataclass without from_dict) need it."""
    decode = _decoder(tp)
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return _top_level_decoder(args[0])
        return lambda data: _frozen(decode(data))
    if dataclasses.is_dataclass(tp) and not hasattr(tp, "from_dict"):
        return lambda data: _frozen(decode(data))
    return decode


def _frozen(value: Any) -> Any:
    """A list or plain dict field frozen, as `Serializable.__post_init__` does."""
    return freeze(value) if isinstance(value, list | dict) and not isinstance(value, FrozenDict) else value


class Serializable:
    """Mixin: to_dict()/from_dict() for frozen dataclasses, and freezing of list/dict fields."""

    def __post_init__(self) -> None:
        for name in _container_fields(type(self)):
            value = getattr(self, name)
            if isinstance(value, list | dict) and not isinstance(value, FrozenDict):
                object.__setattr__(self, name, freeze(value))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict."""
        return to_jsonable(self)

    @classmethod
    def from_dict(cls: type[T], data: Mapping[str, Any] | None) -> T:
        """Rebuild from to_dict() output; unknown keys are ignored, missing ones defaulted."""
        data = data or {}
        # Built field by field as __init__ and __post_init__ would (a stored state is read every turn,
        # and running the generated __init__ over its dozens of fields cost as much as decoding them).
        values = {}
        for name, decode, default, factory in _field_readers(cls):
            if name in data:
                value = data[name]
                values[name] = value if decode is freeze and type(value) in _SCALARS else decode(value)
            elif factory is not None:
                values[name] = _frozen(factory())
            elif default is not _MISSING:
                values[name] = default  # never a list or dict: dataclasses refuse mutable defaults
            else:  # a required field is missing: let __init__ raise its usual error
                return cls(**{n: decode(data[n]) for n, decode, _, _ in _field_readers(cls) if n in data})
        instance = object.__new__(cls)
        instance.__dict__.update(values)
        return instance
