"""DataTable geometry for a table whose rows are all one line high.

DataTable allows rows of any height, so it finds where a row is drawn by walking the
rows above it: the line -> row list (``_y_offsets``) is built again over every row after
each change, and a row's region (asked for each time the cursor moves) sums the heights
of every row above it. At 50,000 rows that is tens of milliseconds per chunk of a fill
and per key. When every row is one line high, row ``i`` is line ``i``: these answer
at once. ``KeyedTable`` adds rows only one line high (``add_row``'s default height and
its own bulk ``extend``); a row of another height sends every question back to
DataTable's own answer.
"""

from __future__ import annotations

from rich.text import TextType
from textual.coordinate import Coordinate
from textual.geometry import Region
from textual.widgets import DataTable
from textual.widgets.data_table import CellType, RowKey


class OneLineRows(DataTable):
    _tall_rows = 0  # rows added taller than one line (none, in this console)

    def add_row(
        self,
        *cells: CellType,
        height: int | None = 1,
        key: str | None = None,
        label: TextType | None = None,
    ) -> RowKey:
        if height != 1:
            self._tall_rows += 1
        return super().add_row(*cells, height=height, key=key, label=label)

    @property
    def _one_line(self) -> bool:
        return not self._tall_rows

    @property
    def _total_row_height(self) -> int:
        return self.row_count if self._one_line else super()._total_row_height

    def _get_offsets(self, y: int) -> tuple[RowKey, int]:
        if not self._one_line:
            return super()._get_offsets(y)
        header = self.header_height if self.show_header else 0
        if y < header:
            return self._header_row_key, y
        row_key = self._row_locations.get_key(y - header)
        if row_key is None:
            raise LookupError(f"no row on line {y!r}")
        return row_key, 0

    def _get_row_region(self, row_index: int) -> Region:
        if not self._one_line or not self.is_valid_row_index(row_index):
            return super()._get_row_region(row_index)
        width = sum(column.get_render_width(self) for column in self.columns.values())
        return Region(
            0,
            self._line_of(row_index),
            max(self.size.width, width + self._row_label_column_width),
            1,
        )

    def _get_cell_region(self, coordinate: Coordinate) -> Region:
        if not self._one_line or not self.is_valid_coordinate(coordinate):
            return super()._get_cell_region(coordinate)
        row_index, column_index = coordinate
        columns = self.ordered_columns
        x = sum(c.get_render_width(self) for c in columns[:column_index])
        width = columns[column_index].get_render_width(self)
        return Region(x + self._row_label_column_width, self._line_of(row_index), width, 1)

    def _line_of(self, row_index: int) -> int:
        return row_index + (self.header_height if self.show_header else 0)
