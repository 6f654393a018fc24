"""Scripted dialogues (anchor: Rasa's end-to-end tests): a person's turns and what must hold after each.

A dialogue file (JSON, under `tests/dialogues/`) holds a list of dialogues:

    {"id": "...", "workflow": "parking_help_desk", "locale": "zh-hans", "setup": {"orders": ["7734412"]},
     "turns": [{"user": "...", "expect": {...}}]}

What a turn may expect (every key optional):
- `commands`: labels the turn must have understood (`set_slot(slot=order_no, value=7734412)`);
  a label may stop at the arguments it cares about (`answer(question_id=3.1.2` matches any value);
- `not_commands`: labels it must not have understood;
- `slots`: slot values (`"re:..."` for a regular expression), `null` for a slot that must be absent;
- `form`: final answers by question id;
- `reply_contains` / `reply_not_contains`: texts of the reply;
- `decision`: continue | ask | abort; `tools`: tools that must have been called;
- `state`: values in the conversation's state (the API's shape) by dotted path
  (`"mode": "diagnostic"`, `"isolation.complete": true`, `"estimate.status": "confirmed"`);
- `options` / `not_options`: option ids that must be (must not be) offered as eligible;
- `documents`: documents the run must hold; `document_contains` / `document_not_contains`:
  `{document key: [texts]}` in the newest version, as the person downloads it.

What a dialogue's `setup` may create before it starts (each key optional; whatever already
exists is left as it is, so dialogues may share a setup; the run rolls everything back):
- `orders`: order numbers (a copy of the first demo order under that number: `"7734412"`) or whole
  orders (`{"order_no", "plate_no", "city_code", "lot_code", "entry_time", "exit_time",
  "total_amount", "paid_amount"}`, as `POST /api/v1/parking-orders` takes them; a missing total is
  computed with the rule in force);
- `cities`: `{"code", "names": {"en": ..., "zh": ...}, "aliases": [...]}` (another operator's city);
- `lots`: `{"city_code", "code", "names", "aliases"}` (a lot in a known city; one code may be in two cities);
- `rules`: `{"rule_code", "name", "scope": {"city_code", "lot_codes"}, "version": {"effective_from",
  "effective_to", "rule_payload"}}` (a billing rule and its version, as `POST /api/v1/billing-rules` takes them).
They are created in the order cities, lots, rules, orders.

A turn is a message (`"user": "..."`), a choice of an offered option (`"choose": "option_id",
"consent": true`; its `expect` may hold `state`, `options`, `documents`, `reply_contains` (the
choice's note) and `error` (the refusal's code)), or a member of staff acting on the open
handoff (`"staff_reply": "..."` and/or `"hand_back": true`; its `expect` may hold `state`).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DIALOGUES_DIR = Path(__file__).resolve().parent.parent / "tests" / "dialogues"


@dataclass
class DialogueReport:
    """Pass counts per workflow and locale, and what failed."""

    passed: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))
    total: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))
    failures: list[str] = field(default_factory=list)

    @property
    def all_passed(self) -> bool:
        return not self.failures

    def lines(self) -> list[str]:
        out = [f"{workflow} [{locale}]: {self.passed[(workflow, locale)]}/{count} passed"
               for (workflow, locale), count in sorted(self.total.items())]
        done, count = sum(self.passed.values()), sum(self.total.values())
        out.append(f"all: {done}/{count} passed ({(done / count if count else 1):.1%})")
        return out


def load_dialogues(paths: Iterable[Path] | None = None) -> list[dict[str, Any]]:
    """Every dialogue of the given files or folders (the shipped corpus by default)."""
    files: list[Path] = []
    for path in paths or [DIALOGUES_DIR]:
        files += sorted(path.glob("*.json")) if path.is_dir() else [path]
    dialogues = []
    for file in files:
        for dialogue in json.loads(file.read_text(encoding="utf-8")):
            dialogues.append({**dialogue, "file": file.name})
    return dialogues


def run_dialogues(dialogues: list[dict[str, Any]], user) -> DialogueReport:  # noqa: ANN001
    """Hold each conversation through the services, as a person would; writes (use a rolled-back transaction)."""
    report = DialogueReport()
    for dialogue in dialogues:
        key = (dialogue["workflow"], dialogue.get("locale", "en"))
        report.total[key] += 1
        problems = _run_one(dialogue, user)
        if problems:
            report.failures.append(f"{dialogue['file']}:{dialogue['id']}: " + "; ".join(problems))
        else:
            report.passed[key] += 1
    return report


def _setup(setup: dict[str, Any]) -> None:
    from billing.models import BillingRuleVersion, ParkingOrder
    from billing.places import city_save, lot_save
    from billing.services import billing_rule_version_add, parking_order_create, parse_time

    for city in setup.get("cities", ()):
        city_save(data=city)
    for lot in setup.get("lots", ()):
        lot_save(data=lot)
    for rule in setup.get("rules", ()):
        start = parse_time(rule["version"]["effective_from"], "effective_from")
        if not BillingRuleVersion.objects.filter(rule__rule_code=rule["rule_code"], effective_from=start).exists():
            billing_rule_version_add(data=rule)
    template = ParkingOrder.objects.order_by("pk").first()
    for order in setup.get("orders", ()):
        number = order["order_no"] if isinstance(order, dict) else order
        if ParkingOrder.objects.filter(order_no=number).exists():
            continue
        if isinstance(order, dict):
            parking_order_create(data=order)
        elif template is not None:
            template.pk, template.order_no = None, number
            template.save()


def _run_one(dialogue: dict[str, Any], user) -> list[str]:  # noqa: ANN001
    from . import services

    _setup(dialogue.get("setup", {}))
    conversation = services.conversation_start(user=user, workflow_id=dialogue["workflow"], locale=dialogue.get("locale", "en"))
    for index, turn in enumerate(dialogue["turns"], start=1):
        if "choose" in turn:
            problems = _choose(user, conversation.pk, turn)
            label = f"choose {turn['choose']}"
        elif "staff_reply" in turn or "hand_back" in turn:
            problems = _staff(conversation.pk, turn)
            label = "staff"
        else:
            _, result = services.conversation_turn(user=user, conversation_id=conversation.pk, text=turn["user"])
            state = services.conversation_state(result.conversation)
            problems = check_turn(turn.get("expect", {}), result, state)
            label = repr(turn["user"])
        if problems:
            return [f"turn {index} ({label}): {p}" for p in problems]
    return []


def _staff(conversation_id: int, turn: dict[str, Any]) -> list[str]:
    """A supervisor answers on the open handoff and/or hands the conversation back."""
    from django.contrib.auth import get_user_model

    from workflows.roles import SUPERVISOR, role_grant

    from . import services
    from .handoffs import handoff_close, handoff_reply, open_handoff_id
    from .models import Conversation

    staff, _ = get_user_model().objects.get_or_create(username="dialogue-staff")
    role_grant(staff, SUPERVISOR)
    handoff_id = open_handoff_id(Conversation.objects.get(pk=conversation_id))
    if handoff_id is None:
        return ["no open handoff to act on"]
    if turn.get("staff_reply"):
        handoff_reply(handoff_id=handoff_id, user=staff, text=turn["staff_reply"])
    if turn.get("hand_back"):
        handoff_close(handoff_id=handoff_id, user=staff)
    conversation = Conversation.objects.select_related("run").get(pk=conversation_id)
    return _check_state(turn.get("expect", {}), services.conversation_state(conversation))


def _choose(user, conversation_id: int, turn: dict[str, Any]) -> list[str]:  # noqa: ANN001
    from config.errors import ApplicationError

    from . import services
    from .models import Conversation

    expect = turn.get("expect", {})
    try:
        services.conversation_choose(user=user, conversation_id=conversation_id, option_id=turn["choose"],
                                     consent=bool(turn.get("consent")))
    except ApplicationError as refusal:
        if expect.get("error") == refusal.code:
            return []
        return [f"refused: {refusal.code} {refusal.message}"]
    if "error" in expect:
        return [f"expected the refusal {expect['error']}, the choice was taken"]
    conversation = Conversation.objects.select_related("run").get(pk=conversation_id)
    state = services.conversation_state(conversation)
    note = conversation.messages.order_by("-id").first()
    problems = _check_state(expect, state)
    text = note.text if note is not None else ""
    problems += [f"note lacks {t!r}: {text[:200]!r}" for t in expect.get("reply_contains", ()) if t not in text]
    return problems


def check_turn(expect: dict[str, Any], result, state: dict[str, Any]) -> list[str]:  # noqa: ANN001
    """What does not hold of one turn's expectations."""
    problems: list[str] = []
    understood = result.execution_path.get("commands", {}).get("understood", [])
    for label in expect.get("commands", ()):
        if not any(c.startswith(label) for c in understood):
            problems.append(f"expected {label}, understood {understood}")
    for label in expect.get("not_commands", ()):
        if any(c.startswith(label) for c in understood):
            problems.append(f"did not expect {label}, understood {understood}")
    for name, wanted in expect.get("slots", {}).items():
        value = state["slots"].get(name, {}).get("value")
        if not _matches(value, wanted):
            problems.append(f"slot {name} is {value!r}, expected {wanted!r}")
    answers = {a["question_id"]: a["answer"] for a in state["form"]["finalized_answers"]}
    for question_id, wanted in expect.get("form", {}).items():
        if not _matches(answers.get(question_id), wanted):
            problems.append(f"answer {question_id} is {answers.get(question_id)!r}, expected {wanted!r}")
    text = result.reply.text
    problems += [f"reply lacks {t!r}: {text[:200]!r}" for t in expect.get("reply_contains", ()) if t not in text]
    problems += [f"reply has {t!r}" for t in expect.get("reply_not_contains", ()) if t in text]
    if "decision" in expect and result.outcome.decision != expect["decision"]:
        problems.append(f"decision {result.outcome.decision}, expected {expect['decision']}")
    tools = result.execution_path.get("tools_called", [])
    problems += [f"tool {t} not called ({tools})" for t in expect.get("tools", ()) if t not in tools]
    return problems + _check_state(expect, state)


