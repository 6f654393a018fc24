"""The writes that end a transaction's work, sent together.

A conversation turn ends with two compare-and-set updates (the run and the conversation,
each guarded by its version) and inserts (the transcript and the audit trail). On
PostgreSQL they go as one statement of data-modifying CTEs: one round trip instead of
four, and no ORM compilation on the hot path. On other databases the ORM sends them one by
one. Either way they run inside the caller's transaction, so a stale version rolls back
everything the turn wrote.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, time
from decimal import Decimal
from typing import Any
from uuid import UUID

from django.db import connections, models
from psycopg.types.json import Jsonb

from config.jsoncodec import dumps


@dataclass(frozen=True)
class _Update:
    model: type[models.Model]
    pk: Any
    version: int
    values: Mapping[str, Any]
    stale: Exception


class WriteBatch:
    """Collects version-checked updates and inserts; `flush` sends them, in one statement where it can."""

    def __init__(self, using: str = "default") -> None:
        self.using = using
        self._updates: list[_Update] = []
        self._inserts: dict[type[models.Model], list[models.Model]] = {}

    def update(self, model: type[models.Model], pk: Any, *, version: int, values: Mapping[str, Any], stale: Exception) -> None:
        """Set `values` on the row if its `version` column still holds `version`; else raise `stale` at flush."""
        self._updates.append(_Update(model, pk, version, dict(values), stale))

    def insert(self, objs: list[models.Model]) -> None:
        """Insert new model instances (each gets its primary key at flush), in list order."""
        for obj in objs:
            self._inserts.setdefault(type(obj), []).append(obj)

    def __bool__(self) -> bool:
        return bool(self._updates or self._inserts)

    def flush(self) -> None:
        """Send everything collected and empty the batch; raises the `stale` of the first update that missed."""
        if not self:
            return
        updates, inserts = self._updates, self._inserts
        self._updates, self._inserts = [], {}
        connection = connections[self.using]
        if connection.vendor == "postgresql":
            counts = _flush_postgresql(connection, updates, inserts)
        else:
            counts = _flush_orm(self.using, updates, inserts)
        for update, count in zip(updates, counts, strict=True):
            if count != 1:
                raise update.stale


def versioned_update(
    model: type[models.Model], pk: Any, *, version: int, values: Mapping[str, Any], stale: Exception, batch: WriteBatch | None = None,
) -> None:
    """A compare-and-set update: sent now, or with `batch` at its flush when one is given."""
    writes = batch if batch is not None else WriteBatch()
    writes.update(model, pk, version=version, values=values, stale=stale)
    if batch is None:
        writes.flush()


def _flush_orm(using: str, updates: list[_Update], inserts: dict[type[models.Model], list[models.Model]]) -> list[int]:
    counts = [u.model._base_manager.using(using).filter(pk=u.pk, version=u.version).update(**u.values) for u in updates]
    for model, objs in inserts.items():
        model._base_manager.using(using).bulk_create(objs)
    return counts


# Fields whose value, when it already has this exact type (or is None), is what the
# database takes: the conversion the ORM would run returns it unchanged.
_TAKEN_AS_IS: tuple[tuple[type[models.Field], type], ...] = (
    (models.BooleanField, bool),
    (models.CharField, str),
    (models.TextField, str),
    (models.IntegerField, int),  # and its Positive/Big/Small kinds
)


_ROW_PLANS: dict[type[models.Model], tuple] = {}
_MISSING = object()


def _row_plan(model: type[models.Model]) -> tuple[tuple[models.Field, str, str, type | None], ...]:
    """Per column: the field, its column, its attribute, and the type taken as is (None: convert)."""
    plan = _ROW_PLANS.get(model)
    if plan is None:
        fields = [f for f in model._meta.concrete_fields if not f.primary_key]
        plan = _ROW_PLANS[model] = tuple((f, f.column, f.attname, _as_is_type(f)) for f in fields)
    return plan


def _as_is_type(field: models.Field) -> type | None:
    if isinstance(field, models.ForeignKey):  # the key column holds the target's integer key
        return int if isinstance(field.target_field, models.IntegerField) else None
    if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
        return None
    for kind, python_type in _TAKEN_AS_IS:
        if isinstance(field, kind):
            plain = type(field).get_prep_value is kind.get_prep_value and type(field).get_db_prep_value is kind.get_db_prep_value
            return python_type if plain else None
    return None


def _row(obj: models.Model, plan: tuple, connection) -> dict[str, Any]:  # noqa: ANN001
    """One row as JSON values: JSON fields as they are (the encoder refuses what the ORM's
    would), other columns as the database takes them, with times in full precision."""
    row = {}
    values = obj.__dict__
    for f, column, attname, as_is in plan:
        value = values.get(attname, _MISSING)
        if as_is is not None and (value is None or type(value) is as_is):
            row[column] = value
            continue
        value = f.pre_save(obj, True)  # fills auto_now_add
        if not isinstance(f, models.JSONField):
            value = f.get_db_prep_save(value, connection)
            if isinstance(value, datetime | date | time):
                value = value.isoformat()
            elif isinstance(value, Decimal | UUID):
                value = str(value)
        row[column] = value
    return row


# SQL text per statement shape (tables and columns): built once, then reused, so psycopg
# and PostgreSQL parse and prepare it like any other repeated statement.
_SQL_CACHE: dict[tuple, str] = {}


def _flush_postgresql(connection, updates: list[_Update], inserts: dict[type[models.Model], list[models.Model]]) -> list[int]:  # noqa: ANN001
    params: list[Any] = []
    shape: list[tuple] = []
    for u in updates:
        fields = [u.model._meta.get_field(name) for name in u.values]
        params.extend(f.get_db_prep_save(u.values[f.name], connection) for f in fields)
        params.extend((u.pk, u.version))
        shape.append(("update", u.model, tuple(f.column for f in fields)))
    for model, objs in inserts.items():
        # Each table's rows travel as one JSON parameter: the statement's text (and its plan)
        # stays the same whatever the number of rows.
        plan = _row_plan(model)
        rows = []
        for obj in objs:
            obj._prepare_related_fields_for_save(operation_name="bulk_create")
            rows.append(_row(obj, plan, connection))
        params.append(Jsonb(rows, dumps=dumps))
        shape.append(("insert", model, tuple(column for _, column, _, _ in plan)))
    key = tuple(shape)
    sql = _SQL_CACHE.get(key)
    if sql is None:
        sql = _SQL_CACHE[key] = _postgresql_sql(connection, shape)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    counts, id_lists = list(row[: len(updates)]), row[len(updates):]
    for objs, ids in zip(inserts.values(), id_lists, strict=True):
        for obj, pk in zip(objs, ids, strict=True):
            obj.pk = pk
            obj._state.adding, obj._state.db = False, connection.alias
    return counts


def _postgresql_sql(connection, shape: list[tuple]) -> str:  # noqa: ANN001
    """WITH w0 AS (UPDATE ... RETURNING 1), w1 AS (INSERT ... RETURNING pk) SELECT counts, keys."""
    qn = connection.ops.quote_name
    ctes, results = [], []
    for i, (kind, model, columns) in enumerate(shape):
        table, pk = qn(model._meta.db_table), qn(model._meta.pk.column)
        if kind == "update":
            assignments = ", ".join(f"{qn(c)} = %s" for c in columns)
            ctes.append(f"w{i} AS (UPDATE {table} SET {assignments} WHERE {pk} = %s AND {qn('version')} = %s RETURNING 1)")
            results.append(f"(SELECT count(*) FROM w{i})")
        else:
            names = ", ".join(qn(c) for c in columns)
            ctes.append(f"w{i} AS (INSERT INTO {table} ({names}) SELECT {names} "
                        f"FROM jsonb_populate_recordset(NULL::{table}, %s::jsonb) RETURNING {pk})")
            # The rows take their serial keys in array order, so ordering by key pairs each
            # key with its object.
            results.append(f"ARRAY(SELECT {pk} FROM w{i} ORDER BY {pk})")
    return f"WITH {', '.join(ctes)} SELECT {', '.join(results)}"
