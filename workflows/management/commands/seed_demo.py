"""Load the shipped workflow plans and every app's demo data; running it twice changes nothing."""

from __future__ import annotations

import importlib

from django.core.management.base import BaseCommand
from django.db import transaction

# Each app that has demo data exposes `seed(stdout)` in its `demo` module.
DEMO_MODULES = ("workflows.demo", "billing.demo", "conversations.demo")

ROLE_NOTES = {
    "person": "person chatting",
    "operator": "operator (orders, arrears, verification, knowledge over the API)",
    "supervisor": "supervisor (also /admin/)",
}


class Command(BaseCommand):
    help = "Load the shipped workflow plans and demo data (idempotent)."

    def add_arguments(self, parser) -> None:  # noqa: ANN001
        parser.add_argument("--export-scenarios", metavar="PATH", help="also write the billing scenarios as JSONL to PATH")

    def handle(self, *args, **options) -> None:  # noqa: ANN002, ANN003
        with transaction.atomic():
            for module_path in DEMO_MODULES:
                try:
                    module = importlib.import_module(module_path)
                except ModuleNotFoundError as error:
                    if error.name != module_path:
                        raise
                    continue
                self.stdout.write(f"{module_path}:")
                module.seed(self.stdout)
        if options.get("export_scenarios"):
            from billing.demo import export_jsonl

            count = export_jsonl(options["export_scenarios"])
            self.stdout.write(f"Wrote {count} scenarios to {options['export_scenarios']}")
        from workflows.demo import DEMO_USERS

        self.stdout.write(self.style.SUCCESS("Demo data ready. Sign in at /login/ with:"))
        for username, password, role in DEMO_USERS:
            self.stdout.write(f"  {username} / {password}  — {ROLE_NOTES[role]}")
