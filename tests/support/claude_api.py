"""A local stand-in for the Anthropic Messages API, so the real Claude Code binary runs here.

``POST /v1/messages`` is answered with a server-sent-event stream as the real API sends
it. Requests that carry ``tools`` are the agent's main loop: each takes the next scripted
turn (a tool call, or a text that ends the turn). Other requests are side requests
(titles, summaries) and get a short text. Every request body is kept, so a test can read
what the model was told (a tool's result, the answers to a question).

A turn can also be an API error (``error_turn``: the status, the error's type and
message, and headers such as ``retry-after``), and any answer can carry extra response
headers (``RATE_LIMIT_HEADERS``: the unified rate-limit headers a subscription gets).

    with MessagesApi([ask_turn, text_turn("Done.")]) as api:
        env["ANTHROPIC_BASE_URL"] = api.url
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "claude-sonnet-4-5"
# Usage each main-loop answer reports (the transcript carries it; the console sums it).
USAGE = {
    "input_tokens": 1200,
    "output_tokens": 40,
    "cache_creation_input_tokens": 3000,
    "cache_read_input_tokens": 16000,
}


@dataclass(frozen=True)
class ApiError:
    """An error answer: ``status`` with ``{"type": "error", "error": {type, message}}``."""

    status: int
    type: str
    message: str
    headers: dict[str, str] = field(default_factory=dict)

    def body(self) -> bytes:
        error = {"type": self.type, "message": self.message}
        return json.dumps({"type": "error", "error": error}).encode()


BILLING_MESSAGE = (
    "Your credit balance is too low to access the Anthropic API. Please go to Plans & "
    "Billing to upgrade or purchase credits."
)


def rate_limit_headers(
    reset_epoch: int,
    status: str = "allowed",
    used: float | None = None,
    seven_day: float | None = None,
    seven_day_reset: int | None = None,
) -> dict[str, str]:
    """The unified rate-limit headers of a subscription's answer: the five-hour window
    (``used``: its utilization, 0..1), and the seven-day one when ``seven_day`` is given.
    Claude Code hands them to its status line as ``rate_limits``."""
    if used is None:
        used = 1.0 if status == "rejected" else 0.42
    headers = {
        "anthropic-ratelimit-unified-status": status,
        "anthropic-ratelimit-unified-reset": str(reset_epoch),
        "anthropic-ratelimit-unified-5h-status": status,
        "anthropic-ratelimit-unified-5h-reset": str(reset_epoch),
        "anthropic-ratelimit-unified-5h-utilization": str(used),
        "anthropic-ratelimit-unified-representative-claim": "five_hour",
    }
    if seven_day is not None:
        headers["anthropic-ratelimit-unified-7d-status"] = "allowed"
        headers["anthropic-ratelimit-unified-7d-utilization"] = str(seven_day)
        headers["anthropic-ratelimit-unified-7d-reset"] = str(seven_day_reset or reset_epoch)
    return headers


@dataclass(frozen=True)
class Turn:
    """One scripted answer of the main loop: a tool call, or text ending the turn."""

    text: str = ""
    tool: str | None = None
    tool_input: dict[str, Any] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=lambda: dict(USAGE))
    delay: float = 0.0  # seconds before the answer starts (a busy agent, on screen)
    error: ApiError | None = None  # an error answer instead of a message
    headers: dict[str, str] = field(default_factory=dict)  # more response headers


def text_turn(text: str) -> Turn:
    return Turn(text=text)


def tool_turn(tool: str, tool_input: dict[str, Any]) -> Turn:
    return Turn(tool=tool, tool_input=tool_input)


def error_turn(status: int, kind: str, message: str, **headers: str) -> Turn:
    """An API error (``retry_after="30"`` becomes the ``retry-after`` header)."""
    named = {name.replace("_", "-"): value for name, value in headers.items()}
    return Turn(error=ApiError(status, kind, message, named))


def billing_error() -> Turn:
    """What the API answers an account with no credit: 400, never retried."""
    return error_turn(400, "invalid_request_error", BILLING_MESSAGE)


def rate_limited(retry_after: int, reset_epoch: int | None = None) -> Turn:
    """429 with ``retry-after`` (and the unified headers of a rejected subscription)."""
    headers = {"retry-after": str(retry_after)}
    if reset_epoch is not None:
        headers.update(rate_limit_headers(reset_epoch, "rejected"))
    return Turn(error=ApiError(429, "rate_limit_error", "Rate limited", headers))


def _event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def stream(turn: Turn) -> bytes:
    """The SSE events of one answer: message_start (with usage), one content block,
    message_delta (the stop reason), message_stop."""
    message_id = f"msg_{uuid.uuid4().hex[:24]}"
    usage = dict(turn.usage)
    start = {
        "type": "message_start",
        "message": {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {**usage, "output_tokens": 1},
        },
    }
    events = [_event("message_start", start)]
    if turn.tool is not None:
        block = {
            "type": "tool_use",
            "id": f"toolu_{uuid.uuid4().hex[:24]}",
            "name": turn.tool,
            "input": {},
        }
        delta = {"type": "input_json_delta", "partial_json": json.dumps(turn.tool_input)}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": turn.text}
        stop = "end_turn"
    events += [
        _event(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        ),
        _event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        _event("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": usage["output_tokens"]},
            },
        ),
        _event("message_stop", {"type": "message_stop"}),
    ]
    return b"".join(events)


def whole(turn: Turn) -> dict[str, Any]:
    """The same answer as one JSON body (for a request that did not ask to stream)."""
    if turn.tool is not None:
        content = [
            {
                "type": "tool_use",
                "id": f"toolu_{uuid.uuid4().hex[:24]}",
                "name": turn.tool,
                "input": turn.tool_input,
            }
        ]
        stop = "tool_use"
    else:
        content = [{"type": "text", "text": turn.text}]
        stop = "end_turn"
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": turn.usage,
    }


class MessagesApi:
    """The stand-in server on 127.0.0.1 (a free port), in a thread for the ``with`` block."""

    def __init__(self, script: list[Turn]) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []  # main-loop request bodies, in order
        self.side_requests = 0
        self.lock = threading.Lock()
        self.turn_served = threading.Condition(self.lock)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> MessagesApi:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def add(self, *turns: Turn) -> None:
        with self.lock:
            self.script.extend(turns)

    def next_turn(self, body: dict[str, Any]) -> Turn:
        with self.lock:
            self.requests.append(body)
            turn = self.script.pop(0) if self.script else text_turn("Nothing more to do.")
            self.turn_served.notify_all()
            return turn

    def wait_for_requests(self, count: int, timeout: float) -> list[dict[str, Any]]:
        """Until ``count`` main-loop requests arrived (fails the test after ``timeout``)."""
        with self.lock:
            arrived = self.turn_served.wait_for(lambda: len(self.requests) >= count, timeout)
            assert arrived, f"{len(self.requests)} main-loop requests after {timeout}s, not {count}"
            return list(self.requests)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: object) -> None:  # quiet
                pass

            def _send(
                self,
                status: int,
                body: bytes,
                content_type: str,
                headers: dict[str, str] | None = None,
            ) -> None:
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(body)))
                self.send_header("request-id", f"req_{uuid.uuid4().hex[:20]}")
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                self._send(200, b"{}", "application/json")

            do_HEAD = do_GET

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b"{}"
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {}
                path = self.path.split("?")[0]
                if path.endswith("/count_tokens"):
                    self._send(200, b'{"input_tokens": 1000}', "application/json")
                    return
                if not path.endswith("/v1/messages"):
                    self._send(
                        404,
                        b'{"type":"error","error":{"type":"not_found_error","message":"no"}}',
                        "application/json",
                    )
                    return
                if body.get("tools"):
                    turn = api.next_turn(body)
                else:
                    with api.lock:
                        api.side_requests += 1
                    turn = Turn(text="Working", usage={"input_tokens": 10, "output_tokens": 2})
                if turn.delay:
                    time.sleep(turn.delay)
                if turn.error is not None:
                    error = turn.error
                    self._send(error.status, error.body(), "application/json", error.headers)
                elif body.get("stream"):
                    self._send(200, stream(turn), "text/event-stream", turn.headers)
                else:
                    answer = json.dumps(whole(turn)).encode()
                    self._send(200, answer, "application/json", turn.headers)

        return Handler


def write_turn(path: str, content: str) -> Turn:
    """The model writes a whole file (Claude Code's Write tool)."""
    return tool_turn("Write", {"file_path": path, "content": content})


def edit_turn(path: str, old: str, new: str) -> Turn:
    """The model replaces ``old`` with ``new`` in a file it has read (the Edit tool)."""
    return tool_turn("Edit", {"file_path": path, "old_string": old, "new_string": new})
