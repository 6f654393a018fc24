"""Per-connection set-up of PostgreSQL connections."""

from __future__ import annotations

from functools import lru_cache
from typing import Any


def use_c_timestamp_loader(sender: Any, connection: Any, **kwargs: Any) -> None:
    """Read timestamptz columns with psycopg's C parser (connected to `connection_created`).

    Django registers a loader subclassing psycopg's pure-Python one (to pin the result's
    time zone), which parses each value with a regular expression: a turn reads about
    fifteen timestamps. This loader gives the same values: psycopg's C parser, then
    Django's time zone pinned the way Django pins it. Without psycopg's C build nothing changes.
    """
    if connection.vendor != "postgresql":
        return
    import psycopg

    if psycopg.pq.__impl__ not in ("c", "binary"):
        return
    connection.connection.adapters.register_loader("timestamptz", _loader_for(connection.timezone))


@lru_cache(maxsize=8)
def _loader_for(tz: Any) -> type:
    from django.db.backends.postgresql.psycopg_any import BaseTzLoader
    from psycopg.types.datetime import TimestamptzLoader
    from psycopg_binary._psycopg import TimestamptzLoader as CTimestamptzLoader

    class CTimestamptzTzLoader(BaseTzLoader):
        timezone = tz  # Django compares it with its own on each cursor: equal, so it stays

        def __init__(self, oid: int, context: Any = None) -> None:
            super(TimestamptzLoader, self).__init__(oid, context)  # skips the Python parser's set-up
            self._parse = CTimestamptzLoader(oid, context).load

        def load(self, data: Any) -> Any:
            return self._parse(data).replace(tzinfo=self.timezone)

    return CTimestamptzTzLoader
