"""Workflow plans: versioned JSON documents read into frozen dataclasses.

A plan is a graph: nodes (steps) and edges (the options leaving a step). The shape of each part is
declared once below as a pydantic dataclass, which is also what the engine runs on; the checks
between parts (edges name existing nodes, every step is reachable, ...) are written out after them.
Validation collects every problem with its JSON path, so an upload can be refused with the full
list and nothing stored.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import Annotated, Any, Literal

import pydantic
from pydantic import (
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    TypeAdapter,
    ValidationError,
    model_validator,
)

from .conditions import CONDITION_TYPES, validate_condition
from .schema import Identifier, Text, localize, problems_from

NodeType = Literal["conversation_step", "task", "qa", "gate", "action", "end"]
EdgeKind = Literal["auto", "user_choice"]  # "blocked" is computed, never declared
StalenessPolicy = Literal["block", "warn"]
DEFAULT_MAX_RETRIES = 2
_STRICT = ConfigDict(extra="forbid")  # an unknown key is refused with its path, never ignored


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


# --- the shape ------------------------------------------------------------------


@pydantic.dataclasses.dataclass(frozen=True, config=_STRICT)
class GateSpec:
    auto_outcome: Annotated[str, Field(min_length=1)]  # outcomes of the edges leaving the gate
    fallback_outcome: Annotated[str, Field(min_length=1)]
    reject_outcome: str | None = None
    reviewer: Literal["supervisor", "participant"] = "supervisor"
    high_cost: StrictBool = False


@pydantic.dataclasses.dataclass(frozen=True)
class Node:
    id: Identifier
    type: NodeType
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

    @model_validator(mode="before")
    @classmethod
    def _other_keys_are_settings(cls, data: Any) -> Any:
        """A node's keys beyond its fields are its handler's settings."""
        if not isinstance(data, Mapping):
            return data  # keyword arguments, or not an object (pydantic says so)
        declared = {f.name for f in fields(cls)} - {"settings"}
        return {
            **{k: v for k, v in data.items() if k in declared},
            "settings": {k: v for k, v in data.items() if k not in declared},
        }


@pydantic.dataclasses.dataclass(frozen=True, config=ConfigDict(validate_by_name=True, extra="forbid"))
class Edge:
    option_id: Identifier
    label: Text
    effects_summary: Text
    source: str = Field(alias="from")  # required: a Field without a default
    target: str | None = Field(default=None, alias="to")  # null for a non-advancing option
    description: Text = ""
    outcome: str | None = None
    kind: EdgeKind = "user_choice"
    conditions: tuple[Mapping[str, Any], ...] = ()  # each checked by validate_condition
    non_advancing: StrictBool = False
    requires_consent: StrictBool = False
    escalation: StrictBool = False
    recommended: StrictBool = False
    on_stale: StalenessPolicy | None = None  # None: the plan's governance decides
    change_workflow: str | None = None  # a workflow_id
    clears: tuple[Annotated[str, Field(min_length=1)], ...] = ()  # persisted signals this edge resets when taken
    effect: str | None = None  # a registered effect handler run when the edge is taken


@pydantic.dataclasses.dataclass(frozen=True, config=_STRICT)
class CircuitBreaker:
    max_retries: Annotated[StrictInt, Field(ge=1, le=10)] = DEFAULT_MAX_RETRIES


@pydantic.dataclasses.dataclass(frozen=True, config=_STRICT)
class Governance:
    circuit_breaker: CircuitBreaker = field(default_factory=CircuitBreaker)
    staleness: StalenessPolicy = "block"

    @property
    def max_retries(self) -> int:
        return self.circuit_breaker.max_retries


@pydantic.dataclasses.dataclass(frozen=True, config=_STRICT)
class PlanDocument:
    """A plan as uploaded; an unknown key is refused with its path."""

    workflow_id: Identifier
    name: Text
    description: Text
    start_step: str
    nodes: Annotated[tuple[Node, ...], Field(min_length=1)]
    edges: tuple[Edge, ...]
    governance: Governance = field(default_factory=Governance)
    version: Annotated[StrictInt, Field(ge=1)] | None = None
    conversation: dict[str, Any] = field(default_factory=dict)  # checked by the registered section validator


@dataclass(frozen=True)
class Plan:
    """A validated plan as the engine uses it: nodes by id."""

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

    @cached_property
    def _edges_by_source(self) -> dict[str, tuple[Edge, ...]]:
        by_source: dict[str, list[Edge]] = {}
        for edge in self.edges:
            by_source.setdefault(edge.source, []).append(edge)
        return {source: tuple(edges) for source, edges in by_source.items()}

    def edges_from(self, node_id: str) -> tuple[Edge, ...]:
        """The edges leaving a step, in plan order (looked up, not scanned: every option set asks)."""
        return self._edges_by_source.get(node_id, ())

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


_PLAN_DOCUMENT = TypeAdapter(PlanDocument)
_NODE = TypeAdapter(Node)
_EDGE = TypeAdapter(Edge)


# --- the checks between parts ----------------------------------------------------------


def _part_problems(
    start_step: str | None, nodes: list[tuple[int, Node]], edges: list[tuple[int, Edge]], named: set[str]
) -> list[PlanProblem]:
    """Node ids unique, what each node type needs, edges between known nodes, their conditions.

    `named`: ids of nodes too malformed to check; an edge to one of them is not reported."""
    problems: list[PlanProblem] = []
    ids: set[str] = set()
    for i, node in nodes:
        path = f"$.nodes[{i}]"
        if node.id in ids:
            problems.append(PlanProblem(f"{path}.id", f"duplicate node id '{node.id}'"))
        ids.add(node.id)
        if node.type == "gate" and node.gate is None:
            problems.append(PlanProblem(f"{path}.gate", "is required for a gate node and must be an object"))
        if node.type == "qa" and node.checks is None:
            problems.append(PlanProblem(f"{path}.checks", "is required for a qa node (the generating node it checks)"))
        if node.type == "action" and node.action is None:
            problems.append(PlanProblem(f"{path}.action", "is required for an action node (the action's name)"))
    known = ids | named
    if start_step is not None and start_step not in known:
        problems.append(PlanProblem("$.start_step", f"unknown node '{start_step}'"))
    for i, edge in edges:
        path = f"$.edges[{i}]"
        if edge.source not in known:
            problems.append(PlanProblem(f"{path}.from", f"unknown node '{edge.source}'"))
        if edge.non_advancing:
            if edge.target is not None:
                problems.append(PlanProblem(f"{path}.to", "must be null for a non-advancing option"))
        elif edge.target not in known:
            problems.append(PlanProblem(f"{path}.to", f"unknown node '{edge.target}'"))
        for j, condition in enumerate(edge.conditions):
            problems += [PlanProblem(p, m) for p, m in validate_condition(condition, f"{path}.conditions[{j}]")]
    return problems


def _well_formed(adapter: TypeAdapter, items: Any) -> list[tuple[int, Any]]:
    """The items of a list that are valid on their own, with their positions."""
    found = []
    for i, item in enumerate(items if isinstance(items, list) else []):
        with contextlib.suppress(ValidationError):
            found.append((i, adapter.validate_python(item)))
    return found


def _problems_beside_shape(doc: Mapping[str, Any]) -> list[PlanProblem]:
    """The checks between parts, over the nodes and edges that are well-formed on their own: one
    upload lists every problem, not only the shape's."""
    raw_nodes = doc.get("nodes")
    if not isinstance(raw_nodes, list) or not raw_nodes:
        return []  # nothing to check references against
    nodes = _well_formed(_NODE, raw_nodes)
    good = {i for i, _ in nodes}
    named = {n["id"] for i, n in enumerate(raw_nodes) if i not in good and isinstance(n, Mapping) and isinstance(n.get("id"), str)}
    start_step = doc.get("start_step") if isinstance(doc.get("start_step"), str) else None
    return _part_problems(start_step, nodes, _well_formed(_EDGE, doc.get("edges")), named)


