"""Validate a workflow plan file and store it as a new version (unchanged content stores nothing)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from workflows.engine.plan_files import PlanFileError, read_plan
from workflows.services.plans import PlanInvalid, plan_upload


class Command(BaseCommand):
    help = "Validate a workflow plan (a JSON file, or a plan folder: plan.json and systems/) and store it as a new version."

    def add_arguments(self, parser) -> None:  # noqa: ANN001
        parser.add_argument("path", nargs="+", help="plan JSON file(s) or plan folder(s)")

    def handle(self, *args, path: list[str], **options) -> None:  # noqa: ANN002, ANN003
        for name in path:
            try:
                document = read_plan(Path(name))
            except PlanFileError as error:
                raise CommandError(str(error)) from error
            try:
                row, created = plan_upload(document=document)
            except PlanInvalid as error:
                lines = "\n".join(f"  {p['path']}: {p['message']}" for p in error.details["problems"])
                raise CommandError(f"{name}: {error.message}\n{lines}") from error
            self.stdout.write(f"{row.workflow_id} v{row.version} {'stored' if created else 'unchanged'}")
