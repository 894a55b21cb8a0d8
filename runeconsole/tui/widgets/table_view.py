"""A table of one-line rows with a row cursor, drawn line by line on Textual's Line API.

A ``ScrollView`` whose ``render_line`` draws row ``scroll_y + y`` (the header stays on
the first line), as Textual's own DataTable and Toolong's log view do, with nothing of
them but public API: only the rows on screen are ever drawn, whatever the row count. A
row's line is kept until the row, the styles or the geometry change; lines are built by
``table_cells.LinePainter``. A table with no box, tint or opacity hands its kept lines to
the compositor itself, through the app's line filters: Textual's styling would copy each
line drawn (and filter the copy again) for nothing, and a line kept keeps its filtered
form too. The rows themselves (``KeyedRows``) are ``KeyedTable``'s to
change; here they are only read.

It looks and acts as DataTable with a row cursor and no zebra stripes: the same styles
(component classes ``table-view--*``), keys (``j``/``k`` too), mouse hover and clicks.
A table on a hidden tab marks the lines it changes as it does on screen (Textual keeps
them to draw when shown): shown again, it draws those only, in the frame that shows
it, not the whole table once more in a frame of its own.

``keep_lit`` keeps the focused look while another widget that acts on the table (the
filter line) has the keys, until the table is focused again: focus gone elsewhere
otherwise draws every line again in the blurred colours, and back.

``RowHighlighted`` when the cursor moves to another row (or onto the first row added),
``RowSelected`` on enter or a click on the cursor's row; both are the table's own
(``on_table_view_row_selected``, ``…_row_highlighted``, or ``@on(TableView.RowSelected)``),
whichever subclass sent them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from rich.console import ConsoleOptions
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.color import Color
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget

from runeconsole.tui.widgets.keyed_rows import KeyedRows
from runeconsole.tui.widgets.table_cells import Column, LinePainter, Look, Painted

HEADER = 1  # the header's height: the first line, never scrolled
LINES_KEPT = 500  # rows whose drawn line is kept (a few screens' worth)
SIZE_LAG = 0.25  # seconds the scrollbar may lag behind rows added below the screen


class RowMessage(Message):
    """About one row of a table: its place and key."""

    def __init__(self, table: TableView, cursor_row: int, key: str) -> None:
        super().__init__()
        self.table, self.cursor_row, self.key = table, cursor_row, key

    @property
    def control(self) -> TableView:
        return self.table


class TableView(ScrollView, can_focus=True):
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
        "table-view--header",
        "table-view--cursor",
        "table-view--hover",
        "table-view--header-hover",
    }
    DEFAULT_CSS = """
    TableView {
        background: $surface;
        color: $foreground;
        height: auto;
        max-height: 100%;
        &:focus, &.-lit {
            background-tint: $foreground 5%;
            & > .table-view--cursor {
                background: $block-cursor-background;
                color: $block-cursor-foreground;
                text-style: $block-cursor-text-style;
            }
            & > .table-view--header {
                background-tint: $foreground 5%;
            }
        }
        & > .table-view--header {
            text-style: bold;
            background: $panel;
            color: $foreground;
        }
        &:ansi > .table-view--header {
            background: ansi_bright_blue;
            color: ansi_default;
        }
        & > .table-view--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
            text-style: $block-cursor-blurred-text-style;
        }
        & > .table-view--hover {
            background: $block-hover-background;
        }
        & > .table-view--header-hover {
            background: $accent 30%;
        }
    }
    """

    class RowHighlighted(RowMessage):
        """The cursor is on another row (or on the first row added)."""

    class RowSelected(RowMessage):
        """Enter on the cursor's row, or a click on it."""

    def __init__(self, columns: Sequence[tuple[str, str, int | None]], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._columns = [Column(key, Text(label), width) for key, label, width in columns]
        self._widths = tuple(column.render_width for column in self._columns)
        self._labels = tuple(column.label for column in self._columns)
        self._rows = KeyedRows([column.key for column in self._columns])
        self._cursor = 0
        self._follow: str | None = None  # the cursor's row, while rows above may go
        self._hover: int | None = None  # the row under the mouse (-1: the header), if shown
        self._size_due = False
        self._size_lagging = False
        self._painter = LinePainter()
        # The line last drawn for each row (None: the header), with what it was drawn from:
        # the values (by identity), look, cursor and hover. One line a row: a row drawn
        # again replaces its line (the old one could never be shown again), so a fleet
        # changing all day keeps at most a line per row, not a line per change.
        self._drawn: LRUCache[str | None, tuple[tuple[Look, bool, bool], Painted]] = LRUCache(
            LINES_KEPT
        )
        self._frame_look: Look | None = None  # while a frame is drawn
        self._frame_options: ConsoleOptions | None = None
        self._styles: tuple[Style, Style, Style, Style, Style] | None = None  # _look's
        self._plainly: tuple[bool, Color] | None = None  # _plain's, until a style update

    def on_mount(self) -> None:
        self._settle_size()

    # -- geometry --------------------------------------------------------------------------

    def _resize(self, *, lag: bool = False) -> None:
        """The scrollable size follows the rows, once for a burst of changes (after the
        message being handled), or at once where the cursor or scrolling needs it. Rows
        added below the screen (a fill's chunks) change only the scrollbar: it follows
        within ``SIZE_LAG``, sparing a layout of the screen per chunk."""
        if lag:
            if not self._size_due and not self._size_lagging:
                self._size_lagging = True
                self.set_timer(SIZE_LAG, self._settle_lagging)
        elif not self._size_due:
            self._size_due = True
            self.call_next(self._settle_size)

    def _settle_lagging(self) -> None:
        self._size_lagging = False
        self._settle_size()

    def _settle_size(self) -> None:
        self._size_due = False
        size = Size(sum(self._widths), len(self._rows) + HEADER)
        if size == self.virtual_size:
            return
        # Set without the reactive's repaint of every line: the lines that changed were
        # asked for by whoever changed them.
        before = self.virtual_size
        self.set_reactive(Widget.virtual_size, size)
        if self._bar_stays(before, size):
            # Only the thumb moves (a filter that still leaves more rows than the screen
            # holds, a fill's chunk): the scrollbar alone is drawn again, not the screen.
            bar = self.vertical_scrollbar
            bar.window_virtual_size = size.height
            if self.scroll_y > self.max_scroll_y:
                self.scroll_to(y=self.max_scroll_y, animate=False, force=True)
            return
        self.refresh(layout=True, repaint=False)

    def _bar_stays(self, before: Size, after: Size) -> bool:
        """Whether only the vertical scrollbar's thumb moves from ``before`` to ``after``:
        the bar shown, the width the same, and the rows over the screen's height both
        times (no bar comes or goes)."""
        height = self.container_size.height
        return (
            before.width == after.width
            and self.show_vertical_scrollbar
            and before.height > height
            and after.height > height
        )

    def _scroll_y_to(self, y: int) -> None:
        """Scroll to line ``y`` at once; the scrollable size is brought up to date first
        only if it falls short (a key during a fill then costs no layout of the screen)."""
        if y > self.max_scroll_y and (self._size_due or self._size_lagging):
            self._settle_size()
        self.scroll_to(y=y, animate=False, force=True)

    def _window(self) -> tuple[int, int]:
        """The places of the first and last rows on screen (the last perhaps partly)."""
        top = self.scroll_offset.y
        return top, top + max(0, self.size.height - HEADER)

    def _refresh_row(self, place: int) -> None:
        top, bottom = self._window()
        if top <= place <= bottom and place < len(self._rows):
            self.refresh_line(place + HEADER)

    def _refresh_cells(self, place: int, columns: list[int]) -> None:
        """Repaint only these cells of a row on screen: the terminal is sent what changed
        (a row's age each second is a few cells, not a line 160 wide)."""
        top, bottom = self._window()
        if top <= place <= bottom:
            self._refresh_columns(top, dict.fromkeys(columns, (place, place)))

    def _refresh_columns(self, top: int, spans: dict[int, tuple[int, int]]) -> None:
        """Repaint these columns' cells, each from its first place to its last (``top``:
        the first place on screen)."""
        starts = [-self.scroll_offset.x]
        for width in self._widths:
            starts.append(starts[-1] + width)
        for index, (first, last) in spans.items():
            width = starts[index + 1] - starts[index]
            self.refresh(Region(starts[index], first - top + HEADER, width, last - first + 1))

    def _page(self) -> int:
        return max(1, self.scrollable_content_region.height - HEADER)

    # -- the cursor ------------------------------------------------------------------------

    @property
    def cursor_row(self) -> int:
        """The cursor's place: on the row it was on, when rows were dropped (at the same
        place when its own row was)."""
        follow = self._follow
        if follow is not None:
            self._follow = None
            place = self._rows.place(follow)
            last = max(0, len(self._rows) - 1)
            self._cursor = place if place is not None else min(self._cursor, last)
        return self._cursor

    def cursor_key(self) -> str | None:
        if not self._rows:
            return None
        return self._rows.key_at(min(max(self.cursor_row, 0), len(self._rows) - 1))

    def _keep_cursor_on_its_row(self) -> None:
        """Rows are about to be dropped: the cursor stays on its own, if that is kept."""
        if self._follow is None and self._rows:
            self._follow = self.cursor_key()

    def move_cursor(self, *, row: int) -> None:
        """The cursor to ``row`` (clamped to the rows), scrolled into view at once."""
        row = max(0, min(row, len(self._rows) - 1))
        old, self._cursor = self.cursor_row, row
        rows = self._page()
        top = self.scroll_offset.y
        if row < top:
            self._scroll_y_to(row)
        elif row >= top + rows:
            self._scroll_y_to(row - rows + 1)
        if row != old and self._rows:
            self._refresh_row(old)
            self._refresh_row(row)
            key = self._rows.key_at(row)
            if key is not None:
                self.post_message(self.RowHighlighted(self, row, key))

    def action_cursor_up(self) -> None:
        self._show_hover(None)
        self.move_cursor(row=self.cursor_row - 1)

    def action_cursor_down(self) -> None:
        self._show_hover(None)
        self.move_cursor(row=self.cursor_row + 1)

    def action_page_down(self) -> None:
        self._page_by(1)

    def action_page_up(self) -> None:
        self._page_by(-1)

    def _page_by(self, pages: int) -> None:
        """A page down (1) or up (-1): the rows and the cursor move by a screenful."""
        self._show_hover(None)
        page = self._page() * pages
        self._scroll_y_to(self.scroll_offset.y + page)
        self.move_cursor(row=self.cursor_row + page)

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
            self.post_message(self.RowSelected(self, self.cursor_row, key))

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
        if row == self.cursor_row:
            self.action_select_cursor()
            self._show_hover(row)
        else:
            self.move_cursor(row=row)

    # -- drawing ---------------------------------------------------------------------------

    def keep_lit(self) -> None:
        """Keep the focused look (cursor, tint) until focused again or ``unlit``: the
        widget about to take the keys narrows this table."""
        self.add_class("-lit")

    def unlit(self) -> None:
        self.remove_class("-lit")

    def on_focus(self) -> None:
        self.unlit()  # focused again: the look is the focus's own

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = self._plainly = None
        self.refresh()

    def _look(self) -> Look:
        # The styles are worked out again only after a style update (focus, a class, a
        # theme): Textual forgets its own after every refresh, so each frame walked the
        # ancestors five times.
        if self._styles is None:
            style = self.get_component_rich_style
            self._styles = (
                self.rich_style,
                style("table-view--header"),
                style("table-view--cursor"),
                style("table-view--hover"),
                style("table-view--header-hover"),
            )
        base, header, cursor, hover, header_hover = self._styles
        return Look(
            base=base,
            header=header,
            cursor=cursor,
            hover=hover,
            header_hover=header_hover,
            widths=self._widths,
            width=self.size.width,
            scroll_x=self.scroll_offset.x,
        )

    @property
    def lines_kept(self) -> int:
        """How many rows keep a drawn line (one each, ``LINES_KEPT`` rows at most)."""
        return len(self._drawn)

    def _values(self, key: str) -> tuple[Any, ...]:
        """Row ``key``'s values, as they are to be drawn."""
        return self._rows.values[key]

    def render_lines(self, crop: Region) -> list[Strip]:
        self._frame_look = self._look()  # DOMNode works styles out walking every ancestor
        self._frame_options = self.app.console_options  # a new object each time asked
        try:
            plain, background = self._plain()
            if not plain:
                return super().render_lines(crop)
            filters = self.get_line_filters()
            strips = []
            for y in crop.line_range:
                strip = self.render_line(y)
                for line_filter in filters:
                    strip = strip.apply_filter(line_filter, background)
                strips.append(strip)
            x1, x2 = crop.column_span
            if (x1, x2) != (0, self.size.width):
                strips = [strip.crop(x1, x2) for strip in strips]
            return strips
        finally:
            self._frame_look = self._frame_options = None

    def _plain(self) -> tuple[bool, Color]:
        """Whether Textual's styling of a line would leave it as drawn (no border,
        padding, outline, hatch, tint or opacity), and the background the line filters
        are given; worked out again only after a style update, as ``_look``'s styles
        (both walk every ancestor)."""
        if self._plainly is None:
            styles = self.styles
            plain = (
                not any(styles.gutter)
                and not any(edge for edge, _ in styles.outline)
                and not (styles.has_rule("hatch") and styles.hatch != "none")
                and not styles.tint.a
                and styles.text_opacity == 1.0
                and self.opacity == 1.0
            )
            self._plainly = (plain, self.background_colors[1])
        return self._plainly

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
        """Row ``key``'s line (the header's for None), drawn again only when it changed,
        and then only the cells whose value changed when nothing else did."""
        cursor = key is not None and place == self.cursor_row
        hover = self._hover == place
        values = self._values(key) if key is not None else self._labels
        drawn = self._drawn.get(key)
        before = None
        if drawn is not None:
            drawn_with, painted = drawn
            if drawn_with == (look, cursor, hover):
                if painted.values is values:
                    return painted.strip
                before = painted
            self._drawn.discard(key)  # the cache keeps a key's first value: replaced here
        painted = self._painter.line(
            self.app.console,
            self._frame_options or self.app.console_options,
            look,
            values,
            header=key is None,
            cursor=cursor,
            hover=hover,
            before=before,
        )
        self._drawn[key] = ((look, cursor, hover), painted)
        return painted.strip
