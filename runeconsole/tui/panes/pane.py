"""The pane template: one tab of a console, a table of records kept by key.

``Pane`` is everything a pane of either console shares: its id, title and keys, the
filter (a reactive: typing it redraws the rows), the figures it reports to the status bar
(``Summary``), and its records drawn one row per key in a ``KeyedTable``, in order, with
a note when there are none. A pane supplies its records and its cells: ``cells`` (the
row of a record), ``search_fields`` (what the filter looks in), and, where it needs them,
``hidden`` (records kept but not drawn), ``SORT``/``sort_key`` (the order), ``moving``
(cells that move with time alone, redrawn each second for the rows on screen), ``figures``
(its headline counts) and ``open`` (enter on a row). Fed from anywhere: ``put`` and
``drop`` one record, ``sync`` to exactly a set of them; ``finish`` after a batch.

In the fleet console a pane is handed the fleet's ``Sources``: each row then shows its
source first (the whole name), and the filter takes ``source:NAME`` (or a bare source
name) to keep one source's rows.

``FilePane`` is the part a pane fed by a root's files adds: the directories it watches,
what it does with a batch of changed paths, the rescan, and directories that appear
after start (``follow``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static

from runeconsole.adapters.clock import Clock, SystemClock
from runeconsole.tui.widgets.keyed_table import KeyedTable
from runeconsole.tui.widgets.table_view import TableView

# Every pane's id: its tab (``goto_pane``), its figures in the status bar (``Summary``),
# and, with ``-pane`` after it, its widget's DOM id.
AGENTS, PROBLEMS, QUESTIONS = "agents", "problems", "questions"
SUSPENDED, MERGE_QUEUE = "suspended", "merge-queue"
PERMISSIONS = "permissions"

R = TypeVar("R")
Columns = tuple[tuple[str, str, int | None], ...]


def matches(text: str, *fields: object) -> bool:
    """The console's filter, in every pane: ``text``, in any case, inside one of the row's
    fields (an empty filter shows every row)."""
    return not text or text.lower() in " ".join(str(f) for f in fields if f).lower()


@dataclass(frozen=True)
class Sources:
    """The fleet console's sources, as its panes show them: every source's name, and the
    source a row's key belongs to."""

    names: tuple[str, ...]
    of: Callable[[str], str]

    @property
    def column(self) -> tuple[str, str, int]:
        """The source column, as wide as the longest name (never cut)."""
        return ("source", "SOURCE", max(6, *(len(name) for name in self.names)))

    def split(self, text: str) -> tuple[str | None, str]:
        """``source:web fail`` -> (``web``, ``fail``); a bare source name names the source."""
        source, rest = None, []
        for word in text.split():
            if word.startswith("source:"):
                source = word[len("source:") :]
            elif word in self.names and source is None:
                source = word
            else:
                rest.append(word)
        return source, " ".join(rest)


