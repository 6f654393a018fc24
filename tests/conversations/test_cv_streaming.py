"""The reply streams into the page as the model writes it: the real `openai` client asks the fake
server for a streamed completion, the turn keeps the reply so far where the page asks for it
(`/c/<id>/draft`), and only the checked answer is stored; a refused one is replaced by the rules'
reply. API turns are not streamed. Faults of a streamed answer fall back as a whole answer's do."""

from __future__ import annotations

import dataclasses
import json
import threading
import time

import pytest
from django.core.cache import cache

from conversations import drafts
from conversations.llm import (
    ModelSettings,
    ModelUnavailable,
    OpenAIChatModel,
    reply_so_far,
    streamed_content,
)
from conversations.models import Conversation
from tests.conversations.test_cv_model_faults import ANSWER, GARBAGE, OUTAGES, QUESTION, fallbacks
from tests.support.fake_openai import FakeOpenAI, Scripted, completion, refused_url

# -- The model client: a streamed completion -------------------------------------------------


@pytest.fixture
def server():  # noqa: ANN201
    fake = FakeOpenAI()
    yield fake
    fake.close()


def model(base_url: str, budget: float = 5.0) -> OpenAIChatModel:
    return OpenAIChatModel(ModelSettings(api_key="k", base_url=base_url, model="m", timeout=budget))


def test_a_streamed_answer_tells_its_reply_as_it_grows(server: FakeOpenAI) -> None:
    answer = {"type": "reply", "reply": "您好！\n泊车费 12.00 元，含\"夜间\"封顶。", "option_id": None, "asks_question": False}
    server.script(Scripted(answer, piece_chars=3, drip=0.03))
    seen: list[str] = []
    assert model(server.base_url).complete_json("s", "u", on_text=seen.append) == answer
    assert server.requests[-1]["body"]["stream"] is True
    assert len(seen) >= 3 and seen[-1] == answer["reply"]
    assert all(answer["reply"].startswith(text) for text in seen)  # whole characters, escapes read, never garbled


def test_without_a_listener_the_answer_is_asked_for_whole(server: FakeOpenAI) -> None:
    server.script(ANSWER)
    assert model(server.base_url).complete_json("s", "u") == ANSWER
    assert "stream" not in server.requests[-1]["body"]


def test_a_server_that_ignores_streaming_answers_whole(server: FakeOpenAI) -> None:
    server.script(Scripted(body=completion(json.dumps(ANSWER))))  # plain JSON although a stream was asked for
    seen: list[str] = []
    assert model(server.base_url).complete_json("s", "u", on_text=seen.append) == ANSWER
    assert seen == []


def test_a_retry_starts_the_shown_reply_over(server: FakeOpenAI) -> None:
    # The first stream is cut off mid-way (the connection closes): the retry's reply replaces it.
    server.script(Scripted({**ANSWER, "reply": "First try that breaks off somewhere"}, truncate=3000, piece_chars=4, drip=0.02),
                  Scripted(ANSWER, piece_chars=8))
    seen: list[str] = []
    assert model(server.base_url).complete_json("s", "u", on_text=seen.append) == ANSWER
    restart = seen.index("")
    assert seen[restart - 1].startswith("First try") and seen[-1] == ANSWER["reply"]


STREAM_FAULTS = {
    "chunk_not_json": ("data: {\"choices\": [{\"delta\": {\"content\": \"{\\\"re\"}}]}\n\ndata: {oops\n\n", "not_json"),
    "error_event": ('data: {"error": {"message": "overloaded"}}\n\n', "http_error"),
    "refusal": ('data: {"choices": [{"delta": {"refusal": "I cannot help with that."}}]}\n\ndata: [DONE]\n\n', "empty"),
    "no_content": ('data: {"choices": [{"delta": {"role": "assistant"}}]}\n\ndata: [DONE]\n\n', "empty"),
    "choices_not_a_list": ('data: {"choices": "many"}\n\n', "empty"),
    "content_a_number": ('data: {"choices": [{"delta": {"content": 42}}]}\n\n', "malformed_json"),
    "content_not_an_object": ('data: {"choices": [{"delta": {"content": "[1, 2]"}}]}\n\ndata: [DONE]\n\n', "malformed_json"),
}


