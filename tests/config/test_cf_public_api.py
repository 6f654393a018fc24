"""The project uses Django's, DRF's and psycopg's public APIs only (outside the tests)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIBRARIES = ("django", "rest_framework", "psycopg", "psycopg_binary", "psycopg_pool", "celery", "kombu")
# Modules that are implementation, not API, though their names carry no underscore.
INTERNAL_MODULES = ("django.db.models.sql", "django.db.backends.postgresql.psycopg_any", "django.db.models.query_utils")
INTERNAL_NAMES = {"get_related_populators", "RelatedPopulator", "ModelIterable"}
# Underscore attributes Django documents for use (the Model _meta API, managers, instance state).
DOCUMENTED = {"_meta", "_default_manager", "_base_manager", "_state", "_"}


def _sources() -> list[Path]:
    skip = {".venv", "tests", "node_modules", "migrations", "staticfiles"}
    return [p for p in ROOT.rglob("*.py") if not skip & set(p.relative_to(ROOT).parts)]


def _private(dotted: str) -> bool:
    return any(part.startswith("_") and not (part.startswith("__") and part.endswith("__")) for part in dotted.split("."))


def _library(module: str) -> bool:
    return module.split(".")[0] in LIBRARIES


def _problems(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and _library(node.module):
            names = [alias.name for alias in node.names]
            if _private(node.module) or node.module.startswith(INTERNAL_MODULES):
                found.append(f"{name}:{node.lineno}: from {node.module} import ...")
            found += [f"{name}:{node.lineno}: {node.module}.{name}" for name in names
                      if _private(name) or name in INTERNAL_NAMES]
        elif isinstance(node, ast.Import):
            found += [f"{name}:{node.lineno}: import {alias.name}" for alias in node.names
                      if _library(alias.name) and (_private(alias.name) or alias.name.startswith(INTERNAL_MODULES))]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            owner = node.value
            own = isinstance(owner, ast.Name) and owner.id in ("self", "cls")
            if not own and node.attr not in DOCUMENTED and node.attr in _LIBRARY_PRIVATE:
                found.append(f"{name}:{node.lineno}: .{node.attr}")
    return found


# Private attributes of Django's and psycopg's objects that code has reached for in the past.
_LIBRARY_PRIVATE = {"_prepare_related_fields_for_save", "_perm_cache", "_user_perm_cache", "_group_perm_cache",
                    "_result_cache", "_prefetch_related_lookups", "_known_related_objects", "_fields", "_db",
                    "_psycopg", "_do_insert", "_do_update", "_save_table", "_get_pk_val", "_clone", "_chain"}


def test_no_private_library_name_is_imported_or_used() -> None:
    problems = [problem for path in _sources() for problem in _problems(path)]
    assert problems == [], "\n".join(problems)


def test_the_check_finds_what_it_looks_for(tmp_path: Path) -> None:
    sample = tmp_path / "private_use.py"
    sample.write_text("from django.db.models.query import get_related_populators\n"
                      "from psycopg_binary._psycopg import TimestamptzLoader\n"
                      "import django.db.models.sql.compiler\n"
                      "def f(obj):\n    obj._prepare_related_fields_for_save(operation_name='x')\n", encoding="utf-8")
    assert len(_problems(sample)) == 4
