"""The scripted dialogue corpus (tests/dialogues) passes on the rules, and the runner really checks."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from conversations.dialogues import DIALOGUES_DIR, load_dialogues

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("path", sorted(DIALOGUES_DIR.glob("*.json")), ids=lambda path: path.stem)
def test_each_file_of_the_corpus_passes_on_both_generators(demo, path) -> None:  # noqa: ANN001
    """File by file, so that the test workers share the corpus; on the model generator hostile commands are refused."""
    out = io.StringIO()
    try:
        call_command("test_dialogues", str(path), "--check", "--generator", "both", stdout=out)
    except CommandError:
        pytest.fail(out.getvalue())
    said = out.getvalue()
    assert said.count("all: ") == 2 and "generator: rules" in said and "generator: model" in said, said


def test_the_corpus_is_every_dialogue_file_the_runner_loads() -> None:
    files = {dialogue["file"] for dialogue in load_dialogues()}
    assert files == {path.name for path in DIALOGUES_DIR.glob("*.json")} and len(files) > 40


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
    out = io.StringIO()
    with pytest.raises(CommandError, match="1 dialogue run"):  # nor on both: only the model's run counts, and fails
        call_command("test_dialogues", str(path), "--check", "--generator", "both", stdout=out)
    assert "generator: rules\nall: 0/0 passed" in out.getvalue() and "expected the refusal invalid_answer:3.1.1" in out.getvalue()


def test_a_wrong_expectation_fails_the_check(demo, tmp_path) -> None:  # noqa: ANN001
    script = [{"id": "wrong", "workflow": "permit_form", "locale": "en",
               "turns": [{"user": "residential", "expect": {"form": {"3.1.1": "industrial"}, "commands": ["cancel()"]}}]}]
    path = tmp_path / "wrong.json"
    path.write_text(json.dumps(script))
    out = io.StringIO()
    with pytest.raises(CommandError):
        call_command("test_dialogues", str(path), "--check", stdout=out)
    assert "0/1 passed" in out.getvalue() and "expected cancel()" in out.getvalue()
    out = io.StringIO()
    with pytest.raises(CommandError, match="2 dialogue run"):  # on both generators, the one rules run is checked too
        call_command("test_dialogues", str(path), "--check", "--generator", "both", stdout=out)
    assert out.getvalue().count("0/1 passed") == 4 and out.getvalue().count("FAILED") == 2


def test_an_expectation_spelled_otherwise_is_refused_not_passed(tmp_path) -> None:  # noqa: ANN001
    """A key the runner does not check ("reply_lacks") would pass whatever the reply: loading refuses it."""
    path = tmp_path / "typo.json"
    path.write_text('[{"id": "d", "workflow": "parking_help_desk", "turns": [{"user": "hi", "expect": {"reply_lacks": ["x"]}}]}]',
                    encoding="utf-8")
    with pytest.raises(ValueError, match="reply_lacks"):
        load_dialogues([path])
