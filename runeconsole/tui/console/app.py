"""The console app and its factory (used by the CLI, the tests and the screenshots)."""

from __future__ import annotations

import os
import shutil
import threading
from itertools import islice
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.notifications import SeverityLevel

from runeconsole.adapters.clock import Clock
from runeconsole.core.errors import RuneError
from runeconsole.core.files import unwritable
from runeconsole.core.timeutil import iso_z
from runeconsole.services.checkpoints import Checkpoints
from runeconsole.services.claude.bridge.presence import ConsolePresence
from runeconsole.services.claude.bridge.settings import notifier_for
from runeconsole.services.claude.permissions.service import Permissions
from runeconsole.services.conversations.feeding import FeedDue
from runeconsole.services.dispatch.service import Dispatch
from runeconsole.services.fleet import FleetChange, FleetModel
from runeconsole.services.fleet.columns import AgentColumns
from runeconsole.services.merge_queue import MergeQueue
from runeconsole.services.pipelines.agents import NodeWork, work_by_node
from runeconsole.services.pipelines.answers import GateAnswers
from runeconsole.services.pipelines.record import Pipeline
from runeconsole.services.pipelines.store import Pipelines
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.services.review.service import Reviews
from runeconsole.services.review.targets import BranchReview, LocalReview
from runeconsole.services.review.tracker import ChangeTracker
from runeconsole.services.supervision.problems import judge_with
from runeconsole.services.supervision.service import MonitorReport, Supervisor
from runeconsole.services.suspension import Suspension
from runeconsole.services.worker_questions import Questions
from runeconsole.tui.app_base.commands import AgentCommands, ConversationCommands, TaskCommands
from runeconsole.tui.app_base.console_base import PanesApp
from runeconsole.tui.app_base.spend import SpendMoved, SpendWatch
from runeconsole.tui.console.background_poll import BackgroundPoll
from runeconsole.tui.console.console_monitor import ConsoleMonitor
from runeconsole.tui.console.feed import ChangeFeed, StateChanged
from runeconsole.tui.console.routes import Routes, by_directory
from runeconsole.tui.console.status_bar import StatusBar
from runeconsole.tui.console.toasts import monitor_toast
from runeconsole.tui.console.upkeep import Upkeep
from runeconsole.tui.conversations.search import SearchScreen
from runeconsole.tui.conversations.searching import IndexSearch
from runeconsole.tui.panes.agent_actions import LocalAgents
from runeconsole.tui.panes.agents_pane import AgentsPane
from runeconsole.tui.panes.merge_queue_pane import MergeQueuePane
from runeconsole.tui.panes.pane import FilePane, Pane
from runeconsole.tui.panes.permissions_pane import LocalPermissionsPane
from runeconsole.tui.panes.pipelines_pane import LocalPipelinesPane
from runeconsole.tui.panes.problems_pane import ProblemsPane
from runeconsole.tui.panes.questions_pane import LocalQuestionsPane
from runeconsole.tui.panes.suspended_pane import LocalSuspendedPane
from runeconsole.tui.panes.tasks_pane import TasksPane
from runeconsole.tui.review.opening import open_review
from runeconsole.tui.support.messages import FleetChanged, ReviewWanted
from runeconsole.tui.support.pacing import after_frame
from runeconsole.tui.support.workers import background, cancelled
from runeconsole.tui.tasks.compare import CompareScreen
from runeconsole.tui.tasks.worktrees import WorktreesScreen
from runeconsole.tui.widgets.filter_box import FilterBox
from runeconsole.tui.widgets.footer import ConsoleFooter

PRESENCE_RETRY_SECONDS = 2.0
FEED_SECONDS = 2.0  # how often the conversations that grew are indexed
INLINE_LOAD = 1000  # identity files read before the first frame; more are read after it
SETTLE_PAUSE = 0.05  # seconds after a load's first rows before the rest of it is worked out


