"""The step engine on plain data: no database, no Django."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from workflows import engine
from workflows.engine import (
    RunState,
    choose,
    decision_point,
    document_add_version,
    parse_plan,
    validate_plan,
)
from workflows.engine.plan_files import plan_path, read_plan

PLANS = Path(__file__).resolve().parents[2] / "workflows" / "plans"
SHIPPED = ["parking_help_desk", "rv_diagnostic", "manager_assistant", "permit_form", "project_intake"]
GOOD_SIGNALS = {"qa_pass": True, "confidence": 0.91, "missing_critical": False, "intent_class": "web_app"}


def load(workflow_id: str) -> dict:
    return read_plan(plan_path(PLANS, workflow_id))


def at(plan, step: str, **signals) -> RunState:  # noqa: ANN001
    return RunState.start(plan.start_step).__class__(current_step=step, signals=signals)


@pytest.fixture(scope="module")
def intake():  # noqa: ANN201
    return parse_plan(load("project_intake"))


@pytest.mark.parametrize("workflow_id", SHIPPED)
def test_shipped_plans_validate_and_every_step_is_reachable(workflow_id: str) -> None:
    plan = parse_plan(load(workflow_id))
    assert validate_plan(load(workflow_id)) == []
    assert set(plan.step_order()) == set(plan.nodes)
    assert any(n.type == "end" for n in plan.nodes.values())


def test_validation_lists_every_problem_with_its_json_path() -> None:
    doc = load("project_intake")
    doc["nodes"][1]["type"] = "teleport"
    doc["edges"][0]["to"] = "nowhere"
    doc["edges"][2]["kind"] = "sometimes"
    doc["edges"][3]["conditions"] = [{"type": "vibes"}, {"type": "at_least", "key": "confidence"}]
    del doc["edges"][4]["effects_summary"]
    doc["governance"]["circuit_breaker"]["max_retries"] = 0
    paths = {p.path for p in validate_plan(doc)}
    assert {
        "$.nodes[1].type",
        "$.edges[0].to",
        "$.edges[2].kind",
        "$.edges[3].conditions[0].type",
        "$.edges[3].conditions[1].value",
        "$.edges[4].effects_summary",
        "$.governance.circuit_breaker.max_retries",
    } <= paths


def test_graph_problems_are_reported_when_the_shape_is_right() -> None:
    doc = load("manager_assistant")
    doc["nodes"].append({"id": "orphan", "type": "conversation_step", "label": "Orphan"})
    doc["edges"].append(copy.deepcopy(doc["edges"][0]))
    problems = {p.path: p.message for p in validate_plan(doc)}
    assert "cannot be reached" in problems["$.nodes[4]"]
    assert "duplicate option" in problems[f"$.edges[{len(doc['edges']) - 1}].option_id"]


def test_a_malformed_node_hides_no_other_problem_and_adds_no_false_one() -> None:
    doc = load("project_intake")
    doc["nodes"][1]["type"] = "teleport"
    target = doc["nodes"][1]["id"]
    doc["edges"][0]["recommended"] = "yes"
    doc["edges"][1]["from"] = "nowhere"
    problems = {p.path: p.message for p in validate_plan(doc)}
    assert problems["$.nodes[1].type"].startswith("must be one of 'conversation_step'")
    assert problems["$.edges[0].recommended"] == "must be true or false"
    assert problems["$.edges[1].from"] == "unknown node 'nowhere'"
    assert not any(f"unknown node '{target}'" in message for message in problems.values())


def test_not_an_object_is_one_problem_at_the_root() -> None:
    assert [p.path for p in validate_plan(["nodes"])] == ["$"]
    with pytest.raises(engine.PlanValidationError) as error:
        parse_plan({})
    assert {"$.workflow_id", "$.name", "$.nodes", "$.edges"} <= {p.path for p in error.value.problems}


def test_option_contract_fields_and_localized_labels(intake) -> None:  # noqa: ANN001
    options = engine.available_options(intake, RunState.start("intake"), locale="zh-hans")
    assert [o.option_id for o in options] == ["submit_intake", "ask_more_questions"]
    submit = options[0].to_dict()
    assert set(submit) >= {
        "option_id", "label", "description", "target_step_id", "eligibility", "blockers", "kind",
        "requires_consent", "effects_summary",
    }
    assert submit["label"] == "起草受理文档"
    assert submit["eligibility"] == "blocked" and submit["kind"] == "blocked"
    assert "还缺少项目概述" in submit["blockers"]  # the plan's own message, in the option's language
    english = engine.available_options(intake, RunState.start("intake"), locale="en")[0]
    assert "the project summary is missing" in english.blockers
    ask = options[1]
    assert ask.non_advancing and ask.target_step_id is None and ask.eligible


def test_single_eligible_auto_option_is_selected_automatically(intake) -> None:  # noqa: ANN001
    state = RunState.start("intake").with_signals(slots={"summary": "A shop", "goal": "Sell"}, intake_ready=True)
    dp = decision_point(intake, state)
    assert dp.selection.mode == "auto" and dp.selection.option_id == "submit_intake"


def test_user_choices_are_presented_with_a_recommendation_never_auto_selected(intake) -> None:  # noqa: ANN001
    dp = decision_point(intake, RunState(current_step="review_plan"))
    assert dp.selection.mode == "present"
    assert dp.selection.option_id is None
    assert dp.selection.recommended_option_id == "accept_plan"
    assert 1 <= len(dp.selection.reasons) <= 2


def test_all_blocked_explains_the_blockers(intake) -> None:  # noqa: ANN001
    plan_doc = load("project_intake")
    plan_doc["edges"] = [e for e in plan_doc["edges"] if not (e["from"] == "intake" and e.get("non_advancing"))]
    plan = parse_plan(plan_doc)
    dp = decision_point(plan, RunState.start("intake"))
    assert dp.selection.mode == "blocked"
    assert "the project summary is missing" in dp.selection.reasons
    result = choose(plan, RunState.start("intake"), "submit_intake")
    assert result.outcome == engine.NEEDS_SYSTEM_INTERVENTION
    assert result.state == RunState.start("intake")


def test_unavailable_choice_is_refused_changes_nothing_and_suggests_the_closest(intake) -> None:  # noqa: ANN001
    state = RunState(current_step="review_plan")
    result = choose(intake, state, "accept_the_plan_now")
    assert result.outcome == engine.REFUSED
    assert result.state is state
    assert result.closest[0] == "accept_plan"
    blocked = choose(intake, RunState.start("intake"), "submit_intake")
    assert blocked.outcome == engine.REFUSED and "blocked" in blocked.reason


def test_consent_is_required_before_the_effects(intake) -> None:  # noqa: ANN001
    state = RunState(current_step="review_plan", documents={})
    assert choose(intake, state, "accept_plan").outcome == engine.NEEDS_CONSENT
    done = choose(intake, state, "accept_plan", consent=True)
    assert done.outcome == engine.ADVANCED and done.state.current_step == "finalize"
    assert "review_plan:accept_plan" in done.state.consents


def test_non_advancing_option_keeps_the_step(intake) -> None:  # noqa: ANN001
    state = RunState.start("intake")
    result = choose(intake, state, "ask_more_questions")
    assert result.outcome == engine.NON_ADVANCING
    assert result.state.current_step == "intake"


@pytest.mark.parametrize(
    ("signals", "kind", "recommended"),
    [
        (GOOD_SIGNALS, "auto", "qualified"),
        ({**GOOD_SIGNALS, "confidence": 0.8}, "auto", "qualified"),
        ({**GOOD_SIGNALS, "confidence": 0.79}, "user_choice", "needs_clarification"),
        ({**GOOD_SIGNALS, "missing_critical": True}, "user_choice", "needs_clarification"),
        ({**GOOD_SIGNALS, "intent_class": "unknown"}, "user_choice", "needs_clarification"),
        ({**GOOD_SIGNALS, "intent_class": "mixed"}, "user_choice", "needs_clarification"),
        ({**GOOD_SIGNALS, "qa_pass": False}, "user_choice", "needs_clarification"),
        ({**GOOD_SIGNALS, "policy_risk": True}, "user_choice", "qualified"),
        ({}, "user_choice", "needs_clarification"),
    ],
)
def test_gate_kind_is_computed_from_signals(intake, signals, kind, recommended) -> None:  # noqa: ANN001
    dp = decision_point(intake, RunState(current_step="intake_gate"), signals, actor="supervisor")
    assert dp.gate.kind == kind
    assert dp.gate.recommended_outcome == recommended
    assert 1 <= len(dp.gate.reasons) <= 2
    assert dp.gate.signals["confidence"] == signals.get("confidence")
    qualify = dp.option("qualify")
    assert qualify.kind == ("auto" if kind == "auto" else "user_choice")
    assert dp.needs_review is (kind == "user_choice")


def test_an_undecidable_gate_waits_for_a_supervisor(intake) -> None:  # noqa: ANN001
    state = RunState(current_step="intake_gate")
    signals = {**GOOD_SIGNALS, "confidence": 0.5}
    participant = decision_point(intake, state, signals)
    assert participant.selection.mode == "blocked"
    assert all("supervisor" in o.blockers[0] for o in participant.options)
    assert choose(intake, state, "qualify", signals).outcome == engine.NEEDS_SYSTEM_INTERVENTION
    result = choose(intake, state, "reject_out_of_scope", signals, actor="supervisor")
    assert result.outcome == engine.ADVANCED and result.completed


def test_high_cost_gate_is_user_choice_even_when_signals_are_clear() -> None:
    doc = load("project_intake")
    doc["nodes"][3]["gate"]["high_cost"] = True
    dp = decision_point(parse_plan(doc), RunState(current_step="intake_gate"), GOOD_SIGNALS, actor="supervisor")
    assert dp.gate.kind == "user_choice" and dp.gate.recommended_outcome == "qualified"
    assert "high-cost" in dp.gate.reasons[0]


def _fail_qa(plan, state):  # noqa: ANN001, ANN202
    state = state.with_signals(qa_pass=False)
    dp = decision_point(plan, state)
    assert dp.selection.mode == "auto", dp.selection
    return choose(plan, state, dp.selection.option_id)


def test_circuit_breaker_trips_exactly_at_max_retries(intake) -> None:  # noqa: ANN001
    state = RunState(current_step="intake_qa")
    for attempt in range(1, intake.governance.max_retries + 1):
        result = _fail_qa(intake, state)
        assert result.option.option_id == "rework_intake"
        assert result.state.qa_failures["draft_intake"] == attempt
        assert result.breaker_tripped is (attempt == intake.governance.max_retries)
        state = choose(intake, result.state, "run_qa").state
    dp = decision_point(intake, state.with_signals(qa_pass=False))
    assert {o.option_id for o in dp.options} == {"escalate_to_supervisor", "back_to_conversation"}
    assert all(o.escalation for o in dp.options)
    assert dp.breaker.tripped and dp.selection.mode == "present"
    assert choose(intake, state.with_signals(qa_pass=False), "rework_intake").outcome == engine.REFUSED


def test_qa_pass_resets_the_consecutive_failures(intake) -> None:  # noqa: ANN001
    state = _fail_qa(intake, RunState(current_step="intake_qa")).state
    state = choose(intake, state, "run_qa").state.with_signals(qa_pass=True)
    passed = choose(intake, state, "qa_passed")
    assert passed.state.qa_failures["draft_intake"] == 0


def test_new_upstream_version_makes_downstream_stale_and_blocks(intake) -> None:  # noqa: ANN001
    state = RunState(current_step="review_plan")
    state = document_add_version(state, "intake_document")
    state = document_add_version(state, "project_plan", ["intake_document"])
    assert engine.stale_documents(state.documents) == {}
    state = document_add_version(state, "intake_document")
    stale = engine.stale_documents(state.documents)
    assert "project_plan" in stale
    accept = decision_point(intake, state).option("accept_plan")
    assert accept.eligibility == "blocked"
    assert any(b.startswith("stale input:") for b in accept.blockers)
    assert decision_point(intake, state).option("regenerate_plan").eligible


def test_warn_policy_keeps_the_option_with_an_explicit_warning(intake) -> None:  # noqa: ANN001
    doc = load("project_intake")
    doc["governance"]["staleness"] = "warn"
    plan = parse_plan(doc)
    state = document_add_version(RunState(current_step="review_plan"), "intake_document")
    state = document_add_version(state, "project_plan", ["intake_document"])
    state = document_add_version(state, "intake_document")
    accept = decision_point(plan, state).option("accept_plan")
    assert accept.eligible and "Warning: stale input" in accept.effects_summary


def test_transitive_staleness() -> None:
    state = RunState(current_step="x")
    for key, deps in (("a", []), ("b", ["a"]), ("c", ["b"])):
        state = document_add_version(state, key, deps)
    state = document_add_version(state, "a")
    assert set(engine.stale_documents(state.documents)) == {"b", "c"}


def test_workflow_change_happens_only_through_an_option() -> None:
    doc = load("manager_assistant")
    doc["edges"].append({
        "option_id": "switch_to_intake", "from": "guidance", "to": "done", "change_workflow": "project_intake",
        "label": "Start a project intake instead", "effects_summary": "Closes this conversation and starts a project intake.",
    })
    plan = parse_plan(doc)
    result = choose(plan, RunState.start("guidance"), "switch_to_intake")
    assert result.change_workflow == "project_intake" and result.completed


def test_run_state_round_trips_through_json(intake) -> None:  # noqa: ANN001
    state = document_add_version(RunState.start("intake").with_signals(slots={"a": 1}), "intake_document")
    assert RunState.from_dict(json.loads(json.dumps(state.to_dict()))) == state


def test_walk_project_intake_end_to_end_on_the_engine(intake) -> None:  # noqa: ANN001
    state = RunState.start("intake").with_signals(slots={"summary": "s", "goal": "g"}, intake_ready=True, **GOOD_SIGNALS)
    taken = []
    for _ in range(20):
        dp = decision_point(intake, state)
        if dp.selection.mode == "none":
            break
        option_id = dp.selection.option_id or dp.selection.recommended_option_id
        result = choose(intake, state, option_id, consent=True)
        assert result.outcome == engine.ADVANCED
        taken.append(option_id)
        state = result.state
    assert taken == ["submit_intake", "run_qa", "qa_passed", "qualify", "present_plan", "accept_plan", "complete"]
    assert state.status == engine.COMPLETED


def test_a_condition_message_is_a_text_or_texts_by_language() -> None:
    from workflows.engine.conditions import validate_condition

    assert validate_condition({"type": "present", "key": "x", "message": {"en": "x is missing", "zh": "缺少x"}}, "$") == []
    assert validate_condition({"type": "present", "key": "x", "message": "x is missing"}, "$") == []
    assert validate_condition({"type": "present", "key": "x", "message": {"en": 3}}, "$") == [
        ("$.message", "must be a text or an object of texts by language")]
