"""KeyedTable draws what Textual's DataTable drew: cell by cell, through keys, the mouse,
focus and themes, scrolled sideways; a cell's text as written; the cursor's component
style followed."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widgets import Button, DataTable

from runeconsole.tui.widgets.keyed_table import KeyedTable
from tests.support.tables import COLUMNS, TableApp, agents, drawn, looks


class JKDataTable(DataTable[object]):
    BINDINGS = [Binding("j", "cursor_down"), Binding("k", "cursor_up")]


class DataTableApp(App[None]):
    """The reference: DataTable as the console used it (a row cursor, fixed widths)."""

    def compose(self) -> ComposeResult:
        table = JKDataTable(cursor_type="row")
        for key, label, width in COLUMNS:
            table.add_column(label, key=key, width=width)
        yield table
        yield Button("other")


def row(n: int) -> tuple[object, ...]:
    note = Text(f"note {n}", "bold red" if n % 2 else "")
    return (f"agent{n % 3}", Text("active", "green"), note)


Step = Callable[[App[None], Pilot[None]], Awaitable[object]]


async def painted_through(app: App[None], steps: list[Step], size: tuple[int, int], theme: str):
    """What the app's table paints after each step."""
    shots = []
    async with app.run_test(size=size) as pilot:
        app.theme = theme
        table = the_table(app)
        for n in range(20):
            if isinstance(table, DataTable):
                table.add_row(*row(n), key=f"k{n}")
            else:
                table.upsert(f"k{n}", row(n))
        table.focus()
        await pilot.pause()
        for step in steps:
            await step(app, pilot)
            await pilot.pause()
            shots.append(looks(table.render_lines(Region(0, 0, *table.size))))
    return shots


def the_table(app: App[None]) -> DataTable[object] | KeyedTable:
    return app.query_one(DataTable if isinstance(app, DataTableApp) else KeyedTable)


async def nothing(app: App[None], pilot: Pilot[None]) -> None:
    pass


async def focus_elsewhere(app: App[None], pilot: Pilot[None]) -> None:
    app.query_one(Button).focus()  # the cursor is drawn blurred


STEPS: list[Step] = [
    nothing,
    lambda app, pilot: pilot.press("j", "j", "down"),
    lambda app, pilot: pilot.press("pagedown"),
    lambda app, pilot: pilot.press("k", "up"),
    lambda app, pilot: pilot.hover(the_table(app).__class__, offset=(3, 2)),
    lambda app, pilot: pilot.hover(the_table(app).__class__, offset=(3, 0)),  # the header
    lambda app, pilot: pilot.press("ctrl+home"),
    focus_elsewhere,
    lambda app, pilot: pilot.press("shift+tab"),
    lambda app, pilot: pilot.press("right", "right"),  # scrolled sideways (when narrower)
    lambda app, pilot: pilot.press("end"),
    lambda app, pilot: pilot.press("ctrl+end"),
]


@pytest.mark.parametrize("theme", ["textual-dark", "textual-light", "ansi-dark"])
@pytest.mark.parametrize("size", [(60, 10), (24, 10)])  # (24, 10): narrower than the table
async def test_every_line_is_what_datatable_draws_through_keys_mouse_and_focus(
    theme: str, size: tuple[int, int]
) -> None:
    ours = await painted_through(TableApp(), STEPS, size, theme)
    reference = await painted_through(DataTableApp(), STEPS, size, theme)
    for step, (mine, theirs) in enumerate(zip(ours, reference, strict=True)):
        assert mine == theirs, f"after step {step}"


async def test_a_text_cell_that_looks_like_markup_is_shown_as_written() -> None:
    app = TableApp()
    async with app.run_test(size=(60, 8)) as pilot:
        table = app.table
        table.upsert("k0", ("above", "", ""))  # the cursor's row
        table.upsert("k1", ("n[red]x", "[b]s", 1.5))
        await pilot.pause()
        line = drawn(table)[2]
        assert "n[red]x" in line and "[b]s" in line and "1.50" in line
        assert len({segment.style for segment in table.render_line(2)}) == 1  # all plain


async def test_the_cursor_row_follows_focus_and_a_changed_cursor_style() -> None:
    app = TableApp(rows=agents(range(4)))
    async with app.run_test(size=(60, 8)) as pilot:
        table = app.table
        table.focus()
        await pilot.pause()
        focused = table.render_lines(Region(0, 0, 60, 3))
        app.query_one(Button).focus()
        await pilot.pause()
        blurred = table.render_lines(Region(0, 0, 60, 3))
        assert looks(focused)[1] != looks(blurred)[1]
        app.stylesheet.add_source(
            "KeyedTable > .table-view--cursor { background: red; }", read_from=("test", "css")
        )
        app.refresh_css()
        await pilot.pause()
        red = table.render_lines(Region(0, 0, 60, 3))
        assert {s.style.bgcolor.name for s in red[1] if s.style and s.style.bgcolor} == {"#ff0000"}
