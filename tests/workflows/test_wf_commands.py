"""The set-up commands: seed_demo is idempotent, create_api_token prints a working token."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.support.helpers import client_for
from workflows import roles
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


@pytest.mark.usefixtures("no_demo_data")  # the first version of a plan
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


def _groups(django_user_model, username: str) -> set[str]:  # noqa: ANN001
    return set(django_user_model.objects.get(username=username).groups.values_list("name", flat=True))


@pytest.mark.parametrize(("flag", "group"), [("--operator", "Operators"), ("--supervisor", "Supervisors")])
def test_create_api_token_puts_the_user_in_its_roles_group(django_user_model, flag, group) -> None:  # noqa: ANN001
    output = _run("create_api_token", "svc", flag).strip().splitlines()
    user = django_user_model.objects.get(username="svc")
    assert output[-1] == Token.objects.get(user=user).key and len(output[-1]) == 40
    assert _groups(django_user_model, "svc") == {group}
    assert user.is_staff is (group == "Supervisors")  # operators have no admin screens
    assert _run("create_api_token", "svc", flag).strip().splitlines()[-1] == output[-1]  # the same token again
    assert _groups(django_user_model, "svc") == {group}


def test_create_api_token_without_a_flag_makes_a_person(django_user_model) -> None:  # noqa: ANN001
    token = _run("create_api_token", "pat").strip().splitlines()[-1]
    assert _groups(django_user_model, "pat") == set()
    response = APIClient(HTTP_AUTHORIZATION=f"Token {token}").get("/api/v1/arrears-orders?plate_no=X")
    assert response.status_code == 403 and response.json()["error"]["code"] == "operator_required"


def test_an_operator_token_works_for_orders_but_not_for_rules(django_user_model) -> None:  # noqa: ANN001
    _run("seed_demo")
    token = _run("create_api_token", "parking-systems", "--operator").strip().splitlines()[-1]
    client = APIClient(HTTP_AUTHORIZATION=f"Token {token}")
    assert client.get("/api/v1/parking-orders/SCN-020").status_code == 200
    assert client.post("/api/v1/billing-rules", {}, format="json").status_code == 403
    assert client.get("/api/v1/reviews").status_code == 403


def test_create_api_token_refuses_both_roles_at_once(django_user_model) -> None:  # noqa: ANN001
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="not allowed with argument|mutually exclusive"):
        _run("create_api_token", "both", "--operator", "--supervisor")
    with pytest.raises(CommandError, match="mutually exclusive"):
        call_command("create_api_token", "both", operator=True, supervisor=True, stdout=io.StringIO())
    assert not django_user_model.objects.filter(username="both").exists()


def test_seed_demo_makes_the_role_groups_and_a_demo_operator(django_user_model) -> None:  # noqa: ANN001
    from django.contrib.auth.models import Group

    Group.objects.filter(name__in=["Operators", "Supervisors"]).delete()  # seed_demo makes them again
    _run("seed_demo")
    assert _groups(django_user_model, "olga") == {"Operators"} and _groups(django_user_model, "sam") == {"Supervisors"}
    assert _groups(django_user_model, "alice") == set()
    olga = django_user_model.objects.get(username="olga")
    assert olga.check_password("olga-operator-2026") and not olga.is_staff
    assert olga.has_perms(["billing.add_parkingorder", "billing.view_parkingorder", "billing.add_feeverification"])
    assert not olga.has_perm("billing.add_billingrule") and not olga.has_perm("workflows.decide_review")
    sam = django_user_model.objects.get(username="sam")
    assert sam.has_perms([*roles.OPERATOR_PERMISSIONS, *roles.SUPERVISOR_PERMISSIONS])
