"""The pane template: one tab of a console, a table of records kept by key.

``Pane`` is everything a pane of either console shares: its id, title and keys, the
filter (a reactive: typing it fills the table again), the figures it reports to the
status bar (``Summary``), and its records drawn one row per key in a ``KeyedTable``, in
order, with a note when there are none. A pane supplies its records and its cells:
``cells`` (the row of a record), ``search_fields`` (what the filter looks in), and, where
it needs them, ``hidden`` (records kept but not drawn), the order (``SORT`` and
``sort_key`` by the cells, or ``order`` by the record), ``moving`` (cells that move with
time alone, redrawn each second for the rows on screen), ``figures`` (its headline
counts) and ``open`` (enter on a row). Fed from anywhere: ``put`` and ``drop`` one
record, ``sync`` to exactly a set of them, ``finish`` after a batch; or, where
``records`` is a model's own mapping (the Agents pane's), ``rows_changed`` with the keys
that changed.

The template keeps every record's row and search text, shown or not, and the records'
keys in order: a filter typed or cleared (``fill``) walks that order, searching only as
far as it needs, shows the first screenful at once and adds the rest in chunks after
the paint, so a key waits for one screenful whatever the count (50,000 agents:
``benchmarks/key_latency.py``). A change redraws its own row only (the cells that
differ), and sorts the rows shown only when one came or moved.

In the fleet console a pane is handed the fleet's ``Sources``: each row then shows its
source first (the whole name), and the filter takes ``source:NAME`` (or a bare source
name) to keep one source's rows.

``FilePane`` is the part a pane fed by a root's files adds: the directories it watches,
what it does with a batch of changed paths, the rescan, and directories that appear
after start (``follow``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
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
from runeconsole.core.gc_passes import freeze_alive
from runeconsole.tui.support.pacing import after_frame
from runeconsole.tui.widgets.keyed_table import KeyedTable
from runeconsole.tui.widgets.table_view import TableView

# Every pane's id: its tab (``goto_pane``), its figures in the status bar (``Summary``),
# and, with ``-pane`` after it, its widget's DOM id.
AGENTS, PROBLEMS, QUESTIONS = "agents", "problems", "questions"
SUSPENDED, MERGE_QUEUE = "suspended", "merge-queue"
PERMISSIONS = "permissions"

FIRST_ROWS = 200  # a fill shows these at once; the rest follow in chunks, after a paint
CHUNK_SECONDS = 0.008  # a chunk of a fill stops after this long: a key waits no longer
CHUNK_ROWS = 500  # rows looked for at a time within a chunk (the deadline is checked between)
CHUNK_PAUSE = 0.02  # seconds between chunks: frames and keys get their turn
WHOLE = 500  # a change naming more records than this and half of them fills the table again

R = TypeVar("R")
Columns = tuple[tuple[str, str, int | None], ...]
Row = tuple[object, ...]


def search_text(fields: Iterable[object]) -> str:
    """What the filter looks in: a row's fields, in any case, as one string."""
    return " ".join(str(f) for f in fields if f).lower()