@pytest.mark.parametrize(("body", "kind"), STREAM_FAULTS.values(), ids=STREAM_FAULTS.keys())
def test_a_broken_stream_is_a_broken_contract(server: FakeOpenAI, body: str, kind: str) -> None:
    server.script(Scripted(body=body, content_type="text/event-stream"))
    with pytest.raises(ModelUnavailable) as raised:
        model(server.base_url).complete_json("s", "u", on_text=lambda text: None)
    assert raised.value.kind == kind and raised.value.broken_contract == (kind != "http_error")


def test_a_stream_that_drips_past_the_deadline_is_cut(server: FakeOpenAI) -> None:
    server.script(Scripted(ANSWER, piece_chars=2, drip=0.1))
    started = time.monotonic()
    with pytest.raises(ModelUnavailable) as raised:
        model(server.base_url, budget=0.5).complete_json("s", "u", on_text=lambda text: None)
    assert raised.value.kind == "timeout" and time.monotonic() - started < 1.5


@pytest.mark.parametrize(("content", "reply"), [
    ('{"type": "reply", "rep', None),
    ('{"type": "reply", "reply": "', ""),
    ('{"type": "reply", "reply": "Line one\\nLine \\"two', 'Line one\nLine "two'),
    ('{"reply": "caf\\u00e', "caf"),  # an escape not yet complete is left out until it is
    ('[{"reply": "x"', None),
    ('{"reply": 12', None),
])
def test_the_reply_so_far_is_read_from_an_unfinished_answer(content: str, reply: str | None) -> None:
    assert reply_so_far(content) == reply


def test_streamed_content_skips_comments_and_stops_at_done() -> None:
    lines = [": keep-alive", "event: message", 'data: {"choices": [{"delta": {"content": "{\\"reply\\": \\"Hi"}}]}', "",
             'data: {"choices": [{"delta": {"content": "!\\"}"}}]}', "data: [DONE]", 'data: {"choices": [{"delta": {"content": "x"}}]}']
    seen: list[str] = []
    assert streamed_content(lines, seen.append) == '{"reply": "Hi!"}' and seen == ["Hi", "Hi!"]


# -- A page's turn: the draft while the model writes, the checked answer after ----------------

@pytest.fixture
def fake(model_server):  # noqa: ANN001, ANN201
    return model_server(timeout=3.0)


@pytest.fixture
def page(client, person, demo):  # noqa: ANN001, ANN201
    client.force_login(person)
    return client


def _start(client) -> int:  # noqa: ANN001
    response = client.post("/c/start/parking_help_desk/", {"locale": "en"})
    return int(response["Location"].strip("/").split("/")[-1])


class DraftWatcher:
    """Reads the conversation's draft from the cache, as the page's requests do, while a turn runs."""

    def __init__(self, conversation_id: int):
        self.conversation_id = conversation_id
        self.seen: list[str] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _watch(self) -> None:
        while not self.stop.is_set():
            draft = drafts.draft_of(self.conversation_id)
            if draft and (not self.seen or self.seen[-1] != draft["text"]):
                self.seen.append(draft["text"])
            time.sleep(0.01)

    def done(self) -> list[str]:
        self.stop.set()
        self.thread.join()
        return self.seen


