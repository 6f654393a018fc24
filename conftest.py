"""Shared fixtures: the demo data loaded once per session, a user and an API client per role
(person, operator, supervisor), and the shipped plans."""

from __future__ import annotations

import pytest

from tests.support import demo_data, fuzz_figures
from tests.support.helpers import client_for


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):  # noqa: ANN001, ANN201
    """The test database with the demo data (shipped plans, demo users, billing rules and orders,
    knowledge) committed once: each test's transaction rolls back to this snapshot, so seeding
    costs seconds once instead of seconds per test."""
    from django.db import connection
    from django.test.utils import setup_databases, teardown_databases

    with django_db_blocker.unblock():
        # pytest-django creates test databases only for the tests that ask for one by marker or
        # fixture; the schema fuzzing run alone asks for none (its module shares one committed
        # database), and would otherwise seed, fuzz and flush the database the settings name.
        made_here = None
        if connection.settings_dict["NAME"] == _CONFIGURED_DATABASE:
            made_here = setup_databases(verbosity=0, interactive=False, aliases={"default"})
        demo_data.note_migrated_rows()
        demo_data.load()
    yield
    if made_here is not None:
        with django_db_blocker.unblock():
            teardown_databases(made_here, verbosity=0)


def _configured_database() -> str:
    from django.conf import settings

    return str(settings.DATABASES["default"]["NAME"])


_CONFIGURED_DATABASE = _configured_database()  # read before any test database replaces it


@pytest.fixture
def demo(db):  # noqa: ANN001, ANN201
    """The demo data. Already there from the session set-up; loaded again only after a
    transactional test emptied the database (its flush removes everything)."""
    demo_data.ensure()


@pytest.fixture
def no_demo_data(db):  # noqa: ANN001, ANN201
    """The database as migrations left it, for tests about an empty or a first load: the demo
    data is deleted inside the test's transaction and comes back with its rollback."""
    demo_data.remove()


@pytest.fixture
def plans(demo):  # noqa: ANN001, ANN201
    """The shipped workflow plans (part of the demo data)."""
    from workflows.demo import SHIPPED_WORKFLOWS

    return list(SHIPPED_WORKFLOWS)


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


def pytest_sessionfinish(session) -> None:  # noqa: ANN001
    fuzz_figures.hand_over(session.config)


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: a worker finished
def pytest_testnodedown(node, error) -> None:  # noqa: ANN001, ARG001
    fuzz_figures.take_over(getattr(node, "workeroutput", {}))


def pytest_terminal_summary(terminalreporter) -> None:  # noqa: ANN001
    for line in fuzz_figures.lines():
        terminalreporter.write_line(line)
