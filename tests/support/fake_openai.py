"""A small OpenAI-compatible HTTP server for tests: scripted chat completions on loopback.

The tests point the real `openai` client at it (OPENAI_BASE_URL), so model calls cross a
real HTTP boundary: timeouts, 500s, garbage and adversarial JSON are all real.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Scripted:
    """One scripted answer: a JSON body for the message content, raw text, an HTTP error, or a delay."""

    content: Any = None  # dict -> JSON-encoded; str -> sent as is
    status: int = 200
    delay: float = 0.0


@dataclass
class FakeOpenAI:
    answers: deque = field(default_factory=deque)
    requests: list = field(default_factory=list)
    default: Scripted | None = None

    def __post_init__(self) -> None:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # noqa: ANN002
                return

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                fake.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
                answer = fake.answers.popleft() if fake.answers else (fake.default or Scripted({"reply": "ok"}))
                if answer.delay:
                    time.sleep(answer.delay)
                if answer.status != 200:
                    self._send(answer.status, {"error": {"message": "scripted failure", "type": "server_error"}})
                    return
                content = answer.content if isinstance(answer.content, str) else json.dumps(answer.content, ensure_ascii=False)
                self._send(200, {
                    "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
                    "model": body.get("model", "fake"),
                    "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                })

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)  # the client may have timed out and gone away

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def script(self, *answers: Scripted | dict | str) -> None:
        for answer in answers:
            self.answers.append(answer if isinstance(answer, Scripted) else Scripted(answer))

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
