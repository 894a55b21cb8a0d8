"""The Merge queue pane: entries in order, predicted conflicts, and processing watched live.

Reading the queue and predicting conflicts run git, so they happen in a worker thread;
processing runs in its own worker and reports each step back to the UI thread.
"""

from __future__ import annotations

import contextlib
import time
from collections import deque
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Static
from textual.worker import get_current_worker

from runeconsole.adapters import git_worktrees as gw
from runeconsole.core.errors import RuneError
from runeconsole.core.timeutil import format_age
from runeconsole.services.merge_queue import (
    COMPLETED,
    FAILED,
    IN_PROGRESS,
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
from runeconsole.tui.pane import MERGE_QUEUE, LivePane

COLUMNS = (
    ("pos", "#", 2),
    ("status", "STATUS", 11),
    ("branch", "BRANCH", 18),
    ("identity", "IDENTITY", 20),
    ("age", "AGE", 5),
    ("conflicts", "CONFLICTS", 12),
    ("id", "ID", None),
)
STATUS_STYLE = {PENDING: "", IN_PROGRESS: "bold yellow", FAILED: "bold red", COMPLETED: "green"}
QUEUE_FILES = frozenset({"merge-queue.json", "merge-queue.processor.json"})
OUTPUT_LINES = 3  # test output shown under the steps while processing


def conflicts_cell(entry: QueueEntry, prediction: Prediction | None) -> Text:
    if entry.status == FAILED:
        files = entry.conflict_files
        return Text(", ".join(files) if files else str(entry.reason or "failed"), "red")
    if entry.status != PENDING or prediction is None:
        return Text("")
    if prediction.error:
        return Text(prediction.error, "red")
    if prediction.conflicts:
        return Text(", ".join(prediction.files) or "yes", "yellow")
    return Text("none", "dim")


def row_values(
    entry: QueueEntry, prediction: Prediction | None, now: datetime
) -> tuple[object, ...]:
    return (
        str(entry.position or ""),
        Text(entry.status, STATUS_STYLE.get(entry.status, "")),
        entry.branch,
        entry.identity or "",
        age_of(entry, now),
        conflicts_cell(entry, prediction),
        entry.entry_id,
    )


def age_of(entry: QueueEntry, now: datetime) -> str:
    queued = entry.queued_at()
    return format_age((now - queued).total_seconds() if queued else None)


def detail_text(entry: QueueEntry | None, prediction: Prediction | None) -> Text:
    """What the operator needs about the selected entry: why it failed, what it would hit."""
    if entry is None:
        return Text("the merge queue is empty", "dim")
    text = Text.assemble((entry.entry_id, "bold"), f"  {entry.branch}  ")
    text.append(entry.status, STATUS_STYLE.get(entry.status, ""))
    if entry.get("attempts"):
        text.append(f"  attempt {entry.get('attempts')}", "dim")
    if entry.status == FAILED:
        text.append(f"\nreason: {entry.reason or 'failed'}", "bold red")
        if entry.get("error"):
            text.append(f"  {entry.get('error')}", "red")
        if entry.conflict_files:
            text.append("\nconflicting files: ", "bold")
            text.append(", ".join(entry.conflict_files))
        tail = entry.get("output_tail")
        if isinstance(tail, list) and tail:
            text.append("\n" + "\n".join(str(line) for line in tail[-3:]), "dim")
    elif entry.status == PENDING and prediction is not None:
        text.append("\npredicted: ", "bold")
        text.append(prediction.summary(), "yellow" if prediction.conflicts else "green")
    elif entry.status == IN_PROGRESS and entry.get("processor_pid") is None:
        text.append("\nheld by another processor: processing waits for it", "yellow")
    elif entry.status == COMPLETED and entry.get("merged_commit"):
        text.append(f"\nmerged as {str(entry.get('merged_commit'))[:12]}", "green")
    for note in entry.get("notes") or []:
        text.append(f"\nnote: {note}", "dim")
    return text


def matches(entry: QueueEntry, text: str) -> bool:
    haystack = f"{entry.entry_id} {entry.branch} {entry.identity or ''} {entry.status}"
    return not text or text.lower() in haystack.lower()


class MergeQueuePane(LivePane):
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

    def __init__(self, queue: MergeQueue, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.queue = queue
        self.state = QueueState()
        self.predictions: dict[str, Prediction] = {}
        self.filter_text = ""
        self.figures: dict[str, int] | None = None
        self.processing: str | None = None
        self.process_started = 0.0
        self.step = ""
        self.step_lines: dict[str, Text] = {}  # step -> its latest line, in order
        self.output_lines: deque[Text] = deque(maxlen=OUTPUT_LINES)
        self._refs: Path | None = None  # the repository's refs/heads, once git has said

    def compose(self) -> ComposeResult:
        yield Static(id="mq-header")
        yield KeyedTable(COLUMNS, id="mq-table")
        yield Static(id="mq-detail")
        yield Static(id="mq-log")

    @property
    def table(self) -> KeyedTable:
        return self.query_one("#mq-table", KeyedTable)

    def on_mount(self) -> None:
        self.sync(self.queue.read(), {})  # rows now; predictions (git) follow from a worker
        self.rescan()

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

    @work(thread=True, exclusive=True, group="merge-queue-scan")
    def rescan(self) -> None:
        try:
            self.queue.pick_up_signals()
        except RuneError as exc:
            self.app.call_from_thread(self.app.notify, exc.message, severity="warning")
        state = self.queue.read()
        predictions = self._predict(state)
        if not get_current_worker().is_cancelled:  # the console may be closing
            self.app.call_from_thread(self.sync, state, predictions)

    def sync(self, state: QueueState, predictions: dict[str, Prediction]) -> None:
        """Make the table match the queue: upsert by key, drop vanished, keep queue order."""
        self.state, self.predictions = state, predictions
        table = self.table
        now = self.queue.clock.now()
        shown = [e for e in state.ordered() if matches(e, self.filter_text)]
        keys = [e.entry_id for e in shown]
        wanted, present = set(keys), table.keys()
        for key in [k for k in present if k not in wanted]:
            table.drop(key)
        for entry in shown:
            table.upsert(entry.entry_id, row_values(entry, predictions.get(entry.entry_id), now))
        if [row.key.value for row in table.ordered_rows] != keys:
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
        state = self.state
        text = Text()
        if state.error:
            text.append(f"unreadable: {state.error}", "bold red")
        elif state.paused:
            text.append("PAUSED", "bold yellow")
            text.append("  space resumes", "dim")
        else:
            text.append("queue running", "green")
        if self.processing:
            elapsed = time.monotonic() - self.process_started
            text.append(f"   processing {self.processing}: {self.step} {elapsed:.1f}s", "bold")
        counts = state.counts()
        text.append(
            f"  ·  {counts[PENDING]} queued · {counts[FAILED]} failed · {counts[COMPLETED]} merged",
            "dim",
        )
        self.query_one("#mq-header", Static).update(text)

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

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self.refresh_detail()

    def tick(self) -> None:
        now = self.queue.clock.now()
        table = self.table
        for key in table.visible_keys():
            entry = self.state.find(key)
            if entry is not None:
                table.set_cell(key, "age", age_of(entry, now))
        if self.processing:
            self.refresh_header()

    def filter(self, text: str) -> None:
        self.filter_text = text
        self.sync(self.state, self.predictions)

    # -- actions ------------------------------------------------------------------------------

    def _act(self, action: str, call: Callable[[], object]) -> None:
        """Do a queue action; rows follow at once, predictions (git) from the scan worker."""
        try:
            call()
        except RuneError as exc:
            self.app.notify(exc.message, title=action, severity="error")
            return
        self.sync(self.queue.read(), self.predictions)
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

    @work(thread=True, exclusive=True, group="merge-queue-process")
    def run_process(self) -> None:
        def report(event: Progress) -> None:
            self.app.call_from_thread(self.on_progress, event)

        try:
            result = self.queue.process(progress=report)
        except RuneError as exc:
            self.app.call_from_thread(self.finished, None, exc.message)
            return
        self.app.call_from_thread(self.finished, result, None)

    def on_progress(self, event: Progress) -> None:
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
            self.sync(self.queue.read(), self.predictions)
            return
        self.refresh_detail()

    def finished(self, result: ProcessReport | None, error: str | None) -> None:
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
