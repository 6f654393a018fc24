"""Load the shipped workflow plans and every app's demo data; running it twice changes nothing."""

from __future__ import annotations

import importlib
from types import ModuleType

from django.apps import apps
from django.core.management.base import BaseCommand
from django.db import transaction

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
        modules = _demo_modules()
        with transaction.atomic():
            for module in modules:
                self.stdout.write(f"{module.__name__}:")
                module.seed(self.stdout)
        if options.get("export_scenarios"):
            exporters = [m.export_jsonl for m in modules if hasattr(m, "export_jsonl")]
            count = sum(export(options["export_scenarios"]) for export in exporters)
            self.stdout.write(f"Wrote {count} scenarios to {options['export_scenarios']}")
        from workflows.demo import DEMO_USERS

        self.stdout.write(self.style.SUCCESS("Demo data ready. Sign in at /login/ with:"))
        for username, password, role in DEMO_USERS:
            self.stdout.write(f"  {username} / {password}  — {ROLE_NOTES[role]}")


def _demo_modules() -> list[ModuleType]:
    """Each installed app's `demo` module, in INSTALLED_APPS order: one that has demo data
    exposes `seed(stdout)` (and may expose `export_jsonl(path)`). This app names none of them."""
    found = []
    for app in apps.get_app_configs():
        name = f"{app.name}.demo"
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name != name:
                raise
            continue
        if hasattr(module, "seed"):
            found.append(module)
    return found
