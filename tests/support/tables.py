"""A KeyedTable in an app of its own, rows to put in it, and what it draws."""

from __future__ import annotations

from collections.abc import Iterable

from rich.style import Style
from textual.app import App, ComposeResult
from textual.strip import Strip
from textual.widgets import Button

from runeconsole.tui.widgets.keyed_table import KeyedTable

COLUMNS = (("name", "NAME", 8), ("state", "STATE", 10), ("note", "NOTE", 12))

Rows = list[tuple[str, tuple[object, ...]]]


class TableApp(App[None]):
    """A table (and a button to take focus), with ``rows`` in it from the start."""

    def __init__(
        self,
        columns: tuple[tuple[str, str, int | None], ...] = COLUMNS,
        rows: Rows | None = None,
        kind: type[KeyedTable] = KeyedTable,
    ) -> None:
        super().__init__()
        self.columns, self.rows, self.kind = columns, rows or [], kind
        self.highlighted: list[str] = []
        self.selected: list[str] = []

    def compose(self) -> ComposeResult:
        yield self.kind(self.columns)
        yield Button("other")

    def on_mount(self) -> None:
        self.table.extend(self.rows)

    @property
    def table(self) -> KeyedTable:
        return self.query_one(KeyedTable)

    def on_table_view_row_highlighted(self, message: KeyedTable.RowHighlighted) -> None:
        self.highlighted.append(message.key)

    def on_table_view_row_selected(self, message: KeyedTable.RowSelected) -> None:
        self.selected.append(message.key)


def agents(
    numbers: Iterable[int], state: str = "active", digits: int = 0
) -> list[tuple[str, tuple[object, ...]]]:
    """Rows ``k{n}`` of ``agent{n}`` (``n`` zero-padded to ``digits``) in ``state``."""
    return [(f"k{n:0{digits}d}", (f"agent{n:0{digits}d}", state, "")) for n in numbers]


def drawn(table: KeyedTable) -> list[str]:
    """Every line as it would be painted now (header included)."""
    return [table.render_line(y).text.rstrip() for y in range(table.size.height)]


def looks(strips: list[Strip]) -> list[list[tuple[str, Style]]]:
    """Each character of each line with its style (what the terminal shows: no meta)."""
    return [
        [
            (char, (segment.style or Style()).clear_meta_and_links())
            for segment in strip
            for char in segment.text
        ]
        for strip in strips
    ]
