"""The console's table: rows by key, drawn line by line on Textual's Line API.

A ``ScrollView`` whose ``render_line`` draws row ``scroll_y + y`` (the header stays on
the first line), as Textual's own DataTable and Toolong's log view do, with nothing of
them but public API. The rows live in ``KeyedRows`` (a dict by key and a list by place),
so adding 5,000 rows is appending to both, and a change touches one row: its cells are
compared with the last values written (``upsert`` changes only the cells that differ),
its line alone is repainted when it is on screen, and nothing is drawn for rows off
screen. A line is built from cells drawn once per value, width and style
(``table_cells.py``) and kept per row until the row, the styles or the geometry change.

It looks and acts as DataTable with a row cursor: the same component styles (here
``keyed-table--*``), keys (``j``/``k`` too), mouse hover and clicks; ``RowHighlighted``
when the cursor moves to another row, ``RowSelected`` on enter or a click on the
cursor's row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import count
from typing import Any, ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from runeconsole.tui.keyed_rows import KeyedRows
from runeconsole.tui.table_cells import CellPainter, Column, fingerprint, value_width

HEADER = 1  # the header's height: the first line, never scrolled
LINES_KEPT = 2000  # rows whose drawn line is kept (a few screens' worth)


@dataclass(frozen=True)
class Look:
    """What every line of a frame is drawn with: the table's styles and geometry."""

    base: Style
    header: Style
    cursor: Style
    hover: Style
    header_hover: Style
    widths: tuple[int, ...]
    width: int
    scroll_x: int

    def cell_styles(self, header: bool, cursor: bool, hover: bool) -> tuple[Style, Style]:
        """(under the value, over it) for a cell, as DataTable layers them: the row's
        style, the hover's and the cursor's; the cursor's colour wins over the value's."""
        component = Style()
        if hover:
            component += self.hover
            if header:
                component += self.header_hover
        if cursor:
            component += self.cursor
        row = self.header if header else self.base
        return row + component, Style.from_color(color=component.color)


