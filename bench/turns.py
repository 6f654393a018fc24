"""Server time and database queries of a conversation turn, without the model.

Runs in-process through Django's test client (no network), on the database DATABASE_URL
names (SQLite by default). Prints p50 / p95 of a turn and the query count at turns 1, 10
and 200 of one conversation.

    DJANGO_SETTINGS_MODULE=config.settings.test python bench/turns.py
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/concierge_bench python bench/turns.py

BENCH_SHOW_QUERIES=1 prints the statements of turn 10; BENCH_PROFILE=FILE profiles turns
6-200 with cProfile, prints the costliest functions and saves the stats to FILE.
BENCH_TREE=DIR runs the project in DIR instead of this one, and BENCH_CALLGRIND=1 counts
turns 6-200 under callgrind: both are for bench/instructions.py.
"""

from __future__ import annotations

import contextlib
import cProfile
import os
import pstats
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, os.environ.get("BENCH_TREE") or str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import CaptureQueriesContext, setup_test_environment  # noqa: E402

from bench.machine import probe_line  # noqa: E402

PHRASES = [
    "Does plate 沪B88888 have unpaid parking?",
    "How is parking charged at lot SH-PD-001 on 2026-03-02 at 10:00?",
    "what about on 2026-03-03 at 15:00?",
    "verify order SCN-019",
    "thanks",
]


def main() -> None:
    import io

    from django.core.management import call_command
    from django.test.runner import DiscoverRunner
    from rest_framework.test import APIClient

    from config import runtime
    from workflows.demo import ensure_demo_users

    setup_test_environment()
    runner = DiscoverRunner(verbosity=0)
    old = runner.setup_databases()
    try:
        call_command("seed_demo", stdout=io.StringIO())
        ensure_demo_users()
        from django.contrib.auth import get_user_model

        # as config/wsgi.py does once the server has loaded the project (builds the knowledge index);
        # a revision older than start_serving only tuned the garbage collector there
        (getattr(runtime, "start_serving", None) or runtime.tune_gc)()
        from config.settings import base

        # The test settings recheck knowledge and place names on every message (tests roll back writes);
        # a server does not.
        # (an older revision, run by BENCH_TREE, may lack some of these settings)
        callgrind = bool(os.environ.get("BENCH_CALLGRIND"))
        for name in ("KNOWLEDGE_INDEX_RECHECK_SECONDS", "PLACES_RECHECK_SECONDS", "BILLING_RULES_RECHECK_SECONDS"):
            if hasattr(base, name):
                # A turn under callgrind takes half a second: rechecking every second would run the
                # aggregate queries every other turn, where a server's 200 turns a second share them.
                setattr(settings, name, 3600 if callgrind else getattr(base, name))
        from rest_framework.authtoken.models import Token

        token, _ = Token.objects.get_or_create(user=get_user_model().objects.get(username="alice"))
        client = APIClient()  # authenticated per request by its token, as integrators are
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        cid = client.post("/api/v1/conversations", {"workflow_id": "parking_help_desk"}, format="json").json()["id"]
        # Server time is what Django's WSGI handler takes (request signals, middleware, view,
        # response), as a WSGI server would call it; the test client's own work of building
        # the request and reading the response is timed separately as the round trip.
        handled: list[float] = []
        handler_class = type(client.handler)

        def timed_call(self, environ):  # noqa: ANN001, ANN202
            start = time.perf_counter()
            try:
                return handler_class.__call__(self, environ)
            finally:
                handled.append((time.perf_counter() - start) * 1000)

        client.handler.__class__ = type("TimedHandler", (handler_class,), {"__call__": timed_call})
        times, round_trips, cpu, queries = [], [], [], {}
        profiler = cProfile.Profile() if os.environ.get("BENCH_PROFILE") else None
        for turn in range(1, 201):
            if profiler and turn == 6:
                profiler.enable()
            if callgrind and turn == 6:
                subprocess.run(["callgrind_control", "--instr=on", str(os.getpid())], check=True, capture_output=True)
            text = PHRASES[turn % len(PHRASES)]
            # Queries are captured only at the turns reported (capturing slows every query).
            with CaptureQueriesContext(connection) if turn in (1, 10, 200) else contextlib.nullcontext([]) as captured:
                start, start_cpu = time.perf_counter(), time.process_time()
                response = client.post(f"/api/v1/conversations/{cid}/messages", {"text": text}, format="json")
                elapsed = time.perf_counter() - start
                cpu.append((time.process_time() - start_cpu) * 1000)
            assert response.status_code == 201, response.content[:300]
            times.append(handled[-1])
            round_trips.append(elapsed * 1000)
            if turn in (1, 10, 200):
                queries[turn] = (len(captured), handled[-1])
                if os.environ.get("BENCH_SHOW_QUERIES") and turn == 10:
                    for query in captured:
                        print(query["sql"][:160])
        if callgrind:
            subprocess.run(["callgrind_control", "--instr=off", str(os.getpid())], check=True, capture_output=True)
        if profiler:
            profiler.disable()
            profiler.dump_stats(os.environ["BENCH_PROFILE"])
            pstats.Stats(profiler).sort_stats("tottime").print_stats(30)
        warm = times[5:]
        q = statistics.quantiles(warm, n=20)
        print(f"database: {settings.DATABASES['default']['ENGINE'].rsplit('.', 1)[-1]}")
        print(probe_line())
        print(f"turn server time over {len(warm)} turns: p50 {statistics.median(warm):.1f} ms, p95 {q[18]:.1f} ms "
              f"(targets: p50 < 10 ms, p95 < 25 ms)")
        print(f"round trip through the test client: p50 {statistics.median(round_trips[5:]):.1f} ms")
        print(f"CPU per round trip: mean {statistics.fmean(cpu[5:]):.1f} ms (the database's own CPU not included)")
        for index, phrase in enumerate(PHRASES):  # turn t sends PHRASES[t % len(PHRASES)]
            of_phrase = [ms for turn, ms in enumerate(times, start=1) if turn > 5 and turn % len(PHRASES) == index]
            print(f"  p50 {statistics.median(of_phrase):5.1f} ms  {phrase}")
        for turn, (count, ms) in queries.items():
            print(f"turn {turn:>3}: {count} queries, {ms:.1f} ms")
        # Medians over 20 turns around turn 10 and up to turn 200 (single turns are noisy).
        early, late = statistics.median(times[5:25]), statistics.median(times[180:200])
        print(f"median of turns 181-200 / turns 6-25: {late:.1f} / {early:.1f} ms = {late / early:.2f}x (target <= 1.2x)")
    finally:
        runner.teardown_databases(old)


if __name__ == "__main__":
    main()