def _check_state(expect: dict[str, Any], state: dict[str, Any]) -> list[str]:
    """The expectations on the conversation's state, options and documents."""
    problems: list[str] = []
    for path, wanted in expect.get("state", {}).items():
        value = _at_path(state, path)
        if not _matches(value, wanted):
            problems.append(f"state {path} is {value!r}, expected {wanted!r}")
    offered = [o["option_id"] for o in state["options"] if o.get("eligibility") == "eligible"]
    problems += [f"option {o} not offered ({offered})" for o in expect.get("options", ()) if o not in offered]
    problems += [f"option {o} offered" for o in expect.get("not_options", ()) if o in offered]
    problems += [f"document {d} missing ({state['documents']})" for d in expect.get("documents", ())
                 if d not in state["documents"]]
    for name, texts in expect.get("document_contains", {}).items():
        body = _document_text(state["id"], name)
        problems += [f"document {name} lacks {t!r}" for t in texts if t not in body]
    for name, texts in expect.get("document_not_contains", {}).items():
        body = _document_text(state["id"], name)
        problems += [f"document {name} has {t!r}" for t in texts if t in body]
    return problems


def _at_path(data: Any, path: str) -> Any:
    for part in path.split("."):
        if isinstance(data, dict):
            data = data.get(part)
        elif isinstance(data, list) and part.isdigit() and int(part) < len(data):
            data = data[int(part)]
        else:
            return None
    return data


def _document_text(conversation_id: int, name: str) -> str:
    """A document's text as the person downloads it: the newest version the run produced."""
    from workflows.models import RunDocument

    from .documents import render
    from .models import Conversation

    conversation = Conversation.objects.get(pk=conversation_id)
    doc = RunDocument.objects.filter(run_id=conversation.run_id, key=name).order_by("-version").first()
    return render(conversation, doc)[0] if doc is not None else ""


def _matches(value: Any, wanted: Any) -> bool:
    if wanted is None:
        return value is None
    if isinstance(wanted, str) and wanted.startswith("re:"):
        return value is not None and re.search(wanted[3:], str(value)) is not None
    return value == wanted
