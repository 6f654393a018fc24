"""The manager assistant's downloads read back as a mail client and a calendar would (issue 17): the
email is to the employee by the name given and carries none of the manager's own notes; the
invitation's start is the day and time the manager said, in the manager's time zone, parsed with
a calendar library; the recipient, the time and the length can be corrected before consent."""

from __future__ import annotations

from datetime import datetime, timedelta
from email import message_from_bytes
from email.policy import default
from zoneinfo import ZoneInfo

import icalendar
import pytest
import time_machine

pytestmark = pytest.mark.django_db

# Tuesday 24 November 2026, 10:00 in Shanghai: "Thursday" is the 26th
NOW = datetime(2026, 11, 24, 10, 0, tzinfo=ZoneInfo("Asia/Shanghai"))


@pytest.fixture
def signed_in(client, person, demo):  # noqa: ANN001, ANN201
    client.force_login(person)
    return client


def _talk(client, locale: str, *messages: str) -> int:  # noqa: ANN001
    response = client.post("/c/start/manager_assistant/", {"locale": locale})
    cid = int(response["Location"].strip("/").split("/")[-1])
    for text in messages:
        assert client.post(f"/c/{cid}/send", {"text": text}).status_code == 302
    return cid


def _event(client, cid: int) -> icalendar.Event:  # noqa: ANN001
    response = client.get(f"/c/{cid}/documents/calendar_invite")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/calendar")
    calendar = icalendar.Calendar.from_ical(response.content)
    events = list(calendar.walk("VEVENT"))
    assert len(events) == 1
    return events[0]


def _email(client, cid: int):  # noqa: ANN001, ANN202
    response = client.get(f"/c/{cid}/documents/email_draft")
    assert response.status_code == 200 and response["Content-Type"] == "message/rfc822"
    return message_from_bytes(response.content, policy=default)


PRIVATE = ("four times this month", "she's going through a divorce", "voicemail", "fired")


def test_call_refused_email_then_invite_at_the_managers_time_corrected_before_consent(signed_in, settings) -> None:  # noqa: ANN001
    # given a manager who wants a call, not an email, and corrects the name, the length and the day
    settings.CONCIERGE_TIMEZONE = "Asia/Shanghai"
    with time_machine.travel(NOW, tick=False):
        cid = _talk(signed_in, "en",
                    "My employee Priya has been late four times this month; between us, she's going through a divorce",
                    "Called her twice, straight to voicemail",
                    "I'd rather talk to her face to face than send an email, Thursday at 2pm",
                    "actually her name is Pria, not Priya",
                    "make it 45 minutes",
                    "no, Friday not Thursday")
        # when the manager consents to the call
        assert signed_in.post(f"/c/{cid}/choose", {"option_id": "schedule_call", "consent": "yes"}).status_code == 302
        event = _event(signed_in, cid)
    # then the invitation starts on Friday 27 November at 14:00 Shanghai time and lasts 45 minutes
    start, end = event.decoded("DTSTART"), event.decoded("DTEND")
    assert start.astimezone(ZoneInfo("Asia/Shanghai")) == datetime(2026, 11, 27, 14, 0, tzinfo=ZoneInfo("Asia/Shanghai"))
    assert start.astimezone(ZoneInfo("UTC")).hour == 6  # never 04:00 or 22:00: the zone is applied once
    assert end - start == timedelta(minutes=45)
    assert str(event["SUMMARY"]) == "Call with Pria"
    description = str(event["DESCRIPTION"])
    assert "Friday 27 November at 14:00" in description and "45 minutes" in description
    assert not any(note in description.lower() for note in PRIVATE)
    # the email was refused: nothing drafted
    assert signed_in.get(f"/c/{cid}/documents/email_draft").status_code == 404


def test_the_time_is_read_in_the_configured_time_zone(signed_in, settings) -> None:  # noqa: ANN001
    settings.CONCIERGE_TIMEZONE = "America/New_York"
    with time_machine.travel(NOW, tick=False):
        cid = _talk(signed_in, "en", "Our cashier Dev walked out mid-shift yesterday", "not yet, haven't spoken to him",
                    "Set up a call with him Thursday at 9:30am")
        signed_in.post(f"/c/{cid}/choose", {"option_id": "schedule_call", "consent": "yes"})
        event = _event(signed_in, cid)
        body = signed_in.get(f"/c/{cid}/documents/calendar_invite").content.decode()
    start = event.decoded("DTSTART")
    assert start.astimezone(ZoneInfo("America/New_York")) == datetime(2026, 11, 26, 9, 30, tzinfo=ZoneInfo("America/New_York"))
    # the invitation names its time zone: the start in it, with its VTIMEZONE
    assert "BEGIN:VTIMEZONE" in body and "DTSTART;TZID=America/New_York:20261126T093000" in body