@pytest.mark.django_db
def test_a_page_turn_shows_the_reply_while_it_is_written_and_stores_only_the_checked_answer(page, fake) -> None:  # noqa: ANN001
    cid = _start(page)
    fake.script(Scripted(ANSWER, piece_chars=4, drip=0.03))
    watcher = DraftWatcher(cid)
    response = page.post(f"/c/{cid}/send", {"text": QUESTION, "after": "0"}, HTTP_HX_REQUEST="true")
    seen = watcher.done()
    assert response.status_code == 200 and ANSWER["reply"] in response.content.decode()
    assert len(seen) >= 2 and all(ANSWER["reply"].startswith(text) for text in seen)  # it grew in the cache
    assert fake.replies()[-1]["body"]["stream"] is True
    assert drafts.draft_of(cid) is None and page.get(f"/c/{cid}/draft").status_code == 204  # gone once stored
    stored = Conversation.objects.get(pk=cid).messages.filter(role="assistant").last()
    assert stored.text.startswith(ANSWER["reply"]) and stored.payload["execution_path"]["backend"] == "openai"


@pytest.mark.django_db
def test_a_refused_answer_streamed_to_the_page_is_replaced_by_the_rules_reply(page, fake) -> None:  # noqa: ANN001
    cid = _start(page)
    unbacked = {**ANSWER, "reply": "Plate 沪B88888 owes 99.00 in all."}  # no tool or citation backs 99.00
    fake.script(Scripted(unbacked, piece_chars=4, drip=0.05))
    watcher = DraftWatcher(cid)
    page.post(f"/c/{cid}/send", {"text": QUESTION})
    seen = watcher.done()
    assert any("Plate 沪B88888 owes" in text for text in seen)  # the page saw the model write...
    stored = Conversation.objects.get(pk=cid).messages.filter(role="assistant").last()
    assert "13.00" in stored.text and "99.00" not in stored.text  # ...but what stands is the rules' reply
    assert [e.payload["violations"] for e in fallbacks(cid)] == [["unbacked_amount:99.00"]]
    assert drafts.draft_of(cid) is None


@pytest.mark.django_db
@pytest.mark.parametrize(("answers", "kind"), [*OUTAGES.values(), *GARBAGE.values()], ids=[*OUTAGES, *GARBAGE])
def test_every_fault_of_a_streamed_answer_falls_back_as_a_whole_answers_would(page, model_server, settings,  # noqa: ANN001
                                                                              answers, kind) -> None:
    # A deadline of 1 s where running out of it is the fault; else room for three attempts and their
    # backoff on a loaded machine (a 429 or 503 retried past 1 s was cut by the deadline, as a timeout).
    deadline = 1.0 if kind == "timeout" else 2.5
    server = model_server(timeout=deadline)
    cid = _start(page)
    if answers is None:
        settings.OPENAI_BASE_URL = refused_url()
    else:  # in pieces of 64 characters: the fault is the point here, not how finely the answer arrives
        server.script(*(dataclasses.replace(answer, piece_chars=64) for answer in answers))
    started = time.monotonic()
    page.post(f"/c/{cid}/send", {"text": QUESTION})
    assert time.monotonic() - started < deadline + 2.0
    stored = Conversation.objects.get(pk=cid).messages.filter(role="assistant").last()
    assert "13.00" in stored.text and stored.payload["execution_path"]["contract_violations"] == [kind]
    assert [e.payload["kind"] for e in fallbacks(cid)] == [kind]
    assert drafts.draft_of(cid) is None


@pytest.mark.django_db
def test_api_turns_are_not_streamed(chat, fake) -> None:  # noqa: ANN001
    fake.script(ANSWER)
    chat("parking_help_desk").say(QUESTION)
    assert "stream" not in fake.replies()[-1]["body"]


@pytest.mark.django_db
def test_the_draft_is_the_owners_alone_and_never_cached_by_the_browser(page, client, other_person, demo) -> None:  # noqa: ANN001
    cid = _start(page)
    assert page.get(f"/c/{cid}/draft").status_code == 204
    writer = drafts.DraftWriter(cid, answer_id=7, lifetime=5)
    writer("Looking at plate")
    response = page.get(f"/c/{cid}/draft")
    assert response.status_code == 200 and response.json() == {"answer_id": 7, "text": "Looking at plate"}
    assert response["Cache-Control"] == "no-store"
    client.force_login(other_person)
    assert client.get(f"/c/{cid}/draft").status_code == 404
    writer.finish()
    cache.clear()
