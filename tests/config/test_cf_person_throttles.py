"""Per-person budgets for sending turns and starting conversations (issue 34, 5b): the API answers
429 in the error shape, the chat pages say so, and both count against one budget per person."""

from __future__ import annotations

import json

import pytest
from django.core.cache import cache
from django.test import Client

from config.settings import base
from conversations.models import Conversation, Message

pytestmark = pytest.mark.django_db

MESSAGE = {"text": "Does plate 沪B88888 have unpaid parking?"}


@pytest.fixture
def rates(settings, demo):  # noqa: ANN001, ANN201
    """Set the throttle rates for one test (the suite's own leave `turns` and `conversations` off), with fresh counters."""
    cache.clear()

    def set_rates(**rates: str | None) -> None:
        high = {"user": "10000/s", "anon": "10000/s", "expensive": "10000/s"}
        settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {**high, **rates}}

    yield set_rates
    cache.clear()


@pytest.fixture
def page(person):  # noqa: ANN001, ANN201
    client = Client()
    client.force_login(person)
    return client


def assert_throttled(response, longest: int) -> None:  # noqa: ANN001
    assert response.status_code == 429
    error = json.loads(response.content)["error"]
    assert error["code"] == "throttled" and "throttled" in error["message"].lower()
    wait = error["details"]["retry_after"]
    assert 0 < wait <= longest and response["Retry-After"] == str(wait)


def start(api) -> int:  # noqa: ANN001
    response = api.post("/api/v1/conversations", {"workflow_id": "parking_help_desk"}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


def test_the_shipped_rates_are_far_above_a_person_and_the_suite_leaves_them_off(settings) -> None:  # noqa: ANN001
    shipped = base.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]
    assert (shipped["turns"], shipped["conversations"]) == ("30/min", "60/hour")
    assert "turns" not in settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]  # absent: off


def test_turns_over_the_rate_get_429_and_the_page_shares_the_count(api, other_api, page, rates) -> None:  # noqa: ANN001
    rates(turns="3/min")
    cid = start(api)
    path = f"/api/v1/conversations/{cid}/messages"
    for _ in range(2):
        assert api.post(path, MESSAGE, format="json").status_code == 201
    assert page.post(f"/c/{cid}/send", MESSAGE).status_code == 302  # the third, from the page
    stored = Message.objects.filter(conversation_id=cid, role="user").count()

    assert_throttled(api.post(path, MESSAGE, format="json"), 60)
    refused = page.post(f"/c/{cid}/send", {**MESSAGE, "after": "0"}, HTTP_HX_REQUEST="true")
    assert refused.status_code == 200 and 'role="alert"' in refused.content.decode()
    assert "Too many messages in a short time" in refused.content.decode()
    plain = page.post(f"/c/{cid}/send", MESSAGE, follow=True)  # without JavaScript: back to the page, told why
    assert "Too many messages in a short time" in plain.content.decode()
    assert Message.objects.filter(conversation_id=cid, role="user").count() == stored  # nothing more was said

    assert api.get(path).status_code == 200  # reading the transcript is not a turn
    assert api.get(f"/api/v1/conversations/{cid}").status_code == 200
    theirs = start(other_api)  # per person
    assert other_api.post(f"/api/v1/conversations/{theirs}/messages", MESSAGE, format="json").status_code == 201


def test_new_conversations_over_the_rate_get_429_and_the_start_page_says_so(api, other_api, page, rates) -> None:  # noqa: ANN001
    rates(conversations="2/hour")
    start(api)
    assert page.post("/c/start/parking_help_desk/", {"locale": "en"}).status_code == 302  # the second, from the page
    count = Conversation.objects.count()

    assert_throttled(api.post("/api/v1/conversations", {"workflow_id": "parking_help_desk"}, format="json"), 3600)
    refused = page.post("/c/start/parking_help_desk/", {"locale": "en"}, follow=True)
    assert refused.redirect_chain[-1][0] == "/" and "Too many new conversations" in refused.content.decode()
    assert Conversation.objects.count() == count

    assert api.get("/api/v1/conversations").status_code == 200  # listing is not starting
    start(other_api)  # per person


def test_a_rate_turned_off_never_throttles(api, rates) -> None:  # noqa: ANN001
    rates(turns=None, conversations=None)
    cid = start(api)
    for _ in range(4):
        start(api)
        assert api.post(f"/api/v1/conversations/{cid}/messages", MESSAGE, format="json").status_code == 201
