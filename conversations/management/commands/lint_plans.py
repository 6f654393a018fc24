"""Report what a plan's author should look at: evidence rules of one system whose patterns overlap."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from conversations.engine import ConversationConfig
from conversations.engine.plan_lint import overlapping_evidence
from workflows.demo import PLANS_DIR, SHIPPED_WORKFLOWS
from workflows.engine.plan_files import PlanFileError, plan_path, read_plan


class Command(BaseCommand):
    help = ("List the evidence rules of one system whose patterns read the same words (a message saying them records "
            "both, unless one excludes the other); default: the shipped plans.")

    def add_arguments(self, parser) -> None:  # noqa: ANN001
        parser.add_argument("paths", nargs="*", type=Path, help="plan files or folders (default: the shipped plans)")
        parser.add_argument("--max", type=int, default=None, help="exit non-zero when more overlaps than this are found")

    def handle(self, *args, paths: list[Path], max: int | None, **options) -> None:  # noqa: A002, ANN002, ANN003
        total = 0
        for path in paths or [plan_path(PLANS_DIR, w) for w in SHIPPED_WORKFLOWS]:
            try:
                document = read_plan(path)
            except PlanFileError as error:
                raise CommandError(str(error)) from error
            overlaps = overlapping_evidence(ConversationConfig.from_dict(document.get("conversation") or {}))
            total += len(overlaps)
            self.stdout.write(f"{document.get('workflow_id', path.name)}: {len(overlaps)} overlapping pair(s) of evidence rules")
            for overlap in overlaps:
                self.stdout.write(f"  {overlap.system}: {overlap.rule} / {overlap.other}  (both read “{overlap.words}”)")
        if max is not None and total > max:
            raise CommandError(f"{total} overlapping pairs > {max}")
