"""Browser tests: headless Debian Chromium driven by Playwright against Django's live server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
# Playwright's sync API runs an event loop in this thread; Django's ORM must be allowed here.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(scope="session")
def browser():  # noqa: ANN201
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), "Debian's chromium is missing: bin/test installs it (apt-get install chromium)"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"],
        )
        yield browser
        browser.close()


@pytest.fixture
def demo_live(live_server, transactional_db):  # noqa: ANN001, ANN201
    from tests.support import demo_data

    demo_data.ensure()  # committed: the live server's threads read it
    return live_server


class Person:
    """One signed-in browser tab, with console errors collected."""

    def __init__(self, browser, base_url: str, username: str, password: str, *, width: int = 1280):  # noqa: ANN001
        self.context = browser.new_context(viewport={"width": width, "height": 900}, locale="en-US")
        self.page = self.context.new_page()
        self.page.set_default_timeout(15000)
        self.errors: list[str] = []
        # Chromium reports each Content-Security-Policy violation on the console.
        self.csp_violations: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.base = base_url
        self.page.goto(f"{base_url}/login/")
        self.page.get_by_label("Username").fill(username)
        self.page.get_by_label("Password").fill(password)
        self.page.get_by_role("button", name="Sign in").click()
        self.page.wait_for_url(f"{base_url}/")

    def _console(self, message) -> None:  # noqa: ANN001
        if "Content Security Policy" in message.text or "Content-Security-Policy" in message.text:
            self.csp_violations.append(message.text)
        if message.type == "error":
            self.errors.append(message.text)

    def shot(self, name: str) -> None:
        ARTIFACTS.mkdir(exist_ok=True)
        self.page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)

    def start(self, workflow_id: str, locale: str = "en") -> None:
        self.page.goto(f"{self.base}/")
        self.page.select_option(f"#locale-{workflow_id}", locale)
        self.page.locator(f"button[data-workflow={workflow_id}]").click()
        self.page.wait_for_selector("#composer")

    def say(self, text: str) -> None:
        count = self.page.locator("#transcript li.msg-assistant").count()
        self.page.locator("#message-text").fill(text)  # its label is in the conversation's language
        self.page.keyboard.press("Enter")
        # A function, not an expression string: the page's CSP forbids evaluating strings.
        self.page.wait_for_function(
            "count => document.querySelectorAll('#transcript li.msg-assistant').length > count", arg=count
        )

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def person_factory(browser, demo_live):  # noqa: ANN001, ANN201
    opened: list[Person] = []

    def make(username: str = "alice", password: str = "alice-demo-2026", **kwargs) -> Person:  # noqa: ANN003
        person = Person(browser, demo_live.url, username, password, **kwargs)
        opened.append(person)
        return person

    yield make
    for person in opened:
        person.close()