def _graph_problems(plan: PlanDocument) -> list[PlanProblem]:
    """Options unique per step, end nodes and only they without exits, gate outcomes taken by
    edges, qa nodes checking known nodes, every node reachable."""
    problems: list[PlanProblem] = []
    option_keys: set[tuple[str, str]] = set()
    for i, edge in enumerate(plan.edges):
        key = (edge.source, edge.option_id)
        if key in option_keys:
            problems.append(PlanProblem(f"$.edges[{i}].option_id", f"duplicate option '{edge.option_id}' leaving '{edge.source}'"))
        option_keys.add(key)
    sources = {e.source for e in plan.edges}
    ids = {n.id for n in plan.nodes}
    for i, node in enumerate(plan.nodes):
        if node.type == "end" and node.id in sources:
            problems.append(PlanProblem(f"$.nodes[{i}]", "an end node cannot have outgoing edges"))
        if node.type != "end" and node.id not in sources:
            problems.append(PlanProblem(f"$.nodes[{i}]", f"node '{node.id}' has no outgoing edge and is not an end node"))
        if node.type == "gate" and node.gate is not None:
            outcomes = {e.outcome for e in plan.edges if e.source == node.id}
            for key in ("auto_outcome", "fallback_outcome", "reject_outcome"):
                outcome = getattr(node.gate, key)
                if outcome is not None and outcome not in outcomes:
                    problems.append(PlanProblem(f"$.nodes[{i}].gate.{key}", f"no edge leaving '{node.id}' has outcome '{outcome}'"))
        if node.type == "qa" and node.checks not in ids:
            problems.append(PlanProblem(f"$.nodes[{i}].checks", f"unknown node '{node.checks}'"))
    if not any(n.type == "end" for n in plan.nodes):
        problems.append(PlanProblem("$.nodes", "a plan needs at least one end node"))
    reachable = _reachable(plan.start_step, plan.edges)
    for i, node in enumerate(plan.nodes):
        if node.id not in reachable:
            problems.append(PlanProblem(f"$.nodes[{i}]", f"node '{node.id}' cannot be reached from the start step"))
    return problems


