"""Dialogue understanding as commands: the vocabulary, its validation and its JSON Schema.

A command generator (the rules, or the model) turns one message into a short list of
commands; nothing it says is trusted. `validate_commands` checks every command against
what the plan and the turn allow (intents, slot names and value types, lookups, the
pending question, the options on offer, the actions ask-then-act allows) and returns the
accepted commands, normalised, and the refused ones with a reason each, for the audit.

`command_schema` gives the JSON Schema a model answers with (Structured Outputs), with the
plan's own names as enums, so a well-behaved model cannot even name an unknown slot.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from ._serde import FrozenDict, Serializable
from .certainty import CERTAIN, CERTAINTIES
from .forms import without_own_unit
from .recognizers.numbers import read_quantities
from .slots import lookup_identifier

MAX_COMMANDS = 8
FORM_SLOT = "form:"  # the type of a form question's slot: "form:<question id>"
MAX_VALUE_CHARS = 1000
SIDE_KINDS = ("locate", "explain", "howto", "knowledge")

# Each command and the arguments it carries (all required).
ARGUMENTS: Mapping[str, tuple[str, ...]] = FrozenDict({
    "start_intent": ("intent",),
    "set_slot": ("slot", "value"),
    "correct_slot": ("slot", "value"),
    "answer": ("question_id", "value"),
    "side_question": ("side_kind", "topic"),
    "report_evidence": ("text",),
    "confirm": (),
    "deny": (),
    "choose_option": ("option_id",),
    "request_action": ("action_id",),
    "decline_action": ("action_id",),
    "cancel": (),
    "clarify": ("candidates",),
    "human_handoff": (),
    "chitchat": (),
    "cannot_handle": (),
})

# Which of them may only appear once per turn, and which exclude each other.
_SINGLE = frozenset({"start_intent", "confirm", "deny", "choose_option", "request_action", "cancel", "clarify",
                     "human_handoff", "chitchat", "cannot_handle"})
_EXCLUSIVE = (frozenset({"confirm", "deny"}), frozenset({"choose_option", "request_action"}))

Lookup = Callable[..., Any]



@dataclass(frozen=True)
class Command(Serializable):
    """One thing the message means. Only the arguments its kind takes are set."""

    kind: str
    intent: str | None = None
    slot: str | None = None
    value: str | None = None
    question_id: str | None = None
    side_kind: str | None = None  # side_question: locate | explain | howto | knowledge
    topic: str | None = None
    text: str | None = None
    option_id: str | None = None
    action_id: str | None = None
    candidates: tuple[str, ...] = ()
    certainty: str = CERTAIN
    words: str | None = None  # the words of the message the command was read from

    @property
    def certain(self) -> bool:
        return self.certainty == CERTAIN

    def describe(self) -> str:
        """A short, stable label for traces and the audit (`set_slot(lot_code=LOT_A)`)."""
        args = {
            "intent": self.intent, "slot": self.slot, "question_id": self.question_id, "side_kind": self.side_kind,
            "topic": self.topic, "option_id": self.option_id, "action_id": self.action_id,
        }
        shown = [f"{k}={v}" for k, v in args.items() if v]
        if self.value is not None:
            shown.append(f"value={self.value[:60]}")
        if self.text is not None:
            shown.append(f"text={self.text[:60]}")
        if self.candidates:
            shown.append("candidates=" + "|".join(self.candidates))
        return f"{self.kind}({', '.join(shown)})" + ("" if self.certain else f" ~{self.certainty}")


@dataclass(frozen=True)
class Refusal(Serializable):
    """A command the engine did not accept, and why (a stable code, then details)."""

    command: Command
    reason: str


@dataclass(frozen=True)
class QuestionRef(Serializable):
    """What a question accepts as an answer: its type and, for a choice, the values."""

    id: str
    answer_type: str = "text"  # text | number | choice | yes_no | date | slot type
    choices: tuple[str, ...] = ()
    unit: str | None = None
    final: bool = False  # already answered: an `answer` to it is a correction
    set_aside: bool = False  # asked before and left open: it may be answered while another is asked
    other: bool = False  # a choice that takes other answers: "other: <words>"
    low: float | None = None  # a number's bounds
    high: float | None = None
    pattern: str | None = None  # a text answer's format (case-sensitive unless ignore_case)
    ignore_case: bool = False


@dataclass(frozen=True)
class CommandContext:
    """Everything validation checks a command against, for one turn."""

    intents: frozenset[str] = frozenset()
    slot_types: Mapping[str, str] = field(default_factory=FrozenDict)  # slot name -> extractor/type
    questions: Mapping[str, QuestionRef] = field(default_factory=FrozenDict)
    pending_question_id: str | None = None
    options: frozenset[str] = frozenset()  # eligible option ids of the current decision point
    consent_options: frozenset[str] = frozenset()  # eligible, but only with the person's consent
    actions: frozenset[str] = frozenset()  # actions that may be asked for (not run yet)
    known_actions: frozenset[str] = frozenset()
    side_topics: frozenset[str] = frozenset()  # empty: any topic text
    lookups: Mapping[str, Lookup] = field(default_factory=FrozenDict)
    known_slots: Mapping[str, str] = field(default_factory=FrozenDict)  # current values, for lookups


@dataclass(frozen=True)
class CommandCheck(Serializable):
    accepted: tuple[Command, ...] = ()
    refused: tuple[Refusal, ...] = ()


# -- parsing what a generator produced --------------------------------------------------------
def command_from_dict(data: Any) -> Command | str:
    """A Command from its JSON form (`{"command": "set_slot", "slot": ..., "value": ...}`), or why not."""
    if not isinstance(data, Mapping):
        return "not_an_object"
    kind = data.get("command")
    if not isinstance(kind, str) or kind not in ARGUMENTS:
        return f"unknown_command:{str(kind)[:40]}"
    values: dict[str, Any] = {}
    for name in ARGUMENTS[kind]:
        raw = data.get(name)
        if name == "candidates":
            if not isinstance(raw, list) or not raw or not all(isinstance(c, str) and c.strip() for c in raw):
                return "candidates_must_be_a_list_of_strings"
            values["candidates"] = tuple(c.strip()[:200] for c in raw[:6])
            continue
        if isinstance(raw, bool) or not isinstance(raw, str | int | float) or (isinstance(raw, float) and not math.isfinite(raw)):
            return f"missing_argument:{name}"
        text = str(raw).strip()
        if not text:
            return f"missing_argument:{name}"
        if len(text) > MAX_VALUE_CHARS:
            return f"argument_too_long:{name}"
        values[name] = text
    certainty = data.get("certainty", CERTAIN)  # a generator says how sure it is (contract 10); unsaid: certain
    if certainty not in CERTAINTIES:
        return f"unknown_certainty:{str(certainty)[:20]}"
    return Command(kind=kind, certainty=certainty, **values)


def commands_from_json(data: Any) -> tuple[list[Command], list[Refusal]]:
    """The commands of a generator's answer `{"commands": [...]}`; malformed entries are refused."""
    items = data.get("commands") if isinstance(data, Mapping) else None
    if not isinstance(items, list):
        return [], [Refusal(Command("cannot_handle"), "no_command_list")]
    commands: list[Command] = []
    refused: list[Refusal] = []
    for item in items[: MAX_COMMANDS * 2]:
        parsed = command_from_dict(item)
        if isinstance(parsed, Command):
            commands.append(parsed)
        else:
            kind = item.get("command") if isinstance(item, Mapping) and isinstance(item.get("command"), str) else "unknown"
            refused.append(Refusal(Command(kind[:40]), parsed))
    return commands, refused


