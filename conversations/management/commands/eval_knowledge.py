"""Replay the knowledge query set through retrieval and the help desk and print the metrics."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from conversations.knowledge.evaluation import THRESHOLDS, load_queries, run_evaluation


class Command(BaseCommand):
    help = "Evaluate retrieval and the help desk on the query set (needs the demo data: seed_demo)."

    def add_arguments(self, parser) -> None:  # noqa: ANN001
        parser.add_argument("--check", action="store_true", help="exit non-zero when a metric is under its threshold")
        parser.add_argument("--json", action="store_true", help="print the metrics as JSON")
        parser.add_argument("--keep", action="store_true", help="keep the evaluation's conversations (rolled back by default)")

    def handle(self, *args, check: bool, json: bool, keep: bool, **options) -> None:  # noqa: A002, ANN002, ANN003
        user, _ = get_user_model().objects.get_or_create(username="knowledge-eval")
        with transaction.atomic():
            report = run_evaluation(user)
            if not keep:
                transaction.set_rollback(True)  # an evaluation leaves no conversations behind
        metrics = report.metrics()
        if json:
            self.stdout.write(__import__("json").dumps({"queries": len(load_queries()), **metrics}, indent=2))
        else:
            self.stdout.write(f"queries: {len(load_queries())}")
            for name, value in metrics.items():
                hits, total = report.counts.get({"retrieval_hit_rate": "retrieval_hit", "citation_coverage": "citation",
                                                 "empty_retrieval_rate": "non_empty", "tool_call_compliance": "tool_call",
                                                 "answer_consistency": "consistency"}[name], [0, 0])
                self.stdout.write(f"{name}: {value:.3f} ({hits}/{total} {'non-empty' if name == 'empty_retrieval_rate' else 'ok'})")
            self.stdout.write(f"thresholds: {THRESHOLDS}")
            for failure in report.failures[:30]:
                self.stdout.write(f"  miss {failure}")
        below = report.below_thresholds()
        if check and below:
            raise CommandError("under threshold: " + "; ".join(below))
