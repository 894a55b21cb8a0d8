"""``runeconsole --fleet FILE``: one console over every source of a fleet file.

The merged event stream (``services/sources/fleet.py`` ``FleetFeed``: local roots
in-process, hosts over SSH) runs on a worker thread; its batches are gathered and the UI
thread takes them in on one coalescing ``RowsArrived``, so a burst costs one redraw.
Each pane draws one kind of row (``panes.py``); an action on a row goes to the source
that owns it, in a worker, as the same command the operator could type there
(``FleetFeed.actions``), and what came back, a refusal included, is shown.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import TabbedContent, TabPane

from runeconsole.adapters.clock import Clock, SystemClock
from runeconsole.core.errors import RuneError
from runeconsole.core.fleet_file import SourceSpec
from runeconsole.core.timeutil import format_age
from runeconsole.services.claude.session_view import is_background
from runeconsole.services.review.targets import ActionsReview
from runeconsole.services.sources import RemoteActions, Verdict
from runeconsole.services.sources.fleet import SOURCE, FleetFeed
from runeconsole.tui.confirm import ConfirmScreen
from runeconsole.tui.console_base import PanesApp
from runeconsole.tui.filter_box import FilterBox
from runeconsole.tui.fleet_console.answer_modal import Choice, FleetAnswerModal
from runeconsole.tui.fleet_console.panes import (
    FleetAgentsPane,
    FleetPermissionsPane,
    FleetProblemsPane,
    FleetQuestionsPane,
    FleetQueuePane,
    FleetSuspendedPane,
    RowsPane,
    SourcesPane,
)
from runeconsole.tui.fleet_console.peek_modal import FleetPeekModal
from runeconsole.tui.fleet_console.permission_modal import FleetPermissionModal
from runeconsole.tui.fleet_console.rows import agent_record
from runeconsole.tui.fleet_console.sources_bar import SourcesBar
from runeconsole.tui.fleet_console.store import (
    AGENT,
    OBSERVATION,
    PERMISSION,
    PROBLEM,
    QUESTION,
    FleetRows,
    Moved,
)
from runeconsole.tui.footer import ConsoleFooter
from runeconsole.tui.message_modal import MessageModal
from runeconsole.tui.review.opening import open_review
from runeconsole.tui.suspended_detail import show_resumed

STOP_BACKGROUND = (
    "Stop {key}?",
    "Its Claude Code background session on {source} is stopped (claude stop); its "
    "conversation is kept.",
)
CONFIRM = {
    "handoff": (
        "Hand off {key}?",
        "It is asked to save its work and exit; then a successor "
        "starts with its hook, on {source}.",
    ),
    "respawn": (
        "Re-spawn {key}?",
        "A successor starts with the same command and worktree, on {source}.",
    ),
    "kill": ("Kill {key}?", "Its tmux session on {source} is killed; its worktree stays."),
    "process": (
        "Process {source}'s merge queue?",
        "Its next entry is rebased, tested and merged on {source}.",
    ),
    "resume": (
        "Resume {key}?",
        "Its context file is verified and its resume counted on {source}; the injection "
        "is shown here and copied to the clipboard.",
    ),
}


PEEK_LINES = 30

# The actions that open a window first: the row's kind, and the window.
WINDOWS: dict[str, tuple[str, type[FleetAnswerModal | FleetPermissionModal]]] = {
    "answer": (QUESTION, FleetAnswerModal),
    "decide": (PERMISSION, FleetPermissionModal),
}


class RowsArrived(Message):
    """The stream sent rows; ``FleetConsole.pending`` holds them."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, RowsArrived)


