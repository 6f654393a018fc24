"""Django's makemessages, also collecting the engine's sentences (`conversations/engine/catalog.py`).

The engine imports no Django, so it says its sentences with `say`, `say_in`, `say_n` and `marked`
rather than gettext; xgettext is told those names (Django documents extending `xgettext_options`).
The tests and benchmarks say sentences no catalog should hold (a message nobody translated, on purpose),
so they are never collected.
"""

from __future__ import annotations

from django.core.management.commands import makemessages


class Command(makemessages.Command):
    xgettext_options = [
        *makemessages.Command.xgettext_options,
        "--keyword=say:2",
        "--keyword=say_in:2c,3",
        "--keyword=say_n:2,3",
        "--keyword=marked",
    ]

    def handle(self, *args, **options) -> None:  # noqa: ANN002, ANN003
        options["ignore_patterns"] = [*options.get("ignore_patterns", []), "tests/*", "bench/*", ".venv/*"]
        super().handle(*args, **options)
