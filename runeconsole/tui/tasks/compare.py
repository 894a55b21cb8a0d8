"""The Compare view: a task's attempts side by side, one row each (its state, what its
agent is doing, ``+N −M`` and files, its tests' result, cost, time taken), and under them
everything about the selected one, its tests' output included.

Keys: ``t`` runs ``merge_queue.test_command`` in the selected attempt's worktree (``T`` in
every one), ``D`` diffs it against another attempt's branch in the review screen (``b``
chooses which; the first other one by default), ``d`` / enter reviews it on its own,
``A`` picks it and ``x`` drops the task, each after a confirmation that names what
would be lost (``confirms.py``). Reading (git per attempt) and every action run in
workers; results and refusals come back as toasts, and the view reads the task again.
The Tasks pane reads it again too when the task's file changes.
"""

from __future__ import annotations

import os
from functools import partial

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static

from runeconsole.core.control import printable
from runeconsole.core.errors import RuneError
from runeconsole.services.dispatch.service import AttemptView, Dispatch, Ending, Loss
from runeconsole.services.dispatch.task_store import DROPPED, LANDED, Task
from runeconsole.services.review.settings import ReviewSettings
from runeconsole.tui.modals.help_screen import HelpScreen
from runeconsole.tui.support.messages import ReviewWanted
from runeconsole.tui.support.workers import background, cancelled
from runeconsole.tui.tasks.attempt_diff import AttemptDiff
from runeconsole.tui.tasks.cells import (
    ATTEMPT_COLUMNS,
    TASK_STYLE,
    attempt_cells,
    attempt_detail,
)
from runeconsole.tui.tasks.confirms import drop_window, pick_window
from runeconsole.tui.tasks.ending import Consent, end_task, ending_said, lost_commits
from runeconsole.tui.widgets.footer import ConsoleFooter
from runeconsole.tui.widgets.keyed_table import KeyedTable
from runeconsole.tui.widgets.table_view import TableView

LOG_LINES = 12  # the end of a test's output shown under the attempts
LOG_BYTES = 16 * 1024

HELP = (
    ("j / k, ↑ / ↓", "move between attempts"),
    ("t", "run the test command in the selected attempt's worktree (output kept)"),
    ("T", "run it in every attempt's worktree"),
    ("D", "diff the selected attempt against another attempt's branch (review screen)"),
    ("b", "choose the attempt D diffs against (the first other one by default)"),
    ("d / enter", "review the selected attempt's own changes"),
    ("A", "pick it: its branch joins the merge queue, the others are stopped and removed"),
    ("x", "drop the task: every attempt stopped and removed"),
    (
        "",
        "A and x say first what would be lost: files keep their worktree, commits on no "
        "other branch go only if you say yes",
    ),
    ("r", "read the attempts again"),
    ("esc / q", "back to the tasks"),
)


def log_tail(path: object, lines: int = LOG_LINES) -> list[str]:
    """The last ``lines`` lines of a kept output (none if it cannot be read)."""
    if not isinstance(path, str) or not path:
        return []
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - LOG_BYTES))
            data = handle.read()
    except OSError:
        return []
    text = data.decode("utf-8", "replace").replace("\r", "")
    shown = [printable(line.expandtabs(4)) for line in text.splitlines() if line.strip()]
    return shown[-lines:]


