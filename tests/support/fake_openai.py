"""A small OpenAI-compatible HTTP server for tests: scripted chat completions on loopback.

The tests point the real `openai` client at it (OPENAI_BASE_URL), so model calls cross a
real HTTP boundary: timeouts, 500s, garbage and adversarial JSON are all real.

Two queues, told apart by what the client asks for: a request for Structured Outputs (the
understanding call, `response_format` `json_schema`) takes the next of `command_answers`
(by default no commands), every other request the next of `answers` (or `default`). An answer is a completion whose
message content is `content`, unless it scripts a fault: any status, a raw `body` of any
bytes and content type, extra `headers` (Retry-After...), a `delay`, a `hang` until
`release()`, a connection dropped before answering or mid-body, or a body that drips in.
A request with `stream: true` gets its completion as server-sent events, in pieces.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HANG_LIMIT = 60.0  # a hung answer is let go after this long even if no test releases it


def completion(content: Any, **top: Any) -> dict:
    """A chat completion envelope whose first message content is `content` as given (None,
    a number...); `top` replaces top-level keys, e.g. choices=[]."""
    return {
        "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()), "model": "fake",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        **top,
    }


@dataclass
class Scripted:
    """One scripted answer: a JSON body for the message content, raw text, an HTTP error, or a fault."""

    content: Any = None  # dict -> JSON-encoded; str -> sent as is
    status: int = 200
    delay: float = 0.0
    body: bytes | str | dict | list | None = None  # the whole body instead (bytes/str as is, else JSON)
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    hang: bool = False  # answer only once the test calls release() (or the server closes)
    drop: bool = False  # close the connection without answering
    truncate: int | None = None  # send this many bytes of the body, then close (Content-Length says more)
    drip: float = 0.0  # seconds between 16-byte pieces of the body (between events when streamed)
    piece_chars: int = 8  # streamed: characters of content per event
    refusal: str | None = None  # streamed: the model refuses instead of answering


NO_COMMANDS = {"commands": [], "reply": None}


@dataclass
class FakeOpenAI:
    answers: deque = field(default_factory=deque)
    requests: list = field(default_factory=list)
    default: Scripted | None = None
    command_answers: deque = field(default_factory=deque)
    command_default: Scripted | None = None

    def __post_init__(self) -> None:
        fake = self
        self.released = threading.Event()

        class Handler(BaseHTTPRequestHandler):
            # Keep-alive, and each write sent at once: a new connection per call, or a body held back
            # by Nagle until the client's delayed ACK, costs milliseconds on every model call.
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args) -> None:  # noqa: ANN002
                return

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                kind = "commands" if (body.get("response_format") or {}).get("type") == "json_schema" else "reply"
                fake.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization"),
                                      "at": time.monotonic(), "kind": kind})
                if kind == "commands":
                    answer = fake.command_answers.popleft() if fake.command_answers else (fake.command_default or Scripted(NO_COMMANDS))
                else:
                    answer = fake.answers.popleft() if fake.answers else (fake.default or Scripted({"reply": "ok"}))
                if answer.delay:
                    time.sleep(answer.delay)
                if answer.hang:
                    fake.released.wait(HANG_LIMIT)
                if answer.drop:
                    self.close_connection = True
                    return
                if body.get("stream") and answer.status == 200 and answer.body is None:
                    self._send_events(answer, fake_events(answer, model=body.get("model", "fake")))
                    return
                self._send(answer, fake_body(answer, model=body.get("model", "fake")))

            def _send_events(self, answer: Scripted, events: list[bytes]) -> None:
                """A streamed completion: one server-sent event per piece, `drip` seconds apart."""
                data = b"".join(events)
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream; charset=utf-8")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    if not answer.drip and answer.truncate is None:
                        self.wfile.write(data)
                        return
                    sent = 0
                    for event in events:
                        if answer.truncate is not None and sent + len(event) > answer.truncate:
                            self.wfile.write(event[: answer.truncate - sent])  # then the connection closes
                            self.close_connection = True
                            return
                        self.wfile.write(event)
                        sent += len(event)
                        time.sleep(answer.drip)

            def _send(self, answer: Scripted, data: bytes) -> None:
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client may have gone away
                    self.send_response(answer.status)
                    self.send_header("Content-Type", answer.content_type)
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in answer.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    if answer.truncate is not None:
                        self.wfile.write(data[: answer.truncate])
                        self.close_connection = True
                    elif answer.drip:
                        for start in range(0, len(data), 16):
                            self.wfile.write(data[start:start + 16])
                            time.sleep(answer.drip)
                    else:
                        self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        # A short poll interval: close() waits for the serving loop to notice the shutdown.
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def script(self, *answers: Scripted | dict | str) -> None:
        for answer in answers:
            self.answers.append(answer if isinstance(answer, Scripted) else Scripted(answer))

    def script_commands(self, *answers: Scripted | dict | str) -> None:
        """Answers for the understanding calls: `{"commands": [...], "reply": None}` or a fault."""
        for answer in answers:
            self.command_answers.append(answer if isinstance(answer, Scripted) else Scripted(answer))

    def replies(self) -> list[dict]:
        """The requests for a worded reply (not the understanding calls)."""
        return [r for r in self.requests if r["kind"] == "reply"]

    def release(self) -> None:
        """Let every hanging answer go (and any later one answer at once)."""
        self.released.set()

    def close(self) -> None:
        self.release()
        self.server.shutdown()
        self.server.server_close()


def fake_body(answer: Scripted, *, model: str = "fake") -> bytes:
    """The bytes a scripted answer sends: its raw body, an error for a failure status, or a completion."""
    if isinstance(answer.body, bytes):
        return answer.body
    if isinstance(answer.body, str):
        return answer.body.encode()
    if answer.body is not None:
        return json.dumps(answer.body).encode()
    if answer.status != 200:
        return json.dumps({"error": {"message": "scripted failure", "type": "server_error"}}).encode()
    content = answer.content if isinstance(answer.content, str) else json.dumps(answer.content, ensure_ascii=False)
    return json.dumps(completion(content, model=model)).encode()


def fake_events(answer: Scripted, *, model: str = "fake") -> list[bytes]:
    """The server-sent events of a streamed completion: its content in pieces of `piece_chars`
    characters, one chunk each, then the end; a scripted `refusal` instead of content."""
    content = answer.content if isinstance(answer.content, str) else json.dumps(answer.content, ensure_ascii=False)
    size = max(1, answer.piece_chars)
    deltas = [{"role": "assistant", "content": ""}]
    if answer.refusal is not None:
        deltas.append({"refusal": answer.refusal})
    else:
        deltas += [{"content": content[start:start + size]} for start in range(0, len(content), size)]
    chunks = [{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()), "model": model,
               "choices": [{"index": 0, "delta": delta, "finish_reason": None}]} for delta in deltas]
    chunks[-1]["choices"][0]["finish_reason"] = "stop"
    events = [f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode() for chunk in chunks]
    return [*events, b"data: [DONE]\n\n"]


def refused_url() -> str:
    """A loopback base URL where nothing listens: connecting to it is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
