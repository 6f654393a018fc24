"""With a model configured, the reply streams into the page as it is written: the page shows
the model's words while the turn runs, then the stored, checked message takes their place;
a reply the checks refuse is replaced by the rules' reply."""

from __future__ import annotations

import pytest

from tests.support.fake_openai import FakeOpenAI, Scripted

pytestmark = pytest.mark.browser

QUESTION = "hi, does plate 沪B88888 still owe anything?"
WORDED = {"type": "reply", "reply": "Plate 沪B88888 still owes 13.00, over two orders.", "option_id": None,
          "asks_question": False, "confidence": 0.9, "citations": []}


@pytest.fixture
def model(settings):  # noqa: ANN001, ANN201
    fake = FakeOpenAI()
    settings.OPENAI_API_KEY = "test-key"
    settings.OPENAI_BASE_URL = fake.base_url
    settings.CONCIERGE_LLM_MODEL = "fake-model"
    settings.CONCIERGE_LLM_TIMEOUT = 15.0
    yield fake
    fake.close()


def _send(person, text: str) -> int:  # noqa: ANN001
    count = person.page.locator("#transcript li.msg-assistant").count()
    person.page.locator("#message-text").fill(text)
    person.page.keyboard.press("Enter")
    return count


def _answered(person, count: int) -> str:  # noqa: ANN001
    person.page.wait_for_function(
        "count => document.querySelectorAll('#transcript li.msg-assistant').length > count", arg=count)
    return person.page.locator("#transcript li.msg-assistant .bubble").last.inner_text()


def test_the_reply_streams_in_and_the_checked_message_takes_its_place(person_factory, model) -> None:  # noqa: ANN001
    person = person_factory(width=390)
    person.start("parking_help_desk")
    model.script(Scripted(WORDED, piece_chars=3, drip=0.08))
    count = _send(person, QUESTION)
    draft = person.page.locator("#draft-reply .bubble")
    draft.wait_for()
    person.page.wait_for_function(
        "() => { const b = document.querySelector('#draft-reply .bubble'); return b && b.textContent.length >= 12; }")
    written = draft.text_content()
    assert WORDED["reply"].startswith(written) and len(written) < len(WORDED["reply"])  # part of it, as it is written
    assert person.page.locator("#transcript li.msg-assistant").count() == count  # nothing stored is shown yet
    person.shot("stream-01-writing")
    final = _answered(person, count)
    assert final.startswith(WORDED["reply"])
    assert person.page.locator("#draft-reply").count() == 0
    person.shot("stream-02-stored")

    # A reply the checks refuse: the page saw it being written, the rules' reply stands.
    model.script(Scripted({**WORDED, "reply": "You owe 99.00 for everything, pay now please."}, piece_chars=3, drip=0.05))
    count = _send(person, "and what about SH-PD-001, how is it charged?")
    person.page.wait_for_function(
        "() => { const b = document.querySelector('#draft-reply .bubble'); return b && b.textContent.includes('99'); }")
    final = _answered(person, count)
    assert "99.00" not in final and person.page.locator("#draft-reply").count() == 0
    assert "99.00" not in person.page.locator("#transcript").inner_text()
    assert person.errors == [] and person.csp_violations == []
    person.shot("stream-03-refused-replaced")

    # The page reloaded while the model writes: the fresh page shows the reply being written, then the stored one.
    model.script(Scripted(WORDED, piece_chars=2, drip=0.12))
    count = _send(person, "sorry, once more: does 沪B88888 owe anything?")
    draft.wait_for()
    person.page.reload()
    person.page.wait_for_function(
        "() => { const b = document.querySelector('#draft-reply .bubble'); return b && b.textContent.length >= 8; }")
    assert person.page.locator("#transcript li.msg-assistant").count() == count
    person.shot("stream-04-reloaded-while-writing")
    assert _answered(person, count).startswith(WORDED["reply"])
    assert person.page.locator("#draft-reply").count() == 0 and person.errors == []


def test_a_turn_without_a_model_shows_no_draft(person_factory) -> None:  # noqa: ANN001
    person = person_factory()
    person.start("parking_help_desk")
    count = _send(person, QUESTION)
    _answered(person, count)
    assert person.page.locator("#draft-reply").count() == 0 and person.errors == []
