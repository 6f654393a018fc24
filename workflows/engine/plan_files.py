"""Plan documents as files: one JSON file, or a folder whose large parts live one file each.

A folder holds `plan.json` and, for a diagnostic plan, one file per system under `systems/`:
`conversation.diagnostic.procedures` in `plan.json` lists the systems' ids in order, and each id
is replaced at load by its file (`systems/<id>.json`), so a system's checks and evidence are read,
reviewed and changed on their own. The assembled document is what is validated and stored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PLAN_FILE = "plan.json"
SYSTEMS_DIR = "systems"


class PlanFileError(ValueError):
    """A plan file or folder that cannot be read (with the path and what is wrong)."""


def plan_path(plans_dir: Path, workflow_id: str) -> Path:
    """Where a shipped plan lives: its folder when there is one, else its JSON file."""
    folder = plans_dir / workflow_id
    return folder if folder.is_dir() else plans_dir / f"{workflow_id}.json"


def read_plan(path: Path) -> dict[str, Any]:
    """The plan document of a JSON file or of a plan folder (assembled)."""
    if not path.is_dir():
        return _json(path)
    document = _json(path / PLAN_FILE)
    diagnostic = (document.get("conversation") or {}).get("diagnostic") or {}
    procedures = diagnostic.get("procedures")
    if isinstance(procedures, list):
        diagnostic["procedures"] = [_system(path, item) if isinstance(item, str) else item for item in procedures]
    return document


def _system(folder: Path, system_id: str) -> dict[str, Any]:
    procedure = _json(folder / SYSTEMS_DIR / f"{system_id}.json")
    if procedure.get("id") != system_id:
        raise PlanFileError(f"{folder / SYSTEMS_DIR / system_id}.json: its id is {procedure.get('id')!r}, not {system_id!r}")
    return procedure


def _json(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise PlanFileError(f"{path}: {error}") from error
    if not isinstance(document, dict):
        raise PlanFileError(f"{path}: a plan file holds a JSON object")
    return document


def split_plan(document: dict[str, Any], folder: Path) -> None:
    """Write a diagnostic plan as a folder: plan.json and one file per system (the inverse of `read_plan`)."""
    document = json.loads(json.dumps(document))
    diagnostic = document["conversation"]["diagnostic"]
    (folder / SYSTEMS_DIR).mkdir(parents=True, exist_ok=True)
    for procedure in diagnostic["procedures"]:
        _write(folder / SYSTEMS_DIR / f"{procedure['id']}.json", procedure)
    diagnostic["procedures"] = [p["id"] for p in diagnostic["procedures"]]
    _write(folder / PLAN_FILE, document)


def _write(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