def command_to_dict(command: Command) -> dict[str, Any]:
    """The JSON form a generator uses (and the audit stores)."""
    out: dict[str, Any] = {"command": command.kind}
    for name in ARGUMENTS.get(command.kind, ()):
        out[name] = list(command.candidates) if name == "candidates" else getattr(command, name)
    if not command.certain:
        out["certainty"] = command.certainty
    return out


# -- validation ---------------------------------------------------------------------------------
def validate_commands(commands: Iterable[Command], ctx: CommandContext) -> CommandCheck:
    """Accept what the plan and this turn allow (values normalised), refuse the rest with a reason."""
    accepted: list[Command] = []
    refused: list[Refusal] = []
    seen: set[str] = set()
    for command in commands:
        reason = _conflict(command, accepted, seen) if len(accepted) < MAX_COMMANDS else "too_many_commands"
        checked = None
        if reason is None:
            checked = _check(command, ctx)
            if isinstance(checked, str):
                reason, checked = checked, None
        if checked is None:
            refused.append(Refusal(command, reason or "refused"))
            continue
        accepted.append(checked)
        seen.add(checked.kind)
    return CommandCheck(tuple(accepted), tuple(refused))


def _conflict(command: Command, accepted: list[Command], seen: set[str]) -> str | None:
    if command.kind in _SINGLE and command.kind in seen:
        return "duplicate_command"
    for group in _EXCLUSIVE:
        if command.kind in group and seen & (group - {command.kind}):
            return "conflicts_with:" + ",".join(sorted(seen & group))
    if command.kind in ("set_slot", "correct_slot") and any(c.slot == command.slot for c in accepted if c.slot):
        return f"slot_given_twice:{command.slot}"
    return None


