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


def test_a_wrong_expectation_fails_the_check(demo, tmp_path) -> None:  # noqa: ANN001
    script = [{"id": "wrong", "workflow": "permit_form", "locale": "en",
               "turns": [{"user": "residential", "expect": {"form": {"3.1.1": "industrial"}, "commands": ["cancel()"]}}]}]
    path = tmp_path / "wrong.json"
    path.write_text(json.dumps(script))
    out = io.StringIO()
    with pytest.raises(CommandError):
        call_command("test_dialogues", str(path), "--check", stdout=out)
    assert "0/1 passed" in out.getvalue() and "expected cancel()" in out.getvalue()
