"""Run the scripted dialogue corpus and print the pass rate per workflow and language."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from conversations.dialogues import load_dialogues, run_dialogues


class Command(BaseCommand):
    help = "Run the scripted dialogues (tests/dialogues/*.json) on the rules; needs the demo data (seed_demo)."

    def add_arguments(self, parser) -> None:  # noqa: ANN001
        parser.add_argument("paths", nargs="*", type=Path, help="dialogue files or folders (default: the shipped corpus)")
        parser.add_argument("--check", action="store_true", help="exit non-zero unless every dialogue passes")

    def handle(self, *args, paths: list[Path], check: bool, **options) -> None:  # noqa: ANN002, ANN003
        dialogues = load_dialogues(paths or None)
        user, _ = get_user_model().objects.get_or_create(username="dialogue-tests")
        with transaction.atomic():
            report = run_dialogues(dialogues, user)
            transaction.set_rollback(True)  # the dialogues leave nothing behind
        for line in report.lines():
            self.stdout.write(line)
        for failure in report.failures:
            self.stdout.write(f"  FAILED {failure}")
        if check and not report.all_passed:
            raise CommandError(f"{len(report.failures)} dialogue(s) failed")
