"""The chat pages without a browser: forms work without JavaScript, HTMX gets partials,
and what a workflow produces can be downloaded."""

from __future__ import annotations

import pytest

from conversations.models import Conversation

pytestmark = pytest.mark.django_db


@pytest.fixture
def signed_in(client, person, demo):  # noqa: ANN001, ANN201
    client.force_login(person)
    return client


def _start(client, workflow_id: str) -> int:  # noqa: ANN001
    response = client.post(f"/c/start/{workflow_id}/", {"locale": "en"})
    assert response.status_code == 302
    return int(response["Location"].strip("/").split("/")[-1])


def test_plain_form_posts_work_without_javascript(signed_in) -> None:  # noqa: ANN001
    cid = _start(signed_in, "parking_help_desk")
    response = signed_in.post(f"/c/{cid}/send", {"text": "Does plate 沪B88888 owe anything?"})
    assert response.status_code == 302
    page = signed_in.get(f"/c/{cid}/").content.decode()
    assert "13.00" in page and "沪B88888" in page


def test_the_start_page_offers_each_workflow_in_the_languages_it_speaks(signed_in) -> None:  # noqa: ANN001
    import re

    page = signed_in.get("/").content.decode()
    rv = re.search(r'<select id="locale-rv_diagnostic".*?</select>', page, re.S).group(0)
    permit = re.search(r'<select id="locale-permit_form".*?</select>', page, re.S).group(0)
    assert all(f'value="{v}"' in rv for v in ("en", "zh-hans", "ru", "es")), rv
    assert 'value="ru"' not in permit and 'value="zh-hans"' in permit
    response = signed_in.post("/c/start/rv_diagnostic/", {"locale": "es"})
    assert Conversation.objects.get(pk=int(response["Location"].strip("/").split("/")[-1])).locale == "es"


def test_htmx_gets_partials_and_polling_answers_204_when_nothing_changed(signed_in) -> None:  # noqa: ANN001
    cid = _start(signed_in, "parking_help_desk")
    response = signed_in.post(f"/c/{cid}/send", {"text": "Does plate 沪B88888 owe anything?", "after": "0"}, HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert response.status_code == 200 and 'hx-swap-oob="true"' in body and "13.00" in body
    version = Conversation.objects.get(pk=cid).version
    assert signed_in.get(f"/c/{cid}/updates", {"after": 999, "v": version}).status_code == 204
    assert signed_in.get(f"/c/{cid}/updates", {"after": 0, "v": version - 1}).status_code == 200


def test_consent_and_errors_are_shown(signed_in) -> None:  # noqa: ANN001
    cid = _start(signed_in, "manager_assistant")
    for text in ("My employee Sam didn't show up for two shifts", "Yes, I called him twice, no answer", "No, first time, nothing documented yet"):
        signed_in.post(f"/c/{cid}/send", {"text": text})
    refused = signed_in.post(f"/c/{cid}/choose", {"option_id": "draft_email"}, HTTP_HX_REQUEST="true")
    assert "consent" in refused.content.decode().lower() and 'role="alert"' in refused.content.decode()
    signed_in.post(f"/c/{cid}/choose", {"option_id": "draft_email", "consent": "yes"})
    eml = signed_in.get(f"/c/{cid}/documents/email_draft")
    assert eml["Content-Type"] == "message/rfc822" and b"Subject:" in eml.content
    assert signed_in.get(f"/c/{cid}/documents/calendar_invite").status_code == 404  # not scheduled yet


def test_downloads_of_report_form_invite_and_intake(signed_in) -> None:  # noqa: ANN001
    cid = _start(signed_in, "rv_diagnostic")
    for text in ("AC not cooling", "120 volts", "compressor hums, won't start", "cap is bulged and weak"):
        signed_in.post(f"/c/{cid}/send", {"text": text})
    signed_in.post(f"/c/{cid}/choose", {"option_id": "write_report"})
    report = signed_in.get(f"/c/{cid}/documents/final_report").content.decode()
    assert "# Final report" in report and "## Cause" in report and "draft" in report
    cid = _start(signed_in, "manager_assistant")
    for text in ("My employee Sam didn't show up for two shifts", "Yes, I called him twice, no answer", "No, first time, nothing documented yet"):
        signed_in.post(f"/c/{cid}/send", {"text": text})
    signed_in.post(f"/c/{cid}/choose", {"option_id": "draft_email", "consent": "yes"})
    signed_in.post(f"/c/{cid}/send", {"text": "Let's also set up a call with him this week"})
    signed_in.post(f"/c/{cid}/choose", {"option_id": "schedule_call", "consent": "yes"})
    ics = signed_in.get(f"/c/{cid}/documents/calendar_invite")
    if ics.status_code == 200:
        assert ics.content.startswith(b"BEGIN:VCALENDAR") and b"SUMMARY:" in ics.content
    cid = _start(signed_in, "project_intake")
    for text in ("We want to build an online shop for our bakery", "The goal is to sell cakes online with delivery",
                 "Local customers in our city", "Budget is 20k and it should launch by June"):
        signed_in.post(f"/c/{cid}/send", {"text": text})
    intake = signed_in.get(f"/c/{cid}/documents/intake_document?view=1")
    assert intake["Content-Disposition"].startswith("inline") and b"bakery" in intake.content


def test_other_people_cannot_open_a_conversation(signed_in, other_person, client) -> None:  # noqa: ANN001
    cid = _start(signed_in, "permit_form")
    client.force_login(other_person)
    assert client.get(f"/c/{cid}/").status_code == 404
    assert client.post(f"/c/{cid}/send", {"text": "hi"}).status_code == 404


def test_a_finished_conversation_takes_no_more_messages_in_the_page(signed_in) -> None:  # noqa: ANN001
    """Walk 8: once a choice completes the conversation, the update the page gets disables the message box (it
    stayed enabled until a reload, and what was typed was dropped under a banner out of sight)."""
    cid = _start(signed_in, "rv_diagnostic")
    for text in ("AC not cooling", "120 volts", "compressor hums, won't start", "cap is bulged and weak"):
        signed_in.post(f"/c/{cid}/send", {"text": text})
    update = signed_in.post(f"/c/{cid}/choose", {"option_id": "write_report"}, HTTP_HX_REQUEST="true").content.decode()
    assert Conversation.objects.get(pk=cid).status == "completed"
    assert 'id="composer-row"' in update and 'hx-swap-oob="true"' in update and "disabled" in update.split('id="composer-row"')[1]
    page = signed_in.get(f"/c/{cid}/").content.decode()
    assert "disabled" in page.split('id="composer-row"')[1].split("</div>")[0]
