"""Step handlers: what happens when a run enters a task, qa or action node.

A handler takes a StepContext and returns a StepEffect (signals to publish, documents to
version). Other apps register their own (billing registers its tools); plans name them
with a node's `task` setting, and nodes without one use the built-in default for their type.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .engine import Node, Plan, RunState


@dataclass(frozen=True)
class StepContext:
    plan: Plan
    node: Node
    state: RunState
    run_id: int
    owner_id: int
    documents: Mapping[str, Mapping[str, Any]]  # latest content per document key
    conversation_id: int | None = None


@dataclass(frozen=True)
class StepEffect:
    signals: Mapping[str, Any] = field(default_factory=dict)
    documents: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    note: str = ""


Handler = Callable[[StepContext], StepEffect]
_HANDLERS: dict[str, Handler] = {}
# what a plan may name beside a handler: the node settings it reads and the signals it publishes, so a plan's
# typo ("qa_pas", "documnet_fields", "billing.fee_verfy") is refused at upload instead of blocking for good
_HANDLER_SETTINGS: dict[str, frozenset[str]] = {}
_PUBLISHED: dict[str, frozenset[str]] = {}  # signal roots, by who publishes them
NODE_SETTINGS = frozenset({"task", "refresh_at"})  # read by the runs themselves, whatever the handler


def step_handler(name: str, *, settings: Iterable[str] = (), signals: Iterable[str] = ()) -> Callable[[Handler], Handler]:
    """Register a handler under a name that plans may use as a node's `task`, with the node settings it reads
    and the signals it publishes (what conditions may test)."""

    def register(fn: Handler) -> Handler:
        _HANDLERS[name] = fn
        _HANDLER_SETTINGS[name] = frozenset(settings)
        publishes_signals(name, *signals)
        return fn

    return register


EffectHandler = Callable[[StepContext, Any, Any], StepEffect]  # (ctx, option, acting user)
_EFFECTS: dict[str, EffectHandler] = {}


def edge_effect(name: str, *, signals: Iterable[str] = ()) -> Callable[[EffectHandler], EffectHandler]:
    """Register an effect that plans attach to an edge with `"effect": name`, with the signals it publishes."""

    def register(fn: EffectHandler) -> EffectHandler:
        _EFFECTS[name] = fn
        publishes_signals(name, *signals)
        return fn

    return register


def publishes_signals(publisher: str, *roots: str) -> None:
    """Declare the signals (top-level keys) something other than a handler publishes: the conversation layer."""
    _PUBLISHED[publisher] = _PUBLISHED.get(publisher, frozenset()) | frozenset(roots)


def effect_for(name: str | None) -> EffectHandler | None:
    return _EFFECTS.get(name) if name else None


def handler_for(node: Node) -> Handler | None:
    name = node.settings.get("task") or f"default.{node.type}"
    return _HANDLERS.get(name) or _HANDLERS.get(f"default.{node.type}")


def task_names() -> frozenset[str]:
    """The handlers a node's `task` may name."""
    return frozenset(_HANDLERS)


def effect_names() -> frozenset[str]:
    """The effects an edge's `effect` may name."""
    return frozenset(_EFFECTS)


def node_settings(node_type: str, task: str | None) -> frozenset[str]:
    """The settings a node may carry beside its fields: the runs' own and its handler's."""
    return NODE_SETTINGS | _HANDLER_SETTINGS.get(task or f"default.{node_type}", frozenset())


def signal_roots() -> frozenset[str]:
    """Every top-level signal a condition may test, whoever publishes it."""
    return frozenset().union(*_PUBLISHED.values()) if _PUBLISHED else frozenset()


def _slots(state: RunState) -> Mapping[str, Any]:
    slots = state.signals.get("slots", {})
    return slots if isinstance(slots, Mapping) else {}


@step_handler("default.task", settings=("document_fields",))
def build_document(ctx: StepContext) -> StepEffect:
    """Assemble the node's document from the slots the conversation gathered."""
    if not ctx.node.produces:
        return StepEffect()
    fields = ctx.node.settings.get("document_fields") or sorted(_slots(ctx.state))
    content = {name: _slots(ctx.state).get(name) for name in fields}
    return StepEffect(documents={ctx.node.produces: content})


@step_handler("default.qa", settings=("required_fields", "critical_fields"),
              signals=("qa_pass", "missing_critical", "qa_findings"))
def structural_qa(ctx: StepContext) -> StepEffect:
    """Check the generated document's structure: required and critical fields present."""
    checked = ctx.plan.node(ctx.node.checks) if ctx.node.checks else None
    doc = ctx.documents.get(checked.produces, {}) if checked and checked.produces else {}
    required = ctx.node.settings.get("required_fields", [])
    critical = ctx.node.settings.get("critical_fields", required)
    missing = [f for f in required if not doc.get(f)]
    missing_critical = [f for f in critical if not doc.get(f)]
    return StepEffect(
        signals={
            "qa_pass": bool(doc) and not missing,
            "missing_critical": bool(missing_critical),
            "qa_findings": [f"'{f}' is missing" for f in missing] or ([] if doc else ["no document"]),
        }
    )


@step_handler("default.action", signals=("executed_actions",))
def record_action(ctx: StepContext) -> StepEffect:
    """Record that the action ran; its document carries what the conversation prepared."""
    executed = list(ctx.state.signals.get("executed_actions", []))
    executed.append(ctx.node.action or ctx.node.id)
    documents = {}
    if ctx.node.produces:
        prepared = ctx.state.signals.get("prepared", {})
        documents[ctx.node.produces] = dict(prepared.get(ctx.node.produces, {})) if isinstance(prepared, Mapping) else {}
    return StepEffect(signals={"executed_actions": executed}, documents=documents)
