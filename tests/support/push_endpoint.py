"""A local HTTP endpoint that Apprise's ``json://`` URL posts to: what a push service
receives, kept for the test to read."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Endpoint:
    def __init__(self, server: ThreadingHTTPServer) -> None:
        self.server = server
        self.received: list[dict] = []

    @property
    def url(self) -> str:
        return f"json://127.0.0.1:{self.server.server_address[1]}/push"


@contextlib.contextmanager
def push_endpoint() -> Iterator[Endpoint]:
    endpoint: Endpoint

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            endpoint.received.append(json.loads(self.rfile.read(length)))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    endpoint = Endpoint(server)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield endpoint
    finally:
        server.shutdown()
        server.server_close()
