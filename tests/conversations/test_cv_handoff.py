"""Human handoff: asked for in words, answered by a supervisor in the admin inbox, handed back; audited."""

from __future__ import annotations

import pytest
from django.test import Client

from conversations.models import Handoff
from workflows.models import AuditEvent

pytestmark = pytest.mark.django_db


def _events(conversation_id: int) -> list[str]:
    return list(AuditEvent.objects.filter(conversation_id=conversation_id).order_by("id").values_list("event_type", flat=True))


@pytest.fixture
def staff(supervisor) -> Client:  # noqa: ANN001
    client = Client()
    client.force_login(supervisor)
    return client


def test_a_person_asks_for_a_human_and_the_concierge_steps_aside(chat, staff) -> None:  # noqa: ANN001
    c = chat("parking_help_desk", "en")
    c.say("how much is SH-PD-001 tomorrow from 10am to noon")
    reply = c.say("I'd rather speak to a human, please")["reply"]
    assert "member of staff" in reply["text"]
    handoff = Handoff.objects.get(conversation_id=c.id)
    assert handoff.status == "open" and "speak to a human" in handoff.reason
    assert c.get()["handoff"] == {"status": "open", "id": handoff.pk}
    # while handed off: stored, nothing runs, no choice
    before = c.get()["slots"]
    reply = c.say("SH-JA-001 tomorrow 9am to 5pm?")["reply"]
    assert "member of staff" in reply["text"] and c.get()["slots"] == before
    c.say("hello?")
    texts = [m["text"] for m in c.client.get(f"/api/v1/conversations/{c.id}/messages").json()["results"]]
    assert texts.count(reply["text"]) == 1  # said once, not after every message
    refused = c.client.post(f"/api/v1/conversations/{c.id}/choose", {"option_id": "finish"}, format="json")
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "conversation_handed_off"
    assert "handoff_opened" in _events(c.id) and _events(c.id).count("turn_held") == 2

    # the inbox lists it; the supervisor answers and hands back
    inbox = staff.get("/admin/conversations/handoff/")
    assert inbox.status_code == 200 and "speak to a human" in inbox.content.decode()
    page = staff.get(f"/admin/conversations/handoff/{handoff.pk}/change/")
    assert page.status_code == 200 and "SH-JA-001 tomorrow 9am to 5pm?" in page.content.decode()
    empty = staff.post(f"/admin/conversations/handoff/{handoff.pk}/change/", {"reply": "", "hand_back": ""})
    assert empty.status_code == 200 and "Write a reply to the person" in empty.content.decode()
    answered = staff.post(f"/admin/conversations/handoff/{handoff.pk}/change/", {"reply": "Hi, Lin here: SH-JA-001 is tiered."})
    assert answered.status_code == 302
    messages = c.client.get(f"/api/v1/conversations/{c.id}/messages").json()["results"]
    assert messages[-1]["kind"] == "human" and messages[-1]["text"] == "Hi, Lin here: SH-JA-001 is tiered."
    back = staff.post(f"/admin/conversations/handoff/{handoff.pk}/change/", {"reply": "", "hand_back": "on"})
    assert back.status_code == 302
    handoff.refresh_from_db()
    assert handoff.status == "closed" and c.get()["handoff"] is None
    assert [e for e in _events(c.id) if e.startswith("handoff_")] == ["handoff_opened", "handoff_replied", "handoff_closed"]
    reply = c.say("ok, and SH-XH-001 tomorrow 10am to noon?")["reply"]
    assert "10.00" in reply["text"], reply["text"]  # the concierge is back where it was


def test_a_person_cannot_open_the_inbox_and_a_closed_handoff_takes_no_reply(chat, person, staff) -> None:  # noqa: ANN001
    c = chat("manager_assistant", "zh-hans")
    c.say("转人工")
    handoff = Handoff.objects.get(conversation_id=c.id)
    browser = Client()
    browser.force_login(person)
    assert browser.get("/admin/conversations/handoff/").status_code == 302  # to the admin login: not staff
    staff.post(f"/admin/conversations/handoff/{handoff.pk}/change/", {"hand_back": "on"})
    late = staff.post(f"/admin/conversations/handoff/{handoff.pk}/change/", {"reply": "too late"})
    assert late.status_code == 200 and "This handoff is closed" in late.content.decode()


