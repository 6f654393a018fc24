"""The scripted dialogue corpus (tests/dialogues) passes on the rules, and the runner really checks."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

pytestmark = pytest.mark.django_db


def test_the_corpus_passes_on_the_rules(demo) -> None:  # noqa: ANN001
    out = io.StringIO()
    call_command("test_dialogues", "--check", stdout=out)
    assert "all: " in out.getvalue() and "(100.0%)" in out.getvalue(), out.getvalue()


def test_the_corpus_passes_on_the_model_generator_with_hostile_commands_refused(demo) -> None:  # noqa: ANN001
    out = io.StringIO()
    call_command("test_dialogues", "--check", "--generator", "model", stdout=out)
    assert "generator: model" in out.getvalue() and "(100.0%)" in out.getvalue(), out.getvalue()


def test_a_hostile_command_the_engine_accepted_would_fail_the_model_run(demo, tmp_path) -> None:  # noqa: ANN001
    script = [{"id": "lenient", "workflow": "permit_form", "locale": "en", "generators": ["model"],
               "turns": [{"user": "residential", "model": [{"command": "answer", "question_id": "3.1.1", "value": "residential"}],
                          "expect": {"refused": ["invalid_answer:3.1.1"]}}]}]
    path = tmp_path / "lenient.json"
    path.write_text(json.dumps(script))
    out = io.StringIO()
    with pytest.raises(CommandError):
        call_command("test_dialogues", str(path), "--check", "--generator", "model", stdout=out)
    assert "expected the refusal invalid_answer:3.1.1" in out.getvalue()
    out = io.StringIO()
    call_command("test_dialogues", str(path), "--check", stdout=out)  # a model-only dialogue is not run on the rules
    assert "all: 0/0 passed" in out.getvalue()


def test_a_wrong_expectation_fails_the_check(demo, tmp_path) -> None:  # noqa: ANN001
    script = [{"id": "wrong", "workflow": "permit_form", "locale": "en",
               "turns": [{"user": "residential", "expect": {"form": {"3.1.1": "industrial"}, "commands": ["cancel()"]}}]}]
    path = tmp_path / "wrong.json"
    path.write_text(json.dumps(script))
    out = io.StringIO()
    with pytest.raises(CommandError):
        call_command("test_dialogues", str(path), "--check", stdout=out)
    assert "0/1 passed" in out.getvalue() and "expected cancel()" in out.getvalue()
