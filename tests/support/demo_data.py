"""The demo data in tests: loaded once per session by the root conftest, checked and loaded
again only where a transactional test emptied the database."""

from __future__ import annotations

import io


def load() -> None:
    """Run `seed_demo` (idempotent): shipped plans, demo users, billing rules and orders, knowledge."""
    from django.core.management import call_command

    call_command("seed_demo", stdout=io.StringIO())


def present() -> bool:
    """True when the demo data is in the database; a transactional test's flush removes it."""
    from django.contrib.auth import get_user_model

    from billing.models import ParkingOrder
    from conversations.knowledge.models import KnowledgeSource
    from workflows.demo import DEMO_USERS, SHIPPED_WORKFLOWS
    from workflows.models import WorkflowPlan

    shipped = WorkflowPlan.objects.filter(workflow_id__in=SHIPPED_WORKFLOWS).values("workflow_id").distinct()
    users = get_user_model().objects.filter(username__in=[username for username, _, _ in DEMO_USERS])
    return (
        shipped.count() == len(SHIPPED_WORKFLOWS)
        and users.count() == len(DEMO_USERS)
        and ParkingOrder.objects.exists()
        and KnowledgeSource.objects.exists()
    )


def ensure() -> None:
    """Load the demo data unless it is already there (a query or four instead of seconds)."""
    if not present():
        load()


# The primary keys of every table's rows as migrations left them (content types, permissions, role
# groups, known lots and cities), noted by the session set-up before the demo data is loaded.
_MIGRATED_KEYS: dict[str, list] = {}


def _tables() -> list[tuple[str, str]]:
    """(table, primary key column) of every model's table, many-to-many tables included."""
    from django.apps import apps

    tables = {}
    for model in apps.get_models(include_auto_created=True):
        if model._meta.managed and not model._meta.proxy:
            tables[model._meta.db_table] = model._meta.pk.column
    return sorted(tables.items())


def note_migrated_rows() -> None:
    """Note which rows the migrations made (call before loading the demo data)."""
    from django.db import connection

    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        for table, pk in _tables():
            cursor.execute(f"SELECT {quote(pk)} FROM {quote(table)}")  # noqa: S608 - names from the models
            _MIGRATED_KEYS[table] = [row[0] for row in cursor.fetchall()]


def remove() -> None:
    """Delete every row that is not one the migrations made. Inside a test's transaction the
    rollback brings the demo data back; a transactional test's flush removes everything anyway.
    Plain DELETEs: no signals and no cascades through the ORM."""
    from django.db import connection, transaction

    quote = connection.ops.quote_name
    # One transaction (a savepoint inside a test's): foreign keys are checked once, at its end.
    with transaction.atomic(), connection.cursor() as cursor:
        for table, pk in _tables():
            keep = _MIGRATED_KEYS.get(table, [])
            if keep:
                marks = ", ".join(["%s"] * len(keep))
                cursor.execute(f"DELETE FROM {quote(table)} WHERE {quote(pk)} NOT IN ({marks})", keep)  # noqa: S608
            else:
                cursor.execute(f"DELETE FROM {quote(table)}")  # noqa: S608
