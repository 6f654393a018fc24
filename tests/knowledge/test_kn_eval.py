"""CI guard: the knowledge evaluation stays above the thresholds set from its first honest run."""

from __future__ import annotations

import io
import json
from collections import Counter

import pytest
from django.core.management import call_command

from conversations.knowledge.evaluation import (
    FIXTURE,
    fixture_load,
    load_memory_cases,
    load_queries,
    query_counts,
)


def test_the_query_set_is_mostly_on_data_the_scenarios_do_not_use() -> None:
    counts = query_counts()
    assert counts["total"] >= 150
    assert counts["second_operator"] * 2 >= counts["total"]
    assert {"rule_explain", "arrears_check", "fee_verify", "retrieval", "version_boundary", "negative"} <= set(counts["by_category"])
    assert set(counts["by_language"]) == {"en", "zh"}
    assert len({q["id"] for q in load_queries()}) == counts["total"]


def test_the_memory_set_has_thirty_multi_turn_cases_half_on_the_second_operator() -> None:
    cases = load_memory_cases()
    assert len(cases) >= 30 and all(len(c["turns"]) >= 2 for c in cases)
    assert sum(c["data"] == "operator" for c in cases) * 2 >= len(cases)
    assert set(Counter(c["lang"] for c in cases)) == {"en", "zh"}


def test_the_fixture_is_another_operators_data() -> None:
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    assert not {"310100"} & {c["code"] for c in data["cities"]}  # not the demo's Shanghai
    codes = Counter(lot["code"] for lot in data["lots"])
    assert any(n > 1 for n in codes.values())  # one lot code in two cities
    versions = Counter(rule["rule_code"] for rule in data["rules"])
    assert any(n > 1 for n in versions.values())  # a rule with two versions


@pytest.mark.django_db
def test_the_fixtures_rules_get_their_explanations() -> None:
    call_command("seed_demo", stdout=io.StringIO())
    assert fixture_load() == []


@pytest.mark.django_db
def test_evaluation_meets_its_thresholds() -> None:
    call_command("seed_demo", stdout=io.StringIO())
    out = io.StringIO()
    call_command("eval_knowledge", "--check", stdout=out)  # raises CommandError under a threshold
    assert "retrieval_hit_rate" in out.getvalue()
    assert "memory replay" in out.getvalue()
