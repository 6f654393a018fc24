"""The model backend: any OpenAI-compatible endpoint through the official `openai` client.

It only transports: it sends the context package and returns the parsed JSON object, or
raises ModelUnavailable. Whether the answer may count is decided by the contract checks
in the concierge, never here.

Two promises the concierge builds on:
- `complete_json` raises ModelUnavailable for every fault of the endpoint and nothing
  else: timeouts, refused or dropped connections, 4xx/5xx, 429 whatever its Retry-After,
  bodies that are not JSON (an HTML page), completions with no usable content, and JSON
  that Python or PostgreSQL cannot hold (numbers beyond a float or 64 bits, nesting
  deeper than MAX_DEPTH, NUL characters or lone surrogates, anything over the size caps).
  What it returns is a plain dict of JSON values that the audit trail can always store.
- One Deadline bounds all the model calls of a turn, retries and waits included: each
  attempt's timeout is the time left, a retry starts only while time is left, a
  Retry-After beyond it is not waited for, and a body still dripping in is cut at it.
- At most CONCIERGE_LLM_MAX_CONCURRENT calls are open at once in one process; a call beyond
  them raises ModelUnavailable("model_busy") at once instead of waiting, so a hung provider
  holds that many threads, not every thread of the web server (its health check included).

A turn builds one model and makes all its calls through it:
    model = model_from_settings()        # None offline; its Deadline: CONCIERGE_LLM_TIMEOUT from now
    raw = model.complete_json(system, user)
A caller that starts the clock elsewhere passes `deadline=Deadline.after(seconds)` to
either; a Deadline passed to complete_json wins over the model's.
"""

from __future__ import annotations

import email.utils
import functools
import json
import logging
import math
import os
import random
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx2
import jiter
import openai

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3  # the first call and at most two retries, all inside the turn's deadline
MIN_ATTEMPT_SECONDS = 0.05  # less time than this left: an attempt could not finish
BACKOFF_SECONDS = 0.25  # before the first retry when the server gives no Retry-After; doubles
RETRY_STATUSES = frozenset({408, 429})  # and every 5xx
MAX_BODY_BYTES = 1 << 20  # a completion for one chat turn is a few kilobytes
MAX_CONTENT_CHARS = 32_000
READ_REPLY_EVERY = 0.05  # seconds between readings of a streamed answer's reply so far
MAX_DEPTH = 32  # the answer's schema is three levels deep; the envelope about six
MAX_INT = 2**63 - 1  # what every JSON consumer of the audit trail holds exactly
MAX_INT_DIGITS = len(str(MAX_INT))
# The failures to get an answer at all; any other kind is an answer that broke the contract.
OUTAGE_KINDS = frozenset({"timeout", "connection", "rate_limited", "http_error", "client_error", "model_busy"})
# PostgreSQL's text and jsonb refuse NUL; UTF-8 (hence psycopg and orjson) refuses lone surrogates.
_UNSTORABLE_TEXT = re.compile("[\x00\ud800-\udfff]")
_SECONDS = re.compile(r"\s*(\d+(?:\.\d*)?)\s*")


class ModelUnavailable(Exception):
    """The model could not give a usable JSON answer (timeout, error, garbage)."""

    def __init__(self, kind: str, detail: str):
        detail = _storable(detail)[:500]  # it goes to the audit trail, whatever the server sent
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail

    @property
    def broken_contract(self) -> bool:
        """True when the endpoint answered but not with a usable JSON object (audited as a
        contract violation); False for an outage (audited as `fallback_event` says)."""
        return self.kind not in OUTAGE_KINDS

    @property
    def fallback_event(self) -> str:
        """The audit event of a fault that is not a broken contract: `model_busy` when this process
        had no free model call (the endpoint was never asked), else `model_fallback`."""
        return "model_busy" if self.kind == "model_busy" else "model_fallback"


@dataclass(frozen=True)
class Deadline:
    """A point on the monotonic clock by which every model call of one turn must be done."""

    at: float

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        return cls(time.monotonic() + seconds)

    def left(self) -> float:
        return max(0.0, self.at - time.monotonic())


@dataclass(frozen=True)
class ModelSettings:
    api_key: str
    base_url: str | None
    model: str
    timeout: float = 20.0  # seconds for all the model calls of one turn
    max_concurrent: int = 4  # model calls this process may have open at once