def _check(command: Command, ctx: CommandContext) -> Command | str:
    checker = _CHECKS.get(command.kind)
    if checker is None:
        return command if command.kind in ARGUMENTS else f"unknown_command:{command.kind}"
    return checker(command, ctx)


def _start_intent(command: Command, ctx: CommandContext) -> Command | str:
    return command if command.intent in ctx.intents else f"unknown_intent:{command.intent}"


def _slot(command: Command, ctx: CommandContext) -> Command | str:
    slot_type = ctx.slot_types.get(command.slot or "")
    if slot_type is None:
        return f"unknown_slot:{command.slot}"
    if slot_type.startswith(FORM_SLOT) and (question := ctx.questions.get(slot_type.removeprefix(FORM_SLOT))):
        value = normalise_answer(command.value or "", question)  # checked as its question's answer
        return replace(command, value=value) if value is not None else f"invalid_value:{command.slot}:{question.answer_type}"
    value = normalise_value(command.value or "", slot_type)
    if value is None:
        return f"invalid_value:{command.slot}:{slot_type}"
    lookup = ctx.lookups.get(command.slot or "")
    if lookup is not None:
        found = lookup_identifier(lookup, [value], {k: v for k, v in ctx.known_slots.items() if k != command.slot})
        if found is None:
            return f"not_found:{command.slot}:{value[:60]}"
        value = found[0]
    return replace(command, value=value)


def _answer(command: Command, ctx: CommandContext) -> Command | str:
    question = ctx.questions.get(command.question_id or "")
    if question is None:
        return f"unknown_question:{command.question_id}"
    if ctx.pending_question_id is not None and question.id != ctx.pending_question_id and not (question.final or question.set_aside):
        return f"not_the_pending_question:{ctx.pending_question_id}"  # never a question not asked yet
    value = normalise_answer(command.value or "", question)
    if value is None:
        return f"invalid_answer:{question.id}:{question.answer_type}"
    return replace(command, question_id=question.id, value=value)


def _side_question(command: Command, ctx: CommandContext) -> Command | str:
    if command.side_kind not in SIDE_KINDS:
        return f"unknown_side_question_kind:{command.side_kind}"
    if ctx.side_topics and command.topic not in ctx.side_topics:
        return f"unknown_topic:{command.topic}"
    return command


def _choose_option(command: Command, ctx: CommandContext) -> Command | str:
    if command.option_id in ctx.consent_options:
        return f"needs_consent:{command.option_id}"  # only the person can give it, on the option itself
    return command if command.option_id in ctx.options else f"option_not_offered:{command.option_id}"


def _request_action(command: Command, ctx: CommandContext) -> Command | str:
    if command.action_id not in ctx.known_actions:
        return f"unknown_action:{command.action_id}"
    if command.action_id not in ctx.actions:
        return f"action_not_allowed:{command.action_id}"  # it already ran
    # Otherwise the wish is understood; whether the action may be offered is ask-then-act's call.
    return command


def _decline_action(command: Command, ctx: CommandContext) -> Command | str:
    return command if command.action_id in ctx.known_actions else f"unknown_action:{command.action_id}"


def _clarify(command: Command, ctx: CommandContext) -> Command | str:
    return command if len(set(command.candidates)) >= 2 else "clarify_needs_two_candidates"


_CHECKS: Mapping[str, Callable[[Command, CommandContext], Command | str]] = FrozenDict({
    "start_intent": _start_intent,
    "set_slot": _slot,
    "correct_slot": _slot,
    "answer": _answer,
    "side_question": _side_question,
    "choose_option": _choose_option,
    "request_action": _request_action,
    "decline_action": _decline_action,
    "clarify": _clarify,
})


# -- typed values --------------------------------------------------------------------------------
_NUMBER = re.compile(r"^[+-]?\d{1,12}(?:[.,]\d{1,6})?$")
_EMAIL = re.compile(r"^[^@\s]{1,64}@[^@\s]{1,190}\.[A-Za-z]{2,24}$")
_YES = frozenset({"yes", "y", "true", "是", "是的", "对", "有", "да", "sí", "si"})
_NO = frozenset({"no", "n", "false", "否", "不是", "没有", "нет"})


def normalise_value(value: str, slot_type: str) -> str | None:
    """A value in its slot type's canonical form, or None when it is not of that type."""
    value = value.strip()
    if not value or len(value) > MAX_VALUE_CHARS:
        return None
    if slot_type in ("number", "duration_minutes"):
        return _number(value, integer=slot_type == "duration_minutes")
    if slot_type == "email":
        return value.lower() if _EMAIL.match(value) else None
    if slot_type in ("at_time", "until_time", "date"):
        return _iso(value, date_only=slot_type == "date")
    if slot_type == "clock_time":  # a time of day, HH:MM
        match = re.fullmatch(r"([01]?\d|2[0-3])[:：]([0-5]\d)(?::00)?", value)
        return f"{int(match.group(1)):02d}:{match.group(2)}" if match else None
    return value  # identifiers and text: the lookup (when any) decides