class KeyedTable(ScrollView, can_focus=True):
    ALLOW_SELECT = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select_cursor", "Select", show=False),
        Binding("up,k", "cursor_up", "Up", show=False),
        Binding("down,j", "cursor_down", "Down", show=False),
        Binding("right", "scroll_right", "Scroll right", show=False),
        Binding("left", "scroll_left", "Scroll left", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("ctrl+home", "scroll_top", "Top", show=False),
        Binding("ctrl+end", "scroll_bottom", "Bottom", show=False),
        Binding("home", "scroll_home", "Leftmost", show=False),
        Binding("end", "scroll_end", "Rightmost", show=False),
    ]
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "keyed-table--header",
        "keyed-table--cursor",
        "keyed-table--hover",
        "keyed-table--header-hover",
    }
    # DataTable's look, for a row cursor and no zebra stripes.
    DEFAULT_CSS = """
    KeyedTable {
        background: $surface;
        color: $foreground;
        height: auto;
        max-height: 100%;
        &:focus {
            background-tint: $foreground 5%;
            & > .keyed-table--cursor {
                background: $block-cursor-background;
                color: $block-cursor-foreground;
                text-style: $block-cursor-text-style;
            }
            & > .keyed-table--header {
                background-tint: $foreground 5%;
            }
        }
        & > .keyed-table--header {
            text-style: bold;
            background: $panel;
            color: $foreground;
        }
        &:ansi > .keyed-table--header {
            background: ansi_bright_blue;
            color: ansi_default;
        }
        & > .keyed-table--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
            text-style: $block-cursor-blurred-text-style;
        }
        & > .keyed-table--hover {
            background: $block-hover-background;
        }
        & > .keyed-table--header-hover {
            background: $accent 30%;
        }
    }
    """

    class RowHighlighted(Message):
        """The cursor is on another row (or on the first row added)."""

        def __init__(self, table: KeyedTable, cursor_row: int, key: str) -> None:
            super().__init__()
            self.table, self.cursor_row, self.key = table, cursor_row, key

        @property
        def control(self) -> KeyedTable:
            return self.table

    class RowSelected(Message):
        """Enter on the cursor's row, or a click on it."""

        def __init__(self, table: KeyedTable, cursor_row: int, key: str) -> None:
            super().__init__()
            self.table, self.cursor_row, self.key = table, cursor_row, key

        @property
        def control(self) -> KeyedTable:
            return self.table

    def __init__(self, columns: Sequence[tuple[str, str, int | None]], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._columns = [Column(key, Text(label), width) for key, label, width in columns]
        self._auto = [index for index, column in enumerate(self._columns) if column.width is None]
        self._rows = KeyedRows([column.key for column in self._columns])
        self._cursor = 0
        self._hover: int | None = None  # the row under the mouse (-1: the header), if shown
        self._order_dirty = False
        self._widths = tuple(column.render_width for column in self._columns)
        self._size_due = False
        self._painter = CellPainter()
        self._drawn: LRUCache[tuple[Any, ...], Strip] = LRUCache(LINES_KEPT)
        self._edits = count(1)
        self._edited: dict[str, int] = {}  # a row's last change (a drawn line's stamp)
        self._frame_look: Look | None = None  # while a frame is drawn

    def on_mount(self) -> None:
        self._settle_size()

    # -- the rows, by key ------------------------------------------------------------------

    @property
    def column_keys(self) -> list[str]:
        return [column.key for column in self._columns]

    @property
    def row_count(self) -> int:
        return len(self._rows)

    def has(self, key: str) -> bool:
        return key in self._rows

    def keys(self) -> list[str]:
        """Every row's key, in display order."""
        return list(self._rows.keys())

    def get_row(self, key: str) -> list[Any]:
        return list(self._rows.values[key])

    def get_row_at(self, index: int) -> list[Any]:
        key = self._rows.key_at(index)
        if key is None:
            raise IndexError(f"no row at {index}")
        return self.get_row(key)

    def get_cell(self, key: str, column: str) -> Any:
        return self._rows.values[key][self.column_keys.index(column)]

    def get_row_index(self, key: str) -> int:
        place = self._rows.place(key)
        if place is None:
            raise KeyError(key)
        return place

    def upsert(self, key: str, values: Sequence[Any], skip: frozenset[str] = frozenset()) -> None:
        """Add the row (last) or change only its cells that differ; ``skip`` leaves those
        columns as they are."""
        values = self._full(values)
        old = self._rows.values.get(key)
        if old is None:
            self._add(key, values, self._window())
            self._order_dirty = True
            self._resize()
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
        old = self._rows.values[key]
        if fingerprint(old[index]) != fingerprint(value):
            self._change(key, old, (*old[:index], value, *old[index + 1 :]))

    def drop(self, key: str) -> None:
        old = self._rows.values.get(key)
        settled = self._rows.settled
        place = self._rows.drop(key)
        if old is None or place is None:
            return
        self._edited.pop(key, None)
        self._count_widths(old, -1)
        self._resize()
        if not settled or place <= self._window()[1]:
            self.refresh()  # the rows below it move up
        self._clamp_cursor()

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
        for column in self._auto_columns():
            column.widths.clear()
        self._rows.replace((key, self._full(values)) for key, values in rows)
        self._edited.clear()
        self._order_dirty = False
        for values in self._rows.values.values():
            self._count_widths(values, 1)
        self._resize()
        self.scroll_to(x=self.scroll_x, y=0, animate=False)
        self.refresh()
        place = self._rows.place(current) if current is not None else None
        self._cursor = -1  # whatever it was, the row under it is another now
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
        top, bottom = self._window()
        if self._rows.settled and first <= bottom:
            start = max(first, top)
            self.refresh_lines(start + HEADER, min(bottom, first + len(added) - 1) - start + 1)
        if first == 0:
            self._cursor = -1
            self.move_cursor(row=0)
        self._resize()

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
        self._rows.sort(*columns, key=key)
        self.refresh()
        if current is not None:
            self.move_cursor(row=self.get_row_index(current), scroll=False)

    def refresh_visible(self, cells_of: Callable[[str], dict[str, Any] | None]) -> None:
        """For the rows on screen only: ``cells_of(key)`` names the cells that move with
        time (ages, countdowns), or None to leave the row as it is."""
        for key in self.visible_keys():
            for column, value in (cells_of(key) or {}).items():
                self.set_cell(key, column, value)

    def visible_keys(self) -> list[str]:
        """Keys of the rows on screen (and the one below, which may be partly)."""
        top, bottom = self._window()
        return self._rows.keys()[top : bottom + 1]

    def _full(self, values: Sequence[Any]) -> tuple[Any, ...]:
        width = len(self._columns)
        if type(values) is tuple and len(values) == width:
            return values
        values = tuple(values)
        if len(values) > width:
            raise ValueError("more values than columns")
        return values + (None,) * (width - len(values))

    def _add(self, key: str, values: tuple[Any, ...], window: tuple[int, int]) -> None:
        place = self._rows.add(key, values)
        self._count_widths(values, 1)
        if self._rows.settled and window[0] <= place <= window[1]:
            self.refresh_line(place + HEADER)
        if len(self._rows) == 1:
            self._cursor = -1
            self.move_cursor(row=0)

    def _change(self, key: str, old: tuple[Any, ...], new: tuple[Any, ...]) -> None:
        self._rows.values[key] = new
        self._edited[key] = next(self._edits)
        if self._auto:
            self._count_widths(old, -1)
            self._count_widths(new, 1)
        if self._rows.settled:  # else every line is to be drawn again already
            place = self._rows.place(key)
            if place is not None and self._on_screen(place):
                self.refresh_line(place + HEADER)

    def _auto_columns(self) -> Iterator[Column]:
        return (self._columns[index] for index in self._auto)

    def _count_widths(self, values: tuple[Any, ...], rows: int) -> None:
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

    def _resize(self) -> None:
        """The scrollable size follows the rows, once for a burst of changes (after the
        message being handled), or at once where the cursor or scrolling needs it."""
        if not self._size_due:
            self._size_due = True
            self.call_next(self._settle_size)

    def _settle_size(self) -> None:
        self._size_due = False
        self.virtual_size = Size(sum(self._widths), len(self._rows) + HEADER)

    def _window(self) -> tuple[int, int]:
        """The places of the first and last rows on screen (the last perhaps partly)."""
        top = self.scroll_offset.y
        return top, top + max(0, self.size.height - HEADER)

    def _on_screen(self, place: int) -> bool:
        top, bottom = self._window()
        return top <= place <= bottom

    # -- the cursor ------------------------------------------------------------------------

    @property
    def cursor_row(self) -> int:
        return self._cursor

    def cursor_key(self) -> str | None:
        if not self._rows:
            return None
        return self._rows.key_at(min(max(self._cursor, 0), len(self._rows) - 1))

    def move_cursor(self, *, row: int, animate: bool = False, scroll: bool = True) -> None:
        """The cursor to ``row`` (clamped to the rows), scrolled into view."""
        del animate, scroll  # the cursor is always kept in view, at once (as DataTable does)
        if self._size_due:
            self._settle_size()
        row = max(0, min(row, len(self._rows) - 1))
        moved, old = row != self._cursor, self._cursor
        self._cursor = row
        self._scroll_to_cursor()
        if moved and self._rows:
            self._refresh_row(old)
            self._refresh_row(row)
            key = self._rows.key_at(row)
            if key is not None:
                self.post_message(self.RowHighlighted(self, row, key))

    def move_to(self, key: str) -> None:
        """Put the cursor on ``key``'s row (if shown) and focus the table."""
        if self.has(key):
            self.move_cursor(row=self.get_row_index(key))
            self.focus()

    def _clamp_cursor(self) -> None:
        if self._cursor >= len(self._rows) and self._rows:
            self.move_cursor(row=len(self._rows) - 1)

    def _scroll_to_cursor(self) -> None:
        rows = max(1, self.scrollable_content_region.height - HEADER)
        top = self.scroll_offset.y
        if self._cursor < top:
            self.scroll_to(y=self._cursor, animate=False, force=True)
        elif self._cursor >= top + rows:
            self.scroll_to(y=self._cursor - rows + 1, animate=False, force=True)

    def _refresh_row(self, place: int) -> None:
        if 0 <= place < len(self._rows) and self._on_screen(place):
            self.refresh_line(place + HEADER)

    def _page(self) -> int:
        return max(1, self.scrollable_content_region.height - HEADER)

    def action_cursor_up(self) -> None:
        self._show_hover(None)
        self.move_cursor(row=self._cursor - 1)

    def action_cursor_down(self) -> None:
        self._show_hover(None)
        self.move_cursor(row=self._cursor + 1)

    def action_page_down(self) -> None:
        self._show_hover(None)
        self._settle_size()
        page = self._page()
        self.scroll_to(y=self.scroll_offset.y + page, animate=False, force=True)
        self.move_cursor(row=self._cursor + page)

    def action_page_up(self) -> None:
        self._show_hover(None)
        self._settle_size()
        page = self._page()
        self.scroll_to(y=self.scroll_offset.y - page, animate=False, force=True)
        self.move_cursor(row=self._cursor - page)

    def action_scroll_top(self) -> None:
        self._show_hover(None)
        self.move_cursor(row=0)

    def action_scroll_bottom(self) -> None:
        self._show_hover(None)
        self.move_cursor(row=len(self._rows) - 1)

    def action_scroll_home(self) -> None:
        self._show_hover(None)
        self.scroll_to(x=0, animate=False)

    def action_scroll_end(self) -> None:
        self._show_hover(None)
        self.scroll_to(x=self.max_scroll_x, animate=False)

    def action_select_cursor(self) -> None:
        self._show_hover(None)
        key = self.cursor_key()
        if key is not None:
            self.post_message(self.RowSelected(self, self._cursor, key))

    # -- the mouse -------------------------------------------------------------------------

    def _row_under(self, event: events.MouseEvent) -> int | None:
        """The row under the mouse (-1: the header), or None (below the rows)."""
        offset = event.get_content_offset(self)
        if offset is None:
            return None
        if offset.y < HEADER:
            return -1
        place = offset.y - HEADER + self.scroll_offset.y
        return place if place < len(self._rows) else None

    def _show_hover(self, row: int | None) -> None:
        if row != self._hover:
            old, self._hover = self._hover, row
            for place in (old, row):
                if place == -1:
                    self.refresh_line(self.scroll_offset.y)  # the header's line
                elif place is not None:
                    self._refresh_row(place)

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self._show_hover(self._row_under(event))

    def on_leave(self, _: events.Leave) -> None:
        self._show_hover(None)

    def on_click(self, event: events.Click) -> None:
        row = self._row_under(event)
        self._show_hover(row)
        if row is None or row < 0:
            return
        event.stop()
        if row == self._cursor:
            self.action_select_cursor()
            self._show_hover(row)
        else:
            self.move_cursor(row=row)

    # -- drawing ---------------------------------------------------------------------------

    def on_show(self) -> None:
        """Shown again (its tab chosen): lines changed while hidden were not drawn."""
        self.refresh()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self.refresh()

    def _look(self) -> Look:
        style = self.get_component_rich_style
        return Look(
            base=self.rich_style,
            header=style("keyed-table--header"),
            cursor=style("keyed-table--cursor"),
            hover=style("keyed-table--hover"),
            header_hover=style("keyed-table--header-hover"),
            widths=self._widths,
            width=self.size.width,
            scroll_x=self.scroll_offset.x,
        )

    def render_lines(self, crop: Any) -> list[Strip]:
        self._frame_look = self._look()  # DOMNode works styles out walking every ancestor
        try:
            return super().render_lines(crop)
        finally:
            self._frame_look = None

    def render_line(self, y: int) -> Strip:
        look = self._frame_look or self._look()
        if y < HEADER:
            return self._line(look, None, -1)
        place = y - HEADER + self.scroll_offset.y
        key = self._rows.key_at(place)
        if key is None:
            return Strip.blank(look.width, look.base)
        return self._line(look, key, place)

    def _line(self, look: Look, key: str | None, place: int) -> Strip:
        cursor = key is not None and place == self._cursor
        hover = self._hover == place
        stamp = (key, self._edited.get(key, 0) if key else 0, look, cursor, hover)
        strip = self._drawn.get(stamp)
        if strip is None:
            strip = self._drawn[stamp] = self._draw(look, key, cursor, hover)
        return strip

    def _draw(self, look: Look, key: str | None, cursor: bool, hover: bool) -> Strip:
        header = key is None
        values = [column.label for column in self._columns] if header else self._rows.values[key]
        pre, post = look.cell_styles(header, cursor, hover)
        console, options = self.app.console, self.app.console_options
        paint = self._painter.paint
        segments: list[Segment] = []
        for value, width in zip(values, look.widths, strict=True):
            segments += paint(console, options, value, width, pre, post)
        table_width = sum(look.widths)
        if look.width > table_width:
            segments.append(Segment(" " * (look.width - table_width), pre))
        line = Strip(segments, max(look.width, table_width))
        if look.scroll_x or table_width > look.width:
            line = line.crop(look.scroll_x, look.scroll_x + look.width)
        return line.adjust_cell_length(look.width, look.base)
