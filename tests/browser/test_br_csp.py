"""The pages, HTMX, the admin and the API docs work under the Content-Security-Policy."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


def test_chat_turn_poll_login_admin_and_docs_report_no_csp_violation(person_factory) -> None:  # noqa: ANN001
    person = person_factory()  # signs in through /login/
    page = person.page
    policy = page.request.get(f"{person.base}/").headers["content-security-policy"]
    assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy and "unsafe" not in policy
    person.start("parking_help_desk")
    polls: list[str] = []
    page.on("request", lambda r: polls.append(r.url) if "/updates" in r.url else None)
    person.say("Please verify order SCN-020, I think I was overcharged")  # a turn posted by HTMX
    page.locator(".banner-review").wait_for()
    page.wait_for_timeout(3500)  # at least one poll of /c/<id>/updates
    assert polls and all(re.search(r"[?&]after=\d+", url) and re.search(r"[?&]v=\d+", url) for url in polls), polls
    person.shot("09-csp-chat")

    supervisor = person_factory("sam", "sam-supervisor-2026")
    admin = supervisor.page
    admin.goto(f"{supervisor.base}/admin/workflows/review/")
    assert "1 pending" in admin.content()
    assert admin.locator("strong.status-pending").count() >= 1  # colours from admin.css, not style attributes
    admin.get_by_role("link", name="Decide").first.click()
    admin.wait_for_url(re.compile(r".*/decide/$"))
    admin.get_by_test_id("review-signals").wait_for()  # the signals table, styled by admin.css
    supervisor.shot("10-csp-admin-decide")

    admin.goto(f"{supervisor.base}/api/docs/")
    admin.locator(".opblock").first.wait_for()  # Swagger UI ran its (nonce'd) init script and loaded the schema
    supervisor.shot("11-csp-api-docs")

    page.wait_for_timeout(500)
    assert not person.csp_violations and not supervisor.csp_violations, person.csp_violations + supervisor.csp_violations
    assert not person.errors and not supervisor.errors, person.errors + supervisor.errors


def test_login_lockout_page_in_the_browser(browser, demo_live, settings) -> None:  # noqa: ANN001
    settings.AXES_FAILURE_LIMIT = 2
    context = browser.new_context()
    page = context.new_page()
    violations: list[str] = []
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    for _ in range(2):
        page.goto(f"{demo_live.url}/login/")
        page.get_by_label("Username").fill("bob")
        page.get_by_label("Password").fill("not-bobs-password")
        page.get_by_role("button", name="Sign in").click()
    page.get_by_role("heading", name="Too many failed sign-ins").wait_for()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "12-login-locked.png"), full_page=True)
    # The admin's own sign-in page works under the policy, and another user is not locked out.
    page.goto(f"{demo_live.url}/admin/login/?next=/admin/")
    page.get_by_label("Username").fill("sam")
    page.get_by_label("Password").fill("sam-supervisor-2026")
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("heading", name="Supervision").wait_for()
    page.screenshot(path=str(ARTIFACTS / "13-admin-index.png"), full_page=True)
    assert not violations, violations
    context.close()