class FleetConsole(PanesApp):
    TITLE = "runeconsole fleet"
    CSS_PATH = "../console.tcss"
    BINDINGS = [
        *(Binding(str(n), f"show_pane({n})", show=False) for n in range(1, 8)),
    ]

    def __init__(
        self,
        specs: list[SourceSpec],
        *,
        clock: Clock | None = None,
        heartbeat: float = 5.0,
        sockets: Path | None = None,
        tick_seconds: float = 1.0,
    ) -> None:
        super().__init__()
        self.clock = clock or SystemClock()
        # present: the sources' Claude Code hooks bring their questions here to be answered.
        self.feed = FleetFeed(
            specs, heartbeat=heartbeat, sockets=sockets, clock=clock, present=True
        )
        self.store = FleetRows([spec.name for spec in specs])
        self.tick_seconds = tick_seconds
        self.pending: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.batches = 0  # batches taken in (tests and the benchmark wait on it)

    def compose(self) -> ComposeResult:
        yield SourcesBar(id="status")
        self.panes: list[RowsPane] = [
            FleetAgentsPane(self.store, self.clock.now),
            SourcesPane(self.store),
            FleetProblemsPane(self.store),
            FleetQuestionsPane(self.store),
            FleetSuspendedPane(self.store),
            FleetQueuePane(self.store),
            FleetPermissionsPane(self.store, self.clock.now),
        ]
        with TabbedContent(id="panes"):
            for number, pane in enumerate(self.panes, 1):
                with TabPane(f"{number} {pane.TITLE}", id=pane.PANE_ID):
                    yield pane
        yield FilterBox()
        yield ConsoleFooter()

    def on_mount(self) -> None:
        self.query_one(SourcesBar).show(self.store, self.clock.now())
        self.follow()
        if self.tick_seconds:
            self.set_interval(self.tick_seconds, self.tick)
        self.panes[0].table.focus()

    def on_unmount(self) -> None:
        self.feed.stop()

    # -- the stream ------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="fleet-feed")
    def follow(self) -> None:
        self.feed.run(self._heard)

    def _heard(self, events: list[dict[str, Any]]) -> None:
        rows = [e for e in events if e.get("event") in ("upsert", "remove")]
        if not rows:
            return
        with self._lock:
            first = not self.pending
            self.pending += rows
        if first:
            self.post_message(RowsArrived())

    def on_rows_arrived(self, _: RowsArrived) -> None:
        with self._lock:
            events, self.pending = self.pending, []
        moved = self.store.apply(events)
        self.batches += 1
        agents = moved.get(AGENT)
        observed = moved.get(OBSERVATION)
        if observed is not None:  # a monitor reading redraws its agent's row
            agents = agents or Moved()
            agents.changed |= {k for k in observed.changed if self.store.get(AGENT, k)}
        for pane in self.panes:
            kind = SOURCE if isinstance(pane, SourcesPane) else pane.KIND
            found = agents if kind == AGENT else moved.get(kind)
            if found is not None and pane.is_attached:
                pane.moved(found.changed, found.removed)
        if PROBLEM in moved:  # a reading alone can change a source's problem count
            self.panes[1].moved(set(self.store.sources), set())
        if SOURCE in moved or PROBLEM in moved:
            for status in self.query(SourcesBar):  # none while the console closes
                status.show(self.store, self.clock.now())

    def tick(self) -> None:
        agents = self.panes[0]
        now = self.clock.now()

        def seen(key: str) -> dict[str, object] | None:
            row = self.store.get(AGENT, key)
            if row is None or row.get("error"):
                return None
            return {"seen": Text(format_age(agent_record(key, row).age_at(now)))}

        agents.table.refresh_visible(seen)
        # A stale agent's problem says for how long: judged again as of now, on screen only.
        problems = self.query_one(FleetProblemsPane)
        stale = {
            str(row["agent"])
            for key in problems.table.visible_keys()
            if (row := self.store.get(PROBLEM, key)) and row.get("kind") == "stale"
        }
        if stale:
            again = self.store.rejudge(stale, now)
            problems.moved(again.changed, again.removed)

    # -- actions on a row ------------------------------------------------------------------

    def on_rows_pane_act(self, message: RowsPane.Act) -> None:
        source, key = message.source, message.key
        own = self.feed.own_key(source, key)
        if message.action in WINDOWS:
            kind, modal = WINDOWS[message.action]
            row = self.store.get(kind, key)
            if row is not None:
                self.open_window(modal, message.action, source, own, row)
            return
        if message.action == "attach":
            self.attach(source, own)
            return
        if message.action == "review":
            self.review(source, own)
            return
        if message.action in ("say", "peek"):
            self.open_agent(message.action, source, own)
            return
        question, detail = CONFIRM[message.action]
        if message.action == "kill" and is_background(self.store.get(AGENT, key) or {}):
            question, detail = STOP_BACKGROUND

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.send_action(message.action, source, own, None)

        verb = message.action.capitalize()
        screen = ConfirmScreen(
            question.format(key=key, source=source), detail.format(source=source), verb
        )
        self.push_screen(screen, confirmed)

    def open_window(
        self,
        modal: type[FleetAnswerModal | FleetPermissionModal],
        action: str,
        source: str,
        key: str,
        row: dict[str, Any],
    ) -> None:
        """The answer (or permission) window for a row of ``source`` (``key`` as the source
        knows it); what is chosen is sent there."""

        def chosen(choice: Choice | Verdict | None) -> None:
            if choice is not None:
                self.send_action(action, source, key, choice)

        self.push_screen(modal(source, key, row), chosen)

    def open_agent(self, action: str, source: str, key: str) -> None:
        """``m`` (a message) or ``p`` (its screen) for an agent of ``source``: each call
        goes to the source when it is made, in the window's worker."""

        def say(text: str) -> Any:
            return self.feed.actions(source).say(key, text)

        if action == "say":
            self.push_screen(MessageModal(key, say, where=source))
            return

        def peek() -> Any:
            return self.feed.actions(source).peek(key, PEEK_LINES)

        self.push_screen(FleetPeekModal(source, key, peek, say, self.clock.now))

    @work(thread=True, group="fleet-actions")
    def send_action(
        self, action: str, source: str, key: str, choice: Choice | Verdict | None
    ) -> None:
        """Off the UI thread: a remote action is an SSH round trip (a handoff, minutes)."""
        try:
            actions = self.feed.actions(source)
            calls: dict[str, Callable[[], Any]] = {
                "answer": lambda: actions.answer(
                    key,
                    options=[choice.option] if isinstance(choice, Choice) and choice.option else [],
                    text=choice.text if isinstance(choice, Choice) else None,
                ),
                "decide": lambda: isinstance(choice, Verdict) and actions.decide(key, choice),
                "handoff": lambda: actions.handoff(key),
                "respawn": lambda: actions.respawn(key),
                "kill": lambda: actions.kill(key),
                "process": lambda: actions.process_queue(),
                "resume": lambda: actions.resume(key),
            }
            report = calls[action]()
        except Exception as exc:  # a refusal, or a local write that failed: said, never fatal
            said = exc.message if isinstance(exc, RuneError) else f"{type(exc).__name__}: {exc}"
            self.call_from_thread(
                self.notify, said, title=f"{action}: {source}", severity="error", markup=False
            )
            return
        if action == "resume" and isinstance(report, dict):
            self.call_from_thread(self.resumed, source, report)
            return
        self.call_from_thread(self.notify, f"{action} {key}: sent to {source}", title=source)

    def resumed(self, source: str, report: dict[str, Any]) -> None:
        """A resume's report from its source (JSON: each field checked before it is used)."""
        count, warnings, task = (
            report.get("resume_count"),
            report.get("warnings"),
            report.get("task"),
        )
        injection = report.get("injection")
        if isinstance(task, dict) and not task.get("written"):
            why = task.get("reason") or "not found"
            self.notify(
                f"task metadata not written: {why}", title=source, severity="warning", markup=False
            )
        if not isinstance(injection, str) or not injection:
            self.notify(f"{source} sent no injection back", severity="error", markup=False)
            return
        show_resumed(
            self,
            str(report.get("task_id") or "?"),
            count if isinstance(count, int) else 0,
            injection,
            [str(w) for w in warnings] if isinstance(warnings, list) else [],
            source,
        )

    def review(self, source: str, key: str) -> None:
        """The review screen of an agent of ``source``: read and decided there, with the
        same CLI commands (``review KEY --json``, ``review approve`` …)."""
        try:
            actions = self.feed.actions(source)
        except RuneError as exc:
            self.notify(exc.message, title=f"Cannot review {key}", severity="warning")
            return
        label = f"{source}/{key}" if self.feed.prefixed else key
        open_review(self, ActionsReview(actions, key, label))

    def attach(self, source: str, key: str) -> None:
        row = self.store.get(AGENT, f"{source}/{key}" if self.feed.prefixed else key) or {}
        try:
            actions = self.feed.actions(source)
            if not isinstance(actions, RemoteActions):
                actions.attach(key)
                return
            session = str(row.get("tmux_session") or "") or None
            if session is None and not is_background(row):
                raise RuneError(f"{key} has no tmux session")
            socket = actions.source.meta.get("tmux_socket")  # the host's, from its snapshot
            argv = actions.attach_window_argv(key, session, socket)
        except RuneError as exc:
            self.notify(exc.message, title=f"Cannot go to {key}", severity="warning", markup=False)
            return
        if not os.environ.get("TMUX"):
            command = shlex.join(argv[argv.index("--") + 1 :])  # pasted into a shell as is
            self.notify(command, title="Attach from a terminal:", markup=False)
            return
        subprocess.run(argv, check=False, capture_output=True, timeout=10)

    # -- panes and the filter --------------------------------------------------------------

    def action_show_pane(self, number: int) -> None:
        if 0 < number <= len(self.panes):
            self.action_clear_filter()
            self.query_one(TabbedContent).active = self.panes[number - 1].PANE_ID
            self.panes[number - 1].table.focus()


def create_fleet_app(specs: list[SourceSpec], **kwargs: Any) -> FleetConsole:
    """The fleet console over ``specs`` (a fleet file's sources)."""
    return FleetConsole(specs, **kwargs)
