"""Workflow plans: versioned JSON documents parsed into frozen dataclasses.

A plan is a graph: nodes (steps) and edges (the options leaving a step). Validation
collects every problem with its JSON path, so an upload can be refused with the full
list and nothing stored.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .conditions import CONDITION_TYPES, validate_condition

NODE_TYPES = ("conversation_step", "task", "qa", "gate", "action", "end")
EDGE_KINDS = ("auto", "user_choice")
STALENESS_POLICIES = ("block", "warn")
GATE_REVIEWERS = ("supervisor", "participant")
DEFAULT_MAX_RETRIES = 2
_NODE_KEYS = frozenset(
    {"id", "type", "label", "description", "checks", "produces", "consumes", "depends_on", "gate", "action", "mode"}
)
_ID_RE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")

Text = str | Mapping[str, str]  # plain text, or {"en": ..., "zh": ...}


def localize(text: Text | None, locale: str = "en") -> str:
    """Pick the text for a locale ("zh-hans" matches "zh"), falling back to English."""
    if text is None:
        return ""
    if isinstance(text, str):
        return text
    lang = (locale or "en").lower().split("-")[0]
    return text.get(lang) or text.get("en") or next(iter(text.values()), "")


@dataclass(frozen=True)
class PlanProblem:
    path: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message}


class PlanValidationError(ValueError):
    """A plan document breaks the schema; `problems` lists every one of them."""

    def __init__(self, problems: list[PlanProblem]):
        self.problems = problems
        super().__init__("; ".join(f"{p.path}: {p.message}" for p in problems))


@dataclass(frozen=True)
class GateSpec:
    auto_outcome: str
    fallback_outcome: str
    reject_outcome: str | None = None
    reviewer: str = "supervisor"
    high_cost: bool = False


@dataclass(frozen=True)
class Node:
    id: str
    type: str
    label: Text
    description: Text = ""
    checks: str | None = None  # qa: the generating node whose output it checks
    produces: str | None = None  # task/action: the document key it writes
    consumes: tuple[str, ...] = ()  # documents this step reads (staleness)
    depends_on: tuple[str, ...] = ()  # for `produces`: upstream document keys
    gate: GateSpec | None = None
    action: str | None = None
    mode: str | None = None  # conversation mode this step runs in (context engine)
    settings: Mapping[str, Any] = field(default_factory=dict)  # handler settings (e.g. QA fields)


@dataclass(frozen=True)
class Edge:
    option_id: str
    source: str
    target: str | None
    label: Text
    description: Text = ""
    outcome: str | None = None
    kind: str = "user_choice"
    conditions: tuple[Mapping[str, Any], ...] = ()
    non_advancing: bool = False
    requires_consent: bool = False
    effects_summary: Text = ""
    escalation: bool = False
    recommended: bool = False
    on_stale: str | None = None
    change_workflow: str | None = None
    clears: tuple[str, ...] = ()  # persisted signals this edge resets when taken
    effect: str | None = None  # a registered effect handler run when the edge is taken


@dataclass(frozen=True)
class Governance:
    max_retries: int = DEFAULT_MAX_RETRIES
    staleness: str = "block"


@dataclass(frozen=True)
class Plan:
    workflow_id: str
    name: Text
    description: Text
    start_step: str
    nodes: Mapping[str, Node]
    edges: tuple[Edge, ...]
    governance: Governance = field(default_factory=Governance)
    version: int | None = None
    conversation: Mapping[str, Any] = field(default_factory=dict)
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    fingerprint: str = ""  # the stored version's checksum: a cache key for derived data

    def edges_from(self, node_id: str) -> tuple[Edge, ...]:
        return tuple(e for e in self.edges if e.source == node_id)

    def node(self, node_id: str) -> Node:
        return self.nodes[node_id]

    def step_order(self) -> list[str]:
        """Steps in breadth-first order from the start, for progress displays."""
        order, queue, seen = [], [self.start_step], {self.start_step}
        while queue:
            current = queue.pop(0)
            order.append(current)
            for edge in self.edges_from(current):
                if edge.target and edge.target not in seen and not edge.escalation:
                    seen.add(edge.target)
                    queue.append(edge.target)
        order += [n for n in self.nodes if n not in seen]
        return order


# --- validation -----------------------------------------------------------------


class _Collector:
    def __init__(self) -> None:
        self.problems: list[PlanProblem] = []

    def add(self, path: str, message: str) -> None:
        self.problems.append(PlanProblem(path, message))


def _is_text(value: Any) -> bool:
    if isinstance(value, str):
        return bool(value.strip())
    return (
        isinstance(value, Mapping)
        and bool(value)
        and all(isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in value.items())
    )


def _check_text(c: _Collector, obj: Mapping, key: str, path: str, required: bool) -> None:
    if key not in obj:
        if required:
            c.add(f"{path}.{key}", "is required")
        return
    if not _is_text(obj[key]):
        c.add(f"{path}.{key}", 'must be a non-empty string or a {"en": ..., "zh": ...} object')


def _check_bool(c: _Collector, obj: Mapping, key: str, path: str) -> None:
    if key in obj and not isinstance(obj[key], bool):
        c.add(f"{path}.{key}", "must be true or false")


def _check_id(c: _Collector, value: Any, path: str) -> bool:
    if not isinstance(value, str) or not _ID_RE.match(value):
        c.add(path, "must be a lowercase identifier (a-z, 0-9, _; starting with a letter)")
        return False
    return True


def _validate_gate(c: _Collector, gate: Any, path: str) -> None:
    if not isinstance(gate, Mapping):
        c.add(path, "is required for a gate node and must be an object")
        return
    for key in ("auto_outcome", "fallback_outcome"):
        if not isinstance(gate.get(key), str) or not gate.get(key):
            c.add(f"{path}.{key}", "is required (an edge outcome of this gate)")
    if "reject_outcome" in gate and not isinstance(gate["reject_outcome"], str):
        c.add(f"{path}.reject_outcome", "must be a string")
    if gate.get("reviewer", "supervisor") not in GATE_REVIEWERS:
        c.add(f"{path}.reviewer", f"must be one of {', '.join(GATE_REVIEWERS)}")
    _check_bool(c, gate, "high_cost", path)


def _validate_node(c: _Collector, node: Any, path: str, seen: set[str]) -> None:
    if not isinstance(node, Mapping):
        c.add(path, "must be an object")
        return
    node_id = node.get("id")
    if _check_id(c, node_id, f"{path}.id"):
        if node_id in seen:
            c.add(f"{path}.id", f"duplicate node id '{node_id}'")
        seen.add(node_id)
    node_type = node.get("type")
    if node_type not in NODE_TYPES:
        c.add(f"{path}.type", f"must be one of {', '.join(NODE_TYPES)}")
    _check_text(c, node, "label", path, required=True)
    _check_text(c, node, "description", path, required=False)
    if node_type == "gate":
        _validate_gate(c, node.get("gate"), f"{path}.gate")
    if node_type == "qa" and not isinstance(node.get("checks"), str):
        c.add(f"{path}.checks", "is required for a qa node (the generating node it checks)")
    if node_type == "action" and not isinstance(node.get("action"), str):
        c.add(f"{path}.action", "is required for an action node (the action's name)")
    for key in ("consumes", "depends_on"):
        value = node.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            c.add(f"{path}.{key}", "must be a list of document keys")
    if "produces" in node and not isinstance(node["produces"], str):
        c.add(f"{path}.produces", "must be a document key")


def _validate_edge(c: _Collector, edge: Any, path: str, node_ids: set[str]) -> None:
    if not isinstance(edge, Mapping):
        c.add(path, "must be an object")
        return
    _check_id(c, edge.get("option_id"), f"{path}.option_id")
    source = edge.get("from")
    if source not in node_ids:
        c.add(f"{path}.from", f"unknown node '{source}'")
    non_advancing = edge.get("non_advancing", False)
    target = edge.get("to")
    if non_advancing:
        if target is not None:
            c.add(f"{path}.to", "must be null for a non-advancing option")
    elif target not in node_ids:
        c.add(f"{path}.to", f"unknown node '{target}'")
    _check_text(c, edge, "label", path, required=True)
    _check_text(c, edge, "description", path, required=False)
    _check_text(c, edge, "effects_summary", path, required=True)
    if edge.get("kind", "user_choice") not in EDGE_KINDS:
        c.add(f"{path}.kind", f"must be one of {', '.join(EDGE_KINDS)} (blocked is computed)")
    for key in ("non_advancing", "requires_consent", "escalation", "recommended"):
        _check_bool(c, edge, key, path)
    if "outcome" in edge and not isinstance(edge["outcome"], str):
        c.add(f"{path}.outcome", "must be a string")
    if edge.get("on_stale", "block") not in STALENESS_POLICIES:
        c.add(f"{path}.on_stale", f"must be one of {', '.join(STALENESS_POLICIES)}")
    clears = edge.get("clears", [])
    if not isinstance(clears, list) or not all(isinstance(k, str) and k for k in clears):
        c.add(f"{path}.clears", "must be a list of signal names")
    if "effect" in edge and not isinstance(edge["effect"], str):
        c.add(f"{path}.effect", "must be the name of an effect handler")
    if "change_workflow" in edge and not isinstance(edge["change_workflow"], str):
        c.add(f"{path}.change_workflow", "must be a workflow_id")
    conditions = edge.get("conditions", [])
    if not isinstance(conditions, list):
        c.add(f"{path}.conditions", "must be a list")
        return
    for j, condition in enumerate(conditions):
        for problem_path, message in validate_condition(condition, f"{path}.conditions[{j}]"):
            c.add(problem_path, message)


def _validate_graph(c: _Collector, doc: Mapping, node_ids: set[str]) -> None:
    nodes = [n for n in doc["nodes"] if isinstance(n, Mapping)]
    edges = [e for e in doc["edges"] if isinstance(e, Mapping)]
    by_id = {n.get("id"): (i, n) for i, n in enumerate(nodes)}
    option_keys: set[tuple[Any, Any]] = set()
    for i, edge in enumerate(edges):
        key = (edge.get("from"), edge.get("option_id"))
        if key in option_keys:
            c.add(f"$.edges[{i}].option_id", f"duplicate option '{key[1]}' leaving '{key[0]}'")
        option_keys.add(key)
    sources = {e.get("from") for e in edges}
    for node_id, (i, node) in by_id.items():
        if node.get("type") == "end" and node_id in sources:
            c.add(f"$.nodes[{i}]", "an end node cannot have outgoing edges")
        if node.get("type") not in ("end", None) and node_id not in sources:
            c.add(f"$.nodes[{i}]", f"node '{node_id}' has no outgoing edge and is not an end node")
        if node.get("type") == "gate" and isinstance(node.get("gate"), Mapping):
            outcomes = {e.get("outcome") for e in edges if e.get("from") == node_id}
            gate = node["gate"]
            for key in ("auto_outcome", "fallback_outcome", "reject_outcome"):
                if isinstance(gate.get(key), str) and gate[key] not in outcomes:
                    c.add(f"$.nodes[{i}].gate.{key}", f"no edge leaving '{node_id}' has outcome '{gate[key]}'")
        checks = node.get("checks")
        if node.get("type") == "qa" and isinstance(checks, str) and checks not in node_ids:
            c.add(f"$.nodes[{i}].checks", f"unknown node '{node['checks']}'")
    if not any(n.get("type") == "end" for n in nodes):
        c.add("$.nodes", "a plan needs at least one end node")
    reachable = _reachable(doc.get("start_step"), edges)
    for node_id, (i, _node) in by_id.items():
        if isinstance(node_id, str) and node_id not in reachable:
            c.add(f"$.nodes[{i}]", f"node '{node_id}' cannot be reached from the start step")


def _reachable(start: Any, edges: list[Mapping]) -> set[str]:
    seen, stack = set(), [start]
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        stack.extend(e.get("to") for e in edges if e.get("from") == current and e.get("to"))
    return seen


def validate_plan(doc: Any) -> list[PlanProblem]:
    """Every problem in a plan document, each with its JSON path; empty when valid."""
    c = _Collector()
    if not isinstance(doc, Mapping):
        c.add("$", "a plan must be a JSON object")
        return c.problems
    _check_id(c, doc.get("workflow_id"), "$.workflow_id")
    _check_text(c, doc, "name", "$", required=True)
    _check_text(c, doc, "description", "$", required=True)
    if "version" in doc and (not isinstance(doc["version"], int) or isinstance(doc["version"], bool) or doc["version"] < 1):
        c.add("$.version", "must be a positive integer")
    governance = doc.get("governance", {})
    if not isinstance(governance, Mapping):
        c.add("$.governance", "must be an object")
    else:
        breaker = governance.get("circuit_breaker", {})
        retries = breaker.get("max_retries", DEFAULT_MAX_RETRIES) if isinstance(breaker, Mapping) else None
        if not isinstance(retries, int) or isinstance(retries, bool) or not 1 <= retries <= 10:
            c.add("$.governance.circuit_breaker.max_retries", "must be an integer from 1 to 10")
        if governance.get("staleness", "block") not in STALENESS_POLICIES:
            c.add("$.governance.staleness", f"must be one of {', '.join(STALENESS_POLICIES)}")
    if "conversation" in doc and not isinstance(doc["conversation"], Mapping):
        c.add("$.conversation", "must be an object")
    nodes, edges = doc.get("nodes"), doc.get("edges")
    if not isinstance(nodes, list) or not nodes:
        c.add("$.nodes", "must be a non-empty list")
        nodes = None
    if not isinstance(edges, list):
        c.add("$.edges", "must be a list")
        edges = None
    node_ids: set[str] = set()
    for i, node in enumerate(nodes or []):
        _validate_node(c, node, f"$.nodes[{i}]", node_ids)
    if nodes is not None and doc.get("start_step") not in node_ids:
        c.add("$.start_step", f"unknown node '{doc.get('start_step')}'")
    for i, edge in enumerate(edges or []):
        _validate_edge(c, edge, f"$.edges[{i}]", node_ids)
    if nodes is not None and edges is not None and not c.problems:
        _validate_graph(c, doc, node_ids)
    return c.problems


def _gate(spec: Mapping[str, Any] | None) -> GateSpec | None:
    if spec is None:
        return None
    return GateSpec(
        auto_outcome=spec["auto_outcome"],
        fallback_outcome=spec["fallback_outcome"],
        reject_outcome=spec.get("reject_outcome"),
        reviewer=spec.get("reviewer", "supervisor"),
        high_cost=spec.get("high_cost", False),
    )


def parse_plan(doc: Any) -> Plan:
    """Validate and build a Plan; raises PlanValidationError listing every problem."""
    problems = validate_plan(doc)
    if problems:
        raise PlanValidationError(problems)
    nodes = {
        n["id"]: Node(
            id=n["id"],
            type=n["type"],
            label=n["label"],
            description=n.get("description", ""),
            checks=n.get("checks"),
            produces=n.get("produces"),
            consumes=tuple(n.get("consumes", ())),
            depends_on=tuple(n.get("depends_on", ())),
            gate=_gate(n.get("gate")),
            action=n.get("action"),
            mode=n.get("mode"),
            settings={k: v for k, v in n.items() if k not in _NODE_KEYS},
        )
        for n in doc["nodes"]
    }
    edges = tuple(
        Edge(
            option_id=e["option_id"],
            source=e["from"],
            target=e.get("to"),
            label=e["label"],
            description=e.get("description", ""),
            outcome=e.get("outcome"),
            kind=e.get("kind", "user_choice"),
            conditions=tuple(e.get("conditions", ())),
            non_advancing=e.get("non_advancing", False),
            requires_consent=e.get("requires_consent", False),
            effects_summary=e["effects_summary"],
            escalation=e.get("escalation", False),
            recommended=e.get("recommended", False),
            on_stale=e.get("on_stale"),
            change_workflow=e.get("change_workflow"),
            clears=tuple(e.get("clears", ())),
            effect=e.get("effect"),
        )
        for e in doc["edges"]
    )
    governance = doc.get("governance", {})
    return Plan(
        workflow_id=doc["workflow_id"],
        name=doc["name"],
        description=doc["description"],
        start_step=doc["start_step"],
        nodes=nodes,
        edges=edges,
        governance=Governance(
            max_retries=governance.get("circuit_breaker", {}).get("max_retries", DEFAULT_MAX_RETRIES),
            staleness=governance.get("staleness", "block"),
        ),
        version=doc.get("version"),
        conversation=doc.get("conversation", {}),
        raw=doc,
    )


__all__ = ["CONDITION_TYPES", "Edge", "GateSpec", "Governance", "Node", "Plan", "PlanProblem",
           "PlanValidationError", "localize", "parse_plan", "validate_plan"]