def normalise_answer(value: str, question: QuestionRef) -> str | None:
    """An answer in its question's canonical form, or None when it does not fit the type."""
    value = value.strip()
    if not value or len(value) > MAX_VALUE_CHARS:
        return None
    if question.answer_type == "choice":
        by_key = {c.casefold(): c for c in question.choices}
        if question.other and value.casefold().startswith("other:") and value[6:].strip():
            return f"other: {value[6:].strip()}"
        return by_key.get(value.casefold())
    if question.answer_type == "yes_no":
        lowered = value.casefold()
        return "yes" if lowered in _YES else "no" if lowered in _NO else None
    if question.answer_type == "number":
        bare = without_own_unit(value, question.unit)  # "2 storeys" answers "how many storeys"; "2 sq ft" does not
        number = None if bare is None else _number(bare, integer=False)
        out = number is not None and (question.low is not None and float(number) < question.low
                                      or question.high is not None and float(number) > question.high)
        return None if out else number  # a model's value outside the plan's bounds is refused as the person's is
    if question.answer_type == "text":
        if question.pattern is not None:  # the part in the plan's format, or nothing
            found = re.search(question.pattern, value, re.IGNORECASE if question.ignore_case else 0)
            return (found.group(1) if found.groups() and found.group(1) else found.group(0)) if found else None
        return value
    if question.answer_type == "time":
        return normalise_value(value, "clock_time")
    if question.answer_type == "datetime":  # the form's own shape: a local day and time, "2027-03-01 14:30"
        try:
            moment = datetime.fromisoformat(value.replace(" ", "T", 1))
        except ValueError:
            return None
        return moment.strftime("%Y-%m-%d %H:%M")
    return normalise_value(value, question.answer_type)


def _number(value: str, *, integer: bool) -> str | None:
    compact = value.replace(" ", "").replace("_", "")
    if re.fullmatch(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?", compact):
        compact = compact.replace(",", "")  # thousands separators: 1,450
    if _NUMBER.match(compact):
        number = float(compact.replace(",", "."))
    elif (said := _one_number(value)) is not None:
        number = said  # a generator's value in words ("two and a half", "1.5万", "八万"), read by the quantity recognizer
    else:
        return None
    if integer:
        return str(int(number)) if number.is_integer() and number >= 0 else None
    return str(int(number)) if number.is_integer() else str(number)


def _one_number(value: str) -> float | None:
    """The one plain number a value says, certain and unit-free; None for two ("6 or 7"), a range, a hedge, none."""
    spans = read_quantities(value)
    if len(spans) != 1 or spans[0].certainty != CERTAIN or spans[0].value.value is None or spans[0].value.unit:
        return None
    return spans[0].value.value


def _iso(value: str, *, date_only: bool) -> str | None:
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if date_only:
        return parsed.date().isoformat()
    if parsed.tzinfo is None or not 1900 <= parsed.year <= 2200:
        return None  # a time without its offset is ambiguous; the engine works in aware times
    return parsed.isoformat()


# -- the schema a model answers with -------------------------------------------------------------
def command_schema(ctx: CommandContext) -> dict[str, Any]:
    """JSON Schema (Structured Outputs, strict) for `{"commands": [...], "reply": ...}` on this turn."""
    variants = [_variant(kind, ctx) for kind in ARGUMENTS]
    return {
        "type": "object",
        "properties": {
            "commands": {"type": "array", "items": {"anyOf": [v for v in variants if v is not None]}},
            "reply": {"type": ["string", "null"]},
        },
        "required": ["commands", "reply"],
        "additionalProperties": False,
    }


def _variant(kind: str, ctx: CommandContext) -> dict[str, Any] | None:
    enums = {
        "intent": sorted(ctx.intents),
        "slot": sorted(ctx.slot_types),
        "question_id": sorted(ctx.questions),
        "option_id": sorted(ctx.options | ctx.consent_options),
        "action_id": sorted(ctx.known_actions),
        "side_kind": list(SIDE_KINDS),
    }
    properties: dict[str, Any] = {"command": {"type": "string", "enum": [kind]},
                                  "certainty": {"type": "string", "enum": list(CERTAINTIES)}}
    for name in ARGUMENTS[kind]:
        if name == "candidates":
            properties[name] = {"type": "array", "items": {"type": "string"}}
        elif name in enums:
            if not enums[name]:
                return None  # nothing to name: the command cannot be used on this plan or turn
            properties[name] = {"type": "string", "enum": enums[name]}
        else:
            properties[name] = {"type": "string"}
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}
