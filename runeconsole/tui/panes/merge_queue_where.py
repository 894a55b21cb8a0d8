"""Where ``main`` is, for a queue that lands on a remote (``runeconsole.merge_queue.remote``):
the Merge queue pane's second header line, ``f`` (fetch now), and what the detail says of
an entry on the remote or waiting for it.

Where ``main`` is (``RemoteWhere``: git's refs, no network, but git all the same) is read
in the pane's scan worker, which hands it to the line (``Located``); the line keeps it and
draws the last fetch's age with the clock on each tick. A fetch runs in a worker of its
own and posts ``Fetched`` (the pane reads again); a failure is also a warning toast, and
the line's red ``unreachable`` once read back from the queue's file.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

from rich.text import Text
from textual.message import Message
from textual.reactive import reactive

from runeconsole.core.errors import RuneError
from runeconsole.core.timeutil import format_age, parse_iso
from runeconsole.services.merge_queue import IN_PROGRESS, PENDING, MergeQueue, QueueEntry
from runeconsole.services.merge_queue.remote import RemoteWhere
from runeconsole.tui.support.workers import background, cancelled
from runeconsole.tui.widgets.steady_static import SteadyStatic

FETCHING = "fetching…"


def where_text(where: RemoteWhere | None, error: str | None, now: float, fetching: bool) -> Text:
    """``origin/main 847996d · local 1 ahead 2 behind · fetched 3m00s ago · 1 race``, and
    under it, red, the last fetch or push that could not reach the remote (wrapped: its
    end says why, and the line only shows while it stands)."""
    if where is None:
        return Text(f"where main is: {error}" if error else FETCHING, "red" if error else "dim")
    first = Text(dataclasses.replace(where, last_error=None).words(now))
    first.stylize("bold", 0, len(f"{where.remote}/{where.branch}"))
    if fetching:
        first.append(f" · {FETCHING}", "dim")
    lines = [first]
    if where.last_error:
        when = parse_iso(where.error_at)
        age = f" {format_age(now - when.timestamp())} ago" if when is not None else ""
        lines.append(Text(f"unreachable{age}: {where.last_error}", "red"))
    return Text("\n").join(lines)


class RemoteLine(SteadyStatic):
    """The header's second line: where ``main`` is, here and on the remote (hidden for a
    queue that lands on the local ``main``)."""

    DEFAULT_CSS = """
    RemoteLine {
        height: auto;
        max-height: 3;
        padding: 0 1;
        display: none;
    }
    """

    class Located(Message):
        """Where main is, as the scan worker read it (``error``: git could not say)."""

        def __init__(self, where: RemoteWhere | None, error: str | None = None) -> None:
            super().__init__()
            self.where = where
            self.error = error

    class Fetched(Message):
        """A fetch ended (``error``: why it failed); the pane reads the queue again."""

        def __init__(self, error: str | None) -> None:
            super().__init__()
            self.error = error

    fetching: reactive[bool] = reactive(False, init=False)
    """A fetch runs (``f``): the line says so, and a second ``f`` is refused."""

    def __init__(self, queue: MergeQueue, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.queue = queue
        self.where: RemoteWhere | None = None
        self.error: str | None = None

    @property
    def remote(self) -> str | None:
        return self.queue.settings.remote

    def locate(self) -> None:
        """In the scan worker: where main is, handed to the line (no network)."""
        if self.remote is None:
            return
        try:
            message = self.Located(self.queue.where())
        except RuneError as exc:
            message = self.Located(None, exc.message)
        if not cancelled():
            self.post_message(message)

    def on_remote_line_located(self, message: Located) -> None:
        message.stop()
        self.where, self.error = message.where, message.error
        self.redraw()

    def watch_fetching(self) -> None:
        self.redraw()

    def redraw(self) -> None:
        """With the clock: the last fetch's age moves on each tick."""
        self.display = self.remote is not None
        if self.display:
            now = self.queue.clock.now().timestamp()
            self.update(where_text(self.where, self.error, now, self.fetching))

    def fetch(self) -> None:
        """``f``: fetch the remote's main now, in a worker."""
        if self.remote is None:
            self.app.notify(
                "this queue lands on the local main: no remote to fetch "
                "(runeconsole.merge_queue.remote names one)",
                severity="warning",
            )
            return
        if self.fetching:
            self.app.notify(f"already fetching {self.queue.settings.target}")
            return
        self.fetching = True
        self._fetch()

    @background("merge-queue-fetch")
    def _fetch(self) -> None:
        """``Fetched`` whatever happens (anything but a ``RuneError`` is ``WorkFailed``'s
        to say), so ``f`` is never left refused as already fetching."""
        error: str | None = None
        try:
            error = self.queue.fetch_now()
        finally:
            if not cancelled():
                self.post_message(self.Fetched(error))

    def on_remote_line_fetched(self, message: Fetched) -> None:
        """Said, and on to the pane (it reads again: the line follows)."""
        self.fetching = False
        if message.error is not None:
            self.app.notify(message.error, title="Fetch", severity="warning")


def remote_detail(entry: QueueEntry, now: datetime, remote: str | None) -> list[Text]:
    """Of the selected entry: its branch on the remote (a teammate's, or one the queue
    pushed), and its wait for an unreachable remote (waiting, or given up on)."""
    lines: list[Text] = []
    branch, on = entry.get("remote_branch"), entry.get("remote")
    if isinstance(branch, str) and isinstance(on, str) and branch and on:
        if entry.get("pushed_by_us") is True:
            said = f"pushed to {on} as {branch} by the queue: deleted there once it lands"
        else:
            said = f"a teammate's branch on {on}: {branch}"
        lines.append(Text(said, "cyan"))
    wait = entry.get("remote_wait")
    if isinstance(wait, dict):
        lines.extend(_wait_line(entry, wait, now, remote))
    return lines


def _wait_line(
    entry: QueueEntry, wait: dict[str, Any], now: datetime, remote: str | None
) -> list[Text]:
    """``waiting for origin 1m20s: <why> · try 3, next in 8s``, or ``gave up waiting for
    origin 5m00s ago: <why>; back in the queue`` (while it waits there again)."""
    name = str(entry.get("remote") or remote or "the remote")
    why = str(wait.get("reason") or "unreachable")
    gave_up = parse_iso(wait.get("gave_up_at"))
    if gave_up is not None:
        if entry.status != PENDING:
            return []  # taken again since: the wait is over
        ago = format_age((now - gave_up).total_seconds())
        return [Text(f"gave up waiting for {name} {ago} ago: {why}; back in the queue", "yellow")]
    if entry.status != IN_PROGRESS:
        return []  # a processor killed while it waited: recovered since
    step = entry.step if entry.step.startswith("waiting for ") else f"waiting for {name}"
    since = parse_iso(wait.get("since"))
    text = Text(step, "bold yellow")
    if since is not None:
        text.append(f" {format_age((now - since).total_seconds())}", "yellow")
    text.append(f": {why}", "yellow")
    tries, pause = wait.get("tries"), wait.get("next_try_in_seconds")
    if isinstance(tries, int):
        text.append(f" · try {tries}", "dim")
    if isinstance(pause, int | float):
        text.append(f", next in {format_age(pause)}", "dim")
    return [text]