def matches(text: str, *fields: object) -> bool:
    """The console's filter, in every pane: ``text``, in any case, inside one of the row's
    fields (an empty filter shows every row)."""
    return not text or text.lower() in search_text(fields)


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

    # Quit, Help and Answer lead every pane's keys in the footer: it lists the focused
    # pane's keys before the app's, and at 80 columns (or on a phone, where the footer's
    # keys are tapped) a pane's own would push these out of sight. (The app binds them
    # too, for when no pane has the focus; a pane's own `a` takes the place of Answer.)
    BINDINGS = [
        Binding("q", "app.quit", "Quit"),
        Binding("question_mark", "app.help", "Help"),
        Binding("a", "app.answer_oldest", "Answer"),
    ]

    PANE_ID: ClassVar[str] = ""
    TITLE: ClassVar[str] = ""
    SHORT_TITLE: ClassVar[str] = ""
    """Its tab's title under 100 columns, where eight tabs share 80 (none: ``TITLE``)."""
    HELP_KEYS: ClassVar[tuple[tuple[str, str], ...]] = ()
    """This pane's own keys, listed by ``?`` after the global ones."""
    COLUMNS: ClassVar[Columns] = ()
    SORT: ClassVar[tuple[str, ...]] = ()
    """The columns rows are ordered by (their cells through ``sort_key``); none: as put,
    unless the pane orders its records itself (``order``)."""
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
        self.table.rebuild = self._rebuilt
        self._at = {column: at for at, column in enumerate(self.table.column_keys)}
        self._sort_at = tuple(self._at[column] for column in self.SORT)
        self.ordered = bool(self.SORT) or type(self).order is not Pane.order
        self._figures: dict[str, int] | None = None
        self._last_count = 0  # rows shown after the last batch
        # Every record's row and search text, shown or filtered out: a filter typed or
        # cleared picks rows from here instead of building 10,000 rows again.
        self._rows: dict[str, Row] = {}
        self._search: dict[str, str] = {}
        # Every record's place (``order``), and their keys in that order, kept until a
        # record comes, goes or moves: a fill walks this list instead of sorting again.
        self._places: dict[str, Any] = {}
        self._order: list[str] | None = None
        self._resort = False  # a row came or moved since the rows shown were sorted
        self._fill = 0  # the latest fill: a chunk of an older one stops
        self._filling = False  # chunks of a fill are still to come
        self._spliced = False  # a row was added ahead of them (a change during the fill)
        self._filter_read: tuple[str, str | None, str] = ("", None, "")

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

    def order(self, key: str, record: R) -> Any:
        """The record's place among the others (rows are sorted by it, ties as the
        records came): by default its ``SORT`` cells through ``sort_key``."""
        row = self._row_of(key, record)
        cells = [row[at] for at in self._sort_at]
        return self.sort_key(cells[0] if len(cells) == 1 else tuple(cells))

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

    # -- the template: a record's row ------------------------------------------------------

    def row(self, key: str, record: R) -> Sequence[object]:
        """The record's cells, its source's among them in the fleet console."""
        cells = self.cells(key, record)
        if self.sources is None:
            return cells
        at = self.SOURCE_AT
        return (*cells[:at], Text(self.sources.of(key)), *cells[at:])

    def _row_of(self, key: str, record: R) -> Row:
        """The record's row as last built (built now if it was not)."""
        row = self._rows.get(key)
        if row is None:
            row = self._rows[key] = tuple(self.row(key, record))
        return row

    def _current(self, key: str, record: R) -> Row:
        """The row with its moving cells as of now (a kept row has those it was built
        with): drawn right at once, with no cell written again after."""
        row = self._row_of(key, record)
        moving = self.moving(key, record)
        if not moving:
            return row
        cells = list(row)
        for column, value in moving.items():
            cells[self._at[column]] = value
        return tuple(cells)

    def _place(self, key: str, record: R) -> None:
        """Work out the record's place again; the order is sorted again if it moved."""
        place = self.order(key, record)
        if key not in self._places or self._places[key] != place:
            self._places[key] = place
            self._order = None
            self._resort = True

    def _ordered(self) -> list[str]:
        """Every record's key, in row order (sorted again only after a change of it)."""
        records = self.records
        if not self.ordered:
            return list(records)
        if self._order is None or len(self._order) != len(records):
            places = {key: self.order(key, record) for key, record in records.items()}
            self._order = sorted(places, key=places.__getitem__)
            self._places = places
        return self._order

    # -- the filter --------------------------------------------------------------------------

    def _filter(self) -> tuple[str | None, str]:
        """The filter: the source it names (the fleet console's) and its words,
        lower-cased (read once for each filter typed)."""
        typed = self.filter_text
        if self._filter_read[0] != typed:
            source, words = None, typed
            if self.sources is not None:
                source, words = self.sources.split(typed)
            self._filter_read = (typed, source, words.lower())
        return self._filter_read[1], self._filter_read[2]

    def shows(self, *fields: object) -> bool:
        """Whether a row with these fields passes the filter."""
        return matches(self.filter_text, *fields)

    def passes(self, key: str, record: R) -> bool:
        """Whether the record's row passes the filter (and, in the fleet console, its
        ``source:NAME``)."""
        source, words = self._filter()
        if source is not None and self.sources is not None and self.sources.of(key) != source:
            return False
        if not words:
            return True
        text = self._search.get(key)
        if text is None:
            text = self._search[key] = search_text(self.search_fields(key, record))
        return words in text

    def _passing(
        self, keys: list[str], start: int, wanted: int, walk: int | None = None
    ) -> tuple[list[str], int]:
        """Up to ``wanted`` keys of ``keys[start:]`` whose rows are drawn (looking at no
        more than ``walk`` keys), and the index the search stopped at. A fill looks at
        every record: the filter is read once here, and ``passes`` is walked inline
        unless the pane has its own."""
        stop = len(keys) if walk is None else min(len(keys), start + walk)
        records, hidden = self.records, self.hidden
        hides = type(self).hidden is not Pane.hidden
        source, words = self._filter()
        if source is None and not words and not hides:
            end = min(start + wanted, stop)
            return [key for key in keys[start:end] if key in records], end
        own = self.passes if type(self).passes is not Pane.passes else None
        of = self.sources.of if self.sources is not None else None
        search, fields = self._search, self.search_fields
        found: list[str] = []
        index = start
        while index < stop and len(found) < wanted:
            key = keys[index]
            index += 1
            record = records.get(key)
            if record is None or (hides and hidden(key, record)):
                continue
            if own is not None:
                if own(key, record):
                    found.append(key)
                continue
            if source is not None and of is not None and of(key) != source:
                continue
            if words:
                text = search.get(key)
                if text is None:
                    text = search[key] = search_text(fields(key, record))
                if words not in text:
                    continue
            found.append(key)
        return found, index

    def refilter(self) -> None:
        """The filter changed: show exactly the records that pass it."""
        self.fill()

    def watch_filter_text(self) -> None:
        self.refilter()

    # -- the template: changes ---------------------------------------------------------------

    def put(self, key: str, record: R) -> None:
        """Keep ``record`` and draw its row (or drop it, by the filter)."""
        self.records[key] = record
        self.redraw(key)

    def redraw(self, key: str) -> None:
        """Draw a record's row again as it is now, what it shows having changed (or drop
        it, by the filter and ``hidden``; a record gone: its row goes)."""
        record = self.records.get(key)
        if record is None:
            self._forget(key)
            return
        self._rows.pop(key, None)
        self._search.pop(key, None)
        if self.ordered:
            self._place(key, record)
        table = self.table
        if self.hidden(key, record) or not self.passes(key, record):
            table.drop(key)
            return
        if not table.has(key):
            self._resort = True
            self._spliced |= self._filling  # ahead of the fill's chunks: sorted at its end
        elif table.stale(key):
            return  # off screen: its row is built when it is next drawn (``_rebuilt``)
        table.upsert(key, self._row_of(key, record))

    def _rebuilt(self, key: str) -> Row | None:
        """A row changed off screen, about to be drawn or read: as it is now."""
        record = self.records.get(key)
        return None if record is None else self._current(key, record)

    def drop(self, key: str) -> None:
        self.records.pop(key, None)
        self._forget(key)

    def _forget(self, key: str) -> None:
        self._rows.pop(key, None)
        self._search.pop(key, None)
        if self._places.pop(key, None) is not None:
            self._order = None
        self.table.drop(key)

    def sync(self, records: Mapping[str, R]) -> None:
        """Exactly these records, by key (rows change only where they differ)."""
        for key in [key for key in self.records if key not in records]:
            self.drop(key)
        for key, record in records.items():
            self.put(key, record)
        self.finish()

    def rows_changed(self, changed: Collection[str], removed: Collection[str] = ()) -> None:
        """``records`` is another's (a model's) and these of its records changed or went:
        their rows drawn again, nothing else. Most of them (a first load): one fill; a
        burst of hundreds of a large fleet (a mass crash) row by row, where a fill would
        cost every row each time."""
        if len(changed) + len(removed) > max(WHOLE, len(self.records) // 2):
            for key in (*removed, *changed):
                self._rows.pop(key, None)
                self._search.pop(key, None)
            self._order = None
            self.fill()
            return
        for key in removed:
            self._forget(key)
        for key in changed:
            self.redraw(key)
        self.finish()

    def finish(self) -> None:
        """After a batch: rows in order (the cursor on the first, when there were none
        before), the note when there are none, the figures."""
        table = self.table
        if self._resort and self.ordered:
            table.sort_by(self._places.__getitem__)
            if not self._last_count and table.row_count:
                table.move_cursor(row=0)
        self._resort = False
        self._last_count = table.row_count
        if self.EMPTY:
            for note in self.query(".empty-note"):
                note.display = not self.records
        figures = self.figures()
        if figures is not None and figures != self._figures:
            self._figures = figures
            self.summarise(figures)

    # -- the template: a fill ------------------------------------------------------------------

    def fill(self) -> None:
        """The rows that pass the filter, in order, from the top (the filter typed or
        cleared, a first load): the first screenful at once, the rest in chunks after the
        paint. Rows are built only for records not built yet, and the records are searched
        only as far as each chunk needs (a key in the filter waits for the first
        screenful's matches, not every record's). A fill of more than a screenful (a
        fleet) leaves what is alive out of the collector's full passes when it built rows
        or shows every record, and so does each chunk that built rows (``freeze_alive``)."""
        self._fill += 1
        keys = self._ordered()
        built = len(self._rows)
        first, walked = self._passing(keys, 0, FIRST_ROWS)
        records = self.records
        self.table.replace([(key, self._current(key, records[key])) for key in first])
        self._resort = False
        self.finish()
        self._filling, self._spliced = walked < len(keys), False
        if self._filling and (len(self._rows) > built or self._filter() == (None, "")):
            freeze_alive()  # a fleet's records and rows: no full pass walks them again
        if self._filling:
            after_frame(self, CHUNK_PAUSE, partial(self._fill_more, keys, walked, self._fill))

    def _fill_more(self, keys: list[str], start: int, fill: int) -> None:
        """A chunk of the fill: rows (built if need be) added until ``CHUNK_SECONDS`` pass."""
        if fill != self._fill or not self.is_mounted:
            return  # a newer filter or fill took over
        table, records, row_of = self.table, self.records, self._row_of
        deadline = time.perf_counter() + CHUNK_SECONDS
        walked, built = start, len(self._rows)
        has = table.has
        while walked < len(keys) and time.perf_counter() < deadline:
            chunk, walked = self._passing(keys, walked, CHUNK_ROWS, 10 * CHUNK_ROWS)
            table.extend([(key, row_of(key, records[key])) for key in chunk if not has(key)])
        if len(self._rows) > built:
            freeze_alive()  # the rows just built
        if walked < len(keys):
            after_frame(self, CHUNK_PAUSE, partial(self._fill_more, keys, walked, fill))
            return
        self._filling = False
        if self._spliced and self.ordered:
            table.sort_by(self._places.__getitem__)

    # -- time passing, the cursor --------------------------------------------------------------

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
        """The cursor on ``key``'s row (if shown), the table focused."""
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
