"""The engine knows no workflow (issue 33): a slot, unit, document, action or workflow id that belongs to one shipped
plan is not named in `conversations/engine/` (put it in the plan, or in code in the workflow's pack,
`conversations/packs/`). A word said through the catalog names nothing; the units the recognizers know are theirs."""

from __future__ import annotations

import ast
from pathlib import Path

from conversations.engine.config import DIAGNOSIS_DOCUMENTS, KNOWN_EXTRACTORS
from workflows.engine.plan_files import read_plan

ROOT = Path(__file__).resolve().parents[3]
ENGINE = ROOT / "conversations" / "engine"
SHIPPED = [p for p in (ROOT / "workflows" / "plans").iterdir() if p.suffix == ".json" or (p / "plan.json").exists()]


def plan_names() -> set[str]:
    names: set[str] = set()
    for path in SHIPPED:
        document = read_plan(path)
        workflow = document["workflow_id"]
        conversation = document.get("conversation") or {}
        names |= {workflow, *conversation.get("slots", {}), *(a["id"] for a in conversation.get("actions", ()))}
        for question in (conversation.get("form") or {}).get("questions", ()):
            names |= {question[k] for k in ("slot", "unit") if question.get(k)}
        names |= {n["produces"] for n in document["nodes"] if n.get("produces")}
    return names - set(KNOWN_EXTRACTORS) - set(DIAGNOSIS_DOCUMENTS)


_SAID = {"say", "say_in", "say_n", "marked"}  # a word said to people through the catalog names nothing


def named_strings(source: str) -> list[str]:
    """The string constants of a module that could name something: no docstring, no catalog message."""
    tree = ast.parse(source)
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            skipped.add(id(node.value))  # a docstring
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) in _SAID:
            skipped |= {id(arg) for arg in node.args}
    return [node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skipped]


def test_the_engine_names_nothing_of_one_plan() -> None:
    names = plan_names()
    found: dict[str, list[str]] = {}
    for path in [*ENGINE.glob("*.py"), *ENGINE.glob("recognizers/*.py")]:
        if named := [text for text in named_strings(path.read_text(encoding="utf-8")) if text in names]:
            found[path.name] = named
    assert found == {}, f"plan-specific names in the engine: {found}"


def test_the_check_sees_a_plan_name_in_code_and_not_in_a_sentence() -> None:
    assert named_strings('"""The employee_name slot."""\nx = slots.get("employee_name")\nsay(lang, "storeys")') == ["employee_name"]