class CompareScreen(Screen[None]):
    DEFAULT_CSS = """
    CompareScreen {
        layout: vertical;
    }
    CompareScreen #compare-title {
        height: auto;
        max-height: 3;
        padding: 0 1;
        background: $panel;
    }
    CompareScreen #compare-table {
        height: auto;
        max-height: 50%;
        scrollbar-size-vertical: 1;
        scrollbar-size-horizontal: 0;
    }
    CompareScreen #compare-detail {
        height: 1fr;
        padding: 0 1;
        border-top: solid $panel;
        scrollbar-size-vertical: 1;
    }
    """
    WRITES = frozenset({"test", "pick", "drop"})
    BINDINGS = [
        Binding("t", "test", "Test"),
        Binding("T", "test(True)", "Test all", show=False),
        Binding("D", "diff", "Diff"),
        Binding("b", "base", "Diff base", show=False),
        Binding("d", "review", "Review", show=False),
        Binding("A", "pick", "Pick"),
        Binding("x", "drop", "Drop"),
        Binding("r", "reload", "Reload", show=False),
        Binding("question_mark", "help", "Help"),
        Binding("escape,q", "close", "Close"),
    ]

    class Read(Message):
        """The task and its attempts as read (git per attempt), the ends of their tests'
        output, by attempt."""

        def __init__(self, task: Task, views: list[AttemptView], logs: dict[int, list[str]]):
            super().__init__()
            self.task, self.views, self.logs = task, views, logs

    class Failed(Message):
        """The task could not be read (gone, unreadable): why."""

        def __init__(self, reason: str) -> None:
            super().__init__()
            self.reason = reason

    class Tested(Message):
        """Tests ran in these attempts (``error``: refused, with why)."""

        def __init__(self, numbers: list[int], task: Task | None, error: str | None) -> None:
            super().__init__()
            self.numbers, self.task, self.error = numbers, task, error

    class LossesRead(Message):
        """What ending every attempt but ``keep`` (None: a drop) would lose, read in a
        worker before the question is asked."""

        def __init__(self, keep: int | None, losses: list[Loss]) -> None:
            super().__init__()
            self.keep, self.losses = keep, losses

    class Ended(Message):
        """A pick or a drop was done (``error``: refused, with why)."""

        def __init__(self, keep: int | None, ending: Ending | None, error: str | None) -> None:
            super().__init__()
            self.keep, self.ending, self.error = keep, ending, error

    class DiffWanted(Message):
        """Open the review screen on one attempt against another (the app opens it)."""

        def __init__(self, target: AttemptDiff) -> None:
            super().__init__()
            self.target = target

    def __init__(self, dispatch: Dispatch, task_id: str) -> None:
        super().__init__()
        self.dispatch = dispatch
        self.task_id = task_id
        self.record: Task | None = None
        self.views: dict[int, AttemptView] = {}
        self.logs: dict[int, list[str]] = {}
        self.base: int | None = None  # the attempt D diffs against (None: the first other)
        self.testing: set[int] = set()
        self.reads = 0  # readings shown (tests wait on it)
        self.busy: str | None = None  # a pick or a drop under way

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="compare-title")
        yield KeyedTable(ATTEMPT_COLUMNS, id="compare-table")
        with VerticalScroll(id="compare-detail"):
            yield Static(Text("reading the attempts…", "dim"), id="compare-detail-text")
        yield ConsoleFooter()

    @property
    def table(self) -> KeyedTable:
        return self.query_one("#compare-table", KeyedTable)

    def on_mount(self) -> None:
        self.table.focus()
        self.reload()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Writing keys are neither shown nor run on a read-only root."""
        return not (action in self.WRITES and getattr(self.app, "read_only", None))

    # -- reading -----------------------------------------------------------------------

    def reload(self) -> None:
        self.read()

    @background("compare-read", exclusive=True)
    def read(self) -> None:
        try:
            task = self.dispatch.task(self.task_id)
            views = self.dispatch.compare(self.task_id)
        except RuneError as exc:
            if not cancelled():
                self.post_message(self.Failed(exc.message))
            return
        logs = {}
        for view in views:
            test = view.test
            if test is not None:
                logs[view.attempt.number] = log_tail(test.get("output"))
        if not cancelled():
            self.post_message(self.Read(task, views, logs))

    def on_compare_screen_read(self, message: Read) -> None:
        message.stop()
        self.record = message.task
        self.views = {view.attempt.number: view for view in message.views}
        self.logs = message.logs
        if self.base not in self.views:
            self.base = None
        self._draw()
        self.reads += 1

    def on_compare_screen_failed(self, message: Failed) -> None:
        message.stop()
        self.query_one("#compare-detail-text", Static).update(Text(message.reason, "red"))
        self.notify(message.reason, title=f"Compare {self.task_id}", severity="error", markup=False)

    def _draw(self) -> None:
        table = self.table
        shown = table.keys()
        for key in [k for k in shown if int(k) not in self.views]:
            table.drop(key)
        base = self.base_for(self.selected_number())
        for number, view in sorted(self.views.items()):
            cells = attempt_cells(view, base=number == base, running=number in self.testing)
            table.upsert(str(number), cells)
        table.sort("n", key=lambda cell: int(str(cell)))
        table.styles.height = table.row_count + 1  # the header; at most half the screen
        self.query_one("#compare-title", Static).update(self._title())
        self._show_detail()

    def _title(self) -> Text:
        text = Text.assemble(("Compare ", "bold"), (self.task_id, "bold cyan"))
        task = self.record
        if task is None:
            return text
        text.append(f"  {task.state}", TASK_STYLE.get(task.state, ""))
        count = len(task.attempts)
        text.append(f"  {count} attempt{'s' * (count != 1)}")
        if task.pick is not None:
            text.append(f"  picked #{task.pick}", "bold cyan")
        text.append(f"  from {task.get('base') or '?'}", "dim")
        text.append("\n")
        text.append(task.title(400), "italic")
        return text

    def _show_detail(self) -> None:
        number = self.selected_number()
        view = self.views.get(number) if number is not None else None
        shown = (
            attempt_detail(view, self.logs.get(view.attempt.number, []), base=self.base_for(number))
            if view is not None
            else Text("no attempts", "dim")
        )
        self.query_one("#compare-detail-text", Static).update(shown)

    def on_table_view_row_highlighted(self, event: TableView.RowHighlighted) -> None:
        event.stop()
        self._mark_base()  # the first other attempt, when none is chosen, follows the cursor
        self._show_detail()

    def _mark_base(self) -> None:
        table, base = self.table, self.base_for(self.selected_number())
        for number in self.views:
            if table.has(str(number)):
                style = "reverse" if number == base else "bold"
                table.set_cell(str(number), "n", Text(str(number), style))

    def on_table_view_row_selected(self, event: TableView.RowSelected) -> None:
        event.stop()
        self.action_review()

    # -- the selected attempt ----------------------------------------------------------

    def selected_number(self) -> int | None:
        key = self.table.cursor_key() if self.is_mounted else None
        return int(key) if key is not None else None

    def selected_view(self) -> AttemptView | None:
        number = self.selected_number()
        view = self.views.get(number) if number is not None else None
        if view is None:
            self.notify("no attempt selected", severity="warning")
        return view

    def base_for(self, number: int | None) -> int | None:
        """The attempt ``number`` is diffed against: the one chosen with ``b``, else the
        first other one."""
        if self.base is not None and self.base != number:
            return self.base
        return next((n for n in sorted(self.views) if n != number), None)

    def action_base(self) -> None:
        number = self.selected_number()
        if number is None:
            return
        self.base = None if self.base == number else number
        said = f"D now diffs against #{number}" if self.base else "D diffs against the first other"
        self.notify(said, title=f"Compare {self.task_id}", timeout=3)
        self._draw()

    def action_diff(self) -> None:
        view = self.selected_view()
        if view is None:
            return
        number = view.attempt.number
        base = self.base_for(number)
        other = self.views.get(base) if base is not None else None
        if other is None:
            self.notify("only one attempt: nothing to diff it against", severity="warning")
            return
        worktree = view.attempt.worktree
        if worktree is None:
            self.notify(f"#{number} has no worktree", severity="warning")
            return
        settings = self.dispatch.project.settings(ReviewSettings)
        label = f"{self.task_id} #{number} vs #{base}"
        self.post_message(
            self.DiffWanted(AttemptDiff(worktree, other.attempt.branch, label, settings))
        )

    def action_review(self) -> None:
        view = self.selected_view()
        if view is not None:
            self.post_message(ReviewWanted(view.attempt.agent, view.attempt.branch or None))

    # -- tests -------------------------------------------------------------------------

    def action_test(self, every: bool = False) -> None:
        if every:
            numbers = [n for n in sorted(self.views) if n not in self.testing]
        else:
            view = self.selected_view()
            if view is None:
                return
            numbers = [view.attempt.number]
            if numbers[0] in self.testing:
                self.notify(f"#{numbers[0]}'s tests are running already", timeout=3)
                return
        if not numbers:
            return
        self.testing |= set(numbers)
        self._draw()
        self.run_tests(numbers, every)

    @background("task-test")
    def run_tests(self, numbers: list[int], every: bool) -> None:
        """``Dispatch.test`` (the test command in each worktree, output kept)."""
        try:
            if every:
                for number in numbers:
                    self.dispatch.test(self.task_id, number)
            else:
                self.dispatch.test(self.task_id, numbers[0])
            task = self.dispatch.task(self.task_id)
        except RuneError as exc:
            self.post_message(self.Tested(numbers, None, exc.message))
            return
        self.post_message(self.Tested(numbers, task, None))

    def on_compare_screen_tested(self, message: Tested) -> None:
        message.stop()
        self.testing -= set(message.numbers)
        title = f"Tests of {self.task_id}"
        if message.error is not None:
            self.notify(message.error, title=title, severity="error", markup=False)
        elif message.task is not None:
            attempts = {a.number: a for a in message.task.attempts}
            for number in message.numbers:
                test = attempts[number].get("test") if number in attempts else None
                ok = isinstance(test, dict) and bool(test.get("ok"))
                said = test.get("message") if isinstance(test, dict) else "not run"
                self.notify(
                    f"#{number}: {said}",
                    title=title,
                    severity="information" if ok else "error",
                    markup=False,
                )
        self._draw()
        self.reload()

    # -- ending: pick and drop ---------------------------------------------------------

    def _endable(self, what: str) -> bool:
        task = self.record
        if task is None:
            return False
        if self.busy:
            self.notify(f"{self.busy} is under way", severity="warning")
            return False
        if task.state in (DROPPED, LANDED):
            self.notify(f"{task.task_id} is {task.state}: nothing to {what}", severity="warning")
            return False
        if what == "pick" and task.pick is not None:
            self.notify(f"{task.task_id} already picked #{task.pick}", severity="warning")
            return False
        return True

    def action_pick(self) -> None:
        view = self.selected_view()
        if view is not None and self._endable("pick"):
            self.read_losses(view.attempt.number)

    def action_drop(self) -> None:
        if self._endable("drop"):
            self.read_losses(None)

    @background("task-losses")
    def read_losses(self, keep: int | None) -> None:
        losses = self.dispatch.losses(self.task_id, keep)
        if not cancelled():
            self.post_message(self.LossesRead(keep, losses))

    def on_compare_screen_losses_read(self, message: LossesRead) -> None:
        message.stop()
        task, keep = self.record, message.keep
        if task is None:
            return
        if keep is None:
            window = drop_window(task, message.losses)
        else:
            view = self.views.get(keep)
            if view is None:
                return
            window = pick_window(task, view, message.losses)
        consent = Consent(self.task_id, keep, lost_commits(message.losses))
        self.app.push_screen(window, partial(self._confirmed, consent))

    def _confirmed(self, consent: Consent, yes: bool | None) -> None:
        if yes:
            self.busy = "a pick" if consent.keep is not None else "a drop"
            self.end(consent)

    @background("task-end")
    def end(self, consent: Consent) -> None:
        try:
            ending = end_task(self.dispatch, consent)
        except RuneError as exc:
            self.post_message(self.Ended(consent.keep, None, exc.message))
            return
        self.post_message(self.Ended(consent.keep, ending, None))

    def on_compare_screen_ended(self, message: Ended) -> None:
        message.stop()
        self.busy = None
        what = "Pick" if message.keep is not None else "Drop"
        if message.ending is None:
            self.notify(message.error or "", title=what, severity="error", markup=False)
        else:
            said, severity = ending_said(message.ending, message.keep)
            self.notify(said, title=what, severity=severity, timeout=12, markup=False)
        self.reload()

    # -- the rest ----------------------------------------------------------------------

    def action_reload(self) -> None:
        self.reload()

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(f"Compare {self.task_id}", HELP))

    def action_close(self) -> None:
        self.dismiss(None)