class Pane(Vertical, Generic[R]):
    DEFAULT_CSS = """
    Pane {
        height: 1fr;
        layers: table note;
    }
    Pane > .empty-note {
        layer: note;
        height: auto;
        margin-top: 2;
        padding: 0 2;
        color: $text-muted;
    }
    """

    filter_text: reactive[str] = reactive("", init=False)

    # Quit and Help lead every pane's keys in the footer: it lists the focused pane's keys
    # before the app's, and at 80 columns a pane's own would push these two out of sight.
    # (The app binds them too, for when no pane has the focus.)
    BINDINGS = [
        Binding("q", "app.quit", "Quit"),
        Binding("question_mark", "app.help", "Help"),
    ]

    PANE_ID: ClassVar[str] = ""
    TITLE: ClassVar[str] = ""
    SHORT_TITLE: ClassVar[str] = ""
    """Its tab's title under 100 columns, where eight tabs share 80 (none: ``TITLE``)."""
    HELP_KEYS: ClassVar[tuple[tuple[str, str], ...]] = ()
    """This pane's own keys, listed by ``?`` after the global ones."""
    COLUMNS: ClassVar[Columns] = ()
    SORT: ClassVar[tuple[str, ...]] = ()
    """The columns rows are ordered by (their cells through ``sort_key``); none: as put."""
    EMPTY: ClassVar[str] = ""
    """What the pane says while it has no record (none: nothing)."""
    MOVING: ClassVar[frozenset[str]] = frozenset()
    """The columns that move with time alone (``moving`` gives their cells)."""
    SOURCE_AT: ClassVar[int] = 0
    """Where the source column goes, in the fleet console (after a mark column: 1)."""
    WRITES: ClassVar[frozenset[str]] = frozenset()
    """This pane's actions that write: none is offered on a read-only root."""
    ENTER: ClassVar[str] = ""
    """The action enter (or a click) on a row runs (``action_<ENTER>``); none: nothing."""

    class Summary(Message):
        """A pane's headline figures changed (shown in the status bar)."""

        def __init__(self, pane_id: str, figures: dict[str, int]) -> None:
            super().__init__()
            self.pane_id = pane_id
            self.figures = figures

    class OperatorWanted(Message):
        """Something holds an agent up: reach the operator outside the console too
        (``runeconsole.notify.command``)."""

        def __init__(self, key: str, title: str, body: str) -> None:
            super().__init__()
            self.key = key
            self.title = title
            self.body = body

    def __init__(
        self,
        *,
        clock: Clock | None = None,
        sources: Sources | None = None,
        id: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(id=id or f"{self.PANE_ID}-pane", **kwargs)
        self.clock = clock or SystemClock()
        self.sources = sources
        self.records: dict[str, R] = {}
        self.table = KeyedTable(self.columns(), id=f"{self.PANE_ID}-table")
        self._figures: dict[str, int] | None = None
        self._last_count = 0  # rows shown after the last batch

    def columns(self) -> Columns:
        """The pane's columns, the source's among them in the fleet console."""
        if self.sources is None:
            return self.COLUMNS
        at = self.SOURCE_AT
        return (*self.COLUMNS[:at], self.sources.column, *self.COLUMNS[at:])

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """A writing action is neither shown nor run on a read-only root."""
        return not (action in self.WRITES and getattr(self.app, "read_only", None))

    def writable(self) -> bool:
        """For a writing action reached without its key (Enter on a row): False, and the
        reason said, on a read-only root."""
        reason = getattr(self.app, "read_only", None)
        if reason:
            self.notify(f"Read-only: {reason}", severity="warning", markup=False)
        return not reason

    def summarise(self, figures: dict[str, int]) -> None:
        """Tell the app this pane's headline figures (it shows them in the status bar)."""
        self.post_message(self.Summary(self.PANE_ID, figures))

    def compose(self) -> ComposeResult:
        yield self.table
        if self.EMPTY:
            yield Static(self.EMPTY, id=f"{self.PANE_ID}-empty", classes="empty-note")

    def now(self) -> datetime:
        return self.clock.now()

    # -- what a pane supplies ------------------------------------------------------------

    def cells(self, key: str, record: R) -> Sequence[object]:
        raise NotImplementedError

    def search_fields(self, key: str, record: R) -> Sequence[object]:
        return (key,)

    def hidden(self, key: str, record: R) -> bool:
        """Kept, but not drawn (whatever the filter)."""
        return False

    def sort_key(self, value: Any) -> Any:
        """The order of the ``SORT`` columns' cells: a cell that carries its own ``order``
        (an urgency mark) sorts by it, any other by its value."""
        return getattr(value, "order", value)

    def moving(self, key: str, record: R) -> dict[str, object] | None:
        """The ``MOVING`` cells (ages, countdowns) as of ``now()``; None: leave the row."""
        return None

    def figures(self) -> dict[str, int] | None:
        """The headline figures for the status bar (``None``: this pane reports none)."""
        return None

    def open_row(self, key: str) -> None:
        """Enter on a row (or a click): the pane's ``ENTER`` action, refused on a read-only
        root when it writes (enter reaches no binding, so ``check_action`` never sees it)."""
        if self.ENTER and (self.ENTER not in self.WRITES or self.writable()):
            getattr(self, f"action_{self.ENTER}")()

    # -- the template ----------------------------------------------------------------------

    def row(self, key: str, record: R) -> Sequence[object]:
        """The record's cells, its source's among them in the fleet console."""
        cells = self.cells(key, record)
        if self.sources is None:
            return cells
        at = self.SOURCE_AT
        return (*cells[:at], Text(self.sources.of(key)), *cells[at:])

    def shows(self, *fields: object) -> bool:
        """Whether a row with these fields passes the filter."""
        return matches(self.filter_text, *fields)

    def passes(self, key: str, record: R) -> bool:
        """Whether the record's row passes the filter (and, in the fleet console, its
        ``source:NAME``)."""
        if self.sources is None:
            return self.shows(*self.search_fields(key, record))
        source, rest = self.sources.split(self.filter_text)
        if source is not None and self.sources.of(key) != source:
            return False
        return matches(rest, *self.search_fields(key, record))

    def put(self, key: str, record: R) -> None:
        """Keep ``record`` and draw its row (or drop it, by the filter); the cells that
        move with time are left to the tick once the row is shown."""
        self.records[key] = record
        self.redraw(key)

    def redraw(self, key: str) -> None:
        """Draw a kept record's row again (or drop it, by the filter and ``hidden``)."""
        record = self.records.get(key)
        table = self.table
        if record is None or self.hidden(key, record) or not self.passes(key, record):
            table.drop(key)
            return
        skip = self.MOVING if table.has(key) else frozenset()
        table.upsert(key, self.row(key, record), skip=skip)

    def drop(self, key: str) -> None:
        self.records.pop(key, None)
        self.table.drop(key)

    def sync(self, records: Mapping[str, R]) -> None:
        """Exactly these records, by key (rows change only where they differ)."""
        for key in [key for key in self.records if key not in records]:
            self.drop(key)
        for key, record in records.items():
            self.put(key, record)
        self.finish()

    def finish(self) -> None:
        """After a batch: rows in order (the cursor on the first, when there were none
        before), the note when there are none, the figures."""
        table = self.table
        if self.SORT:
            table.reorder(*self.SORT, key=self.sort_key)
            if not self._last_count and table.row_count:
                table.move_cursor(row=0)
        self._last_count = table.row_count
        for note in self.query(".empty-note"):
            note.display = not self.records
        figures = self.figures()
        if figures is not None and figures != self._figures:
            self._figures = figures
            self.summarise(figures)

    def refilter(self) -> None:
        """The filter changed: show exactly the records that pass it."""
        for key in self.records:
            self.redraw(key)
        self.finish()

    def watch_filter_text(self) -> None:
        self.refilter()

    def tick(self) -> None:
        """Once a second: the cells that move with time, on the rows on screen only."""
        records = self.records
        self.table.refresh_visible(
            lambda key: self.moving(key, records[key]) if key in records else None
        )

    def selected(self) -> tuple[str, R] | None:
        """The cursor's row: its key and record."""
        key = self.table.cursor_key()
        record = self.records.get(key) if key is not None else None
        return None if key is None or record is None else (key, record)

    def select(self, key: str) -> None:
        self.table.move_to(key)

    def on_table_view_row_selected(self, event: TableView.RowSelected) -> None:
        if event.table is self.table:
            event.stop()
            self.open_row(event.key)

    def place(
        self,
        table: KeyedTable,
        key: str,
        fields: Sequence[object],
        row: Callable[[], Sequence[object]],
        *,
        moving: frozenset[str] = frozenset(),
        hidden: bool = False,
    ) -> bool:
        """A row of another table of the pane (the Suspended pane's checkpoints), by the
        filter: upserted when its ``fields`` match (and it is not ``hidden``), else
        dropped; ``row`` is built only when shown. Once shown, its ``moving`` cells are
        left to the tick. True when shown."""
        if hidden or not self.shows(*fields):
            table.drop(key)
            return False
        table.upsert(key, row(), skip=moving if table.has(key) else frozenset())
        return True


class FilePane(Pane[R]):
    """A pane kept current by a root's files: events on the directories it watches, a
    periodic rescan, and directories that appear after start."""

    class FollowDirectory(Message):
        """A directory of this pane's appeared after start (a new signal or context
        directory): the app watches it, then calls the pane's ``read_directory``, so
        nothing written between the read and the watch is missed."""

        def __init__(self, pane: FilePane[Any], directory: Path) -> None:
            super().__init__()
            self.pane = pane
            self.directory = directory

    def watch_dirs(self) -> list[Path]:
        raise NotImplementedError

    def apply_changes(self, paths: set[Path]) -> None:
        """Refresh what ``paths`` (already filtered to ``watch_dirs``) affect, by key."""
        raise NotImplementedError

    def rescan(self) -> None:
        """Read everything again, off the UI thread (dropped events, no watching)."""
        raise NotImplementedError

    def follow(self, directory: Path) -> None:
        """Ask the app to watch ``directory``; ``read_directory`` follows once it does."""
        self.post_message(self.FollowDirectory(self, directory))

    def read_directory(self, directory: Path) -> None:
        """A directory asked for with ``follow`` is watched now: read what it holds."""