def test_email_is_to_the_employee_by_name_at_the_address_given_without_private_notes(signed_in) -> None:  # noqa: ANN001
    with time_machine.travel(NOW, tick=False):
        cid = _talk(signed_in, "en",
                    "My employee Priya has been late four times this month; between us, she's going through a divorce",
                    "Called her twice, straight to voicemail",
                    "yes, twice last quarter, I'm thinking she should be fired if it goes on",
                    "send it to priya.n@acme.example")
        signed_in.post(f"/c/{cid}/choose", {"option_id": "draft_email", "consent": "yes"})
        message = _email(signed_in, cid)
    assert message["To"] == "priya.n@acme.example"
    body = message.get_content()
    assert body.startswith("Hi Priya,") and "the employee" not in body.lower()
    assert not any(note in body.lower() for note in PRIVATE)


def test_chinese_conversation_documents(signed_in, settings) -> None:  # noqa: ANN001
    settings.CONCIERGE_TIMEZONE = "Asia/Shanghai"
    with time_machine.travel(NOW, tick=False):
        cid = _talk(signed_in, "zh-hans",
                    "我的员工王磊这周两次没来上班，私下说他最近家里有事",
                    "还没有，之前没找他聊过",
                    "不想发邮件，帮我约他周四下午三点当面谈谈",
                    "改成半小时，改到周五")
        signed_in.post(f"/c/{cid}/choose", {"option_id": "schedule_call", "consent": "yes"})
        event = _event(signed_in, cid)
    start, end = event.decoded("DTSTART"), event.decoded("DTEND")
    assert start.astimezone(ZoneInfo("Asia/Shanghai")) == datetime(2026, 11, 27, 15, 0, tzinfo=ZoneInfo("Asia/Shanghai"))
    assert end - start == timedelta(minutes=30)
    assert str(event["SUMMARY"]) == "与王磊通话"
    assert "家里有事" not in str(event["DESCRIPTION"]) and "没来上班" not in str(event["DESCRIPTION"])


def test_chinese_email_headers_are_encoded_and_the_to_line_is_left_for_the_manager(signed_in) -> None:  # noqa: ANN001
    # given a Chinese conversation that drafts the email without anyone giving an address
    with time_machine.travel(NOW, tick=False):
        cid = _talk(signed_in, "zh-hans", "我的员工王磊这周两次没来上班", "打过两次电话，他没接", "第一次，没有书面记录")
        assert signed_in.post(f"/c/{cid}/choose", {"option_id": "draft_email", "consent": "yes"}).status_code == 302
        raw = signed_in.get(f"/c/{cid}/documents/email_draft").content
    # then the headers are ASCII, the subject as RFC 2047 words that read back as the Chinese subject; To: is there, empty
    head, _blank, _body = raw.partition(b"\r\n\r\n")
    assert b"=?utf-8?" in head and all(byte < 128 for byte in head) and b"\r\nTo:" in b"\r\n" + head
    message = message_from_bytes(raw, policy=default)
    assert message["Subject"] == "跟进沟通" and message["To"] == ""
    assert message.get_content().startswith("王磊，你好") and b"example" not in raw  # the body readable as it is, 8bit


def test_consent_in_words_is_recorded_as_the_persons_with_their_words(signed_in, person) -> None:  # noqa: ANN001
    from workflows.models import AuditEvent, ConsentRecord

    with time_machine.travel(NOW, tick=False):
        cid = _talk(signed_in, "en", "My employee Priya has been late four times this month", "Called her twice, straight to voicemail",
                    "first time, nothing on file", "sure, go ahead and write it")
        message = _email(signed_in, cid)
    consent = ConsentRecord.objects.get(option_id="draft_email")
    assert consent.given_by == person and consent.actor_role == "participant"
    typed = AuditEvent.objects.get(event_type="consent_in_words")
    assert typed.payload["words"] == "sure, go ahead and write it" and typed.chosen_option_id == "draft_email"
    assert AuditEvent.objects.filter(event_type="decision", chosen_option_id="draft_email", actor_label__endswith="(consent in words)").exists()
    assert message.get_content().startswith("Hi Priya,")
