"""Property-based checks of the engine's law over generated plans and choice sequences."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workflows import engine
from workflows.engine import RunState, choose, decision_point, parse_plan

SIGNAL_KEYS = ("s0", "s1", "s2")
NODE_TYPES = ("conversation_step", "task", "qa", "gate", "action")


@st.composite
def conditions(draw):  # noqa: ANN001, ANN201
    kind = draw(st.sampled_from(["none", "equals", "at_least", "present", "not"]))
    if kind == "none":
        return []
    key = draw(st.sampled_from(SIGNAL_KEYS))
    if kind == "equals":
        return [{"type": "equals", "key": key, "value": draw(st.booleans())}]
    if kind == "at_least":
        return [{"type": "at_least", "key": "n0", "value": draw(st.integers(0, 3))}]
    if kind == "present":
        return [{"type": "present", "key": key}]
    return [{"type": "not", "condition": {"type": "equals", "key": key, "value": True}}]


def edge(option_id, source, target, draw, **extra):  # noqa: ANN001, ANN201
    return {
        "option_id": option_id, "from": source, "to": target, "label": option_id, "effects_summary": f"effects of {option_id}",
        "kind": draw(st.sampled_from(["auto", "user_choice"])), "conditions": draw(conditions()),
        "requires_consent": draw(st.booleans()), **extra,
    }


@st.composite
def plans(draw):  # noqa: ANN001, ANN201
    count = draw(st.integers(2, 6))
    ids = [f"n{i}" for i in range(count)]
    types = [draw(st.sampled_from(NODE_TYPES)) for _ in ids]
    nodes, edges = [], []
    for i, (node_id, node_type) in enumerate(zip(ids, types, strict=True)):
        node = {"id": node_id, "type": node_type, "label": node_id}
        if node_type == "action":
            node["action"] = f"do_{node_id}"
        following = ids[i + 1] if i + 1 < count else "end"
        targets = [*ids, "end"]
        if node_type == "qa":
            node["checks"] = ids[max(0, i - 1)]
            edges.append(edge("pass", node_id, following, draw, outcome="pass"))
            edges.append(edge("rework", node_id, ids[max(0, i - 1)], draw, outcome="fail"))
            edges.append(edge("escalate", node_id, "end", draw, escalation=True))
        elif node_type == "gate":
            node["gate"] = {"auto_outcome": "yes", "fallback_outcome": "no", "reviewer": draw(st.sampled_from(["supervisor", "participant"]))}
            edges.append(edge("accept", node_id, following, draw, outcome="yes"))
            edges.append(edge("decline", node_id, draw(st.sampled_from(targets)), draw, outcome="no"))
        else:
            edges.append(edge("next", node_id, following, draw))
            for j in range(draw(st.integers(0, 2))):
                edges.append(edge(f"jump{j}", node_id, draw(st.sampled_from(targets)), draw))
            if draw(st.booleans()):
                edges.append({"option_id": "ask_more_questions", "from": node_id, "to": None, "non_advancing": True,
                              "label": "Ask", "effects_summary": "nothing moves"})
        nodes.append(node)
    nodes.append({"id": "end", "type": "end", "label": "End"})
    doc = {
        "workflow_id": "generated", "name": "Generated", "description": "generated plan", "start_step": "n0",
        "governance": {"circuit_breaker": {"max_retries": draw(st.integers(1, 3))}}, "nodes": nodes, "edges": edges,
    }
    assert engine.validate_plan(doc) == [], engine.validate_plan(doc)
    return parse_plan(doc)


signal_values = st.fixed_dictionaries(
    {},
    optional={
        "s0": st.booleans(), "s1": st.booleans(), "s2": st.one_of(st.none(), st.booleans()), "n0": st.integers(0, 4),
        "qa_pass": st.booleans(), "confidence": st.floats(0, 1), "missing_critical": st.booleans(),
        "intent_class": st.sampled_from(["known", "unknown", "mixed"]),
    },
)

steps = st.lists(
    st.tuples(
        st.sampled_from(["next", "jump0", "jump1", "pass", "rework", "escalate", "accept", "decline", "ask_more_questions", "bogus"]),
        st.booleans(),
        st.sampled_from(["participant", "supervisor"]),
        signal_values,
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=plans(), moves=steps)
def test_nothing_advances_except_an_eligible_listed_option(plan, moves) -> None:  # noqa: ANN001
    state = RunState.start(plan.start_step)
    for option_id, consent, actor, signals in moves:
        state = state.with_signals(**signals)
        before = decision_point(plan, state, actor=actor)
        result = choose(plan, state, option_id, consent=consent, actor=actor)
        offered = before.option(option_id)
        if result.outcome in (engine.ADVANCED, engine.NON_ADVANCING):
            assert offered is not None and offered.eligible
            assert consent or not offered.requires_consent
            expected = state.current_step if offered.non_advancing else offered.target_step_id
            assert result.state.current_step == expected
        else:
            assert result.state == state
            assert offered is None or not offered.eligible or (offered.requires_consent and not consent)
        state = result.state
        for generating_node, failures in state.qa_failures.items():
            assert failures <= plan.governance.max_retries, (generating_node, failures)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=plans(), data=st.data())
def test_breaker_trips_exactly_at_its_limit(plan, data) -> None:  # noqa: ANN001
    qa_nodes = [n for n in plan.nodes.values() if n.type == "qa"]
    if not qa_nodes:
        return
    node = data.draw(st.sampled_from(qa_nodes))
    limit = plan.governance.max_retries
    for failures in range(limit + 1):
        state = RunState(current_step=node.id, qa_failures={node.checks: failures})
        ids = {o.option_id for o in decision_point(plan, state).options}
        if failures < limit:
            assert {"pass", "rework"} <= ids and "escalate" not in ids
        else:
            assert ids == {"escalate"}
    # Failing the last allowed time reports the trip, once.
    state = RunState(current_step=node.id, qa_failures={node.checks: limit - 1})
    result = choose(plan, state, "rework", consent=True, actor="supervisor")
    if result.outcome == engine.ADVANCED:
        assert result.breaker_tripped and result.state.qa_failures[node.checks] == limit
