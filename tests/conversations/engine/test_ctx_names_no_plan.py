"""The engine knows no workflow (issue 33): a slot, unit, document, action or workflow id that belongs to one shipped
plan is not named in `conversations/engine/`. What is left of it is listed here and may only shrink; a new one
fails (put it in the plan or its pack)."""

from __future__ import annotations

import re
from pathlib import Path

from conversations.engine.config import DIAGNOSIS_DOCUMENTS, KNOWN_EXTRACTORS
from workflows.engine.plan_files import read_plan

ROOT = Path(__file__).resolve().parents[3]
ENGINE = ROOT / "conversations" / "engine"
SHIPPED = [p for p in (ROOT / "workflows" / "plans").iterdir() if p.suffix == ".json" or (p / "plan.json").exists()]
# what the engine still names of one plan, by file (the form units, the manager's
# names in replies): each is work left for issue 33, and the count may only go down
LEFT = {"forms.py": 14, "plain_words.py": 12, "action_prefs.py": 4, "replies.py": 3,
        "config.py": 4, "turn_form.py": 3, "__init__.py": 1}


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


def test_the_engine_names_no_more_of_one_plan_than_it_did() -> None:
    names = plan_names()
    found: dict[str, int] = {}
    for path in [*ENGINE.glob("*.py"), *ENGINE.glob("recognizers/*.py")]:
        text = path.read_text(encoding="utf-8")
        count = sum(len(re.findall(rf"[\"']{re.escape(name)}[\"']", text)) for name in names)
        if count:
            found[path.name] = count
    grown = {name: (count, LEFT.get(name, 0)) for name, count in found.items() if count > LEFT.get(name, 0)}
    assert not grown, f"plan-specific names added to the engine (found, allowed): {grown}"
