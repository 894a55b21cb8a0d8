"""The console's table: rows changed by key only, drawn by ``TableView``.

The rows live in ``KeyedRows`` (a dict by key and a list by place), so adding 5,000 rows
is appending to both, and a change touches one row: its cells are compared with the last
values written (``upsert`` changes only the cells that differ), and its line alone is
drawn again, when it is on screen; nothing is drawn for rows off screen. ``sync`` shows
exactly a list of rows, ``replace`` a new list in its order (a filter, a first fill),
``extend`` adds rows after them (the fill's chunks), ``sort`` orders the rows by columns
and ``sort_by`` by a place for each key, ``refresh_visible`` moves the clocks of the rows
on screen. A column of no fixed width is
as wide as its widest value shown. A row changed off screen can be marked ``stale``
instead: its values are asked for again (``rebuild``) when it is next drawn or read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from runeconsole.tui.widgets.table_cells import fingerprint, value_width
from runeconsole.tui.widgets.table_view import HEADER, TableView


class KeyedTable(TableView):
    def __init__(self, columns: Sequence[tuple[str, str, int | None]], **kwargs: Any) -> None:
        super().__init__(columns, **kwargs)
        self._auto = [index for index, column in enumerate(self._columns) if column.width is None]
        self._order_dirty = False
        # Rows changed off screen and not rebuilt yet; ``rebuild(key)`` gives their values
        # (None: as they are), set by the table's owner.
        self._stale: set[str] = set()
        self.rebuild: Callable[[str], Sequence[Any] | None] | None = None

    # -- reading ---------------------------------------------------------------------------

    @property
    def column_keys(self) -> list[str]:
        return [column.key for column in self._columns]

    @property
    def row_count(self) -> int:
        return len(self._rows)

    def has(self, key: str) -> bool:
        return key in self._rows.values

    def keys(self) -> list[str]:
        """Every row's key, in display order."""
        return list(self._rows.keys())

    def get_row(self, key: str) -> list[Any]:
        return list(self._values(key))

    def get_row_at(self, index: int) -> list[Any]:
        key = self._rows.key_at(index)
        if key is None:
            raise IndexError(f"no row at {index}")
        return self.get_row(key)

    def get_cell(self, key: str, column: str) -> Any:
        return self._values(key)[self.column_keys.index(column)]

    def get_row_index(self, key: str) -> int:
        place = self._rows.place(key)
        if place is None:
            raise KeyError(key)
        return place

    def visible_keys(self) -> list[str]:
        """Keys of the rows on screen (and the one below, which may be partly)."""
        top, bottom = self._window()
        return self._rows.keys()[top : bottom + 1]

    # -- changing, by key ------------------------------------------------------------------

    def upsert(self, key: str, values: Sequence[Any], skip: frozenset[str] = frozenset()) -> None:
        """Add the row (last) or change only its cells that differ; ``skip`` leaves those
        columns as they are."""
        values = self._full(values)
        old = self._rows.values.get(key)
        self._stale.discard(key)
        if old is None:
            place = self._rows.add(key, values)
            self._count_widths(values, 1)
            self._added(place, 1)
            self._order_dirty = True
            return
        merged = tuple(
            old_value
            if old_value is new_value
            or column.key in skip
            or fingerprint(old_value) == fingerprint(new_value)
            else new_value
            for column, old_value, new_value in zip(self._columns, old, values, strict=True)
        )
        if any(a is not b for a, b in zip(old, merged, strict=True)):
            self._change(key, old, merged)

    def set_cell(self, key: str, column: str, value: Any) -> None:
        index = self.column_keys.index(column)
        old = self._values(key)
        if fingerprint(old[index]) != fingerprint(value):
            self._change(key, old, (*old[:index], value, *old[index + 1 :]))

    def drop(self, key: str) -> None:
        """Drop the row; the cursor stays on its own row (on the next, if it was this)."""
        old = self._rows.values.get(key)
        if old is None:
            return
        self._stale.discard(key)
        self._keep_cursor_on_its_row()
        settled = self._rows.settled
        place = self._rows.drop(key)
        self._count_widths(old, -1)
        self._resize()
        if not settled or place is None or place <= self._window()[1]:
            self.refresh()  # the rows below it move up

    def sync(self, rows: Sequence[tuple[str, Sequence[Any]]]) -> None:
        """Show exactly ``rows``: the others dropped, these upserted (only changed cells
        redrawn). Their order is the caller's to set (``reorder``, ``sort``)."""
        wanted = {key for key, _ in rows}
        for key in [key for key in self._rows.values if key not in wanted]:
            self.drop(key)
        for key, values in rows:
            self.upsert(key, values)

    def replace(self, rows: Sequence[tuple[str, Sequence[Any]]]) -> None:
        """Exactly ``rows``, in this order (a filter typed or cleared, a first fill), from
        the top. The cursor stays on its row when it is still shown."""
        current = self.cursor_key()
        for index in self._auto:
            self._columns[index].widths.clear()
        self._stale.clear()
        self._rows.replace((key, self._full(values)) for key, values in rows)
        self._order_dirty = False
        for values in self._rows.values.values() if self._auto else ():
            self._count_widths(values, 1)
        self._resize()
        self.scroll_to(y=0, animate=False)
        self.refresh()
        place = self._rows.place(current) if current is not None else None
        self._cursor, self._follow = -1, None  # whatever it was, its row is another now
        self.move_cursor(row=place or 0)

    def extend(self, rows: Sequence[tuple[str, Sequence[Any]]]) -> None:
        """Add rows after every row shown, in order, none of them shown yet."""
        if not rows:
            return
        full = self._full
        added = [(key, full(values)) for key, values in rows]
        first = self._rows.extend(added)
        for _, values in added if self._auto else ():
            self._count_widths(values, 1)
        self._added(first, len(added))

    def reorder(
        self, *columns: str, key: Callable[[Any], Any] | None = None, force: bool = False
    ) -> None:
        """Sort rows if rows were added since the last call (or ``force``: the caller knows
        the order changed), keeping the cursor on its row."""
        if self._order_dirty or force:
            self._order_dirty = False
            self.sort(*columns, key=key)

    def sort(self, *columns: str, key: Callable[[Any], Any] | None = None) -> None:
        """Rows by the values of ``columns`` (through ``key``), the cursor on its row."""
        current = self.cursor_key()
        for stale in list(self._stale):  # sorted by their values: those of now
            self._values(stale)
        self._rows.sort(*columns, key=key)
        self.refresh()
        if current is not None:
            self.move_cursor(row=self.get_row_index(current))

    def sort_by(self, place: Callable[[str], Any]) -> None:
        """Rows by ``place(key)`` (a pane's order of its records), the cursor on its row."""
        current = self.cursor_key()
        self._rows.sort_by(place)
        self._order_dirty = False
        self.refresh()
        if current is not None:
            self.move_cursor(row=self.get_row_index(current))

    def refresh_visible(self, cells_of: Callable[[str], dict[str, Any] | None]) -> None:
        """For the rows on screen only: ``cells_of(key)`` names the cells that move with
        time (ages, countdowns), or None to leave the row as it is. The cells that moved
        are repainted as one region a column (a second's ages are one strip of the
        screen, not 40 regions each worked out from the table's geometry)."""
        top, bottom = self._window()
        keys = self._rows.keys()[top : bottom + 1]
        if self._auto or not self._rows.settled:  # a width may follow, or all is redrawn
            for key in keys:
                for column, value in (cells_of(key) or {}).items():
                    self.set_cell(key, column, value)
            return
        at = {column.key: index for index, column in enumerate(self._columns)}
        spans: dict[int, tuple[int, int]] = {}  # column -> first and last place moved
        for place, key in enumerate(keys, top):
            cells = cells_of(key)
            if not cells:
                continue
            old = self._values(key)
            new, moved = list(old), False
            for column, value in cells.items():
                index = at[column]
                if fingerprint(old[index]) != fingerprint(value):
                    new[index], moved = value, True
                    first, _ = spans.get(index, (place, place))
                    spans[index] = (first, place)
            if moved:
                self._rows.values[key] = tuple(new)
        self._refresh_columns(top, spans)

    def move_to(self, key: str) -> None:
        """Put the cursor on ``key``'s row (if shown) and focus the table."""
        if self.has(key):
            self.move_cursor(row=self.get_row_index(key))
            self.focus()

    # -- rows off screen, rebuilt when next drawn --------------------------------------------

    def stale(self, key: str) -> bool:
        """Row ``key`` changed off screen: its values are asked for (``rebuild``) when it
        is next drawn or read, not now (a fleet of 10,000 heartbeating changes 170 rows a
        second, a screenful of which are shown). False, and nothing marked, when the row
        is on screen or not shown, a column's width follows its values, or nobody
        rebuilds: the caller then upserts it."""
        if self.rebuild is None or self._auto or not self._rows.settled:
            return False
        place = self._rows.place(key)
        if place is None:
            return False
        # Most rows of a fleet are surely off screen: above the first row shown, or more
        # than the terminal's height below it (the window's own geometry, 15-35 us, is
        # worked out only for the rows near it).
        top = round(self.scroll_y)
        if top <= place <= top + self.app.size.height:
            top, bottom = self._window()
            if top <= place <= bottom:
                return False
        self._stale.add(key)
        return True

    def _values(self, key: str) -> tuple[Any, ...]:
        values = self._rows.values[key]
        if key in self._stale:
            self._stale.discard(key)
            fresh = self.rebuild(key) if self.rebuild is not None else None
            if fresh is not None:
                values = self._rows.values[key] = self._full(fresh)
        return values

    # -- bookkeeping -----------------------------------------------------------------------

    def _full(self, values: Sequence[Any]) -> tuple[Any, ...]:
        """Every column's value (None for those not given)."""
        width = len(self._columns)
        if type(values) is tuple and len(values) == width:
            return values
        values = tuple(values)
        if len(values) > width:
            raise ValueError("more values than columns")
        return values + (None,) * (width - len(values))

    def _added(self, first: int, count: int) -> None:
        """``count`` rows were added from place ``first`` on: the lines of those on screen
        are drawn."""
        top, bottom = self._window()
        below = first > bottom
        if self._rows.settled and not below:
            start = max(first, top)
            self.refresh_lines(start + HEADER, min(bottom, first + count - 1) - start + 1)
        if len(self._rows) == count:  # the first rows: the cursor is on the first
            self._cursor, self._follow = -1, None
            self.move_cursor(row=0)
        self._resize(lag=below and self._rows.settled)

    def _change(self, key: str, old: tuple[Any, ...], new: tuple[Any, ...]) -> None:
        self._rows.values[key] = new
        if self._auto:
            self._count_widths(old, -1)
            self._count_widths(new, 1)
        if self._rows.settled:  # else every line is to be drawn again already
            place = self._rows.place(key)
            if place is not None:
                changed = [index for index, value in enumerate(new) if value is not old[index]]
                self._refresh_cells(place, changed)

    def _count_widths(self, values: tuple[Any, ...], rows: int) -> None:
        """An auto-width column gains (1) or loses (-1) the row's value; when that changes
        its width, every line is drawn again."""
        if not self._auto:
            return
        console = self.app.console
        moved = False
        for index in self._auto:
            moved |= self._columns[index].count(value_width(console, values[index]), rows)
        if moved:
            self._widths = tuple(column.render_width for column in self._columns)
            self._resize()
            self.refresh()
