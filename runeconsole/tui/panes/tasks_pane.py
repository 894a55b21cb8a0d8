"""The Tasks pane: every task ``runeconsole new`` (or ``n``) started, one row each (its id,
state, attempts, the pick, age and its text's first line), newest first; a task file that
cannot be read is a row saying why.

Fed by ``.claude/state/tasks/``: a task's file changing re-reads that task (and the
Compare view open on it); the rescan reads them all in a worker. Enter or ``c`` opens
the task's Compare view (``tui/tasks/compare.py``), ``w`` the Worktrees view, ``x``
drops the task after a confirmation that names what would be lost; both views are asked
of the app (``CompareWanted``, ``WorktreesWanted``), which holds the ``Dispatch``.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from textual.binding import Binding
from textual.message import Message

from runeconsole.core.errors import RuneError
from runeconsole.core.files import is_temp_name
from runeconsole.services.dispatch.service import Dispatch, Ending, Loss
from runeconsole.services.dispatch.task_store import DROPPED, LANDED, Task
from runeconsole.tui.panes.pane import FilePane
from runeconsole.tui.support.workers import background, cancelled
from runeconsole.tui.tasks.cells import TASK_COLUMNS, created_order, task_age, task_cells
from runeconsole.tui.tasks.compare import CompareScreen
from runeconsole.tui.tasks.confirms import drop_window
from runeconsole.tui.tasks.ending import Consent, end_task, ending_said, lost_commits

TASKS = "tasks"  # the pane's id


class TasksPane(FilePane[Task]):
    PANE_ID = TASKS
    TITLE = "Tasks"
    COLUMNS = TASK_COLUMNS
    SORT = ("task",)
    MOVING = frozenset({"age"})
    EMPTY = "No tasks yet: n in the Agents pane, or runeconsole new --task TEXT, starts one."
    WRITES = frozenset({"drop"})
    ENTER = "compare"
    BINDINGS = [
        Binding("enter", "compare", "Compare", show=False),
        Binding("c", "compare", "Compare"),
        Binding("w", "worktrees", "Worktrees"),
        Binding("x", "drop", "Drop"),
    ]
    HELP_KEYS = (
        ("enter / c", "compare the task's attempts: ±, files, tests, cost, time; pick one"),
        ("w", "every worktree: its agent, task, state, uncommitted files, size; clean"),
        (
            "x",
            "drop the task: every attempt stopped, its worktree and branch removed (asks "
            "first: files keep their worktree, commits on no other branch go only if you say yes)",
        ),
        (
            "STATE",
            "creating, working, picked (its pick is in the merge queue), landed, dropped; "
            "unreadable: the task's file cannot be read (why, in red)",
        ),
        ("ATT / PICK", "its attempts; the one picked"),
    )

    class CompareWanted(Message):
        """Open the Compare view of ``task_id``."""

        def __init__(self, task_id: str) -> None:
            super().__init__()
            self.task_id = task_id

    class WorktreesWanted(Message):
        """Open the Worktrees view."""

    class Loaded(Message):
        """Every task, as read in the rescan worker."""

        def __init__(self, tasks: list[Task]) -> None:
            super().__init__()
            self.tasks = tasks

    class LossesRead(Message):
        def __init__(self, task: Task, losses: list[Loss]) -> None:
            super().__init__()
            self.task, self.losses = task, losses

    class Dropped(Message):
        def __init__(self, ending: Ending | None, error: str | None) -> None:
            super().__init__()
            self.ending, self.error = ending, error

    def __init__(self, dispatch: Dispatch, **kwargs: Any) -> None:
        super().__init__(clock=dispatch.project.clock, **kwargs)
        self.dispatch = dispatch
        self.store = dispatch.store

    def on_mount(self) -> None:
        self.sync({task.task_id: task for task in self.store.list()})

    # -- rows ------------------------------------------------------------------------------

    def cells(self, key: str, record: Task) -> tuple[object, ...]:
        return task_cells(record, self.now())

    def search_fields(self, key: str, record: Task) -> tuple[object, ...]:
        agents = " ".join(a.agent for a in record.attempts)
        return (key, record.state, record.title(200), agents)  # a task may be 100k long

    def sort_key(self, value: Any) -> Any:
        record = self.records.get(str(value))
        return (created_order(record) if record is not None else 0.0, str(value))

    def moving(self, key: str, record: Task) -> dict[str, object] | None:
        return None if record.error else {"age": task_age(record, self.now())}

    # -- the files -------------------------------------------------------------------------

    def watch_dirs(self) -> list[Path]:
        return [self.store.directory]

    def apply_changes(self, paths: set[Path]) -> None:
        """Each task file that changed is read again (a small JSON file), and the Compare
        view open on it reads its attempts again."""
        changed = set()
        for path in paths:
            if path.suffix != ".json" or is_temp_name(path.name):
                continue
            task_id = path.stem
            try:
                self.put(task_id, self.store.read(task_id))
            except RuneError:  # gone (or not a task's name)
                self.drop(task_id)
            changed.add(task_id)
        if changed:
            self.finish()
            for screen in self.app.screen_stack:
                if isinstance(screen, CompareScreen) and screen.task_id in changed:
                    screen.reload()

    def rescan(self) -> None:
        self.read_all()

    @background("tasks-rescan", exclusive=True)
    def read_all(self) -> None:
        tasks = self.store.list()
        if not cancelled():
            self.post_message(self.Loaded(tasks))

    def on_tasks_pane_loaded(self, message: Loaded) -> None:
        message.stop()
        self.sync({task.task_id: task for task in message.tasks})

    def put(self, key: str, record: Task) -> None:
        known = self.records.get(key)
        if known is not None and _same(known, record):
            return
        super().put(key, record)

    # -- keys ------------------------------------------------------------------------------

    def selected_task(self) -> Task | None:
        chosen = self.selected()
        if chosen is None:
            self.notify("no task selected", severity="warning")
            return None
        return chosen[1]

    def action_compare(self) -> None:
        task = self.selected_task()
        if task is None:
            return
        if task.error:
            self.notify(
                f"{task.task_id} cannot be read: {task.error}", severity="error", markup=False
            )
            return
        self.post_message(self.CompareWanted(task.task_id))

    def action_worktrees(self) -> None:
        self.post_message(self.WorktreesWanted())

    def action_drop(self) -> None:
        task = self.selected_task()
        if task is None:
            return
        if task.error or task.state in (DROPPED, LANDED):
            self.notify(f"{task.task_id} is {task.state}: nothing to drop", severity="warning")
            return
        self.read_losses(task)

    @background("task-losses")
    def read_losses(self, task: Task) -> None:
        losses = self.dispatch.losses(task.task_id)
        if not cancelled():
            self.post_message(self.LossesRead(task, losses))

    def on_tasks_pane_losses_read(self, message: LossesRead) -> None:
        message.stop()
        consent = Consent(message.task.task_id, None, lost_commits(message.losses))
        window = drop_window(message.task, message.losses)
        self.app.push_screen(window, partial(self._confirmed, consent))

    def _confirmed(self, consent: Consent, yes: bool | None) -> None:
        if yes:
            self.drop_task(consent)

    @background("task-end")
    def drop_task(self, consent: Consent) -> None:
        try:
            ending = end_task(self.dispatch, consent)
        except RuneError as exc:
            self.post_message(self.Dropped(None, exc.message))
            return
        self.post_message(self.Dropped(ending, None))

    def on_tasks_pane_dropped(self, message: Dropped) -> None:
        message.stop()
        if message.ending is None:
            self.notify(message.error or "", title="Drop", severity="error", markup=False)
            return
        said, severity = ending_said(message.ending, None)
        self.notify(said, title="Drop", severity=severity, timeout=12, markup=False)
        self.rescan()


def _same(one: Task, other: Task) -> bool:
    return one.error == other.error and one.fields == other.fields
