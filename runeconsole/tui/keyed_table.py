"""A DataTable that is only ever changed row by row, by key.

Keeps the last values written for each row so an update touches only the cells
that really changed; clearing and refilling costs seconds at fleet scale.

Repainting follows the same rule. DataTable's own ``update_cell`` forgets every cached
render, so the next frame draws every visible line again (about 1 ms a line: 50 ms for a
tall pane, on every change). Here a changed row's cached renders are forgotten, and only
its region repainted, just before the next frame. This leans on how Textual 8's
DataTable keys its caches (the first item of the cell and row caches is the row key, of
the line cache the line); ``tests/tui/test_keyed_table.py`` checks that what is drawn
follows every change, so an upgrade that moves those keys fails there, not on screen.

Drawing a line follows it too. DataTable builds a line from its cells' renders (about
1 ms a line through Rich), and a row whose age cell moved each second is built again
whole. Here each row's last drawn line is kept with what it was drawn under (width,
horizontal scroll, styles, whether the cursor or the mouse is on it, its index); a row
drawn under the same is reused as it is, and a row whose cells changed since gets only
those cells rendered and spliced into its old line. A line drawn under anything else is
DataTable's own. Cells are drawn once and shared between rows (``shared_cells.py``), on
rows found at once (``one_line_rows.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import zip_longest
from typing import Any

from textual.binding import Binding
from textual.cache import LRUCache
from textual.coordinate import Coordinate
from textual.geometry import Size
from textual.strip import Strip
from textual.widgets.data_table import ColumnKey, Row, RowKey

from runeconsole.tui.pacing import after_frame
from runeconsole.tui.shared_cells import SharedCells, fingerprint

FREE_AFTER = 0.1  # seconds: a replaced table's old rows are freed after its first frame
LINES_KEPT = 2000  # rows whose last drawn line is kept (a few screens' worth)


class KeyedTable(SharedCells):
    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
    ]

    def __init__(self, columns: Sequence[tuple[str, str, int | None]], **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=False, **kwargs)
        self._spec = list(columns)
        self._values: dict[str, tuple[Any, ...]] = {}
        self._order_dirty = False
        self._stale: set[tuple[RowKey, ColumnKey]] = set()  # cells changed since last drawn
        # Each row's last drawn line, what it was drawn under, and its cells changed since.
        self._lines: LRUCache[RowKey, tuple[tuple[Any, ...], Strip]] = LRUCache(LINES_KEPT)
        self._respliced: dict[RowKey, set[ColumnKey]] = {}

    def on_mount(self) -> None:
        for key, label, width in self._spec:
            self.add_column(label, key=key, width=width)

    @property
    def column_keys(self) -> list[str]:
        return [key for key, _, _ in self._spec]

    def has(self, key: str) -> bool:
        return key in self._values

    def upsert(self, key: str, values: Sequence[Any], skip: frozenset[str] = frozenset()) -> None:
        """Add the row or update only its changed cells; ``skip`` leaves columns as they are."""
        values = tuple(values)
        old = self._values.get(key)
        if old is None:
            self.add_row(*values, key=key)
            self._values[key] = values
            self._order_dirty = True
            return
        merged = list(old)
        for index, column in enumerate(self.column_keys):
            if column in skip or fingerprint(old[index]) == fingerprint(values[index]):
                continue
            self._write(key, column, values[index])
            merged[index] = values[index]
        self._values[key] = tuple(merged)

    def replace(self, rows: Sequence[tuple[str, Sequence[Any]]]) -> None:
        """Exactly ``rows``, in this order (a filter typed or cleared, a first fill): one
        ``clear`` and a bulk ``extend`` (dropping rows one by one walks every row per
        removal). The cursor stays on its row when it is still shown."""
        current = self.cursor_key()
        # The old rows are freed once the next frame is out, not before it: taking apart
        # 10,000 rows' dicts and cells is milliseconds of a filter's first frame. DataTable's
        # clear empties these in place (and lists every old row's offsets only to empty them).
        old = [self.rows, self._data, self._row_locations, self._values]
        self.rows, self._data = {}, {}
        self.clear()
        after_frame(self, FREE_AFTER, old.clear)
        self._values, self._stale, self._order_dirty = {}, set(), False
        self._lines.clear()
        self._respliced = {}
        self.extend(rows)
        self._settle()
        if current is not None and current in self._values:
            self.move_cursor(row=self.get_row_index(current), scroll=False)

    def extend(self, rows: Sequence[tuple[str, Sequence[Any]]]) -> None:
        """Add rows after every row shown, in order, none of them shown yet. DataTable's
        ``add_row`` sets the cursor, bumps its update count and asks for an idle pass per
        row (a third of a fill's time at 10,000 rows); here the bookkeeping of each row is
        written and those three done once."""
        if not rows:
            return
        if not self.row_count or not self.columns:
            key, values = rows[0]
            self.add_row(*values, key=key)  # the first row: DataTable highlights the cursor
            self._values[key] = tuple(values)
            rows = rows[1:]
        column_keys = [column.key for column in self.ordered_columns]
        locations, data, metadata, new = self._row_locations, self._data, self.rows, self._new_rows
        index = self.row_count
        # Rows added below the screen change none of the lines drawn when every column has a
        # fixed width and every row one line: the drawn lines stay valid (a fill's chunks then
        # cost a frame of layout, not a table drawn again).
        seen = (
            index < int(self.scroll_offset.y) + self.size.height
            or not self.size.height
            or not self._fixed_widths()
            or not self._one_line
        )
        for key, values in rows:
            values = tuple(values)
            row_key = RowKey(key)
            if row_key in locations:
                raise ValueError(f"row {key!r} is shown already")
            locations[row_key] = index
            data[row_key] = dict(zip_longest(column_keys, values))
            metadata[row_key] = Row(row_key, 1, None, False)
            new.add(row_key)
            self._values[key] = values
            index += 1
        self._require_update_dimensions = True
        if seen:
            self._update_count += 1
        self.cursor_coordinate = self.cursor_coordinate
        self._settle()

    def _settle(self) -> None:
        """Set the table's size for the rows just added, now, so the next frame draws them.
        DataTable measures new rows on an idle pass, which timers and messages of a busy
        console put off by a frame or more (the filter's first rows waited ~50 ms for it at
        10,000 agents); with every column of a fixed width there is nothing to measure."""
        if not self._require_update_dimensions or not self._fixed_widths():
            self.check_idle()
            return
        self._require_update_dimensions = False
        self._new_rows.clear()
        self._update_dimensions(set())
        self.refresh()

    def set_cell(self, key: str, column: str, value: Any) -> None:
        index = self.column_keys.index(column)
        old = self._values[key]
        if fingerprint(old[index]) != fingerprint(value):
            self._write(key, column, value)
            self._values[key] = (*old[:index], value, *old[index + 1 :])

    def _write(self, key: str, column: str, value: Any) -> None:
        """``update_cell`` without forgetting every other row's render."""
        row_key, column_key = RowKey(key), ColumnKey(column)
        self._data[row_key][column_key] = value
        self._stale.add((row_key, column_key))
        self._refresh_cell(row_key, column)

    def _refresh_cell(self, row_key: RowKey, column: str) -> None:
        """Repaint the cell's region only (``OneLineRows`` finds it at once). A table on a
        hidden tab is painted whole when shown, and its stale renders are forgotten then."""
        index = self._row_locations.get(row_key)
        if index is not None:
            place = Coordinate(index, self.column_keys.index(column))
            self._refresh_region(self._get_cell_region(place))

    def _update_dimensions(self, new_rows: Any) -> None:
        """DataTable measures every cell of every new row (seconds for 10,000 rows) to size
        auto-width columns; when every column has a fixed width there is nothing to
        measure, only the scrollable size to set."""
        if not self._fixed_widths():
            super()._update_dimensions(new_rows)
            return
        width = sum(column.get_render_width(self) for column in self.columns.values())
        header = self.header_height if self.show_header else 0
        self.virtual_size = Size(
            width + self._row_label_column_width, self._total_row_height + header
        )

    def _fixed_widths(self) -> bool:
        return not self._label_column.content_width and not any(
            column.auto_width for column in self.columns.values()
        )

    def on_show(self) -> None:
        """Shown again (its tab chosen): cell repaints made while hidden were not drawn."""
        self.refresh()

    def render_line(self, y: int) -> Strip:
        if self._stale:
            self._forget_stale()
        header = self.header_height if self.show_header else 0
        if y < header or self.fixed_rows or self.fixed_columns or self.cursor_type != "row":
            return super().render_line(y)
        row_index = y - header + int(self.scroll_offset.y)
        row_key = self._row_locations.get_key(row_index)
        if row_key is None or self.rows[row_key].height != 1:
            return super().render_line(y)
        drawn_under = (
            row_index,
            self.size.width,
            int(self.scroll_offset.x),
            self.rich_style,
            self._update_count,
            self._frame_cells or self._cells_drawn_under(),  # focus, cursor and hover styles
            self.cursor_coordinate.row == row_index,
            self.hover_coordinate.row == row_index,
        )
        kept = self._lines.get(row_key)
        columns = self._respliced.pop(row_key, None)
        strip = None
        if kept is not None and kept[0] == drawn_under:
            strip = kept[1] if not columns else self._splice(kept[1], row_index, columns)
        if strip is None:
            strip = super().render_line(y)
        if kept is None or kept[1] is not strip:
            self._lines.discard(row_key)  # LRUCache.set keeps a key's first value
            self._lines[row_key] = (drawn_under, strip)
        return strip

    def _splice(self, line: Strip, row_index: int, columns: set[ColumnKey]) -> Strip | None:
        """``line`` with the cells of ``columns`` rendered again, or None when one of them
        is not wholly on screen (then the line is drawn whole)."""
        scroll_x, width = int(self.scroll_offset.x), self.size.width
        cursor = self.cursor_coordinate.row == row_index
        hover = self.hover_coordinate.row == row_index and self._show_hover_cursor
        row_style = self._get_row_style(row_index, self.rich_style)
        x = -scroll_x
        for column_index, column in enumerate(self.ordered_columns):
            cell_width = column.get_render_width(self)
            if column.key in columns:
                if x < 0 or x + cell_width > width:
                    return None
                cell = self._render_cell(
                    row_index, column_index, row_style, cell_width, cursor=cursor, hover=hover
                )[0]
                line = Strip.join(
                    [line.crop(0, x), Strip(cell, cell_width), line.crop(x + cell_width)]
                )
            x += cell_width
        return line.simplify()

    def _forget_stale(self) -> None:
        cells, self._stale = self._stale, set()
        rows = {row for row, _ in cells}
        for row, column in cells:
            if row in self._lines:
                self._respliced.setdefault(row, set()).add(column)
        indices = {self._row_locations.get(row) for row in rows}

        def row_at(y: int) -> RowKey | None:
            try:
                return self._get_offsets(y)[0]
            except LookupError:
                return None

        for cache, stale in (
            (self._cell_render_cache, lambda key: key[:2] in cells),
            (self._row_render_cache, lambda key: key[0] in rows),
            (self._row_renderable_cache, lambda key: key[1] in indices),
            (self._line_cache, lambda key: row_at(key[0]) in rows),
        ):
            # LRUCache offers no iteration of its own, only keys().
            for key in [key for key in cache.keys() if stale(key)]:  # noqa: SIM118
                cache.discard(key)

    def sync(self, rows: Sequence[tuple[str, Sequence[Any]]]) -> None:
        """Show exactly ``rows``: the others dropped, these upserted (only changed cells
        redrawn). Their order is the caller's to set (``reorder``)."""
        wanted = {key for key, _ in rows}
        for key in [key for key in self._values if key not in wanted]:
            self.drop(key)
        for key, values in rows:
            self.upsert(key, values)

    def drop(self, key: str) -> None:
        if self._values.pop(key, None) is not None:
            self.remove_row(key)
            self._lines.discard(RowKey(key))
            self._respliced.pop(RowKey(key), None)

    def keys(self) -> list[str]:
        return list(self._values)

    def cursor_key(self) -> str | None:
        if not self.row_count:
            return None
        row = min(self.cursor_row, self.row_count - 1)
        return self.coordinate_to_cell_key(Coordinate(row, 0)).row_key.value

    def move_to(self, key: str) -> None:
        """Put the cursor on ``key``'s row (if shown) and focus the table."""
        if self.has(key):
            self.move_cursor(row=self.get_row_index(key))
            self.focus()

    def reorder(
        self, *columns: str, key: Callable[[Any], Any] | None = None, force: bool = False
    ) -> None:
        """Sort rows if rows were added since the last call (or ``force``: the caller knows
        the order changed), keeping the cursor on its row."""
        if not (self._order_dirty or force):
            return
        self._order_dirty = False
        current = self.cursor_key()
        self.sort(*columns, key=key)
        if current is not None:
            self.move_cursor(row=self.get_row_index(current), scroll=False)

    def refresh_visible(self, cells_of: Callable[[str], dict[str, Any] | None]) -> None:
        """Once a second, for the rows on screen only: ``cells_of(key)`` names the cells
        that move with time (ages, countdowns), or None to leave the row as it is."""
        for key in self.visible_keys():
            cells = cells_of(key)
            for column, value in (cells or {}).items():
                self.set_cell(key, column, value)

    def visible_keys(self) -> list[str]:
        """Keys of the rows currently on screen (rows are one line high)."""
        first = int(self.scroll_offset.y)
        height = max(0, self.size.height - (1 if self.show_header else 0))
        last = min(self.row_count, first + height + 1)
        return [
            self.coordinate_to_cell_key(Coordinate(row, 0)).row_key.value
            for row in range(first, last)
        ]
