"""The supervisor's admin in a real browser: a fee review read in words, decided with a reason, a handoff answered."""

from __future__ import annotations

import re

import pytest

from conversations.models import Handoff, Message
from workflows.admin import REASON_REQUIRED

pytestmark = pytest.mark.browser

SNAKE_CASE = re.compile(r"\b[a-z]+_[a-z_]+\b")


def _assert_reads_as_words(text: str) -> None:
    assert "{" not in text and "}" not in text, f"raw JSON on the page:\n{text}"
    assert not SNAKE_CASE.findall(text), f"snake_case keys on the page: {SNAKE_CASE.findall(text)}\n{text}"


def test_supervisor_reads_decides_and_answers_a_handoff(person_factory) -> None:  # noqa: ANN001
    person = person_factory()
    person.start("parking_help_desk")
    person.say("Please verify order SCN-020, I think I was overcharged")
    person.page.locator(".banner-review").wait_for()

    supervisor = person_factory("sam", "sam-supervisor-2026")
    admin = supervisor.page
    admin.goto(f"{supervisor.base}/admin/workflows/review/")
    queue = admin.locator("#changelist").inner_text()
    assert "Parking help desk" in queue and "Adjust to the simulated amount" in queue
    supervisor.shot("admin-00-review-queue")
    admin.get_by_role("link", name="Decide").first.click()
    admin.wait_for_url(re.compile(r".*/decide/$"))

    summary = admin.get_by_test_id("review-summary").inner_text()
    for expected in ("SCN-020", "SH-PD-001", "Entry", "Exit", "Recorded on the order", "Simulated by the rule", "14.00", "SH-PD-DAY, version"):
        assert expected in summary, f"{expected!r} missing from the summary:\n{summary}"
    _assert_reads_as_words(summary)
    signals = admin.get_by_test_id("review-signals").inner_text()
    assert "Confidence" in signals and "≥ 0.80" in signals and "Amounts agree" in signals
    assert "QA" not in admin.locator("#content-main").inner_text()  # no QA step ran on a fee check
    _assert_reads_as_words(signals)
    supervisor.shot("admin-01-decide-fee-mismatch")

    admin.get_by_role("radio", name="Approve").check()
    admin.get_by_role("button", name="Record decision").click()
    admin.locator("#decision-errors", has_text=REASON_REQUIRED).wait_for()  # at the top, with the focus
    assert admin.evaluate("() => document.activeElement.id") == "decision-errors"
    assert admin.locator("#decision-errors").bounding_box()["y"] < 900  # in view, not at the foot of a long page
    supervisor.shot("admin-02-decide-without-reason")

    admin.get_by_label("Reason").fill("The rule in force gives 14.00; adjust the order.")
    admin.get_by_role("button", name="Record decision").click()
    admin.wait_for_url(re.compile(r".*/admin/workflows/review/\d+/change/"))
    assert "decided" in admin.locator(".messagelist").inner_text()
    _assert_reads_as_words(admin.get_by_test_id("review-summary").inner_text())
    supervisor.shot("admin-03-review-decided")

    person.page.locator(".banner-decided").wait_for(timeout=20000)
    person.say("I'd rather speak to a human, please")
    handoff = Handoff.objects.get(status=Handoff.Status.OPEN)

    admin.goto(f"{supervisor.base}/admin/conversations/handoff/")
    assert "Handoff inbox — 1 open" in admin.locator("#content").inner_text()
    supervisor.shot("admin-04-handoff-inbox")
    admin.get_by_role("link", name="Answer").first.click()
    admin.wait_for_url(re.compile(rf".*/admin/conversations/handoff/{handoff.pk}/change/"))
    assert "speak to a human" in admin.locator(".handoff-transcript").inner_text()
    admin.get_by_label("Reply").fill("Hi, Sam here: your order SCN-020 is now 14.00.")
    admin.get_by_role("button", name="Send reply").click()
    admin.locator(".handoff-transcript", has_text="Sam here").wait_for()
    assert "Reply sent" in admin.locator(".messagelist").inner_text()
    supervisor.shot("admin-05-handoff-replied")

    admin.get_by_role("button", name="Hand back to the concierge").click()
    admin.wait_for_url(re.compile(r".*/admin/conversations/handoff/$"))
    assert "handed back to the concierge" in admin.locator(".messagelist").inner_text()
    assert "Handoff inbox — 0 open" in admin.locator("#content").inner_text()
    supervisor.shot("admin-06-handed-back")

    handoff.refresh_from_db()
    assert handoff.status == Handoff.Status.CLOSED
    staff_reply = Message.objects.filter(conversation_id=handoff.conversation_id, payload__kind="human").get()
    assert staff_reply.text.startswith("Hi, Sam here")
    assert not supervisor.errors and not supervisor.csp_violations, supervisor.errors + supervisor.csp_violations


def test_supervisor_reads_an_intake_review_field_by_field(person_factory) -> None:  # noqa: ANN001
    from django.contrib.auth import get_user_model

    from workflows.models import Review, Run
    from workflows.services import runs
    from workflows.services.runs import Actor

    alice = get_user_model().objects.get(username="alice")
    run = runs.run_start(workflow_id="project_intake", owner=alice).run
    runs.run_signals_update(
        run=Run.objects.get(pk=run.pk), actor=Actor.of(alice),
        signals={"slots": {"summary": "A booking page for our two yoga studios", "goal": "fewer phone calls",
                           "users": "members and front-desk staff"},
                 "intake_ready": True, "confidence": 0.62, "intent_class": "web_app"},
    )
    review = Review.objects.get(run=run)
    supervisor = person_factory("sam", "sam-supervisor-2026")
    supervisor.page.goto(f"{supervisor.base}/admin/workflows/review/{review.pk}/change/")
    summary = supervisor.page.get_by_test_id("review-summary").inner_text()
    assert "A booking page for our two yoga studios" in summary and "Goal" in summary
    _assert_reads_as_words(summary)
    signals = supervisor.page.get_by_test_id("review-signals").inner_text()
    assert "0.62" in signals and "≥ 0.80" in signals and "QA check" in signals  # this gate's QA step ran
    _assert_reads_as_words(signals)
    supervisor.shot("admin-07-intake-review")
    assert not supervisor.errors, supervisor.errors
