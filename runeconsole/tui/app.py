"""The console app and its factory (used by the CLI, the tests and the screenshots)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.notifications import SeverityLevel
from textual.widgets import TabbedContent, TabPane

from runeconsole.adapters.clock import Clock
from runeconsole.core.errors import RuneError
from runeconsole.core.files import unwritable
from runeconsole.core.timeutil import iso_z
from runeconsole.services.checkpoints import Checkpoints
from runeconsole.services.claude.permissions import Permissions
from runeconsole.services.claude.presence import ConsolePresence
from runeconsole.services.fleet import FleetChange, FleetModel
from runeconsole.services.merge_queue import MergeQueue
from runeconsole.services.notify import notifier_for
from runeconsole.services.project import Project
from runeconsole.services.questions import Questions
from runeconsole.services.registry import Registry
from runeconsole.services.review.service import Reviews
from runeconsole.services.review.targets import BranchReview, LocalReview
from runeconsole.services.review.tracker import ChangeTracker
from runeconsole.services.supervisor import MonitorReport, Supervisor
from runeconsole.services.suspension import Suspension
from runeconsole.tui.agents_pane import AgentsPane
from runeconsole.tui.background_poll import BackgroundPoll
from runeconsole.tui.commands import AgentCommands
from runeconsole.tui.console_base import PanesApp
from runeconsole.tui.console_monitor import ConsoleMonitor
from runeconsole.tui.feed import ChangeFeed, FleetChanged, StateChanged
from runeconsole.tui.filter_box import FilterBox
from runeconsole.tui.footer import ConsoleFooter
from runeconsole.tui.keyed_table import KeyedTable
from runeconsole.tui.merge_queue_pane import MergeQueuePane
from runeconsole.tui.pane import AGENTS, LivePane
from runeconsole.tui.permissions_pane import PermissionsPane
from runeconsole.tui.problems_pane import ProblemsPane
from runeconsole.tui.questions_pane import QuestionsPane
from runeconsole.tui.review import ReviewWanted
from runeconsole.tui.review.opening import open_review
from runeconsole.tui.spend import SpendMoved, SpendWatch, spend_text
from runeconsole.tui.status_bar import StatusBar
from runeconsole.tui.suspended_pane import SuspendedPane
from runeconsole.tui.toasts import RepeatFilter, monitor_toast
from runeconsole.tui.upkeep import Upkeep
from runeconsole.tui.workers import WorkFailed

PRESENCE_RETRY_SECONDS = 2.0
INLINE_LOAD = 1000  # identity files read before the first frame; more are read after it


class RuneConsole(PanesApp):
    TITLE = "runeconsole"
    CSS_PATH = "console.tcss"  # beside this module; panes and modals own the rest
    COMMANDS = App.COMMANDS | {AgentCommands}
    BINDINGS = [
        Binding("a", "answer_oldest", "Answer"),
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
        # What agents changed (the Agents pane's CHANGES, the review screen): one cache.
        self.reviews = Reviews(
            project,
            registry=self.registry,
            hooks=self.supervisor.hooks,
            queue=self.merge_queue,
        )
        self.feed: ChangeFeed | None = None
        # The one fleet model: the Agents and Problems panes draw it, file events, the
        # rescan, the tick and the monitor feed it (services/fleet/model.py).
        self.fleet = FleetModel(
            self.registry,
            self.supervisor.hooks,
            saved_observations=self.supervisor.observations,
            observations_path=self.supervisor.observations_path,
            supervised=self.supervisor.supervised,
        )
        self._fleet_views: list[LivePane] = []
        # Which directories each pane follows, worked out once (some panes ask git or list
        # a directory to know) and refreshed with the rescan, not on every file event.
        self._routes: dict[LivePane, set[Path]] = {}
        self._toasts = RepeatFilter()
        self.spending = SpendWatch()  # the top line's dollars and plan; budget toasts
        self._spend_minute: object = None
        # While it is open the console holds the project's console lock: Claude Code's
        # hooks then bring AskUserQuestion calls here (services/claude/presence.py).
        self.presence = ConsolePresence(self.registry.paths)
        self.upkeep = Upkeep(self, project)  # the daily prune, what a kill left undone
        # Why nothing can be written here (None: it can): then the console only watches.
        self.read_only = unwritable(project.root)
        if self.read_only:
            self.monitor = False  # it would write what it sees

    def compose(self) -> ComposeResult:
        yield StatusBar(self.root, id="status")
        if self._quick_to_load():
            self.fleet.load()  # the first frame is then complete
        self._fleet_views = [
            AgentsPane(self.supervisor, self.fleet, ChangeTracker(self.reviews)),
            ProblemsPane(self.supervisor, self.fleet),
        ]
        panes: list[LivePane] = [
            *self._fleet_views,
            QuestionsPane(self.questions),
            SuspendedPane(self.suspension, self.checkpoints),
            MergeQueuePane(self.merge_queue),
            PermissionsPane(self.permissions),
        ]
        with TabbedContent(id="panes"):
            for number, pane in enumerate(panes, 1):
                with TabPane(f"{number} {pane.TITLE}", id=pane.PANE_ID):
                    yield pane
        yield FilterBox()
        yield ConsoleFooter()

    # -- panes -----------------------------------------------------------------------------

    @property
    def panes(self) -> list[LivePane]:
        return list(self.query(LivePane))

    @property
    def agents_pane(self) -> AgentsPane:
        return self.query_one(AgentsPane)

    # -- lifecycle ---------------------------------------------------------------------------

    def on_mount(self) -> None:
        if not self.fleet.records and not self._quick_to_load():
            self.load_fleet()
        if self.read_only:
            self.query_one(StatusBar).set_note("read-only", about="root")
            self.upkeep.say_read_only(self.read_only)
        elif not self._hold_presence():
            self.set_interval(PRESENCE_RETRY_SECONDS, self._hold_presence)
        self.query_one(StatusBar).order = [pane.PANE_ID for pane in self.panes]
        self.background_poll = BackgroundPoll(self, self.project, self.registry)
        self.post_message(SpendMoved(None))
        talisman = self.project.talisman
        for problem in [*talisman.problems, *talisman.warnings]:
            self.notify(problem, title="Configuration", severity="warning", timeout=15)
        if self.watch_files:
            self._routes = {pane: set(pane.watch_dirs()) for pane in self.panes}
            self.feed = ChangeFeed(self, set().union(self.fleet_dirs, *self._routes.values()))
            if self.feed.start():
                # Its events keep the model current: the monitor visits the model's
                # supervised agents instead of finding them by stat each pass.
                self.supervisor.follow_fleet(self.fleet.supervised)
            else:
                self.query_one(StatusBar).set_note("watching off: rescanning")
                self.notify(self.feed.unavailable or "", severity="warning")
            self.set_interval(self.rescan_seconds, self._rescan)
        if self.tick_seconds:
            self.set_interval(self.tick_seconds, self.tick)
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
        if self.monitor:
            # After the first paint: the monitor's first pass (every agent's pane read over
            # tmux) would otherwise hold up the first screen the operator sees. Until its
            # first report the Agents pane follows saved passes (another monitor's, if any).
            self.call_after_refresh(self.run_monitor)
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
                return sum(1 for _ in entries) <= INLINE_LOAD
        except OSError:
            return True

    @work(thread=True, exclusive=True, group="fleet-rescan")
    def load_fleet(self) -> None:
        self.fleet_changed(self.fleet.load())

    def _hold_presence(self) -> bool:
        """Take the console lock (another console on the root may hold it: then later)."""
        try:
            return self.presence.try_hold(started_at=iso_z(self.clock.now()))
        except (RuneError, OSError):
            return False

    def on_unmount(self) -> None:
        self.presence.release()
        self.monitor_loop.stop()
        if self.feed is not None:
            self.feed.stop()

    @work(thread=True, exclusive=True, group="monitor")
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

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """A toast, unless the same one was shown moments ago (``tui/toasts.py``)."""
        if not self._toasts.fresh(title, message):
            return
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def follow_dir(self, pane: LivePane, directory: Path) -> None:
        """Follow a directory that appeared after start (a new signal or context dir)."""
        if self.feed is not None and self.feed.add(directory):
            self._routes.setdefault(pane, set()).add(directory)

    def on_live_pane_follow_directory(self, message: LivePane.FollowDirectory) -> None:
        self.follow_dir(message.pane, message.directory)
        message.pane.read_directory(message.directory)

    # -- the fleet model -------------------------------------------------------------------

    @property
    def fleet_dirs(self) -> set[Path]:
        paths = self.registry.paths
        return {paths.identities, paths.hooks, paths.supervisor}

    def fleet_changed(self, change: FleetChange) -> None:
        """Tell the panes that draw the model which keys changed (from any thread)."""
        if change:
            for view in self._fleet_views:
                view.post_message(FleetChanged(change))
            if change.changed or change.removed:
                self.post_message(SpendMoved(change.changed | change.removed))

    def on_spend_moved(self, message: SpendMoved) -> None:
        """The top line's spending follows the agents that changed; a budget crossed is a
        toast (``tui/spend.py``)."""
        keys = self.fleet.records.keys() if message.keys is None else message.keys
        now = self.clock.now()
        for toast, severity in self.spending.follow({k: self.fleet.get(k) for k in keys}, now):
            self.notify(toast, title="Budget", severity=severity, timeout=15, markup=False)  # type: ignore[arg-type]
        self._show_spend()

    def _show_spend(self) -> None:
        for bar in self.query(StatusBar):
            bar.set_spend(spend_text(self.spending.totals, self.clock.now()))

    @work(thread=True, exclusive=True, group="fleet-rescan")
    def rescan_fleet(self) -> None:
        """Recover from dropped events: by stat, reading only files that changed."""
        self.fleet_changed(self.fleet.rescan(paced=True))

    def on_state_changed(self, _: StateChanged) -> None:
        if self.feed is None:
            return
        paths = self.feed.drain()
        fleet_dirs = self.fleet_dirs
        self.fleet_changed(self.fleet.apply_paths(p for p in paths if p.parent in fleet_dirs))
        for pane, dirs in self._routes.items():
            mine = {p for p in paths if p.parent in dirs}
            if mine:
                try:
                    pane.apply_changes(mine)
                except NoMatches:  # the console is closing: the pane's table is already gone
                    return

    def on_live_pane_summary(self, message: LivePane.Summary) -> None:
        # A worker's summary can arrive while the console is closing: nothing to show it on.
        for bar in self.query(StatusBar):
            bar.set_figures(message.pane_id, message.figures)

    def _rescan(self) -> None:
        self.rescan_fleet()
        for pane in self.panes:
            for directory in set(pane.watch_dirs()) - self._routes.get(pane, set()):
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

    def action_show_pane(self, number: int) -> None:
        panes = list(self.query_one(TabbedContent).query(TabPane))
        if 0 < number <= len(panes):
            self.goto_pane(panes[number - 1].id or "")

    def goto_pane(self, pane_id: str) -> None:
        """Show a pane by its id (``agents``, ``questions``…), whatever its number. A filter
        belongs to the pane it was typed on: it is cleared when the pane changes."""
        self.action_clear_filter()
        self.query_one(TabbedContent).active = pane_id
        self.current_pane().query_one(KeyedTable).focus()

    def on_work_failed(self, message: WorkFailed) -> None:
        """A background job failed (``tui/workers.py``): shown to the operator, not fatal."""
        self.notify(message.reason, title=message.what, severity="error", timeout=15, markup=False)

    def action_answer_oldest(self) -> None:
        """``a`` from any pane: the oldest permission request or blocking question (both
        hold an agent up), then the oldest non-blocking question."""
        questions, permissions = self.query_one(QuestionsPane), self.query_one(PermissionsPane)
        question, request = questions.oldest(), permissions.oldest()
        if request is not None and (
            question is None
            or not question.blocking
            or question.asked is None
            or (request.asked is not None and request.asked <= question.asked)
        ):
            permissions.open_modal(request)
        elif question is not None:
            questions.open_modal(question)
        else:
            self.notify("No open questions or permission requests.", title="Questions", timeout=3)

    def on_live_pane_operator_wanted(self, message: LivePane.OperatorWanted) -> None:
        if not self.read_only:  # the notifier keeps its times in the project
            self.reach_operator(message.key, message.title, message.body)

    @work(thread=True, group="notify")
    def reach_operator(self, key: str, title: str, body: str) -> None:
        """``runeconsole.notify.command`` (if set), off the UI thread."""
        try:
            notifier_for(self.registry.paths).notify(key, title, body)
        except (RuneError, OSError) as exc:
            self.call_from_thread(
                self.notify, f"notify command: {exc}", severity="warning", markup=False
            )

    def on_review_wanted(self, message: ReviewWanted) -> None:
        """``d`` on an agent, ``enter`` or ``d`` on a queue entry: its review screen."""
        if message.agent is not None and self.fleet.get(message.agent) is not None:
            open_review(self, LocalReview(self.reviews, message.agent))
        elif message.branch:
            open_review(self, BranchReview(self.reviews, message.branch))
        else:
            self.notify(f"{message.agent}: no such agent", title="Review", severity="warning")

    def on_problems_pane_goto_agent(self, message: ProblemsPane.GotoAgent) -> None:
        self.goto_agent(message.key)

    def goto_agent(self, key: str) -> None:
        self.goto_pane(AGENTS)
        self.agents_pane.select(key)


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
