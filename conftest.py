"""Shared fixtures: a user and an API client per role (person, operator, supervisor), and the shipped plans."""

from __future__ import annotations

import pytest

from tests.support.helpers import client_for


@pytest.fixture
def plans(db):  # noqa: ANN001, ANN201
    from workflows.demo import load_shipped_plans

    return load_shipped_plans()


def _user(username: str, role: str = "person"):  # noqa: ANN202
    from django.contrib.auth import get_user_model

    from workflows.roles import role_grant

    user = get_user_model().objects.create_user(username=username, password=f"{username}-pass-123")
    if role != "person":
        role_grant(user, role)
        user = get_user_model().objects.get(pk=user.pk)  # drop the permission cache
    return user


@pytest.fixture
def person(db):  # noqa: ANN001, ANN201
    return _user("pat")


@pytest.fixture
def other_person(db):  # noqa: ANN001, ANN201
    return _user("mallory")


@pytest.fixture
def operator(db):  # noqa: ANN001, ANN201
    return _user("otto", role="operator")


@pytest.fixture
def supervisor(db):  # noqa: ANN001, ANN201
    return _user("sue", role="supervisor")


@pytest.fixture
def api(person):  # noqa: ANN001, ANN201
    return client_for(person)


@pytest.fixture
def other_api(other_person):  # noqa: ANN001, ANN201
    return client_for(other_person)


@pytest.fixture
def operator_api(operator):  # noqa: ANN001, ANN201
    return client_for(operator)


@pytest.fixture
def supervisor_api(supervisor):  # noqa: ANN001, ANN201
    return client_for(supervisor)


@pytest.fixture(autouse=True)
def _fresh_plan_caches():  # noqa: ANN202
    """Stored plan versions never change in production, so processes cache them by id; a
    test database reuses ids after each rollback, so tests start with empty caches."""
    from conversations.selectors import config_cache_clear
    from workflows.selectors import plans_cache_clear

    plans_cache_clear()
    config_cache_clear()
    yield
