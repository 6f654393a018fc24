"""Token authentication learns the supervisor role in its one query; every path to the role counts."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.support.helpers import client_for
from workflows.access import is_supervisor

pytestmark = pytest.mark.django_db


def _role_over_api(user) -> tuple[int, bool]:  # noqa: ANN001
    """Status of the review queue (supervisors only) as the user's token sees it."""
    return client_for(user).get("/api/v1/reviews").status_code, is_supervisor(get_user_model().objects.get(pk=user.pk))


def test_group_membership_makes_a_supervisor(supervisor) -> None:  # noqa: ANN001
    assert _role_over_api(supervisor) == (200, True)


def test_a_direct_permission_makes_a_supervisor(person) -> None:  # noqa: ANN001
    person.user_permissions.add(Permission.objects.get(codename="decide_review", content_type__app_label="workflows"))
    assert _role_over_api(person) == (200, True)


def test_superuser_supervises_and_a_plain_user_does_not(person) -> None:  # noqa: ANN001
    assert _role_over_api(person) == (403, False)
    person.is_superuser = True
    person.save()
    assert _role_over_api(person) == (200, True)


def test_a_permission_of_the_same_name_in_another_app_does_not_count(person) -> None:  # noqa: ANN001
    from django.contrib.contenttypes.models import ContentType

    other = Permission.objects.create(codename="decide_review", name="lookalike",
                                      content_type=ContentType.objects.get_for_model(get_user_model()))
    person.user_permissions.add(other)
    assert _role_over_api(person) == (403, False)


def test_bad_and_inactive_tokens_are_refused_in_the_spec_shape(person) -> None:  # noqa: ANN001
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    response = client.get("/api/v1/conversations")
    assert response.status_code == 401 and response.json()["error"]["code"]
    api = client_for(person)
    person.is_active = False
    person.save()
    assert api.get("/api/v1/conversations").status_code == 401


def test_authentication_and_role_cost_one_query(supervisor) -> None:  # noqa: ANN001
    api = client_for(supervisor)
    with CaptureQueriesContext(connection) as captured:
        assert api.get("/api/v1/reviews").status_code == 200
    permission_queries = [q["sql"] for q in captured.captured_queries if "auth_permission" in q["sql"]]
    assert len(permission_queries) == 1 and "authtoken_token" in permission_queries[0]


def test_a_refused_token_is_explained_in_the_clients_language() -> None:
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    english = client.get("/api/v1/conversations", HTTP_ACCEPT_LANGUAGE="en").json()["error"]["message"]
    chinese = client.get("/api/v1/conversations", HTTP_ACCEPT_LANGUAGE="zh-hans").json()["error"]["message"]
    assert english == "Invalid token." and chinese != english
