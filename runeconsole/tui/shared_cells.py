"""DataTable cells drawn once and shared: most cells of a fleet show the same few words.

DataTable lays out each cell through Rich (tens of microseconds a cell) and keys its
cache by row, so a row drawn at another place, or another row showing the same value, is
laid out again. Here a cell's render is kept by what it draws (its column, value,
styles, width, cursor and hover), and another row's render of the same value gets this
cell's place (the ``row``/``column`` meta a mouse click reads) put on its segments; the
result is kept by place too, so a filter whose rows share cells with the last one's
draws them at once. What every cell and line is drawn under (the table's style, hover,
pseudo-classes, theme) is worked out once per frame: DOMNode walks every ancestor for
it, several times a line.
"""

from __future__ import annotations

from typing import Any

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.cache import LRUCache
from textual.coordinate import Coordinate
from textual.geometry import Region
from textual.strip import Strip
from textual.widgets.data_table import RowKey

from runeconsole.tui.one_line_rows import OneLineRows

CELLS_KEPT = 4096  # distinct cell renders kept, and as many placed ones (a few screens)


def fingerprint(value: Any) -> Any:
    """Rich ``Text`` compares equal across styles; compare what is drawn instead."""
    if isinstance(value, Text):
        return (value.plain, str(value.style), tuple(value.spans))
    return value


class SharedCells(OneLineRows):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Cell renders by what they draw, whatever the row.
        self._drawn_cells: LRUCache[tuple[Any, ...], list[list[Segment]]] = LRUCache(CELLS_KEPT)
        # The same, put in place (row and column).
        self._placed_cells: LRUCache[tuple[Any, ...], list[list[Segment]]] = LRUCache(CELLS_KEPT)
        self._frame_style: Style | None = None  # while a frame is drawn (``render_lines``)
        self._frame_cells: tuple[Any, ...] | None = None  # what every cell is drawn under
        self._frame_rows: dict[Any, Any] | None = None  # what every row is drawn with

    @property
    def rich_style(self) -> Style:
        """The table's own style, worked out once per frame: DOMNode's walks every ancestor
        on each call, and drawing a line asks for it several times."""
        style = self._frame_style
        return style if style is not None else super().rich_style

    def render_lines(self, crop: Region) -> list[Strip]:
        self._frame_style = super().rich_style
        # DataTable sets this in its own render_lines, after the key below would be made.
        self._pseudo_class_state = self.get_pseudo_class_state()
        self._frame_cells = self._cells_drawn_under()
        self._frame_rows = {}
        try:
            return super().render_lines(crop)
        finally:
            self._frame_style = self._frame_cells = self._frame_rows = None

    def _cells_drawn_under(self) -> tuple[Any, ...]:
        """What a cell's render depends on beyond its value, base style and place; first,
        whether cells can be shared at all (no fixed rows or columns)."""
        shared = not (self.fixed_rows or self.fixed_columns)
        state = self._pseudo_class_state
        # The component styles a shared cell is drawn with (a CSS change may alter them
        # without changing the theme); the header's and fixed cells' are never shared.
        component = self.get_component_rich_style
        cursor, hover = component("datatable--cursor"), component("datatable--hover")
        theme = self.app.theme
        return (shared, self.show_cursor, self._show_hover_cursor, state, cursor, hover, theme)

    def _render_cell(
        self,
        row_index: int,
        column_index: int,
        base_style: Style,
        width: int,
        cursor: bool = False,
        hover: bool = False,
    ) -> list[list[Segment]]:
        """DataTable's render of a cell, or another row's render of the same value under
        the same styles with this cell's place (the ``row``/``column`` meta a mouse click
        reads) put on its segments: Rich lays out each distinct cell once."""
        under = self._frame_cells or self._cells_drawn_under()
        if row_index < 0 or column_index < 0 or not under[0]:
            return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        row_key = self._row_locations.get_key(row_index)
        column_key = self._column_locations.get_key(column_index)
        if row_key is None or column_key is None or self.rows[row_key].height != 1:
            return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        value = self._data[row_key].get(column_key)
        shared = (column_key, fingerprint(value), base_style, width, cursor, hover, under)
        placed_key = (shared, row_index, column_index)
        try:
            placed = self._placed_cells.get(placed_key)
        except TypeError:  # a value that cannot be a key: rendered as DataTable does
            return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        if placed is not None:
            return placed
        lines = self._drawn_cells.get(shared)
        if lines is None:
            placed = lines = super()._render_cell(
                row_index, column_index, base_style, width, cursor, hover
            )
            self._drawn_cells[shared] = lines
        else:
            place = Style.from_meta({"row": row_index, "column": column_index})
            placed = [
                [
                    Segment(text, style + place if style else style, control)
                    for text, style, control in line
                ]
                for line in lines
            ]
        self._placed_cells[placed_key] = placed
        return placed

    def _render_line_in_row(
        self,
        row_key: RowKey,
        line_no: int,
        base_style: Style,
        cursor_location: Coordinate,
        hover_location: Coordinate,
    ) -> tuple[list[list[Segment]], list[list[Segment]]]:
        """DataTable's row for a plain table (a row cursor, one-line rows, no labels, fixed
        rows or columns, nor zebra stripes), with what every row shares (the columns'
        widths, the padding's styles) worked out once per frame: DataTable works them out
        again for each row, which was most of the cost of drawing a line."""
        frame = self._frame_rows
        row_index = self._row_locations.get(row_key)
        if (
            frame is None
            or row_index is None
            or line_no
            or self.cursor_type != "row"
            or self.zebra_stripes
            or self.fixed_columns
            or row_index < self.fixed_rows
            or (self._labelled_row_exists and self.show_row_labels)
        ):
            return super()._render_line_in_row(
                row_key, line_no, base_style, cursor_location, hover_location
            )
        widths = frame.get("widths")
        if widths is None:
            widths = frame["widths"] = [c.get_render_width(self) for c in self.ordered_columns]
            table_width = sum(widths) + self._row_label_column_width
            frame["padding"] = " " * max(0, self.size.width - table_width)
        cursor, hover = row_index == cursor_location.row, row_index == hover_location.row
        extend = frame.get((base_style, cursor, hover))
        if extend is None:
            component, _ = self._get_styles_to_render_cell(
                False, False, False, hover, cursor, self.show_cursor,
                self._show_hover_cursor, False, False,
            )  # fmt: skip
            extend = frame[(base_style, cursor, hover)] = base_style + component
        render = self._render_cell
        cells = [
            render(row_index, column, base_style, width, cursor=cursor, hover=hover)[0]
            for column, width in enumerate(widths)
        ]
        place = Style.from_meta({"row": row_index, "column": 0, "out_of_bounds": True})
        cells.append([Segment(frame["padding"], extend + place)])
        return [], cells
