"""The model backend's own guards, without Django: parsing a completion into a plain,
storable JSON object, reading Retry-After, and one deadline across calls and retries."""

from __future__ import annotations

import json
import math
import time
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conversations.llm import (
    MAX_ATTEMPTS,
    MAX_DEPTH,
    MAX_INT,
    Deadline,
    ModelSettings,
    ModelUnavailable,
    OpenAIChatModel,
    answer_from_body,
    loads_json,
    retry_after_seconds,
)
from tests.support.fake_openai import FakeOpenAI, Scripted, completion, refused_url

ANSWER = {"type": "reply", "reply": "ok", "option_id": None, "confidence": 0.5, "citations": [{"ref_id": "k1"}]}


def body(content: object) -> bytes:
    return json.dumps(completion(content)).encode()


def kind_of(call) -> str:  # noqa: ANN001
    with pytest.raises(ModelUnavailable) as raised:
        call()
    return raised.value.kind


# -- Parsing ----------------------------------------------------------------------------------


def test_a_completion_gives_its_answer_as_a_plain_dict() -> None:
    answer = answer_from_body(body(json.dumps(ANSWER)))
    assert answer == ANSWER and type(answer) is dict


@pytest.mark.parametrize(("raw", "kind"), [
    (b"<html>hi</html>", "not_json"),
    (b"", "not_json"),
    (b"\xff\xfe{}", "not_json"),
    (b"[]", "empty"),
    (b'{"choices": []}', "empty"),
    (b'{"choices": [null]}', "empty"),
    (b'{"choices": [{"message": null}]}', "empty"),
    (b'{"choices": [{"message": {"content": null, "refusal": "no"}}]}', "empty"),
    (b'{"choices": [{"message": {"content": ["a"]}}]}', "malformed_json"),
    (body("not json"), "malformed_json"),
    (body('"a string"'), "malformed_json"),
    (body("[1, 2]"), "malformed_json"),
    (body('{"a": 1e400}'), "unsupported_number"),
    (body('{"a": -Infinity}'), "unsupported_number"),
    (body('{"a": ' + "1" * 4301 + "}"), "unsupported_number"),
    (b'{"created": 1e999, "choices": []}', "unsupported_number"),
    (body('{"a": "\\u0000"}'), "unsupported_text"),
    (body('{"\\udfff": 1}'), "unsupported_text"),
    (body('{"a": ' + "[" * 10_000 + "]" * 10_000 + "}"), "too_deep"),  # RecursionError in the decoder
    (b'{"x": ' + b'{"a": ' * 3000 + b"1" + b"}" * 3000 + b"}", "too_deep"),
    (body(json.dumps({"reply": "x" * 40_000})), "too_large"),
    (b" " * (2 << 20), "too_large"),
])
def test_garbage_is_refused_with_its_kind(raw: bytes, kind: str) -> None:
    assert kind_of(lambda: answer_from_body(raw)) == kind


def test_depth_is_allowed_up_to_the_limit() -> None:
    assert loads_json("[" * MAX_DEPTH + "]" * MAX_DEPTH, kind="x") is not None
    assert kind_of(lambda: loads_json("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), kind="x")) == "too_deep"


@pytest.mark.parametrize("number", [str(MAX_INT), str(-MAX_INT), "-0", "0", "1.7976931348623157e308", "1e-400", "-2.5"])
def test_numbers_that_fit_are_kept(number: str) -> None:
    value = loads_json(number, kind="x")
    assert value == json.loads(number) and math.isfinite(value)


@pytest.mark.parametrize("number", [str(MAX_INT + 1), str(-MAX_INT - 1), "1" * 20, "1e309", "-1e400", "NaN", "Infinity"])
def test_numbers_beyond_a_float_or_64_bits_are_refused(number: str) -> None:
    assert kind_of(lambda: loads_json(number, kind="x")) == "unsupported_number"


def _storable(value: object) -> None:
    """What the audit trail needs: strict JSON (no NaN), valid UTF-8, no NUL for PostgreSQL."""
    text = json.dumps(value, allow_nan=False, ensure_ascii=False)
    text.encode("utf-8")
    assert "\x00" not in text and "\\u0000" not in text


TOKENS = ["[", "]", "{", "}", ",", ":", '"a"', '"\\u0000"', '"\\ud800"', "1", "-0", "1e400", "1e-400", "NaN",
          "-Infinity", "9" * 30, "9" * 4400, "true", "null", " ", '"\\"', "0.5"]


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(max_size=200), st.lists(st.sampled_from(TOKENS), max_size=60).map("".join)))
def test_any_text_gives_a_storable_value_or_model_unavailable(text: str) -> None:
    try:
        value = loads_json(text, kind="malformed_json")
    except ModelUnavailable:
        return
    _storable(value)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300) | st.lists(st.sampled_from(TOKENS), max_size=60).map(lambda t: body("".join(t))))
