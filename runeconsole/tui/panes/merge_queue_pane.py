"""The Merge queue pane: the queue's figures, the batches at work (each slot's step and
elapsed time, a bisection's halves), entries in the order taken with their priority and
predicted conflicts, processing from here watched live (``merge_queue_processing``), and
where ``main`` is on the remote a queue lands on, ``f`` fetching it (``merge_queue_where``).

Nothing here blocks the UI thread: reading the queue and predicting conflicts (git), an
operator's action (a write under the queue's lock) and processing each run in a worker
(``tui/support/workers.py``) that posts its outcome back as a message: ``Scanned``, ``Acted``,
``Stepped`` and ``Processed`` (where main is: ``RemoteLine.Located``). The batches shown are
those the queue's file records, so a processor started elsewhere (``merge-queue process
--all``) is watched the same way.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Static

from runeconsole.adapters import git_worktrees as gw
from runeconsole.core.errors import RuneError
from runeconsole.core.pids import pid_alive
from runeconsole.services.merge_queue import (
    FAILED,
    PENDING,
    MergeQueue,
    Prediction,
    QueueEntry,
    QueueState,
)
from runeconsole.services.merge_queue.stats import queue_stats
from runeconsole.tui.modals.confirm import ConfirmScreen
from runeconsole.tui.modals.priority_modal import PriorityScreen
from runeconsole.tui.panes.merge_queue_processing import QueueProcessing
from runeconsole.tui.panes.merge_queue_rows import (
    COLUMNS,
    age_of,
    batches_text,
    detail_text,
    header_text,
    row_values,
    search_fields,
)
from runeconsole.tui.panes.merge_queue_where import RemoteLine
from runeconsole.tui.panes.pane import MERGE_QUEUE, FilePane
from runeconsole.tui.support.messages import ReviewWanted
from runeconsole.tui.support.workers import background, cancelled
from runeconsole.tui.widgets.steady_static import SteadyStatic
from runeconsole.tui.widgets.table_view import TableView

QUEUE_FILES = frozenset({"merge-queue.json", "merge-queue.processor.json"})


class MergeQueuePane(FilePane[QueueEntry]):
    DEFAULT_CLASSES = "-toasts-folded"  # toasts in one line, off its log (toast_shelf.py)
    DEFAULT_CSS = """
    #mq-header {
        height: 1;
        padding: 0 1;
    }
    #mq-batches {
        height: auto;
        max-height: 5;
        padding: 0 1;
        display: none;
    }
    #mq-detail {
        height: auto;
        max-height: 6;
        padding: 0 1;
        border-top: solid $panel;
    }
    """
    PANE_ID = MERGE_QUEUE
    TITLE = "Merge queue"
    SHORT_TITLE = "Queue"
    COLUMNS = COLUMNS
    MOVING = frozenset({"age"})
    HELP_KEYS = (
        ("p", "process the head batch (asks first), watching each step"),
        ("P", "process until the queue is empty, batches testing side by side (asks first)"),
        ("enter / d", "review the selected entry's changes (its agent's, or its branch's)"),
        ("r", "retry the selected failed entry"),
        ("x", "remove the selected entry (asks first)"),
        ("!", "the selected pending entry's priority: urgent, high, normal, low"),
        ("+ / -", "move the selected pending entry up / down (within its priority)"),
        ("space", "pause / resume the queue"),
        ("f", "fetch the remote's main now (a queue that lands on a remote)"),
    )
    WRITES = frozenset({"process", "retry", "remove", "priority", "move", "toggle_pause", "fetch"})
    ENTER = "review"
    BINDINGS = [
        Binding("p", "process", "Process head"),
        Binding("P", "process(True)", "Process all", show=False),
        Binding("d", "review", "Review"),
        Binding("r", "retry", "Retry"),
        Binding("x", "remove", "Remove"),
        Binding("exclamation_mark", "priority", "Priority"),
        # In the help (+ / -), not the footer: at 80 columns it has no room for them.
        Binding("plus,equals_sign", "move(-1)", "Move up", show=False),
        Binding("minus", "move(1)", "Move down", show=False),
        Binding("space", "toggle_pause", "Pause/resume"),
        Binding("f", "fetch", "Fetch", show=False),  # in the help: no room in the footer
    ]

    class Scanned(Message):
        """The queue as read, with predictions (``None``: not computed yet, keep the old)."""

        def __init__(self, state: QueueState, predictions: dict[str, Prediction] | None) -> None:
            super().__init__()
            self.state = state
            self.predictions = predictions

    class Acted(Message):
        """An operator's action was done (``error``: refused, with why) and the queue after."""

        def __init__(self, action: str, state: QueueState, error: str | None) -> None:
            super().__init__()
            self.action = action
            self.state = state
            self.error = error

    def __init__(self, queue: MergeQueue, **kwargs: Any) -> None:
        super().__init__(clock=queue.clock, **kwargs)
        self.queue = queue
        self.state = QueueState()
        self.predictions: dict[str, Prediction] = {}
        self._taken: dict[str, int] = {}  # each entry's place in the order taken
        self._refs: Path | None = None  # the repository's refs/heads, once git has said
        self._turns = threading.Condition()  # actions' workers take turns, in key order
        self._issued = self._served = 0
        self.where_line = RemoteLine(queue, id="mq-where")

    def compose(self) -> ComposeResult:
        yield SteadyStatic(id="mq-header")
        yield self.where_line
        yield SteadyStatic(id="mq-batches")
        yield self.table
        yield SteadyStatic(id="mq-detail")
        yield QueueProcessing(self.queue, id="mq-log")

    # -- rows ------------------------------------------------------------------------------

    def cells(self, key: str, record: QueueEntry) -> tuple[object, ...]:
        return row_values(record, self.predictions.get(key), self.now())

    def search_fields(self, key: str, record: QueueEntry) -> tuple[str, ...]:
        return search_fields(record)

    def order(self, key: str, record: QueueEntry) -> int:
        """Rows in the order the queue takes them."""
        return self._taken.get(key, len(self._taken))

    def moving(self, key: str, record: QueueEntry) -> dict[str, object]:
        return {"age": age_of(record, self.now())}

    def figures(self) -> dict[str, int]:
        counts = self.state.counts()
        figures = {"queued": counts[PENDING]}
        if counts[FAILED]:
            figures["merge failed"] = counts[FAILED]
        return figures

    def on_mount(self) -> None:
        self.rescan()  # rows as soon as the queue is read; predictions (git) after them

    def watch_dirs(self) -> list[Path]:
        """The queue's files, and once git has said where (``read_all``, off the UI
        thread), the repository's branches: main moving changes the predictions."""
        dirs = [self.queue.paths.state, self.queue.paths.signals]
        return [*dirs, self._refs] if self._refs is not None else dirs

    def _find_refs(self) -> None:
        """In a worker: where the branches are (asked of git once: they do not move)."""
        if self._refs is None:
            with contextlib.suppress(RuneError):
                self._refs = gw.common_dir(self.queue.root) / "refs" / "heads"
                self.follow(self._refs)

    # -- reading ----------------------------------------------------------------------------

    def _predict(self, state: QueueState) -> dict[str, Prediction]:
        try:
            return self.queue.predict(state)
        except RuneError as exc:
            return {e.entry_id: Prediction(e.entry_id, error=exc.message) for e in state.pending()}

    def apply_changes(self, paths: set[Path]) -> None:
        relevant = QUEUE_FILES | {self.queue.settings.main_branch}
        if any(p.name in relevant or p.name.endswith("-MERGE_READY.json") for p in paths):
            self.rescan()

    def rescan(self) -> None:
        self.read_all()

    @background("merge-queue-scan", exclusive=True)
    def read_all(self) -> None:
        self._find_refs()
        try:
            self.queue.pick_up_signals()
        except RuneError as exc:
            self.app.call_from_thread(self.app.notify, exc.message, severity="warning")
        state = self.queue.read()
        if not cancelled():
            self.post_message(self.Scanned(state, None))
        self.where_line.locate()  # git, a few quick commands: before the predictions
        predictions = self._predict(state)
        if not cancelled():  # the console may be closing
            self.post_message(self.Scanned(state, predictions))

    def on_merge_queue_pane_scanned(self, message: Scanned) -> None:
        message.stop()
        predictions = self.predictions if message.predictions is None else message.predictions
        self.show(message.state, predictions)

    def show(self, state: QueueState, predictions: dict[str, Prediction]) -> None:
        """Make the table match the queue: upsert by key, drop vanished, in the order taken
        (sorted again only when an entry came or moved)."""
        self.state, self.predictions = state, predictions
        ordered = state.ordered()
        self._taken = {entry.entry_id: at for at, entry in enumerate(ordered)}
        self.sync({entry.entry_id: entry for entry in ordered})
        self.refresh_header()
        self.refresh_detail()

    # -- display ------------------------------------------------------------------------------

    def refresh_header(self) -> None:
        doing = self.live.doing()
        settings, now = self.queue.settings, self.queue.clock.now()
        stats = queue_stats(
            self.state,
            now,
            parallel_runs=settings.parallel_runs,
            batch_max=settings.batch_max,
        )
        self.query_one("#mq-header", Static).update(header_text(self.state, stats, doing))
        batches = self.query_one("#mq-batches", Static)
        batches.display = bool(stats.batches)
        if stats.batches:
            pid = stats.batches[0].get("pid")
            live = isinstance(pid, int) and pid_alive(pid)
            batches.update(batches_text(stats.batches, now, live))

    def selected_entry(self) -> QueueEntry | None:
        chosen = self.selected()
        return chosen[1] if chosen is not None else None

    def refresh_detail(self) -> None:
        entry = self.selected_entry()
        prediction = self.predictions.get(entry.entry_id) if entry else None
        remote, now = self.queue.settings.remote, self.now()
        self.query_one("#mq-detail", Static).update(detail_text(entry, prediction, now, remote))

    @property
    def live(self) -> QueueProcessing:
        return self.query_one("#mq-log", QueueProcessing)

    @property
    def processing(self) -> str | None:
        """The entry or batch being processed from this console, if any."""
        return self.live.processing

    def log_lines(self) -> list[Text]:
        """Each step's latest line (with elapsed time), then the tail of the test output."""
        return self.live.lines()

    def on_table_view_row_highlighted(self, event: TableView.RowHighlighted) -> None:
        event.stop()
        self.refresh_detail()

    def action_review(self) -> None:
        entry = self.selected_entry()
        if entry is not None:
            self.post_message(ReviewWanted(entry.identity, entry.branch or None))

    def tick(self) -> None:
        super().tick()
        if self.processing or self.state.data.get("batches"):
            self.refresh_header()  # elapsed times
        if self.where_line.display:
            self.where_line.redraw()  # the last fetch's age
        entry = self.selected_entry()
        if entry is not None and entry.get("remote_wait"):
            self.refresh_detail()  # how long it has waited for the remote

    def refilter(self) -> None:
        super().refilter()
        self.refresh_detail()  # the cursor's entry, or none when nothing passes

    # -- actions ------------------------------------------------------------------------------

    def _act(self, action: str, call: Callable[[], object]) -> None:
        """Do a queue action in a worker; actions apply in the order their keys came."""
        self._issued += 1
        self._run_action(self._issued, action, call)

    @background("merge-queue-action")
    def _run_action(self, turn: int, action: str, call: Callable[[], object]) -> None:
        """One action (under the queue's lock), after the ones before it; ``Acted`` brings
        the queue as it stands after it."""
        with self._turns:
            self._turns.wait_for(lambda: self._served == turn - 1)
        try:
            try:
                call()
            except RuneError as exc:
                error: str | None = exc.message
            else:
                error = None
            state = self.queue.read()
        finally:
            with self._turns:
                self._served = turn
                self._turns.notify_all()
        if not cancelled():
            self.post_message(self.Acted(action, state, error))

    def on_merge_queue_pane_acted(self, message: Acted) -> None:
        """Rows follow at once, predictions (git) from the scan worker."""
        message.stop()
        if message.error is not None:
            self.app.notify(message.error, title=message.action, severity="error")
            return
        self.show(message.state, self.predictions)
        self.rescan()

    def action_fetch(self) -> None:
        self.where_line.fetch()

    def on_remote_line_fetched(self, message: RemoteLine.Fetched) -> None:
        message.stop()
        self.rescan()

    def action_process(self, every: bool = False) -> None:
        if self.processing:
            self.app.notify(f"already processing {self.processing}", severity="warning")
            return
        pending = self.state.pending()
        if not pending:
            self.app.notify("nothing is waiting in the merge queue")
            return
        head = pending[0]
        title, body = QueueProcessing.question(pending, self.queue.settings, every)
        self.app.push_screen(
            ConfirmScreen(title, body, "Process"),
            lambda yes: self.live.start(head.entry_id, every) if yes else None,
        )

    def on_queue_processing_stepped(self, message: QueueProcessing.Stepped) -> None:
        """The rows follow the queue as each step leaves it."""
        message.stop()
        if message.state is not None:
            self.show(message.state, self.predictions)

    def on_queue_processing_processed(self, message: QueueProcessing.Processed) -> None:
        message.stop()
        self.refresh_header()
        self.rescan()

    def action_retry(self) -> None:
        entry = self.selected_entry()
        if entry is not None:
            self._act("Retry", lambda: self.queue.retry(entry.entry_id))

    def action_remove(self) -> None:
        entry = self.selected_entry()
        if entry is None:
            return
        self.app.push_screen(
            ConfirmScreen(
                "Remove from the merge queue?", f"{entry.entry_id}\n{entry.branch}", "Remove"
            ),
            lambda yes: (
                self._act("Remove", lambda: self.queue.remove(entry.entry_id)) if yes else None
            ),
        )

    def action_move(self, offset: int) -> None:
        entry = self.selected_entry()
        if entry is not None:
            self._act("Move", lambda: self.queue.move(entry.entry_id, offset))

    def action_toggle_pause(self) -> None:
        self._act("Pause", lambda: self.queue.set_paused(not self.state.paused))

    def action_priority(self) -> None:
        entry = self.selected_entry()
        if entry is None or entry.status != PENDING:
            self.app.notify("only a pending entry's priority changes", severity="warning")
            return

        def chosen(priority: str | None) -> None:
            if priority is not None:
                self._act("Priority", lambda: self.queue.set_priority(entry.entry_id, priority))

        screen = PriorityScreen(entry.entry_id, entry.priority, self.queue.settings.aging_minutes)
        self.app.push_screen(screen, chosen)