def _reachable(start: str, edges: tuple[Edge, ...]) -> set[str]:
    seen, stack = set(), [start]
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        stack.extend(e.target for e in edges if e.source == current and e.target)
    return seen


def _read(doc: Any) -> tuple[PlanDocument | None, list[PlanProblem]]:
    """The plan document and every problem in it: the shape's, then the checks between parts;
    the graph is checked once everything else is right."""
    if not isinstance(doc, Mapping):
        return None, [PlanProblem("$", "a plan must be a JSON object")]
    try:
        document = _PLAN_DOCUMENT.validate_python(doc)
    except ValidationError as error:
        return None, [PlanProblem(p, m) for p, m in problems_from(error)] + _problems_beside_shape(doc)
    problems = _part_problems(document.start_step, list(enumerate(document.nodes)), list(enumerate(document.edges)), set())
    return document, problems or _graph_problems(document)


def validate_plan(doc: Any) -> list[PlanProblem]:
    """Every problem in a plan document, each with its JSON path; empty when valid."""
    return _read(doc)[1]


def parse_plan(doc: Any) -> Plan:
    """Validate and build a Plan; raises PlanValidationError listing every problem."""
    document, problems = _read(doc)
    if problems or document is None:
        raise PlanValidationError(problems)
    return Plan(
        workflow_id=document.workflow_id,
        name=document.name,
        description=document.description,
        start_step=document.start_step,
        nodes={n.id: n for n in document.nodes},
        edges=document.edges,
        governance=document.governance,
        version=document.version,
        conversation=document.conversation,
        raw=doc,
    )


__all__ = ["CONDITION_TYPES", "Edge", "GateSpec", "Governance", "Node", "Plan", "PlanDocument", "PlanProblem",
           "PlanValidationError", "localize", "parse_plan", "validate_plan"]
