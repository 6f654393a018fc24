"""A starting process warms every app; one that fails is logged and the others still run."""

from __future__ import annotations

import pytest

from config.runtime import process_started, warm_up

pytestmark = pytest.mark.django_db


def test_a_failing_warm_up_is_logged_and_the_rest_still_run(caplog) -> None:  # noqa: ANN001
    ran: list[str] = []

    def broken(**kwargs: object) -> None:
        raise ConnectionError("database not reachable")

    def healthy(**kwargs: object) -> None:
        ran.append("healthy")

    process_started.connect(broken, dispatch_uid="test-broken")
    process_started.connect(healthy, dispatch_uid="test-healthy")
    try:
        warm_up()  # does not raise: the server still starts
    finally:
        process_started.disconnect(dispatch_uid="test-broken")
        process_started.disconnect(dispatch_uid="test-healthy")
    assert ran == ["healthy"]  # connected after the broken one, and still ran
    [warning] = [r for r in caplog.records if r.levelname == "WARNING"]
    assert "broken did not warm up at start-up (database not reachable)" in warning.getMessage()
    assert warning.exc_info and warning.exc_info[0] is ConnectionError  # the traceback is in the log