def test_not_asking_for_a_human_opens_nothing(chat) -> None:  # noqa: ANN001
    c = chat("parking_help_desk", "en")
    c.say("no need for a person, what's the rate at SH-PD-001 tomorrow 10am to noon?")
    assert not Handoff.objects.filter(conversation_id=c.id).exists()


def test_the_inbox_lists_open_handoffs_first_newest_first(chat, staff) -> None:  # noqa: ANN001
    handoffs = []
    for words in ("I want a human", "talk to a person please", "can I speak to a human"):
        c = chat("parking_help_desk", "en")
        c.say(words)
        handoffs.append(Handoff.objects.get(conversation_id=c.id))
    oldest, middle, newest = handoffs
    staff.post(f"/admin/conversations/handoff/{newest.pk}/change/", {"hand_back": "Hand back to the concierge"})
    inbox = staff.get("/admin/conversations/handoff/").content.decode()
    assert "Handoff inbox — 2 open" in inbox
    rows = [inbox.index(f"/admin/conversations/handoff/{h.pk}/change/") for h in (middle, oldest, newest)]
    assert rows == sorted(rows), "open ones first (newest first), the closed one last"
    # Sorted by the status column: open before closed (not the words' order), and the reverse.
    for order, expected in (("0", (middle, oldest, newest)), ("-0", (newest, middle, oldest))):
        page = staff.get(f"/admin/conversations/handoff/?o={order}").content.decode()
        rows = [page.index(f"/admin/conversations/handoff/{h.pk}/change/") for h in expected]
        assert rows == sorted(rows), order
    # Outside the inbox a handoff list is plainly newest first, whatever its status.
    staff.post(f"/admin/conversations/handoff/{oldest.pk}/change/", {"hand_back": "Hand back to the concierge"})
    assert list(Handoff.objects.values_list("pk", flat=True)) == [newest.pk, middle.pk, oldest.pk]
    assert "Parking help desk" in staff.get("/admin/conversations/handoff/?workflow=parking_help_desk").content.decode()


def test_a_handoff_page_has_the_transcript_a_reply_box_and_the_hand_back_button(chat, staff, supervisor) -> None:  # noqa: ANN001
    c = chat("parking_help_desk", "en")
    c.say("I'd rather speak to a human, please")
    handoff = Handoff.objects.get(conversation_id=c.id)
    url = f"/admin/conversations/handoff/{handoff.pk}/change/"
    page = staff.get(url).content.decode()
    assert "handoff-transcript" in page and "speak to a human" in page
    assert 'name="reply"' in page and 'value="Send reply"' in page and 'value="Hand back to the concierge"' in page
    assert f"/admin/conversations/conversation/{c.id}/change/" in page and f"/c/{c.id}/" in page
    replied = staff.post(url, {"reply": "Lin here, looking now.", "_send": "Send reply"}, follow=True)
    assert replied.redirect_chain[-1][0] == url and f"Staff ({supervisor.username})" in replied.content.decode()
    # A reply and the hand-back together: the reply goes first, then the concierge resumes.
    both = staff.post(url, {"reply": "All sorted, over to the concierge.", "hand_back": "Hand back to the concierge"}, follow=True)
    assert both.redirect_chain[-1][0] == "/admin/conversations/handoff/" and "handed back to the concierge" in both.content.decode()
    kinds = [m["kind"] for m in c.client.get(f"/api/v1/conversations/{c.id}/messages").json()["results"]][-3:]
    assert kinds == ["human", "human", "handed_back"]
    closed = staff.get(url).content.decode()
    assert 'name="reply"' not in closed and "Send reply" not in closed and "This handoff is closed" in closed
