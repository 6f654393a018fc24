"""Shared fixtures: users with tokens, an API client per role, and the shipped plans."""

from __future__ import annotations

import pytest

from tests.support.helpers import client_for


@pytest.fixture
def plans(db):  # noqa: ANN001, ANN201
    from workflows.demo import load_shipped_plans

    return load_shipped_plans()


def _user(username: str, supervisor: bool = False):  # noqa: ANN202
    from django.contrib.auth import get_user_model

    from workflows.demo import make_supervisor

    user = get_user_model().objects.create_user(username=username, password=f"{username}-pass-123")
    if supervisor:
        make_supervisor(user)
        user = get_user_model().objects.get(pk=user.pk)  # drop the permission cache
    return user


@pytest.fixture
def person(db):  # noqa: ANN001, ANN201
    return _user("pat")


@pytest.fixture
def other_person(db):  # noqa: ANN001, ANN201
    return _user("mallory")


@pytest.fixture
def supervisor(db):  # noqa: ANN001, ANN201
    return _user("sue", supervisor=True)


@pytest.fixture
def api(person):  # noqa: ANN001, ANN201
    return client_for(person)


@pytest.fixture
def other_api(other_person):  # noqa: ANN001, ANN201
    return client_for(other_person)


@pytest.fixture
def supervisor_api(supervisor):  # noqa: ANN001, ANN201
    return client_for(supervisor)


@pytest.fixture(autouse=True)
def _fresh_plan_caches():  # noqa: ANN202
    """Stored plan versions never change in production, so processes cache them by id; a
    test database reuses ids after each rollback, so tests start with empty caches."""
    from conversations import services as conversation_services
    from workflows import services as workflow_services

    workflow_services.plans_cache_clear()
    conversation_services._CONFIGS.clear()
    yield
