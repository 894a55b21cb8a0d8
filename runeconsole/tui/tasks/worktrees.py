"""The Worktrees view: every git worktree of the repository (ours, Claude Code's own, the
harness's) with its state in colour (main, working, ready, queued, landed, dropped,
orphan, missing), its agent, task, uncommitted files, size and why it stays; under the
table, everything about the selected one.

Read in a worker (git per worktree, and its size, is slow); ``r`` reads again. ``C``
cleans: a dry run first, in a worker, then a confirmation that lists what would be
removed and what kept and why, then ``Dispatch.clean`` in a worker.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static

from runeconsole.core.errors import RuneError
from runeconsole.services.dispatch.removal import Removal
from runeconsole.services.dispatch.service import Dispatch
from runeconsole.services.dispatch.worktree_list import STATES, WorktreeRow
from runeconsole.tui.modals.help_screen import HelpScreen
from runeconsole.tui.support.workers import background, cancelled
from runeconsole.tui.tasks.cells import (
    WORKTREE_COLUMNS,
    WORKTREE_STYLE,
    shown_path,
    worktree_cells,
    worktree_detail,
)
from runeconsole.tui.tasks.confirms import clean_window
from runeconsole.tui.widgets.footer import ConsoleFooter
from runeconsole.tui.widgets.keyed_table import KeyedTable
from runeconsole.tui.widgets.table_view import TableView

HELP = (
    ("j / k, ↑ / ↓", "move between worktrees"),
    (
        "STATE",
        "main, working (its agent runs), ready, queued, landed, dropped, orphan (no agent), "
        "missing (its directory is gone)",
    ),
    ("DIRTY", "uncommitted and untracked files: such a worktree is never removed"),
    (
        "C",
        "clean: remove the landed and dropped worktrees where nothing would be lost (asks "
        "first, listing what would be removed and what kept, and why)",
    ),
    ("r", "read the worktrees again"),
    ("esc / q", "close"),
)


class WorktreesScreen(Screen[None]):
    DEFAULT_CSS = """
    WorktreesScreen {
        layout: vertical;
    }
    WorktreesScreen #worktrees-title {
        height: 1;
        padding: 0 1;
        background: $panel;
    }
    WorktreesScreen #worktrees-table {
        height: 1fr;
        scrollbar-size-vertical: 1;
        scrollbar-size-horizontal: 0;
    }
    WorktreesScreen #worktrees-detail {
        height: auto;
        max-height: 6;
        padding: 0 1;
        border-top: solid $panel;
    }
    """
    WRITES = frozenset({"clean"})
    BINDINGS = [
        Binding("C", "clean", "Clean"),
        Binding("r", "reload", "Reload"),
        Binding("question_mark", "help", "Help"),
        Binding("escape,q", "close", "Close"),
    ]

    class Read(Message):
        def __init__(self, rows: list[WorktreeRow]) -> None:
            super().__init__()
            self.rows = rows

    class Planned(Message):
        """What a clean would do (a dry run)."""

        def __init__(self, plan: list[Removal]) -> None:
            super().__init__()
            self.plan = plan

    class Cleaned(Message):
        def __init__(self, removals: list[Removal] | None, error: str | None) -> None:
            super().__init__()
            self.removals, self.error = removals, error

    def __init__(self, dispatch: Dispatch) -> None:
        super().__init__()
        self.dispatch = dispatch
        self.root = Path(dispatch.root).resolve()
        self.directory = self.root / dispatch.settings.directory
        self.rows: dict[str, WorktreeRow] = {}
        self.reads = 0  # readings shown (tests wait on it)
        self.cleaning = False

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="worktrees-title")
        yield KeyedTable(WORKTREE_COLUMNS, id="worktrees-table")
        with VerticalScroll(id="worktrees-detail"):
            yield Static(Text("reading the worktrees…", "dim"), id="worktrees-detail-text")
        yield ConsoleFooter()

    @property
    def table(self) -> KeyedTable:
        return self.query_one("#worktrees-table", KeyedTable)

    def on_mount(self) -> None:
        self.table.focus()
        self.reload()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return not (action in self.WRITES and getattr(self.app, "read_only", None))

    def shown(self, path: Path | str) -> str:
        return shown_path(Path(path), self.root, self.directory)

    # -- reading -----------------------------------------------------------------------

    def reload(self) -> None:
        self.read()

    @background("worktrees-read", exclusive=True)
    def read(self) -> None:
        rows = self.dispatch.worktrees()
        if not cancelled():
            self.post_message(self.Read(rows))

    def on_worktrees_screen_read(self, message: Read) -> None:
        message.stop()
        table = self.table
        fresh = {row.key: row for row in message.rows}
        for key in [k for k in self.rows if k not in fresh]:
            table.drop(key)
        self.rows = fresh
        for key, row in fresh.items():
            table.upsert(key, worktree_cells(row, self.shown(row.path)))
        self.query_one("#worktrees-title", Static).update(self._title())
        self._show_detail()
        self.reads += 1

    def _title(self) -> Text:
        text = Text("Worktrees", "bold")
        if not self.rows:
            return text
        counts: dict[str, int] = {}
        for row in self.rows.values():
            counts[row.state] = counts.get(row.state, 0) + 1
        for state in STATES:
            if counts.get(state):
                text.append(f"  {counts[state]} {state}", WORKTREE_STYLE.get(state, ""))
        return text

    def _show_detail(self) -> None:
        key = self.table.cursor_key()
        row = self.rows.get(key) if key is not None else None
        shown = worktree_detail(row, self.root) if row is not None else Text("no worktrees", "dim")
        self.query_one("#worktrees-detail-text", Static).update(shown)

    def on_table_view_row_highlighted(self, event: TableView.RowHighlighted) -> None:
        event.stop()
        self._show_detail()

    # -- cleaning ----------------------------------------------------------------------

    def action_clean(self) -> None:
        if self.cleaning:
            self.notify("a clean is under way", severity="warning")
            return
        self.plan()

    @background("worktrees-clean")
    def plan(self) -> None:
        plan = self.dispatch.clean(dry_run=True)
        if not cancelled():
            self.post_message(self.Planned(plan))

    def on_worktrees_screen_planned(self, message: Planned) -> None:
        message.stop()
        plan = message.plan
        names = {removal.path: self.shown(removal.path) for removal in plan}
        if not any(removal.removed for removal in plan):
            kept = "; ".join(f"{names[r.path]}: {r.reason}" for r in plan)
            said = "nothing to clean: no landed or dropped worktree can go"
            self.notify(said + (f" ({kept})" if kept else ""), title="Clean", markup=False)
            return
        self.app.push_screen(clean_window(plan, names), self._confirmed)

    def _confirmed(self, yes: bool | None) -> None:
        if yes:
            self.cleaning = True
            self.clean()

    @background("worktrees-clean")
    def clean(self) -> None:
        try:
            removals = self.dispatch.clean()
        except RuneError as exc:
            self.post_message(self.Cleaned(None, exc.message))
            return
        self.post_message(self.Cleaned(removals, None))

    def on_worktrees_screen_cleaned(self, message: Cleaned) -> None:
        message.stop()
        self.cleaning = False
        if message.removals is None:
            self.notify(message.error or "", title="Clean", severity="error", markup=False)
        else:
            removed = [r for r in message.removals if r.removed]
            kept = [r for r in message.removals if not r.removed]
            lines = [f"{len(removed)} worktree{'s' * (len(removed) != 1)} removed"]
            lines += [f"kept {self.shown(r.path)}: {r.reason}" for r in kept]
            self.notify(
                "\n".join(lines),
                title="Clean",
                severity="warning" if kept else "information",
                timeout=12,
                markup=False,
            )
        self.reload()

    # -- the rest ----------------------------------------------------------------------

    def action_reload(self) -> None:
        self.reload()

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen("Worktrees", HELP))

    def action_close(self) -> None:
        self.dismiss(None)
