"""The set-up commands: seed_demo is idempotent, create_api_token prints a working token."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from rest_framework.authtoken.models import Token

from tests.support.helpers import client_for
from workflows.access import is_supervisor
from workflows.models import WorkflowPlan

pytestmark = pytest.mark.django_db


def _run(*args) -> str:  # noqa: ANN002
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_seed_demo_twice_changes_nothing(django_user_model) -> None:  # noqa: ANN001
    _run("seed_demo")
    counts = (WorkflowPlan.objects.count(), django_user_model.objects.count())
    output = _run("seed_demo")
    assert (WorkflowPlan.objects.count(), django_user_model.objects.count()) == counts == (5, 4)
    assert "unchanged" in output and "sam / " in output and "olga / olga-operator-2026" in output


def test_create_api_token_prints_the_token_last(django_user_model) -> None:  # noqa: ANN001
    _run("seed_demo")
    token = _run("create_api_token", "integrator").strip().splitlines()[-1]
    user = django_user_model.objects.get(username="integrator")
    assert Token.objects.get(user=user).key == token and not is_supervisor(user)
    assert _run("create_api_token", "integrator").strip().splitlines()[-1] == token
    boss = _run("create_api_token", "boss", "--supervisor").strip().splitlines()[-1]
    assert is_supervisor(django_user_model.objects.get(username="boss"))
    client = client_for(django_user_model.objects.get(username="boss"))
    assert client.get("/api/v1/reviews?status=pending", HTTP_AUTHORIZATION=f"Token {boss}").status_code == 200


def test_load_plan_lists_every_problem_or_stores_a_version(tmp_path) -> None:  # noqa: ANN001
    import json

    from django.core.management.base import CommandError

    from tests.support.helpers import plan_document

    bad = plan_document("permit_form")
    bad["edges"][0]["kind"] = "eventually"
    bad["nodes"][2]["type"] = "portal"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(CommandError) as error:
        _run("load_plan", str(path))
    assert "$.edges[0].kind" in str(error.value) and "$.nodes[2].type" in str(error.value)
    assert not WorkflowPlan.objects.exists()
    good = plan_document("permit_form")
    path.write_text(json.dumps(good))
    assert "permit_form v1 stored" in _run("load_plan", str(path))
    assert "unchanged" in _run("load_plan", str(path))