def test_any_body_gives_a_storable_object_or_model_unavailable(raw: bytes) -> None:
    try:
        answer = answer_from_body(raw)
    except ModelUnavailable:
        return
    assert type(answer) is dict
    _storable(answer)


def test_a_failure_detail_is_bounded_and_storable() -> None:
    error = ModelUnavailable("http_error", "bad \x00 \ud800 " + "x" * 1000)
    assert len(error.detail) == 500 and "\x00" not in error.detail
    error.detail.encode("utf-8")


@pytest.mark.parametrize(("kind", "broken"), [("timeout", False), ("connection", False), ("rate_limited", False),
                                             ("http_error", False), ("not_json", True), ("empty", True),
                                             ("malformed_json", True), ("too_deep", True), ("unsupported_number", True)])
def test_outages_and_broken_answers_are_told_apart(kind: str, broken: bool) -> None:
    assert ModelUnavailable(kind, "").broken_contract is broken


# -- Retry-After ------------------------------------------------------------------------------

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(("headers", "seconds"), [
    ({"retry-after": "30"}, 30.0),
    ({"retry-after": "0"}, 0.0),
    ({"retry-after": " 1.5 "}, 1.5),
    ({"retry-after": "Thu, 01 Jan 2026 12:00:10 GMT"}, 10.0),
    ({"retry-after": "Thu, 01 Jan 2026 11:00:00 GMT"}, 0.0),  # already past
    ({"retry-after": "9" * 400}, math.inf),
    ({"retry-after-ms": "250", "retry-after": "30"}, 0.25),
    ({"retry-after": "soon"}, None),
    ({"retry-after": "-5"}, None),
    ({"retry-after": ""}, None),
    ({"retry-after": "Thu, 99 Foo 99999 99:99:99 GMT"}, None),
    ({}, None),
])
def test_retry_after_in_seconds_dates_and_garbage(headers: dict, seconds: float | None) -> None:
    assert retry_after_seconds(headers, now=NOW) == seconds


# -- One deadline across calls and retries ----------------------------------------------------


@pytest.fixture
def fake():  # noqa: ANN201
    server = FakeOpenAI()
    yield server
    server.close()


def model(base_url: str, budget: float) -> OpenAIChatModel:
    return OpenAIChatModel(ModelSettings(api_key="k", base_url=base_url, model="m", timeout=budget))


def test_calls_through_one_model_share_its_deadline(fake: FakeOpenAI) -> None:
    m = model(fake.base_url, 0.5)
    fake.script(Scripted(hang=True), ANSWER)
    assert kind_of(lambda: m.complete_json("s", "u")) == "timeout"
    second = time.monotonic()
    assert kind_of(lambda: m.complete_json("s", "u")) == "timeout"  # nothing left: not even sent
    # the second call ends at once (a loaded CI run took the first past the old whole-test bound of 1.5 s)
    assert time.monotonic() - second < 0.4 and len(fake.requests) == 1


def test_a_deadline_passed_in_wins(fake: FakeOpenAI) -> None:
    m = model(fake.base_url, 0.01)
    fake.script(ANSWER)
    assert m.complete_json("s", "u", deadline=Deadline.after(5)) == ANSWER


def test_retries_stop_after_the_last_attempt(fake: FakeOpenAI) -> None:
    fake.default = Scripted(status=503, headers={"Retry-After": "0"})
    with pytest.raises(ModelUnavailable) as raised:
        model(fake.base_url, 5).complete_json("s", "u")
    assert raised.value.kind == "http_error" and f"after {MAX_ATTEMPTS} attempts" in raised.value.detail
    assert len(fake.requests) == MAX_ATTEMPTS


def test_a_refused_connection_is_retried_within_the_budget() -> None:
    started = time.monotonic()
    assert kind_of(lambda: model(refused_url(), 5).complete_json("s", "u")) == "connection"
    assert time.monotonic() - started < 2  # backoffs of a quarter and half a second, no more


def test_a_retry_after_date_beyond_the_budget_falls_back_at_once(fake: FakeOpenAI) -> None:
    later = (datetime.now(UTC) + timedelta(minutes=5)).strftime("%a, %d %b %Y %H:%M:%S GMT")
    fake.script(Scripted(status=429, headers={"Retry-After": later}), ANSWER)
    started = time.monotonic()
    assert kind_of(lambda: model(fake.base_url, 3).complete_json("s", "u")) == "rate_limited"
    assert time.monotonic() - started < 1 and len(fake.requests) == 1


def test_a_lone_surrogate_in_the_prompt_is_sent_as_a_replacement_character(fake: FakeOpenAI) -> None:
    fake.script(ANSWER)
    assert model(fake.base_url, 5).complete_json("system", "plate \ud800 owes?") == ANSWER
    assert fake.requests[-1]["body"]["messages"][1]["content"] == "plate \ufffd owes?"
