"""Edge conditions: small data-defined predicates that return a blocker reason on failure.

A condition is a JSON object with a `type` from CONDITION_TYPES. Evaluating it against
the run's view (signals, slots, facts, completed steps) gives None when it holds, or a
human-readable reason when it does not; blocked options carry those reasons.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .schema import localize

_MISSING = object()


@dataclass(frozen=True)
class ConditionView:
    """What conditions may look at: merged signals (dotted keys) and run progress."""

    values: Mapping[str, Any]
    completed_steps: frozenset[str]
    locale: str = "en"  # the language a plan's own condition messages are said in

    def get(self, key: str) -> Any:
        current: Any = self.values
        for part in key.split("."):
            if not isinstance(current, Mapping) or part not in current:
                return _MISSING
            current = current[part]
        return current


def _is_text(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, Mapping) and bool(value)
                                      and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()))


def _describe(condition: Mapping[str, Any], default: str, view: ConditionView) -> str:
    """The plan's message for a failed condition (a text or {lang: text}) in the view's locale, else the engine's default."""
    return localize(condition.get("message"), view.locale) or default


def _equals(condition: Mapping, view: ConditionView) -> str | None:
    value = view.get(condition["key"])
    if value is not _MISSING and value == condition["value"]:
        return None
    return _describe(condition, f"{condition['key']} must be {condition['value']!r}", view)


def _in(condition: Mapping, view: ConditionView) -> str | None:
    if view.get(condition["key"]) in condition["values"]:
        return None
    return _describe(condition, f"{condition['key']} must be one of {condition['values']!r}", view)


def _number(view: ConditionView, key: str) -> float | None:
    value = view.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _at_least(condition: Mapping, view: ConditionView) -> str | None:
    value = _number(view, condition["key"])
    if value is not None and value >= condition["value"]:
        return None
    return _describe(condition, f"{condition['key']} must be at least {condition['value']}", view)


def _below(condition: Mapping, view: ConditionView) -> str | None:
    value = _number(view, condition["key"])
    if value is not None and value < condition["value"]:
        return None
    return _describe(condition, f"{condition['key']} must be below {condition['value']}", view)


def _present(condition: Mapping, view: ConditionView) -> str | None:
    value = view.get(condition["key"])
    if value is not _MISSING and value not in (None, "", [], {}):
        return None
    return _describe(condition, f"{condition['key']} is missing", view)


def _absent(condition: Mapping, view: ConditionView) -> str | None:
    if _present(condition, view) is not None:
        return None
    return _describe(condition, f"{condition['key']} must not be set", view)


def _step_completed(condition: Mapping, view: ConditionView) -> str | None:
    if condition["step"] in view.completed_steps:
        return None
    return _describe(condition, f"step '{condition['step']}' is not completed yet", view)


def _action_allowed(condition: Mapping, view: ConditionView) -> str | None:
    # The conversation layer publishes ask-then-act blockers per action under this key.
    # No published decision (a run that has heard nothing yet) fails closed: never act first.
    blockers = view.get(f"action_blockers.{condition['action']}")
    if blockers is _MISSING:
        return _describe(condition, "no_decision_yet: the person has not said anything yet", view)
    if not blockers:
        return None
    return _describe(condition, "; ".join(str(b) for b in blockers), view)


def _not(condition: Mapping, view: ConditionView) -> str | None:
    if evaluate(condition["condition"], view) is not None:
        return None
    return _describe(condition, f"not allowed: {condition['condition'].get('type')} holds", view)


def _all(condition: Mapping, view: ConditionView) -> str | None:
    reasons = [r for r in (evaluate(x, view) for x in condition["conditions"]) if r]
    return _describe(condition, "; ".join(reasons), view) if reasons else None


def _any(condition: Mapping, view: ConditionView) -> str | None:
    reasons = [evaluate(x, view) for x in condition["conditions"]]
    if any(r is None for r in reasons):
        return None
    return _describe(condition, " or ".join(r for r in reasons if r), view)


# type -> (evaluator, required fields with their accepted Python types)
CONDITION_TYPES: dict[str, tuple[Callable[[Mapping, ConditionView], str | None], dict[str, Any]]] = {
    "equals": (_equals, {"key": str, "value": object}),
    "in": (_in, {"key": str, "values": list}),
    "at_least": (_at_least, {"key": str, "value": (int, float)}),
    "below": (_below, {"key": str, "value": (int, float)}),
    "present": (_present, {"key": str}),
    "absent": (_absent, {"key": str}),
    "step_completed": (_step_completed, {"step": str}),
    "action_allowed": (_action_allowed, {"action": str}),
    "not": (_not, {"condition": dict}),
    "all": (_all, {"conditions": list}),
    "any": (_any, {"conditions": list}),
}


def evaluate(condition: Mapping[str, Any], view: ConditionView) -> str | None:
    """None when the condition holds, else the reason it does not."""
    evaluator, _fields = CONDITION_TYPES[condition["type"]]
    return evaluator(condition, view)


def blockers_for(conditions: Iterable[Mapping[str, Any]], view: ConditionView) -> list[str]:
    """Reasons of every failing condition, in plan order."""
    return [reason for reason in (evaluate(c, view) for c in conditions) if reason]


def iter_conditions(conditions: Any, path: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every condition object of an edge's `conditions` list, inner ones of not/all/any included, with its path."""
    for i, condition in enumerate(conditions if isinstance(conditions, list | tuple) else ()):
        yield from _walk(condition, f"{path}[{i}]")


def _walk(condition: Any, path: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    if not isinstance(condition, Mapping):
        return
    yield path, condition
    yield from _walk(condition.get("condition"), f"{path}.condition")
    yield from iter_conditions(condition.get("conditions"), f"{path}.conditions")


def validate_condition(condition: Any, path: str) -> list[tuple[str, str]]:
    """Problems of one condition object (recursing into not/all/any), with JSON paths."""
    if not isinstance(condition, Mapping):
        return [(path, "a condition must be an object")]
    ctype = condition.get("type")
    if ctype not in CONDITION_TYPES:
        return [(f"{path}.type", f"unknown condition type '{ctype}'; known: {', '.join(CONDITION_TYPES)}")]
    problems: list[tuple[str, str]] = []
    for name, accepted in CONDITION_TYPES[ctype][1].items():
        if name not in condition:
            problems.append((f"{path}.{name}", "is required"))
        elif accepted is not object and (
            not isinstance(condition[name], accepted) or isinstance(condition[name], bool)
        ):
            problems.append((f"{path}.{name}", f"has the wrong type for a '{ctype}' condition"))
    message = condition.get("message")
    if message is not None and not _is_text(message):
        problems.append((f"{path}.message", "must be a text or an object of texts by language"))
    if not problems and ctype == "not":
        problems += validate_condition(condition["condition"], f"{path}.condition")
    if not problems and ctype in ("all", "any"):
        for i, inner in enumerate(condition["conditions"]):
            problems += validate_condition(inner, f"{path}.conditions[{i}]")
    return problems
