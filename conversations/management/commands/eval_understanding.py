"""Measure the understanding on the message set: right, asked back and confidently wrong, per workflow and language."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from conversations.understanding_eval import evaluate, load_cases


class Command(BaseCommand):
    help = ("Read every message of the understanding set (tests/understanding/*.json) and print, per workflow and "
            "language, the share read right, asked back, confidently wrong and missed; needs the demo data (seed_demo).")

    def add_arguments(self, parser) -> None:  # noqa: ANN001
        parser.add_argument("paths", nargs="*", type=Path, help="case files or folders (default: the shipped set)")
        parser.add_argument("--show", action="store_true", help="print every case not read right, with its reading")
        parser.add_argument("--max-wrong", type=float, default=None,
                            help="exit non-zero when the confidently wrong share (in %%) is above this")
        parser.add_argument("--min-right-or-asked", type=float, default=None,
                            help="exit non-zero when the share read right or asked back (in %%) is below this")

    def handle(self, *args, paths: list[Path], show: bool, max_wrong: float | None,  # noqa: ANN002, ANN003
               min_right_or_asked: float | None, **options) -> None:
        cases = load_cases(paths or None)
        if not cases:
            raise CommandError("no case found")
        user, _ = get_user_model().objects.get_or_create(username="understanding-eval")
        with transaction.atomic():
            report = evaluate(cases, user)
            transaction.set_rollback(True)  # the cases leave nothing behind
        if show:
            for note in report.notes:
                self.stdout.write(note)
        for line in report.lines():
            self.stdout.write(line)
        total = report.total()
        cases = max(1, sum(total.values()))
        wrong, good = 100 * total["wrong"] / cases, 100 * (total["right"] + total["asked"]) / cases
        if max_wrong is not None and wrong > max_wrong:
            raise CommandError(f"confidently wrong: {wrong:.1f}% > {max_wrong}%")
        if min_right_or_asked is not None and good < min_right_or_asked:
            raise CommandError(f"right or asked back: {good:.1f}% < {min_right_or_asked}%")
