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
from typing import Any

from django.db import connections, models
from django.db.models.query import get_related_populators


@dataclass(frozen=True)
class _Compiled:
    sql: str
    params: tuple[Any, ...]
    slots: tuple[tuple[int, int], ...]  # (position among params, index of the argument)
    compiler: Any
    converters: Any  # per column, as the ORM applies them to each row
    model: type[models.Model]
    fields: tuple[int, int]  # the model's columns: row[start:end]
    init_list: tuple[str, ...]
    annotations: dict[str, int]


def _probe(index: int, value: Any) -> int | str:
    """A value no real query uses, of the argument's type, to find where the argument lands."""
    if type(value) is int:
        return -(10**15) - index
    if type(value) is str:
        return f"\x1fcompiled-query-probe-{index}\x1f"
    raise TypeError(f"compiled_rows takes int and str arguments, not {type(value).__name__}")


def _compile(build: Callable[..., models.QuerySet], args: tuple[Any, ...], using: str) -> _Compiled:
    probes = [_probe(i, arg) for i, arg in enumerate(args)]
    compiler = build(*probes).query.get_compiler(using=using)
    sql, params = compiler.as_sql()
    slots = tuple((pos, i) for pos, param in enumerate(params) for i, probe in enumerate(probes)
                  if type(param) is type(probe) and param == probe)
    if {i for _, i in slots} != set(range(len(args))):
        raise ValueError("every argument must reach the SQL unchanged (a filter by value)")
    select, klass_info = compiler.select, compiler.klass_info
    start, end = klass_info["select_fields"][0], klass_info["select_fields"][-1] + 1
    return _Compiled(
        sql, tuple(params), slots, compiler,
        converters=compiler.get_converters([s[0] for s in select[: compiler.col_count]]),
        model=klass_info["model"], fields=(start, end),
        init_list=tuple(f[0].target.attname for f in select[start:end]),
        annotations=dict(compiler.annotation_col_map or {}),
    )


def compiled_rows(key: str, build: Callable[..., models.QuerySet], *args: int | str, using: str = "default") -> list[Any]:
    """The model instances `build(*args)` would return, compiling its SQL once per connection.

    `build` must give the same query shape for any arguments and pass each argument into a
    filter unchanged. `key` names the shape.
    """
    connection = connections[using]
    cache = connection.__dict__.setdefault("_compiled_querysets", {})
    compiled = cache.get(key)
    if compiled is None:
        compiled = cache[key] = _compile(build, args, using)
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
