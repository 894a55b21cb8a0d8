"""The Merge queue pane: entries in order, predicted conflicts, and processing watched live.

Nothing here blocks the UI thread: reading the queue and predicting conflicts (git), an
operator's action (a write under the queue's lock) and processing each run in a worker
(``tui/workers.py``) that posts its outcome back as a message: ``Scanned``, ``Acted``,
``Stepped`` and ``Processed``.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Static

from runeconsole.adapters import git_worktrees as gw
from runeconsole.core.errors import RuneError
from runeconsole.services.merge_queue import (
    FAILED,
    PENDING,
    PICKED_UP,
    RECOVERED,
    MergeQueue,
    Prediction,
    ProcessReport,
    Progress,
    QueueEntry,
    QueueState,
)
from runeconsole.tui.confirm import ConfirmScreen
from runeconsole.tui.keyed_table import KeyedTable
from runeconsole.tui.merge_queue_rows import (
    COLUMNS,
    age_of,
    detail_text,
    header_text,
    row_values,
    search_fields,
)
from runeconsole.tui.pane import MERGE_QUEUE, LivePane
from runeconsole.tui.workers import background, cancelled

QUEUE_FILES = frozenset({"merge-queue.json", "merge-queue.processor.json"})
OUTPUT_LINES = 3  # test output shown under the steps while processing


class MergeQueuePane(LivePane):
    DEFAULT_CSS = """
    #mq-header {
        height: 1;
        padding: 0 1;
    }
    #mq-detail {
        height: auto;
        max-height: 6;
        padding: 0 1;
        border-top: solid $panel;
    }
    #mq-log {
        height: auto;
        max-height: 7;
        padding: 0 1;
        border-top: solid $panel;
        display: none;
    }
    """
    PANE_ID = MERGE_QUEUE
    TITLE = "Merge queue"
    HELP_KEYS = (
        ("p", "process the head of the queue (asks first), watching each step"),
        ("r", "retry the selected failed entry"),
        ("d", "remove the selected entry (asks first)"),
        ("+ / -", "move the selected pending entry up / down"),
        ("space", "pause / resume the queue"),
    )
    BINDINGS = [
        Binding("p", "process", "Process head"),
        Binding("r", "retry", "Retry"),
        Binding("d", "remove", "Remove"),
        Binding("plus,equals_sign", "move(-1)", "Move up"),
        Binding("minus", "move(1)", "Move down"),
        Binding("space", "toggle_pause", "Pause/resume"),
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

    class Stepped(Message):
        """A step of processing, with the queue as it stands after it (``None``: output)."""

        def __init__(self, event: Progress, state: QueueState | None) -> None:
            super().__init__()
            self.event = event
            self.state = state

    class Processed(Message):
        """Processing ended: its report, or the error that stopped it."""

        def __init__(self, result: ProcessReport | None, error: str | None) -> None:
            super().__init__()
            self.result = result
            self.error = error

    def __init__(self, queue: MergeQueue, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.queue = queue
        self.state = QueueState()
        self.predictions: dict[str, Prediction] = {}
        self.figures: dict[str, int] | None = None
        self.processing: str | None = None
        self.process_started = 0.0
        self.step = ""
        self.step_lines: dict[str, Text] = {}  # step -> its latest line, in order
        self.output_lines: deque[Text] = deque(maxlen=OUTPUT_LINES)
        self._refs: Path | None = None  # the repository's refs/heads, once git has said
        self._turns = threading.Condition()  # actions' workers take turns, in key order
        self._issued = self._served = 0

    def compose(self) -> ComposeResult:
        yield Static(id="mq-header")
        yield KeyedTable(COLUMNS, id="mq-table")
        yield Static(id="mq-detail")
        yield Static(id="mq-log")

    @property
    def table(self) -> KeyedTable:
        return self.query_one("#mq-table", KeyedTable)

    def on_mount(self) -> None:
        self.rescan()  # rows as soon as the queue is read; predictions (git) after them

    def watch_dirs(self) -> list[Path]:
        dirs = [self.queue.paths.state, self.queue.paths.signals]
        if self._refs is None:  # asked of git once: a repository's refs do not move
            with contextlib.suppress(RuneError):
                self._refs = gw.common_dir(self.queue.root) / "refs" / "heads"
        if self._refs is not None:  # main moving changes the predictions
            dirs.append(self._refs)
        return dirs

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

    @background("merge-queue-scan", exclusive=True)
    def rescan(self) -> None:
        try:
            self.queue.pick_up_signals()
        except RuneError as exc:
            self.app.call_from_thread(self.app.notify, exc.message, severity="warning")
        state = self.queue.read()
        if not cancelled():
            self.post_message(self.Scanned(state, None))
        predictions = self._predict(state)
        if not cancelled():  # the console may be closing
            self.post_message(self.Scanned(state, predictions))

    def on_merge_queue_pane_scanned(self, message: Scanned) -> None:
        message.stop()
        predictions = self.predictions if message.predictions is None else message.predictions
        self.sync(message.state, predictions)

    def sync(self, state: QueueState, predictions: dict[str, Prediction]) -> None:
        """Make the table match the queue: upsert by key, drop vanished, keep queue order."""
        self.state, self.predictions = state, predictions
        now = self.queue.clock.now()
        shown = [e for e in state.ordered() if self.shows(*search_fields(e))]
        keys = [e.entry_id for e in shown]
        self.table.sync(
            [(e.entry_id, row_values(e, predictions.get(e.entry_id), now)) for e in shown]
        )
        if self.table.keys() != keys:
            self._order(keys)
        self.refresh_header()
        self.refresh_detail()
        counts = state.counts()
        figures = {"queued": counts[PENDING]}
        if counts[FAILED]:
            figures["merge failed"] = counts[FAILED]
        if figures != self.figures:
            self.figures = figures
            self.summarise(figures)

    def _order(self, keys: list[str]) -> None:
        order = {key: index for index, key in enumerate(keys)}
        current = self.table.cursor_key()
        self.table.sort("id", key=lambda cell: order.get(str(cell), len(order)))
        if current is not None and self.table.has(current):
            self.table.move_cursor(row=self.table.get_row_index(current), scroll=False)

    # -- display ------------------------------------------------------------------------------

    def refresh_header(self) -> None:
        doing = None
        if self.processing:
            elapsed = time.monotonic() - self.process_started
            doing = f"{self.processing}: {self.step} {elapsed:.1f}s"
        self.query_one("#mq-header", Static).update(header_text(self.state, doing))

    def selected(self) -> QueueEntry | None:
        key = self.table.cursor_key()
        return self.state.find(key) if key else None

    def refresh_detail(self) -> None:
        entry = self.selected()
        prediction = self.predictions.get(entry.entry_id) if entry else None
        self.query_one("#mq-detail", Static).update(detail_text(entry, prediction))
        log = self.query_one("#mq-log", Static)
        lines = self.log_lines()
        log.display = bool(lines)
        log.update(Text("\n").join(lines))

    def log_lines(self) -> list[Text]:
        """Each step's latest line (with elapsed time), then the tail of the test output."""
        return [*self.step_lines.values(), *self.output_lines]

    def on_data_table_row_highlighted(self, event: KeyedTable.RowHighlighted) -> None:
        event.stop()
        self.refresh_detail()

    def tick(self) -> None:
        now = self.queue.clock.now()

        def age(key: str) -> dict[str, object] | None:
            entry = self.state.find(key)
            return {"age": age_of(entry, now)} if entry is not None else None

        self.table.refresh_visible(age)
        if self.processing:
            self.refresh_header()

    def refilter(self) -> None:
        self.sync(self.state, self.predictions)

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
        self.sync(message.state, self.predictions)
        self.rescan()

    def action_process(self) -> None:
        if self.processing:
            self.app.notify(f"already processing {self.processing}", severity="warning")
            return
        pending = self.state.pending()
        if not pending:
            self.app.notify("nothing is waiting in the merge queue")
            return
        head = pending[0]
        body = (
            f"Rebase {head.branch} onto {self.queue.settings.main_branch}, run the tests, "
            f"and merge it if they pass.\n{head.entry_id}"
        )
        self.app.push_screen(
            ConfirmScreen("Process the head of the queue?", body, "Process"),
            lambda yes: self.start_processing(head.entry_id) if yes else None,
        )

    def start_processing(self, entry_id: str) -> None:
        self.processing = entry_id
        self.process_started = time.monotonic()
        self.step = "starting"
        self.step_lines.clear()
        self.output_lines.clear()
        self.refresh_header()
        self.run_process()

    @background("merge-queue-process", exclusive=True)
    def run_process(self) -> None:
        def report(event: Progress) -> None:
            step = not event.output and event.step not in (RECOVERED, PICKED_UP)
            self.post_message(self.Stepped(event, self.queue.read() if step else None))

        try:
            result = self.queue.process(progress=report)
        except Exception as exc:  # shown, and the pane stops saying it is processing
            reason = exc.message if isinstance(exc, RuneError) else f"{type(exc).__name__}: {exc}"
            self.post_message(self.Processed(None, reason))
            return
        self.post_message(self.Processed(result, None))

    def on_merge_queue_pane_stepped(self, message: Stepped) -> None:
        message.stop()
        event = message.event
        if event.step in (RECOVERED, PICKED_UP):  # before processing: not a step of it
            self.app.notify(event.message, title="Merge queue")
            return
        self.processing = event.entry_id
        if event.output:
            self.output_lines.append(Text(f"  │ {event.message}", "dim"))
        else:
            if event.step == "rebase":  # a new round: the old test output is stale
                self.output_lines.clear()
            style = "red" if event.step == "failed" else "green" if event.step == "merged" else ""
            self.step_lines[event.step] = Text(f"{event.elapsed:6.1f}s  {event.message}", style)
            self.step = event.step
            if message.state is not None:
                self.sync(message.state, self.predictions)
            return
        self.refresh_detail()

    def on_merge_queue_pane_processed(self, message: Processed) -> None:
        message.stop()
        result, error = message.result, message.error
        self.processing = None
        if error is not None:
            self.app.notify(error, title="Merge queue", severity="error")
        for outcome in result.outcomes if result else []:
            if outcome.merged:
                self.app.notify(f"merged {outcome.branch}", title="Merge queue")
            else:
                self.app.notify(
                    f"{outcome.branch}: {outcome.reason}", title="Merge queue", severity="error"
                )
        self.rescan()

    def action_retry(self) -> None:
        entry = self.selected()
        if entry is not None:
            self._act("Retry", lambda: self.queue.retry(entry.entry_id))

    def action_remove(self) -> None:
        entry = self.selected()
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
        entry = self.selected()
        if entry is not None:
            self._act("Move", lambda: self.queue.move(entry.entry_id, offset))

    def action_toggle_pause(self) -> None:
        self._act("Pause", lambda: self.queue.set_paused(not self.state.paused))
