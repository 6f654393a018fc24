"""Helpers shared by tests (fixtures live in the root conftest.py)."""

from __future__ import annotations

from pathlib import Path

PLANS_DIR = Path(__file__).resolve().parents[2] / "workflows" / "plans"


def plan_document(workflow_id: str) -> dict:
    """A shipped plan as uploaded (a plan folder assembled)."""
    from workflows.engine.plan_files import plan_path, read_plan

    return read_plan(plan_path(PLANS_DIR, workflow_id))


def client_for(user):  # noqa: ANN001, ANN201
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def run_together(fn, count: int, *, timeout: float = 120) -> list:  # noqa: ANN001
    """Call fn(i) in `count` threads released at once; each result is fn's value or the exception it raised."""
    import threading

    from django.db import connections

    barrier = threading.Barrier(count)
    results: list = [None] * count

    def worker(i: int) -> None:
        try:
            barrier.wait()
            results[i] = fn(i)
        except Exception as error:  # noqa: BLE001 - returned for the caller to judge
            results[i] = error
        finally:
            connections.close_all()  # each thread has its own database connection

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    return results
