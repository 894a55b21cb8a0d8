"""``runeconsole --fleet FILE``: one console over every source of a fleet file.

The merged event stream (``services/sources/fleet.py`` ``FleetFeed``: local roots
in-process, hosts over SSH) runs on a worker thread, where its rows are decoded into the
records the project console holds (``services/sources/decode.py``); the UI thread takes
each gathered batch in on one coalescing ``RowsArrived``, applies it to the fleet's
``SourcesModel`` (counts kept per change, problems judged once) and redraws the rows it
moved, so a burst costs one redraw. The panes are the project console's, each row with
its source first; what the operator decides or asks of a row goes to the source that owns
it (``FleetFeed.actions``), in a worker, as the same command the operator could type
there, and what came back, a refusal included, is shown.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.message import Message

from runeconsole.adapters.clock import Clock, SystemClock
from runeconsole.core.errors import RuneError
from runeconsole.core.fleet_file import SourceSpec
from runeconsole.services.events import Event
from runeconsole.services.events.sections import (
    PERMISSION,
    PIPELINE,
    QUESTION,
    QUEUE,
    SUSPENDED,
)
from runeconsole.services.review.targets import ActionsReview
from runeconsole.services.sources.decode import Row, decode
from runeconsole.services.sources.fleet import FleetFeed
from runeconsole.services.sources.model import SourcesModel
from runeconsole.services.supervision.problems import judge_with
from runeconsole.services.supervision.settings import SupervisorSettings
from runeconsole.tui.app_base.commands import AgentCommands, ConversationCommands
from runeconsole.tui.app_base.console_base import PanesApp
from runeconsole.tui.conversations.search import SearchScreen
from runeconsole.tui.conversations.searching import FleetSearch
from runeconsole.tui.fleet_console.agents import FleetAgents
from runeconsole.tui.fleet_console.panes import (
    Act,
    FleetMergeQueuePane,
    FleetPermissionsPane,
    FleetPipelinesPane,
    FleetQuestionsPane,
    FleetSuspendedPane,
    SourcesPane,
    follow,
)
from runeconsole.tui.fleet_console.sources_bar import SourcesBar
from runeconsole.tui.modals.confirm import ConfirmScreen
from runeconsole.tui.modals.suspended_detail import show_resumed
from runeconsole.tui.panes.agents_pane import AgentsPane
from runeconsole.tui.panes.pane import Pane, Sources
from runeconsole.tui.panes.problems_pane import ProblemsPane
from runeconsole.tui.review.opening import open_review
from runeconsole.tui.support.messages import FleetChanged, ReviewWanted
from runeconsole.tui.support.workers import background
from runeconsole.tui.widgets.filter_box import FilterBox
from runeconsole.tui.widgets.footer import ConsoleFooter

CONFIRM = {
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


class RowsArrived(Message):
    """The stream sent rows; ``FleetConsole.pending`` holds them, decoded."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, RowsArrived)


