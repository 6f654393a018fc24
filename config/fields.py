"""Model fields shared by the apps."""

from __future__ import annotations

from typing import Any

from django.db import models


class ValuesInsertJSONField(models.JSONField):
    """A JSONField whose rows PostgreSQL bulk inserts take as plain VALUES.

    Django 5.2 bulk-inserts through UNNEST of arrays, and psycopg escapes every quote of
    every JSON document in an array with a Python regex: for the audit trail and the
    transcript (large JSON, several rows per turn) that cost more than the insert itself.
    Defining get_placeholder is Django's documented way for a field to opt out of UNNEST.
    """

    def get_placeholder(self, value: Any, compiler: Any, connection: Any) -> str:
        return "%s"

    def deconstruct(self) -> tuple[str, str, list[Any], dict[str, Any]]:
        # The column is a plain JSONField's: migrations record it as one (on SQLite an
        # AlterField would rebuild the table and drop the audit trail's guard triggers).
        name, _, args, kwargs = super().deconstruct()
        return name, "django.db.models.JSONField", args, kwargs
