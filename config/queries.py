"""Hot querysets compiled once per database connection, then run with new arguments.

Django compiles a queryset's SQL anew on every evaluation; for the few reads every turn
makes (the conversation's lock, the billing rule in force) that costs more than running
them. `compiled_rows` compiles a queryset shape once, remembers where its arguments sit
among the SQL parameters, and afterwards only executes and builds the model instances
the way the ORM does (converters, select_related).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.core.exceptions import EmptyResultSet, FullResultSet
from django.db import connections, models
from django.db.models.query import get_related_populators
from django.db.transaction import TransactionManagementError


@dataclass(frozen=True)
class _Compiled:
    sql: str
    params: tuple[Any, ...]
    slots: tuple[tuple[int, int], ...]  # (position among params, index of the argument)
    kinds: tuple[type, ...]  # the argument types it was compiled for
    for_update: bool
    compiler: Any
    converters: Any  # per column, as the ORM applies them to each row
    model: type[models.Model]
    fields: tuple[int, int]  # the model's columns: row[start:end]
    init_list: tuple[str, ...]
    annotations: dict[str, int]


_NOT_COMPILABLE = object()  # a shape whose arguments do not reach the SQL unchanged here


def _probe(index: int, value: Any) -> Any:
    """A value no real query uses, of the argument's type, to find where the argument lands."""
    if type(value) is int:
        return -(10**15) - index
    if type(value) is str:
        return f"\x1fcompiled-query-probe-{index}\x1f"
    if type(value) is datetime and value.tzinfo is not None:
        return datetime(1, 1, 1, tzinfo=UTC) + timedelta(microseconds=index + 1)
    return None


def _compile(build: Callable[..., models.QuerySet], args: tuple[Any, ...], using: str) -> _Compiled | object:
    probes = [_probe(i, arg) for i, arg in enumerate(args)]
    if any(p is None for p in probes):
        return _NOT_COMPILABLE
    compiler = build(*probes).query.get_compiler(using=using)
    try:
        sql, params = compiler.as_sql()
    except (EmptyResultSet, FullResultSet):  # e.g. a probe outside an integer column's range
        return _NOT_COMPILABLE
    slots = tuple((pos, i) for pos, param in enumerate(params) for i, probe in enumerate(probes)
                  if type(param) is type(probe) and param == probe)
    # A probe that shows up altered as well (a LIKE pattern, a changed case) would stay
    # frozen in the compiled parameters: such shapes are not compiled.
    altered = any(isinstance(param, str) and isinstance(probe, str) and param != probe and probe.lower() in param.lower()
                  for param in params for probe in probes)
    if altered or {i for _, i in slots} != set(range(len(args))):
        # An argument was transformed on its way into the SQL (e.g. a datetime that SQLite
        # takes as text): this shape is evaluated by the ORM each time instead.
        return _NOT_COMPILABLE
    select, klass_info = compiler.select, compiler.klass_info
    start, end = klass_info["select_fields"][0], klass_info["select_fields"][-1] + 1
    return _Compiled(
        sql, tuple(params), slots, tuple(type(a) for a in args), bool(compiler.query.select_for_update), compiler,
        converters=compiler.get_converters([s[0] for s in select[: compiler.col_count]]),
        model=klass_info["model"], fields=(start, end),
        init_list=tuple(f[0].target.attname for f in select[start:end]),
        annotations=dict(compiler.annotation_col_map or {}),
    )


def compiled_rows(key: str, build: Callable[..., models.QuerySet], *args: Any, using: str = "default") -> list[Any]:
    """The model instances `build(*args)` returns, with its SQL compiled once per connection.

    `build` must give the same query shape for any arguments, passing each into a filter by
    value; `key` names the shape. Arguments that are ints, strs or aware datetimes and reach
    the SQL unchanged are compiled; anything else is simply evaluated by the ORM.
    """
    connection = connections[using]
    cache = connection.__dict__.setdefault("_compiled_querysets", {})
    compiled = cache.get(key)
    if compiled is None:
        compiled = cache[key] = _compile(build, args, using)
    if compiled is _NOT_COMPILABLE or compiled.kinds != tuple(type(a) for a in args) or any(
        type(a) is datetime and a.tzinfo is None for a in args
    ):
        return list(build(*args).using(using))
    if compiled.for_update and connection.get_autocommit():  # as the ORM refuses it
        raise TransactionManagementError("select_for_update cannot be used outside of a transaction.")
    params = list(compiled.params)
    for pos, i in compiled.slots:
        params[pos] = args[i]
    with connection.cursor() as cursor:
        cursor.execute(compiled.sql, params)
        rows = cursor.fetchall()
    return _instances(compiled, rows, using) if rows else []


def _instances(compiled: _Compiled, rows: list[tuple], using: str) -> list[Any]:
    """Rows to model instances as Django's ModelIterable builds them (with select_related)."""
    compiler = compiled.compiler
    if compiled.converters:
        rows = compiler.apply_converters(rows, compiled.converters)
    # Populators hold per-query state: made per call (cheap), from the compiled select.
    populators = get_related_populators(compiler.klass_info, compiler.select, using)
    (start, end), model, init_list = compiled.fields, compiled.model, compiled.init_list
    instances = []
    for row in rows:
        obj = model.from_db(using, init_list, row[start:end])
        for populator in populators:
            populator.populate(row, obj)
        for name, position in compiled.annotations.items():
            setattr(obj, name, row[position])
        instances.append(obj)
    return instances
