"""Apps depend one way: config <- workflows <- conversations <- billing (no import cycle between apps).

An app further down plugs into one further up by registering with it or receiving its
signals; an import the other way, even inside a function, is a cycle this test refuses.
The project's entry points (URLs, WSGI/ASGI, Celery, settings) see every app and are exempt.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ORDER = ("config", "workflows", "conversations", "billing")
ENTRY_POINTS = ("config/urls.py", "config/wsgi.py", "config/asgi.py", "config/celery.py", "config/settings/")


def _imported_apps(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module.split(".")[0]))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
    return [(line, app) for line, app in found if app in ORDER]


def _layer_violations() -> list[str]:
    problems = []
    for app in ORDER:
        for path in sorted((ROOT / app).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if "/migrations/" in relative or relative.startswith(ENTRY_POINTS):
                continue
            for line, imported in _imported_apps(path):
                if ORDER.index(imported) > ORDER.index(app):
                    problems.append(f"{relative}:{line} imports {imported} (it may use only {', '.join(ORDER[:ORDER.index(app) + 1])})")
    return problems


def test_apps_import_one_way() -> None:
    problems = _layer_violations()
    assert problems == [], "\n".join(problems)