# -- Parsing: the body of a completion to a plain, storable JSON object ---------------------


def _storable(text: str) -> str:
    return _UNSTORABLE_TEXT.sub("\ufffd", text)


def _excerpt(text: str, limit: int = 120) -> str:
    return repr(text[:limit]) + ("..." if len(text) > limit else "")


def _refuse_constant(name: str) -> float:
    raise ModelUnavailable("unsupported_number", f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400: PostgreSQL's jsonb and strict JSON refuse Infinity
        raise ModelUnavailable("unsupported_number", f"{_excerpt(text, 40)} is beyond a float")
    return value


def _bounded_int(text: str) -> int:
    # Checked before int(): beyond 4300 digits int() raises, and far below that it is slow.
    if len(text.lstrip("-")) > MAX_INT_DIGITS or abs(value := int(text)) > MAX_INT:
        raise ModelUnavailable("unsupported_number", f"{_excerpt(text, 40)} is beyond 64 bits")
    return value


def _check_tree(value: Any) -> None:
    """Refuse nesting beyond MAX_DEPTH and text PostgreSQL or UTF-8 cannot store."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, str):
            if _UNSTORABLE_TEXT.search(node):
                raise ModelUnavailable("unsupported_text", "a NUL character or a lone surrogate")
            continue
        if not isinstance(node, dict | list):
            continue
        if depth > MAX_DEPTH:
            raise ModelUnavailable("too_deep", f"JSON nested deeper than {MAX_DEPTH} levels")
        children = [*node.keys(), *node.values()] if isinstance(node, dict) else node
        stack.extend((child, depth + 1) for child in children)


def loads_json(text: str, *, kind: str) -> Any:
    """json.loads that yields only values Python, PostgreSQL and orjson all hold, or raises
    ModelUnavailable (`kind` when the text is not JSON at all)."""
    try:
        value = json.loads(text, parse_float=_finite_float, parse_int=_bounded_int, parse_constant=_refuse_constant)
    except RecursionError as error:  # the C decoder recurses once per level
        raise ModelUnavailable("too_deep", "JSON nested deeper than the decoder can go") from error
    except ValueError as error:  # JSONDecodeError, or a number float() refuses
        raise ModelUnavailable(kind, f"{error}: {_excerpt(text)}") from error
    _check_tree(value)
    return value


def _message_content(envelope: Any) -> str:
    """The first choice's message content of a chat completion, as text."""
    choices = envelope.get("choices") if isinstance(envelope, dict) else None
    if not isinstance(choices, list) or not choices:
        shape = f"keys {sorted(envelope)[:8]}" if isinstance(envelope, dict) else f"a JSON {type(envelope).__name__}"
        raise ModelUnavailable("empty", f"no choices in the completion ({shape})")
    message = choices[0].get("message") if isinstance(choices[0], dict) else None
    if not isinstance(message, dict):
        raise ModelUnavailable("empty", "the first choice has no message")
    content = message.get("content")
    if content is None or content == "":
        refusal = message.get("refusal")
        raise ModelUnavailable("empty", f"refused: {refusal}" if isinstance(refusal, str) else "the model returned no content")
    if not isinstance(content, str):
        raise ModelUnavailable("malformed_json", f"the content is a {type(content).__name__}, not a string")
    return content


def answer_from_body(body: bytes) -> dict[str, Any]:
    """The JSON object a chat completion's body carries, or ModelUnavailable."""
    if len(body) > MAX_BODY_BYTES:
        raise ModelUnavailable("too_large", f"a body over {MAX_BODY_BYTES} bytes")
    return answer_from_content(_message_content(loads_json(_utf8(body), kind="not_json")))


def _utf8(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ModelUnavailable("not_json", f"the body is not UTF-8: {error}") from error


def answer_from_content(content: str) -> dict[str, Any]:
    """The JSON object a completion's message content holds, or ModelUnavailable."""
    if len(content) > MAX_CONTENT_CHARS:
        raise ModelUnavailable("too_large", f"an answer of {len(content)} characters (limit {MAX_CONTENT_CHARS})")
    answer = loads_json(content, kind="malformed_json")
    if not isinstance(answer, dict):
        raise ModelUnavailable("malformed_json", f"the answer is a JSON {type(answer).__name__}, not an object")
    return answer


# -- Streaming: the reply shown while it is written ------------------------------------------


def reply_so_far(content: str) -> str | None:
    """The `reply` field of a JSON answer still being written, as far as it has come (None before
    it starts). jiter, the openai client's own JSON parser, reads an unfinished object."""
    try:
        partial = jiter.from_json(content.encode(), partial_mode="trailing-strings")
    except ValueError:
        return None
    reply = partial.get("reply") if isinstance(partial, dict) else None
    return reply if isinstance(reply, str) else None


def _lines(chunks: Iterable[bytes], deadline: Deadline) -> Iterator[str]:
    """The lines of a body as they arrive, under the same size cap and deadline as a whole body."""
    pending = b""
    for chunk in _within_limits(chunks, deadline):
        *complete, pending = (pending + chunk).split(b"\n")
        for line in complete:
            yield _utf8(line).rstrip("\r")
    if pending:
        yield _utf8(pending)


def _chunk_content(chunk: Any) -> str:
    """The piece of message content one streamed chunk adds ("" for a chunk with none)."""
    if isinstance(chunk, dict) and isinstance(chunk.get("error"), dict):
        raise ModelUnavailable("http_error", str(chunk["error"].get("message") or "an error in the stream")[:300])
    choices = chunk.get("choices") if isinstance(chunk, dict) else None
    if not isinstance(choices, list):
        raise ModelUnavailable("empty", "a streamed chunk without choices")
    delta = choices[0].get("delta") if choices and isinstance(choices[0], dict) else None
    if not isinstance(delta, dict):
        return ""  # the usage chunk at the end has no choices
    if isinstance(delta.get("refusal"), str) and delta["refusal"]:
        raise ModelUnavailable("empty", f"refused: {delta['refusal']}")
    piece = delta.get("content")
    if piece is not None and not isinstance(piece, str):
        raise ModelUnavailable("malformed_json", f"the content is a {type(piece).__name__}, not a string")
    return piece or ""


def streamed_content(lines: Iterable[str], on_text: Callable[[str], None]) -> str:
    """The message content of a streamed completion (server-sent events, one chunk each), telling
    `on_text` the reply as more of it arrives (at most every READ_REPLY_EVERY seconds: reading
    the unfinished answer again at every chunk would cost time growing with its square)."""
    content, shown, read_at = "", None, 0.0

    def show() -> None:
        nonlocal shown, read_at
        read_at = time.monotonic()
        reply = reply_so_far(content)
        if reply is not None and reply != shown:
            shown = reply
            on_text(reply)

    for line in lines:
        if not line.startswith("data:"):
            continue  # comments, event names and the blank lines between events
        data = line[5:].strip()
        if data == "[DONE]":
            break
        content += _chunk_content(loads_json(data, kind="not_json"))
        if len(content) > MAX_CONTENT_CHARS:
            raise ModelUnavailable("too_large", f"an answer of over {MAX_CONTENT_CHARS} characters")
        if time.monotonic() - read_at >= READ_REPLY_EVERY:
            show()
    if not content:
        raise ModelUnavailable("empty", "the model returned no content")
    show()
    return content


# -- Retries: what a failed attempt may wait for ---------------------------------------------


def retry_after_seconds(headers: Mapping[str, str], *, now: datetime | None = None) -> float | None:
    """The wait a 429 or 5xx asks for (Retry-After in seconds or as an HTTP date, or OpenAI's
    retry-after-ms), math.inf when it is beyond any float, None when absent or garbage.
    `headers` is case-insensitive (httpx) or has lower-case keys."""
    millis = _seconds(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    value = headers.get("retry-after")
    seconds = _seconds(value)
    if seconds is not None or not value:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:  # HTTP dates are GMT
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def _seconds(value: str | None) -> float | None:
    match = _SECONDS.fullmatch(value) if value else None
    return float(match.group(1)) if match else None  # float() of a huge number is inf, never an error


def backoff_seconds(attempt: int) -> float:
    """The wait before retry number `attempt` (1, 2, ...) when the server names none; jittered
    so workers that failed together do not come back together."""
    return BACKOFF_SECONDS * 2 ** (attempt - 1) * random.uniform(0.5, 1.0)


class _Retryable(Exception):
    """A failed attempt that another attempt might get past."""

    def __init__(self, error: ModelUnavailable, wait: float | None = None):
        super().__init__(str(error))
        self.error = error
        self.wait = wait


class _SchemaRefused(Exception):
    """The server refused Structured Outputs (`json_schema`); ask again for a JSON object."""


def _status_failure(error: openai.APIStatusError) -> ModelUnavailable | _Retryable:
    status = error.status_code
    kind = "rate_limited" if status == 429 else "http_error"
    failure = ModelUnavailable(kind, error.message)  # "Error code: 503 - <the server's message>"
    if status in RETRY_STATUSES or status >= 500:
        return _Retryable(failure, retry_after_seconds(error.response.headers))
    return failure


def _within_limits(chunks: Iterable[bytes], deadline: Deadline) -> Iterator[bytes]:
    """The body's chunks as they arrive, unless it outgrows MAX_BODY_BYTES or trickles past the deadline."""
    size = 0
    for chunk in chunks:
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise ModelUnavailable("too_large", f"a body over {MAX_BODY_BYTES} bytes")
        if deadline.left() <= 0:
            raise ModelUnavailable("timeout", "the body was still arriving at the turn's deadline")
        yield chunk


def _read_body(chunks: Iterable[bytes], deadline: Deadline) -> bytes:
    """The whole body, within the size cap and the deadline."""
    return b"".join(_within_limits(chunks, deadline))


# -- The client ------------------------------------------------------------------------------


@functools.lru_cache(maxsize=8)
def _call_slots(limit: int, pid: int) -> threading.BoundedSemaphore:
    """The model calls this process may have open at once, one set per limit (a changed setting
    gets its own). The pid gives a forked worker its own, not a copy of its parent's counts."""
    return threading.BoundedSemaphore(limit)


@functools.lru_cache(maxsize=8)
def _client(api_key: str, base_url: str | None, pid: int) -> openai.OpenAI:
    """One client per endpoint and process: building one costs milliseconds, and its pool keeps
    connections alive across turns. The pid keeps a forked worker off its parent's sockets.
    Every request passes its own timeout; the client's own retries would sleep and retry past
    the deadline, so they are off and OpenAIChatModel retries."""
    return openai.OpenAI(api_key=api_key, base_url=base_url, max_retries=0)


class OpenAIChatModel:
    """Chat Completions with JSON output; all calls through one object share its deadline.

    Build one per turn (model_from_settings does): the deadline starts when it is built.
    """

    name = "openai"

    def __init__(self, settings: ModelSettings, *, deadline: Deadline | None = None):
        self.settings = settings
        self.deadline = deadline or Deadline.after(settings.timeout)
        self.client = _client(settings.api_key, settings.base_url, os.getpid())

    def complete_json(self, system: str, user: str, *, deadline: Deadline | None = None,
                      schema: Mapping[str, Any] | None = None, schema_name: str = "answer",
                      on_text: Callable[[str], None] | None = None) -> dict[str, Any]:
        """Ask for one JSON object before the deadline (the model's own unless given); raise
        ModelUnavailable when none comes back.

        With a `schema` the answer is asked for with Structured Outputs (strict JSON Schema);
        a server that refuses `json_schema` (400) is asked again, once, for a plain JSON
        object with the schema in the instructions. The answer is never trusted either way.

        With `on_text` the answer is streamed and `on_text` is told its `reply` field as it
        grows ("" when a retry starts over); a server that ignores streaming answers whole.
        What it is told is unchecked: only the returned answer may count, once checked.

        Raises ModelUnavailable("model_busy") at once when this process already has
        `max_concurrent` calls open: waiting for a slot would hold this thread too.
        """
        slots = _call_slots(self.settings.max_concurrent, os.getpid())
        if not slots.acquire(blocking=False):
            raise ModelUnavailable("model_busy", f"this process already has {self.settings.max_concurrent} model calls open")
        try:
            return self._complete_json(system, user, deadline=deadline or self.deadline, schema=schema,
                                       schema_name=schema_name, on_text=on_text)
        finally:
            slots.release()

    def _complete_json(self, system: str, user: str, *, deadline: Deadline, schema: Mapping[str, Any] | None,
                       schema_name: str, on_text: Callable[[str], None] | None) -> dict[str, Any]:
        """complete_json's work, holding one of the process's model calls."""
        response_format: dict[str, Any] = {"type": "json_object"}
        if schema is not None:
            response_format = {"type": "json_schema", "json_schema": {"name": schema_name, "schema": dict(schema), "strict": True}}
        # A lone surrogate (from a person's text or a document) would make the client's request
        # encoding raise; the model loses nothing by reading U+FFFD instead.
        messages = [{"role": "system", "content": _storable(system)}, {"role": "user", "content": _storable(user)}]
        attempt = 0
        while True:
            attempt += 1
            if deadline.left() < MIN_ATTEMPT_SECONDS:
                raise ModelUnavailable("timeout", f"no time left for attempt {attempt} of this turn's model calls")
            if on_text is not None and attempt > 1:
                on_text("")  # what the failed attempt had written is gone
            try:
                return self._post(messages, deadline, response_format, on_text)
            except _SchemaRefused:
                response_format = {"type": "json_object"}
                messages[0]["content"] += "\n\nAnswer with one JSON object valid against this JSON Schema:\n" + json.dumps(schema)
                attempt -= 1  # the server's limitation, not a failed attempt
            except _Retryable as failed:
                wait = failed.wait if failed.wait is not None else backoff_seconds(attempt)
                self._give_up_unless_time_for(failed.error, wait, attempt, deadline)
                log.info("model attempt %d failed (%s); retrying in %.2fs", attempt, failed.error, wait)
                time.sleep(wait)

    @staticmethod
    def _give_up_unless_time_for(error: ModelUnavailable, wait: float, attempt: int, deadline: Deadline) -> None:
        left = deadline.left()
        if attempt == MAX_ATTEMPTS:
            raise ModelUnavailable(error.kind, f"after {attempt} attempts: {error.detail}")
        if wait + MIN_ATTEMPT_SECONDS > left:
            raise ModelUnavailable(error.kind, f"{error.detail} (a retry in {wait:.3g}s would pass the {left:.2f}s left)")

    def _post(self, messages: list[dict[str, str]], deadline: Deadline, response_format: dict[str, Any],
              on_text: Callable[[str], None] | None) -> dict[str, Any]:
        """One attempt: the answer of a 2xx, or the failure (retryable or not)."""
        timeout = deadline.left()
        streamed = {"stream": True} if on_text is not None else {}
        try:
            # A streaming response either way, so that the body is read under our own size cap and deadline.
            with self.client.chat.completions.with_streaming_response.create(
                model=self.settings.model, messages=messages, response_format=response_format,
                temperature=0, timeout=timeout, **streamed,
            ) as response:
                if not 200 <= response.status_code < 300:  # a redirect that was not followed
                    raise ModelUnavailable("http_error", f"HTTP {response.status_code}")
                if on_text is not None and response.headers.get("content-type", "").startswith("text/event-stream"):
                    return answer_from_content(streamed_content(_lines(response.iter_bytes(), deadline), on_text))
                return answer_from_body(_read_body(response.iter_bytes(), deadline))
        except openai.BadRequestError as error:
            if response_format["type"] == "json_schema":
                raise _SchemaRefused() from error  # many compatible servers know only json_object
            raise _status_failure(error) from error
        except openai.APIStatusError as error:
            failure = _status_failure(error)
            raise failure from error
        except (openai.APITimeoutError, httpx2.TimeoutException) as error:
            raise _Retryable(ModelUnavailable("timeout", f"no answer within the {timeout:.2f}s left: {error}")) from error
        except (openai.APIConnectionError, httpx2.TransportError, OSError) as error:
            # The client wraps transport errors while sending; reading a streamed body (ours, or
            # an error body the client reads before raising its status error) raises them bare.
            raise _Retryable(ModelUnavailable("connection", f"{type(error).__name__}: {error}")) from error
        except openai.OpenAIError as error:
            raise ModelUnavailable("client_error", f"{type(error).__name__}: {error}") from error


def model_from_settings(*, deadline: Deadline | None = None) -> OpenAIChatModel | None:
    """The configured model for one turn, or None when the concierge runs offline on its rules.

    Its calls share `deadline`, by default CONCIERGE_LLM_TIMEOUT seconds from now.
    """
    from django.conf import settings

    if not settings.OPENAI_API_KEY:
        return None
    return OpenAIChatModel(
        ModelSettings(
            api_key=settings.OPENAI_API_KEY,
            base_url=settings.OPENAI_BASE_URL,
            model=settings.CONCIERGE_LLM_MODEL,
            timeout=settings.CONCIERGE_LLM_TIMEOUT,
            max_concurrent=settings.CONCIERGE_LLM_MAX_CONCURRENT,
        ),
        deadline=deadline,
    )