class RuneConsole(PanesApp):
    TITLE = "runeconsole"
    CSS_PATH = "console.tcss"  # beside this module; panes and modals own the rest
    # Eight tabs in an 80-column pane: one space before each label, not one either side
    # (here, not in console.tcss, which the fleet console shares with its own tabs), and
    # the panes' short titles (``narrow_tabs``).
    CSS = """
    Screen.-narrow PaneTabs .pane-tabs--tab {
        padding: 0 0 0 1;
    }
    """
    COMMANDS = App.COMMANDS | {AgentCommands, ConversationCommands, TaskCommands}
    BINDINGS = [
        *(Binding(str(n), f"show_pane({n})", show=False) for n in range(1, 10)),
    ]

    def __init__(
        self,
        project: Project,
        *,
        watch: bool = True,
        monitor: bool = False,
        rescan_seconds: float = 5.0,
        tick_seconds: float = 1.0,
    ) -> None:
        """Every service the panes use is built here, once, from ``project``."""
        super().__init__()
        self.project = project
        self.root, self.clock = project.root, project.clock
        self.watch_files = watch
        self.rescan_seconds = rescan_seconds
        self.tick_seconds = tick_seconds
        self.registry = Registry(project)
        self.supervisor = Supervisor(project, registry=self.registry)
        self.monitor = monitor
        self.monitor_loop = ConsoleMonitor(
            self.supervisor, lambda report: self.call_from_thread(self._apply_report, report)
        )
        self.questions = Questions(project)
        self.suspension = Suspension(project)
        self.checkpoints = Checkpoints(project, suspension=self.suspension)
        self.merge_queue = MergeQueue(project)
        self.permissions = Permissions(project)
        # The harness's DOT pipelines (the Pipelines pane) and their human gates' answers.
        self.pipelines = Pipelines(project)
        self.gate_answers = GateAnswers(project, self.pipelines)
        # Tasks and their attempts, every worktree (the Tasks pane, Compare, Worktrees).
        self.dispatch = Dispatch(project, supervisor=self.supervisor)
        # What agents changed (the Agents pane's CHANGES, the review screen): one cache.
        self.reviews = Reviews(
            project,
            registry=self.registry,
            hook_files=self.supervisor.hook_files,
            queue=self.merge_queue,
        )
        self.feed: ChangeFeed | None = None
        # The agents whose hooks said a turn was written: their conversations are indexed
        # (only what was appended), every FEED_SECONDS, in a worker.
        self.feed_due = FeedDue()
        self.conversation_search: IndexSearch | None = None  # S: made on the first
        # The one fleet model: the Agents and Problems panes draw it, file events, the
        # rescan, the tick and the monitor feed it (services/fleet/model.py).
        self.fleet = FleetModel(
            self.registry,
            self.supervisor.hook_files,
            saved_observations=self.supervisor.observations,
            observations_path=self.supervisor.observations_path,
            supervised=self.supervisor.supervised,
            judge=judge_with(self.supervisor.settings),  # problems judged once, in the model
        )
        self._fleet_views: list[AgentsPane | ProblemsPane] = []
        self._ui_thread = threading.get_ident()  # where it runs: on_mount says again
        self._panes: list[Pane[Any]] = []
        self.status_bar = StatusBar(self.root, id="status")
        paths = self.registry.paths
        self.routes = Routes({paths.identities, paths.hook_files, paths.supervisor})
        self.spending = SpendWatch()  # the top line's dollars and plan; budget toasts
        self._monitor_started = False
        self._spend_minute: object = None
        # While it is open the console holds the project's console lock: Claude Code's
        # hooks then bring AskUserQuestion calls here (services/claude/bridge/presence.py).
        self.presence = ConsolePresence(self.registry.paths)
        self.upkeep = Upkeep(self, project)  # the daily prune, what a kill left undone
        # Why nothing can be written here (None: it can): then the console only watches.
        self.read_only = unwritable(project.root)
        if self.read_only:
            self.monitor = False  # it would write what it sees

    def compose(self) -> ComposeResult:
        yield self.status_bar
        if self._quick_to_load():
            self.fleet.load()  # the first frame is then complete
        agents = LocalAgents(self.supervisor, self.fleet)
        self._fleet_views = [
            AgentsPane(
                self.fleet,
                self.supervisor.settings,
                agents,
                tracker=ChangeTracker(self.reviews),
                extra=self.project.settings(AgentColumns).shown,
            ),
            ProblemsPane(self.fleet),
        ]
        panes: list[Pane[Any]] = [
            *self._fleet_views,
            LocalQuestionsPane(self.questions),
            LocalSuspendedPane(self.suspension, self.checkpoints),
            MergeQueuePane(self.merge_queue),
            LocalPermissionsPane(self.permissions),
            TasksPane(self.dispatch),
            LocalPipelinesPane(self.pipelines, self.gate_answers),
        ]
        self._panes = panes  # made once: a query walks every widget, each second
        yield from self.compose_panes(panes)
        yield FilterBox()
        yield ConsoleFooter()

    # -- panes -----------------------------------------------------------------------------

    def pipeline_work(self, pipeline: Pipeline) -> dict[str, NodeWork]:
        """Who works on each node of ``pipeline``: the fleet's agents and the merge queue's
        entries, joined by node id (``agents.work_by_node``)."""
        if pipeline.plan is None:
            return {}
        try:
            entries = self.query_one(MergeQueuePane).state.entries
        except NoMatches:
            entries = []
        nodes = [node.node_id for node in pipeline.plan.nodes]
        return work_by_node(nodes, list(self.fleet.records.values()), entries)

    @property
    def panes(self) -> list[Pane[Any]]:
        return list(self._panes)

    @property
    def file_panes(self) -> list[FilePane[Any]]:
        # Not query(FilePane): a query by type follows each class's first base only.
        return [pane for pane in self.panes if isinstance(pane, FilePane)]

    @property
    def agents_pane(self) -> AgentsPane:
        return self.query_one(AgentsPane)

    # -- lifecycle ---------------------------------------------------------------------------

    def on_mount(self) -> None:
        self._ui_thread = threading.get_ident()
        loaded = bool(self.fleet.records) or self._quick_to_load()
        if not loaded:
            self.load_fleet()  # its spending, problems and the monitor: once it is drawn
        if self.read_only:
            self.status_bar.set_note("read-only", about="root")
            self.upkeep.say_read_only(self.read_only)
        elif not self._hold_presence():
            self.set_interval(PRESENCE_RETRY_SECONDS, self._hold_presence)
        self.status_bar.order = [pane.PANE_ID for pane in self.panes]
        self.background_poll = BackgroundPoll(self, self.project, self.registry)
        if loaded:
            self.post_message(SpendMoved(every=True))
        talisman = self.project.talisman
        for problem in [*talisman.problems, *talisman.warnings]:
            self.notify(problem, title="Configuration", severity="warning", timeout=15)
        if self.watch_files:
            self.feed = ChangeFeed(self, self.routes.learn(self.file_panes))
            if self.feed.start():
                # Its events keep the model current: the monitor visits the model's
                # supervised agents instead of finding them by stat each pass.
                self.supervisor.follow_fleet(self.fleet.supervised)
            else:
                self.status_bar.set_note("watching off: rescanning")
                self.notify(self.feed.unavailable or "", severity="warning")
            self.set_interval(self.rescan_seconds, self._rescan)
        if self.tick_seconds:
            self.set_interval(self.tick_seconds, self.tick)
        if self.watch_files and not self.read_only:
            self.set_interval(FEED_SECONDS, self._feed_conversations)
        # What a kill left undone is said; a console that follows the files prunes them.
        self.upkeep.start(
            prune=self.watch_files and not self.read_only, read_only=bool(self.read_only)
        )
        if self.monitor and shutil.which("tmux") is None:
            self.monitor = False
            self.notify(
                "tmux is not installed: agents are followed through their files only "
                "(no pane readings, crash detection or re-spawn)",
                title="Not monitoring",
                severity="warning",
                timeout=15,
            )
        if self.watch_files:
            self.background_poll.start()  # Claude Code's background sessions, if any
        if loaded:
            # After the first paint: the monitor's first pass (every agent's pane read over
            # tmux) would otherwise hold up the first screen the operator sees. Until its
            # first report the Agents pane follows saved passes (another monitor's, if any).
            self.call_after_refresh(self._start_monitor)
        self.agents_pane.table.focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "answer_oldest" and self.read_only:
            return False
        return super().check_action(action, parameters)

    def _quick_to_load(self) -> bool:
        """A small fleet is read before the first frame; a large one after it, in a worker
        (paint first, fill after)."""
        try:
            with os.scandir(self.registry.paths.identities) as entries:
                # Counted no further than needed (asked twice as it starts, on the UI thread).
                return sum(1 for _ in islice(entries, INLINE_LOAD + 1)) <= INLINE_LOAD
        except OSError:
            return True

    @background("fleet-rescan", exclusive=True)
    def load_fleet(self) -> None:
        """Read the fleet (a large one after the first frame) and draw its first rows at
        once; what else follows from every agent (problems, spending, the monitor's first
        pass: together more than the read) waits until they are painted."""
        change = self.fleet.load(judged=False)
        if not cancelled():
            self.call_from_thread(self._fleet_loaded, change)

    def _loading(self) -> bool:
        """The first load's worker is still reading (a slow disk: a minute at 50,000
        agents from a cold cache; its rows are drawn only when it ends)."""
        return any(
            worker.name == "load_fleet" and not worker.is_finished for worker in self.workers
        )

    def _fleet_loaded(self, change: FleetChange) -> None:
        if self._draw(change):
            after_frame(self.agents_pane, SETTLE_PAUSE, self.settle_fleet)  # behind its rows

    def _draw(self, change: FleetChange) -> bool:
        """The panes that draw the model told of ``change`` now (on the UI thread); False
        when the console is closing (their tables are already gone)."""
        message = FleetChanged(change)
        try:
            for view in self._fleet_views:
                view.on_fleet_changed(message)
        except NoMatches:
            return False
        return True

    @background("fleet-settle")
    def settle_fleet(self) -> None:
        """After a load's rows are painted: every agent's problems judged, its spending
        taken in, the conversations its hooks say grew marked to index; then the monitor."""
        self.fleet_changed(self.fleet.judge_all())
        keys = list(self.fleet.records)
        self.feed_due.saw(self.fleet.get(key) for key in keys)
        toasts = self.spending.catch_up(keys, self.fleet.get, self.clock.now())
        if not cancelled():
            self.call_from_thread(self._settled, toasts)

    def _settled(self, toasts: list[tuple[str, SeverityLevel]]) -> None:
        self._notify_budgets(toasts)
        self._show_spend()
        self._start_monitor()

    def _hold_presence(self) -> bool:
        """Take the console lock (another console on the root may hold it: then later)."""
        try:
            return self.presence.try_hold(started_at=iso_z(self.clock.now()))
        except (RuneError, OSError):
            return False

    def on_unmount(self) -> None:
        if self.conversation_search is not None:
            self.conversation_search.close()
        self.presence.release()
        self.monitor_loop.stop()
        if self.feed is not None:
            self.feed.stop()

    def _start_monitor(self) -> None:
        if self.monitor and not self._monitor_started:
            self._monitor_started = True
            self.run_monitor()

    @background("monitor", exclusive=True)
    def run_monitor(self) -> None:
        self.monitor_loop.run()

    def stop_monitor(self, timeout: float) -> bool:
        """Stop the monitor; True once its pass has ended (``ConsoleMonitor.stop``)."""
        return self.monitor_loop.stop(timeout)

    def _apply_report(self, report: MonitorReport) -> None:
        # Another monitor (e.g. `runeconsole monitor`) holds the lock: follow its saved passes.
        self.fleet.monitoring = not report.skipped
        if report.skipped:
            return
        self.fleet_changed(self.fleet.apply_observations(report.observations))
        toast = monitor_toast(report)
        if toast is not None:
            self.notify(toast[0], title="Agents", severity=toast[1], markup=False)

    def follow_dir(self, pane: FilePane[Any], directory: Path) -> None:
        """Follow a directory that appeared after start (a new signal or context dir)."""
        if self.feed is not None and self.feed.add(directory):
            self.routes.add(pane, directory)

    def on_file_pane_follow_directory(self, message: FilePane.FollowDirectory) -> None:
        self.follow_dir(message.pane, message.directory)
        message.pane.read_directory(message.directory)

    # -- the fleet model -------------------------------------------------------------------

    def fleet_changed(self, change: FleetChange) -> None:
        """Tell the panes that draw the model which keys changed (from any thread). On the
        UI thread (file events, the tick, the monitor's reports) they are told at once: a
        heartbeat fleet changes 40 times a second, and each message costs its dispatch."""
        if not change:
            return
        # A heartbeat alone moves a row's age: no conversation grew, no spending moved.
        moved = change.moved
        self.feed_due.saw(self.fleet.get(key) for key in moved - change.removed)
        if threading.get_ident() != self._ui_thread:
            for view in self._fleet_views:
                view.post_message(FleetChanged(change))
            if moved and self.spending.moved(moved):
                self.post_message(SpendMoved())
            return
        if not self._draw(change):
            return
        if moved:
            self.spending.moved(moved)
            self._follow_spend()

    def on_spend_moved(self, message: SpendMoved) -> None:
        self._follow_spend(every=message.every)

    def _follow_spend(self, every: bool = False) -> None:
        """The top line's spending follows the agents that changed; a budget crossed is a
        toast (``tui/app_base/spend.py``)."""
        keys = self.spending.take()
        if every:
            keys.update(self.fleet.records.keys())
        now = self.clock.now()
        self._notify_budgets(self.spending.follow({k: self.fleet.get(k) for k in keys}, now))
        self._show_spend()

    def _notify_budgets(self, toasts: list[tuple[str, SeverityLevel]]) -> None:
        for toast, severity in toasts:
            self.notify(toast, title="Budget", severity=severity, timeout=15, markup=False)

    def _show_spend(self) -> None:
        if self.status_bar.is_attached:  # not while the console closes
            self.status_bar.spend = self.spending.text(self.clock.now())

    @background("fleet-rescan", exclusive=True)
    def rescan_fleet(self) -> None:
        """Recover from dropped events: by stat, reading only files that changed."""
        self.fleet_changed(self.fleet.rescan(paced=True))

    def on_state_changed(self, _: StateChanged) -> None:
        if self.feed is None:
            return
        paths = by_directory(self.feed.drain())
        self.fleet_changed(self.fleet.apply_paths(self.routes.fleet_paths(paths)))
        for pane, mine in self.routes.by_pane(paths):
            try:
                pane.apply_changes(mine)
            except NoMatches:  # the console is closing: the pane's table is already gone
                return

    def on_pane_summary(self, message: Pane.Summary) -> None:
        # A worker's summary can arrive while the console is closing: nothing to show it on.
        if self.status_bar.is_attached:
            self.status_bar.set_figures(message.pane_id, message.figures)

    def _rescan(self) -> None:
        # Inotify on a local root tells of every change: the rescan then trusts it, and
        # stats every file only at its slower full pass (``StatIndex.watched``); events
        # lost to an overflow are read again at once.
        if self.feed is not None:
            if self.feed.lost_since():
                self.fleet.events_lost()
            self.fleet.follow_events(self.feed.reliable)
        if not self._loading():  # the rescan, one of its group, would cancel the load
            self.rescan_fleet()
        for pane in self.file_panes:
            for directory in self.routes.unfollowed(pane):
                self.follow_dir(pane, directory)
            pane.rescan()

    def tick(self) -> None:
        """A second passed: colours due to change turn (the model's deadlines), then every
        pane moves its clocks."""
        self.fleet_changed(self.fleet.tick(self.clock.now()))
        minute = self.clock.now().replace(second=0, microsecond=0)
        if minute != self._spend_minute:  # past midnight, today starts again at nothing;
            self._spend_minute = minute  # a window of the plan resets
            self._show_spend()
        try:
            for pane in self.panes:
                pane.tick()
        except NoMatches:  # a tick that fires while the console closes: nothing to redraw
            return

    # -- actions ---------------------------------------------------------------------------

    def on_pane_operator_wanted(self, message: Pane.OperatorWanted) -> None:
        if not self.read_only:  # the notifier keeps its times in the project
            self.reach_operator(message.key, message.title, message.body)

    @background("notify command")
    def reach_operator(self, key: str, title: str, body: str) -> None:
        """``runeconsole.notify.command`` and the push URLs (if set), off the UI thread; a
        failure is shown (``WorkFailed``)."""
        notifier_for(self.registry.paths).notify(key, title, body)

    def on_review_wanted(self, message: ReviewWanted) -> None:
        """``d`` on an agent, ``enter`` or ``d`` on a queue entry: its review screen."""
        if message.agent is not None and self.fleet.get(message.agent) is not None:
            open_review(self, LocalReview(self.reviews, message.agent))
        elif message.branch:
            open_review(self, BranchReview(self.reviews, message.branch))
        else:
            self.notify(f"{message.agent}: no such agent", title="Review", severity="warning")

    def _feed_conversations(self) -> None:
        keys = self.feed_due.take()
        if keys:
            self.feed_conversations(keys)

    @background("conversation index")
    def feed_conversations(self, keys: list[str]) -> None:
        """Index what the agents' hooks said was written (a worker: sqlite and the reads)."""
        if self.conversation_search is None:
            self.conversation_search = IndexSearch(self.project)
        self.conversation_search.feed(keys)

    def search_screen(self, typed: str = "") -> SearchScreen:
        """``S``: every conversation of this root (its index, caught up as it searches)."""
        if self.conversation_search is None:
            self.conversation_search = IndexSearch(self.project)
        search = self.conversation_search
        return SearchScreen(search, search.open, self.clock.now, typed=typed)

    # -- tasks and worktrees ---------------------------------------------------------------

    def compare_task(self, task_id: str) -> None:
        """A task's Compare view (its row's enter or ``c``, the palette)."""
        self.push_screen(CompareScreen(self.dispatch, task_id))

    def show_worktrees(self) -> None:
        """The Worktrees view (``w`` in the Tasks pane, the palette)."""
        self.push_screen(WorktreesScreen(self.dispatch))

    def on_tasks_pane_compare_wanted(self, message: TasksPane.CompareWanted) -> None:
        self.compare_task(message.task_id)

    def on_tasks_pane_worktrees_wanted(self, _: TasksPane.WorktreesWanted) -> None:
        self.show_worktrees()

    def on_compare_screen_diff_wanted(self, message: CompareScreen.DiffWanted) -> None:
        """``D`` in the Compare view: one attempt against another's branch, read only."""
        open_review(self, message.target)


def create_app(
    root: Path,
    *,
    clock: Clock | None = None,
    watch: bool = True,
    monitor: bool = False,
    rescan_seconds: float = 5.0,
    tick_seconds: float = 1.0,
) -> RuneConsole:
    """Build the console for ``root``. Tests pass a manual clock and ``watch=False``.

    ``monitor`` runs the tmux supervisor loop inside the console (the CLI turns it on;
    tests that do not bring their own tmux server leave it off).
    """
    return RuneConsole(
        # Lenient: a bad setting is shown and its default used; it never stops the console.
        Project(root, clock, strict=False, via="console"),
        watch=watch,
        monitor=monitor,
        rescan_seconds=rescan_seconds,
        tick_seconds=tick_seconds,
    )
