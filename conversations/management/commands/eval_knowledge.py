"""Replay the knowledge query set and the memory cases through retrieval and the help desk; print the metrics."""

from __future__ import annotations

import json as jsonlib
import time

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from conversations.knowledge.evaluation import (
    COUNTS,
    MEMORY_THRESHOLDS,
    THRESHOLDS,
    query_counts,
    run_evaluation,
)


class Command(BaseCommand):
    help = ("Evaluate retrieval and the help desk on the query set and the memory replay set (needs the demo data: "
            "seed_demo; the second operator's data is loaded and rolled back).")

    def add_arguments(self, parser) -> None:  # noqa: ANN001
        parser.add_argument("--check", action="store_true", help="exit non-zero when a metric is under its threshold")
        parser.add_argument("--json", action="store_true", help="print the metrics as JSON")
        parser.add_argument("--keep", action="store_true", help="keep the evaluation's data and conversations (rolled back by default)")
        parser.add_argument("--no-memory", action="store_true", help="skip the memory replay set")

    def handle(self, *args, check: bool, json: bool, keep: bool, no_memory: bool, **options) -> None:  # noqa: A002, ANN002, ANN003
        user, _ = get_user_model().objects.get_or_create(username="knowledge-eval")
        started = time.monotonic()
        with transaction.atomic():
            report = run_evaluation(user, memory=not no_memory)
            if not keep:
                transaction.set_rollback(True)  # an evaluation leaves no data or conversations behind
        seconds = round(time.monotonic() - started, 1)
        metrics, counts = report.metrics(), query_counts()
        if json:
            self.stdout.write(jsonlib.dumps({"queries": counts["total"], "query_counts": counts, **metrics,
                                             "memory": report.memory.figures(), "seconds": seconds,
                                             "failures": report.failures + report.memory.failures}, indent=2, ensure_ascii=False))
        else:
            self.stdout.write(f"queries: {counts['total']} (second operator {counts['second_operator']}; "
                              f"{', '.join(f'{k} {v}' for k, v in counts['by_category'].items())}; "
                              f"{', '.join(f'{k} {v}' for k, v in counts['by_language'].items())})")
            for name, value in metrics.items():
                hits, total = report.counts.get(COUNTS[name], [0, 0])
                self.stdout.write(f"{name}: {value:.3f} ({hits}/{total} {'non-empty' if name == 'empty_retrieval_rate' else 'ok'})")
            m = report.memory
            if m.cases:
                self.stdout.write(f"memory replay: {m.cases_passed}/{m.cases} cases, {m.turns_passed}/{m.turns} turns passed, "
                                  f"{m.turns - m.turns_passed} failed (turn pass rate {m.turn_pass_rate:.3f})")
            self.stdout.write(f"thresholds: {THRESHOLDS} {MEMORY_THRESHOLDS}")
            self.stdout.write(f"took {seconds}s")
            for failure in report.failures:
                self.stdout.write(f"  miss {failure}")
            for failure in m.failures:
                self.stdout.write(f"  memory {failure}")
        below = report.below_thresholds()
        if check and below:
            raise CommandError("under threshold: " + "; ".join(below))
