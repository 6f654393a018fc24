"""Run the scripted dialogue corpus and print the pass rate per workflow and language."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from conversations.dialogues import load_dialogues, run_dialogues, run_dialogues_on_both
from workflows.engine.plan_files import read_plan
from workflows.services.plans import PlanInvalid, plan_upload


class Command(BaseCommand):
    help = ("Run the scripted dialogues (tests/dialogues/*.json) on the rules, or on the model generator against a "
            "fake OpenAI-compatible server (--generator model), or on both (--generator both: one rules run serves "
            "both); needs the demo data (seed_demo).")

    def add_arguments(self, parser) -> None:  # noqa: ANN001
        parser.add_argument("paths", nargs="*", type=Path, help="dialogue files or folders (default: the shipped corpus)")
        parser.add_argument("--check", action="store_true", help="exit non-zero unless every dialogue passes")
        parser.add_argument("--plan", action="append", default=[], type=Path, metavar="FILE",
                            help="a plan file or folder to upload first (repeatable): an author's new plan, tested before "
                                 "it is uploaded for real (the upload is rolled back with the rest)")
        parser.add_argument("--generator", choices=("rules", "model", "both"), default="rules",
                            help="who understands the messages: the rules, a scripted fake model (the rules fill in), or each in turn")

    def handle(self, *args, paths: list[Path], check: bool, generator: str, plan: list[Path], **options) -> None:  # noqa: ANN002, ANN003
        try:
            dialogues = load_dialogues(paths or None)
            documents = [read_plan(path) for path in plan]
        except (ValueError, OSError) as error:
            raise CommandError(str(error)) from error
        with contextlib.ExitStack() as stack:
            server = stack.enter_context(fake_model()) if generator in ("model", "both") else None
            user, _ = get_user_model().objects.get_or_create(username="dialogue-tests")
            with transaction.atomic():
                for document in documents:
                    _upload(document)
                if generator == "both":
                    reports = run_dialogues_on_both(dialogues, user, server)
                else:
                    reports = {generator: run_dialogues(dialogues, user, model_server=server)}
                transaction.set_rollback(True)  # the dialogues leave nothing behind
        for name, report in reports.items():
            self.stdout.write(f"generator: {name}")
            for line in report.lines():
                self.stdout.write(line)
            for failure in report.failures:
                self.stdout.write(f"  FAILED {failure}")
        failed = sum(len(report.failures) for report in reports.values())
        if check and failed:
            raise CommandError(f"{failed} dialogue run(s) failed")


def _upload(document: dict) -> None:
    """Upload a plan for this run, or say every problem it has."""
    try:
        plan_upload(document=document)
    except PlanInvalid as error:
        problems = "; ".join(f"{p['path']}: {p['message']}" for p in error.details["problems"])
        raise CommandError(f"{document.get('workflow_id')}: {problems}") from error


@contextlib.contextmanager
def fake_model() -> Iterator:
    """A fake OpenAI-compatible server on loopback (the test suite's), closed afterwards."""
    try:
        from tests.support.fake_openai import FakeOpenAI
    except ImportError as missing:  # an installed package without the repository's tests
        raise CommandError("--generator model needs the repository's tests/support (run it from a checkout)") from missing
    server = FakeOpenAI()
    try:
        yield server
    finally:
        server.close()
