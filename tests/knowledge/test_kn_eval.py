"""CI guard: the knowledge evaluation stays above the thresholds set from its first honest run."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from conversations.knowledge.evaluation import load_queries


@pytest.mark.django_db
def test_evaluation_meets_its_thresholds() -> None:
    call_command("seed_demo", stdout=io.StringIO())
    assert len(load_queries()) >= 60
    out = io.StringIO()
    call_command("eval_knowledge", "--check", stdout=out)  # raises CommandError under a threshold
    assert "retrieval_hit_rate" in out.getvalue()