class FleetConsole(PanesApp):
    TITLE = "runeconsole fleet"
    CSS_PATH = "../console/console.tcss"
    # Eight tabs in an 80-column pane: one space before each label, and the panes' short
    # titles (``PanesApp.tab_title``), as in the project console.
    CSS = """
    Screen.-narrow PaneTabs .pane-tabs--tab {
        padding: 0 0 0 1;
    }
    """
    COMMANDS = App.COMMANDS | {AgentCommands, ConversationCommands}
    BINDINGS = [
        *(Binding(str(n), f"show_pane({n})", show=False) for n in range(1, 9)),
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
        names = [spec.name for spec in specs]
        # Problems by the monitor's rules at their defaults (a source's own thresholds are
        # its talisman's, which its stream does not carry).
        self.settings = SupervisorSettings()
        self.model = SourcesModel(names, self.clock, judge=judge_with(self.settings))
        self.sources = Sources(tuple(names), self.feed.source_of)
        self.tick_seconds = tick_seconds
        self.pending: list[Row] = []
        self._lock = threading.Lock()
        self.batches = 0  # batches taken in (tests and the benchmark wait on it)
        self.conversation_search: FleetSearch | None = None  # S: made on the first

    def compose(self) -> ComposeResult:
        yield SourcesBar(id="status")
        model, sources, clock = self.model, self.sources, self.clock
        agents = FleetAgents(self.feed, model)
        self.panes: list[Pane[Any]] = [
            AgentsPane(model.agents, self.settings, agents, sources=sources),
            SourcesPane(model, sources),
            ProblemsPane(model.agents, sources=sources),
            FleetQuestionsPane(model, self.feed, clock=clock, sources=sources),
            FleetSuspendedPane(clock=clock, sources=sources),
            FleetMergeQueuePane(clock=clock, sources=sources),
            FleetPermissionsPane(model, self.feed, clock=clock, sources=sources),
            FleetPipelinesPane(model, self.feed, clock=clock, sources=sources),
        ]
        yield from self.compose_panes(self.panes)
        yield FilterBox()
        yield ConsoleFooter()

    @property
    def agents_pane(self) -> AgentsPane:
        return self.query_one(AgentsPane)

    def on_mount(self) -> None:
        self.query_one(SourcesBar).show(self.model, self.clock.now())
        self.follow()
        if self.tick_seconds:
            self.set_interval(self.tick_seconds, self.tick)
        self.panes[0].table.focus()

    def on_unmount(self) -> None:
        self.feed.stop()
        if self.conversation_search is not None:
            self.conversation_search.close()

    # -- the stream ------------------------------------------------------------------------

    @background("fleet-feed", exclusive=True)
    def follow(self) -> None:
        self.feed.run(self._heard)

    def _heard(self, events: list[Event]) -> None:
        """On the feed's thread: the batch's rows, decoded, for the UI thread."""
        rows = decode(events)
        if not rows:
            return
        with self._lock:
            first = not self.pending
            self.pending += rows
        if first:
            self.post_message(RowsArrived())

    def on_rows_arrived(self, message: RowsArrived) -> None:
        with self._lock:
            rows, self.pending = self.pending, []
        batch = self.model.apply(rows)
        self.batches += 1
        if batch.agents:
            for view in (self.query_one(AgentsPane), self.query_one(ProblemsPane)):
                view.post_message(FleetChanged(batch.agents))
        model, moved = self.model, batch.kinds
        if QUESTION in moved:
            self.query_one(FleetQuestionsPane).follow(moved[QUESTION])
        if PERMISSION in moved:
            self.query_one(FleetPermissionsPane).follow(moved[PERMISSION])
        if SUSPENDED in moved:
            follow(self.query_one(FleetSuspendedPane), model.suspended, moved[SUSPENDED])
        if QUEUE in moved:
            follow(self.query_one(FleetMergeQueuePane), model.queue, moved[QUEUE])
        if PIPELINE in moved:
            self.query_one(FleetPipelinesPane).follow(moved[PIPELINE])
        if batch.sources:
            self.query_one(SourcesPane).show_sources(batch.sources)
            for status in self.query(SourcesBar):  # none while the console closes
                status.show(self.model, self.clock.now())

    def tick(self) -> None:
        """A second passed: every pane moves its clocks (ages, countdowns, a stale agent's
        silence), on the rows on screen."""
        for pane in self.panes:
            if pane.is_attached:
                pane.tick()

    # -- actions on a row ------------------------------------------------------------------

    def on_act(self, message: Act) -> None:
        """``p`` on a queue entry, ``s`` on a suspended task: asked first, then sent;
        ``d`` or enter on a queue entry: its agent's review, on its source; ``n`` on a
        source: the new-task form of the Agents pane, for that source."""
        source, key = message.source, message.key
        if message.action == "new_task":
            self.agents_pane.new_task_on(source)
            return
        own = self.feed.own_key(source, key)
        if message.action == "review":
            self.review(source, own)
            return
        question, detail = CONFIRM[message.action]

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.send_action(message.action, source, own)

        verb = message.action.capitalize()
        screen = ConfirmScreen(
            question.format(key=key, source=source), detail.format(source=source), verb
        )
        self.push_screen(screen, confirmed)

    @background("fleet-actions")
    def send_action(self, action: str, source: str, key: str) -> None:
        """Off the UI thread: a remote action is an SSH round trip (a queue's tests, minutes);
        a refusal is said, never fatal."""
        actions = self.feed.actions(source)
        calls: dict[str, Callable[[], Any]] = {
            "process": lambda: actions.process_queue(),
            "resume": lambda: actions.resume(key),
        }
        report = calls[action]()
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

    def search_screen(self, typed: str = "") -> SearchScreen:
        """``S``: every source's conversations, merged newest first (a SOURCE column)."""
        if self.conversation_search is None:
            names = [spec.name for spec in self.feed.specs]
            self.conversation_search = FleetSearch(names, self.feed.actions, self.feed.key)
        search = self.conversation_search
        return SearchScreen(search, search.open, self.clock.now, sources=True, typed=typed)

    def on_review_wanted(self, message: ReviewWanted) -> None:
        """``d`` on an agent: its review, read and decided on its source."""
        if message.agent is not None:
            source = self.feed.source_of(message.agent)
            self.review(source, self.feed.own_key(source, message.agent))

    def review(self, source: str, key: str) -> None:
        """The review screen of an agent of ``source``: read and decided there, with the
        same CLI commands (``review KEY --json``, ``review approve`` …)."""
        try:
            actions = self.feed.actions(source)
        except RuneError as exc:
            self.notify(exc.message, title=f"Cannot review {key}", severity="warning")
            return
        open_review(self, ActionsReview(actions, key, self.feed.key(source, key)))

    # -- panes -------------------------------------------------------------------------------


def create_fleet_app(specs: list[SourceSpec], **kwargs: Any) -> FleetConsole:
    """The fleet console over ``specs`` (a fleet file's sources)."""
    return FleetConsole(specs, **kwargs)
