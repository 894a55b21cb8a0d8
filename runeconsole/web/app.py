"""The served console's aiohttp application, composed around textual-serve.

textual-serve's ``Server`` builds its aiohttp app in a private method and offers no seam
for middleware, TLS or a page of one's own; so this module composes its public parts
instead of reaching into private names: ``Server.handle_websocket`` (one console process
per browser session, the terminal protocol, its shutdown) and ``Server.statics_path``
(textual.js, xterm.css, the font) go into an application of ours, behind ``guard``, with
our own page (no third-party font request, a phone's viewport, the WebSocket URL of the
host the browser used, the token taken out of the address bar). Its ``/download`` route
is not served: the console delivers no files.
"""

from __future__ import annotations

import asyncio
import html
import shlex
from collections.abc import Sequence
from pathlib import Path
from string import Template

from aiohttp import web
from textual_serve.server import Server

from runeconsole.services.serving.access import Access
from runeconsole.services.serving.throttle import FailureThrottle
from runeconsole.web.guard import NONCE, guard

PAGE = Template((Path(__file__).parent / "page.html").read_text(encoding="utf-8"))
MAX_SESSIONS = 8
CLOSE_SECONDS = 10.0  # the consoles of open sessions have this long to quit on shutdown


# Textual's own setting (``TEXTUAL_ANIMATIONS``): a served console animates nothing. The
# tabs' underline slid under the new tab in 18 frames at textual-serve's 60 a second on
# every pane switch, each one a compositor pass and a WebSocket frame: a fifth of the
# console's CPU per switch (197 -> 156 ms at 1,000 agents), all of it on the way of the
# switch's own frames to a browser sharing the machine.
ANIMATIONS = "TEXTUAL_ANIMATIONS=none"


def console_command(argv: Sequence[str]) -> str:
    """textual-serve starts the console through a shell: every argument quoted, so a root
    with spaces or quotes in its name stays one argument; animations off (``ANIMATIONS``)."""
    return f"{ANIMATIONS} {shlex.join(argv)}"


class ServedConsole:
    """The routes: the page, its WebSocket, its static files; nothing else."""

    def __init__(
        self,
        argv: Sequence[str],
        access: Access,
        *,
        title: str = "runeconsole",
        secure: bool = False,
        max_sessions: int = MAX_SESSIONS,
        throttle: FailureThrottle | None = None,
    ) -> None:
        self.textual = Server(console_command(argv), title=title)
        self.access = access
        self.title = title
        self.secure = secure
        self.max_sessions = max_sessions
        self.throttle = throttle or FailureThrottle()
        self.sessions: set[asyncio.Task[object]] = set()  # each open browser session's

    def application(self) -> web.Application:
        app = web.Application(middlewares=[guard(self.access, self.throttle, secure=self.secure)])
        app.router.add_get("/", self.page, allow_head=False)
        app.router.add_get("/ws", self.websocket, allow_head=False)
        app.router.add_static("/static", self.textual.statics_path, follow_symlinks=False)
        app.on_shutdown.append(self.close_sessions)
        return app

    async def page(self, request: web.Request) -> web.Response:
        scheme = "wss" if request.scheme == "https" else "ws"
        size = request.query.get("fontsize", "")
        text = PAGE.substitute(
            title=html.escape(self.title),
            static_url="/static/",
            websocket_url=html.escape(f"{scheme}://{request.host}/ws"),
            nonce=request[NONCE],
            font_size=f'data-font-size="{int(size)}"' if size.isdigit() and len(size) < 3 else "",
        )
        return web.Response(text=text, content_type="text/html")

    async def websocket(self, request: web.Request) -> web.StreamResponse:
        """One console per browser session, at most ``max_sessions`` at once."""
        task = asyncio.current_task()
        if len(self.sessions) >= self.max_sessions or task is None:
            return web.Response(status=503, text="too many open sessions\n")
        self.sessions.add(task)
        try:
            return await self.textual.handle_websocket(request)
        finally:
            self.sessions.discard(task)

    async def close_sessions(self, _: web.Application) -> None:
        """On shutdown: end every session now (textual-serve then tells its console to
        quit and waits for it), rather than wait for browsers to leave."""
        open_sessions = set(self.sessions)
        for task in open_sessions:
            task.cancel()
        if open_sessions:
            await asyncio.wait(open_sessions, timeout=CLOSE_SECONDS)
