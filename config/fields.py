"""Model fields shared by the apps."""

from __future__ import annotations

from typing import Any

from django.db import models
from psycopg.types.json import Jsonb

from config.jsoncodec import dumps


class JSONField(models.JSONField):
    """Django's JSONField, encoding its documents with `config.jsoncodec` on PostgreSQL.

    PostgreSQL parses what it is sent into jsonb, so the text's form is invisible there; the
    standard library's encoder was the larger part of a turn's write. On other databases the
    stored text is what is read back, so it is left to Django.
    """

    def get_db_prep_value(self, value: Any, connection: Any, prepared: bool = False) -> Any:
        if self.encoder is not None or connection.vendor != "postgresql":
            return super().get_db_prep_value(value, connection, prepared)
        if not prepared:
            value = self.get_prep_value(value)
        return Jsonb(value, dumps=dumps)

    def deconstruct(self) -> tuple[str, str, list[Any], dict[str, Any]]:
        # The column is a plain JSONField's: migrations record it as one (on SQLite an
        # AlterField would rebuild the table and drop the audit trail's guard triggers).
        name, _, args, kwargs = super().deconstruct()
        return name, "django.db.models.JSONField", args, kwargs


class ValuesInsertJSONField(JSONField):
    """A JSONField whose rows PostgreSQL bulk inserts take as plain VALUES.

    Django 5.2 bulk-inserts through UNNEST of arrays, and psycopg escapes every quote of
    every JSON document in an array with a Python regex: for the audit trail and the
    transcript (large JSON, several rows per turn) that cost more than the insert itself.
    Defining get_placeholder is Django's documented way for a field to opt out of UNNEST.
    """

    def get_placeholder(self, value: Any, compiler: Any, connection: Any) -> str:
        return "%s"
