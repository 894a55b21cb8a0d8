"""What KeyedTable draws follows every change, though it forgets only the changed rows'
cached renders (it leans on how Textual's DataTable keys its caches)."""

from __future__ import annotations

from functools import partial

import pytest
from rich.text import Text
from textual.app import App, ComposeResult
from textual.coordinate import Coordinate
from textual.geometry import Region
from textual.strip import Strip
from textual.widgets import Button, DataTable, Static, TabbedContent, TabPane

from runeconsole.tui.keyed_table import KeyedTable

COLUMNS = (("name", "NAME", 8), ("state", "STATE", 10), ("note", "NOTE", 12))


class TableApp(App[None]):
    def compose(self) -> ComposeResult:
        yield KeyedTable(COLUMNS)


def drawn(table: KeyedTable) -> list[str]:
    """Every line as it would be painted now (header included)."""
    return [table.render_line(y).text.rstrip() for y in range(table.size.height)]


async def test_a_changed_cell_is_drawn_and_the_other_rows_stay_as_they_were() -> None:
    app = TableApp()
    async with app.run_test(size=(60, 12)) as pilot:
        table = app.query_one(KeyedTable)
        for n in range(6):
            table.upsert(f"k{n}", (f"agent{n}", "active", Text(f"note {n}", "bold")))
        await pilot.pause()
        before = drawn(table)
        assert "agent3" in before[4] and "active" in before[4]

        table.upsert("k3", ("agent3", "crashed", Text("note 3", "bold")))
        table.set_cell("k5", "note", "moved on")
        await pilot.pause()
        after = drawn(table)
        assert "crashed" in after[4] and "active" not in after[4]
        assert "moved on" in after[6]
        assert [line for i, line in enumerate(after) if i not in (4, 6)] == [
            line for i, line in enumerate(before) if i not in (4, 6)
        ]


async def test_changes_show_after_sorting_scrolling_and_cursor_moves() -> None:
    app = TableApp()
    async with app.run_test(size=(60, 8)) as pilot:
        table = app.query_one(KeyedTable)
        for n in range(30):
            table.upsert(f"k{n:02d}", (f"agent{29 - n:02d}", "active", ""))
        table.reorder("name")
        await pilot.pause()
        table.move_cursor(row=20)  # scrolls
        await pilot.pause()
        shown = table.visible_keys()
        key = shown[2]
        table.set_cell(key, "state", "stale")
        table.move_cursor(row=21)
        await pilot.pause()
        line = drawn(table)[1 + 2]  # the header, then the rows on screen
        assert "stale" in line and str(table.get_cell(key, "name")) in line
        table.set_cell(key, "state", "active")
        await pilot.pause()
        assert "stale" not in " ".join(drawn(table))


class TabsApp(App[None]):
    def compose(self) -> ComposeResult:
        with TabbedContent():
            with TabPane("table", id="a"):
                yield KeyedTable(COLUMNS)
            with TabPane("other", id="b"):
                yield Static("elsewhere")


async def test_a_change_made_while_its_tab_is_hidden_shows_when_the_tab_does() -> None:
    app = TabsApp()
    async with app.run_test(size=(60, 10)) as pilot:
        table = app.query_one(KeyedTable)
        table.upsert("k1", ("agent1", "active", ""))
        await pilot.pause()
        app.query_one(TabbedContent).active = "b"
        await pilot.pause()
        table.set_cell("k1", "state", "crashed")
        await pilot.pause()
        app.query_one(TabbedContent).active = "a"
        await pilot.pause()
        screen = app.export_screenshot()
        assert "crashed" in screen and "active" not in screen


async def test_a_changed_cell_reaches_the_screen_though_only_its_region_is_repainted() -> None:
    app = TableApp()
    async with app.run_test(size=(60, 8)) as pilot:
        table = app.query_one(KeyedTable)
        for n in range(30):
            table.upsert(f"k{n:02d}", (f"agent{n:02d}", "active", ""))
        await pilot.pause()
        table.set_cell("k02", "state", "stale")
        table.set_cell("k25", "state", "gone")  # off screen: nothing to paint now
        await pilot.pause()
        assert "stale" in app.export_screenshot()
        table.move_cursor(row=25)
        await pilot.pause()
        assert "gone" in app.export_screenshot()


async def test_replacing_every_row_keeps_the_order_given_and_the_cursor_on_its_row() -> None:
    app = TableApp()
    async with app.run_test(size=(60, 8)) as pilot:
        table = app.query_one(KeyedTable)
        for n in range(10):
            table.upsert(f"k{n}", (f"agent{n}", "active", ""))
        table.move_cursor(row=4)
        table.replace([(f"k{n}", (f"agent{n}", "kept", "")) for n in (9, 4, 1)])
        await pilot.pause()
        assert table.keys() == ["k9", "k4", "k1"] and table.cursor_key() == "k4"
        assert "kept" in app.export_screenshot() and not table.has("k0")
        table.upsert("k0", ("agent0", "back", ""))  # later changes still go by key
        await pilot.pause()
        assert table.has("k0") and table.row_count == 4


async def test_fixed_width_columns_are_not_measured_yet_the_table_scrolls_to_its_last_row() -> None:
    app = TableApp()
    async with app.run_test(size=(60, 8)) as pilot:
        table = app.query_one(KeyedTable)
        table.replace([(f"k{n:03d}", (f"agent{n:03d}", "active", "")) for n in range(200)])
        await pilot.pause()
        assert table.virtual_size.height == 201  # the header and every row
        # Measured, the NAME column's content would be as wide as "agent199"; it keeps
        # its label's width.
        assert [c.content_width for c in table.columns.values()] == [4, 5, 4]
        table.move_cursor(row=199)
        await pilot.pause()
        assert "agent199" in app.export_screenshot()


async def test_rows_showing_the_same_cells_each_carry_their_own_place_for_the_mouse() -> None:
    app = TableApp()
    async with app.run_test(size=(60, 8)) as pilot:
        table = app.query_one(KeyedTable)
        for n in range(3):
            table.upsert(f"k{n}", ("same", "active", "note"))
        await pilot.pause()
        for row in range(3):
            line = table.render_line(1 + row)
            rows = {segment.style.meta.get("row") for segment in line if segment.style}
            assert rows == {row}


async def test_rows_replaced_in_another_order_are_drawn_at_their_new_place_as_datatable_would() -> (
    None
):
    app = TableApp()
    async with app.run_test(size=(60, 8)) as pilot:
        table = app.query_one(KeyedTable)
        rows = [(f"k{n}", (f"agent{n % 2}", "active", Text("note", "bold"))) for n in range(4)]
        table.replace(rows)
        await pilot.pause()
        before = [list(table.render_line(1 + row)) for row in range(4)]
        table.replace(rows[::-1])  # the same cells, each row at another place
        await pilot.pause()
        lines = [list(table.render_line(1 + row)) for row in range(4)]
        for row, line in enumerate(lines):
            assert {s.style.meta.get("row") for s in line if s.style} == {row}
        assert lines[0] != before[0] and lines[3] != before[3]  # same text, other places
        table._lines.clear()
        table._drawn_cells.clear()
        table._placed_cells.clear()
        table._clear_caches()
        assert [list(table.render_line(1 + row)) for row in range(4)] == lines


def drawn_segments(table: KeyedTable, *, per_frame: bool) -> list[list[object]]:
    """Every line drawn afresh, rows assembled per frame (``SharedCells``) or by
    DataTable's own ``_render_line_in_row``."""
    table._lines.clear()
    table._drawn_cells.clear()
    table._placed_cells.clear()
    table._clear_caches()
    table._frame_rows = {} if per_frame else None
    try:
        return [list(table.render_line(y)) for y in range(table.size.height)]
    finally:
        table._frame_rows = None


@pytest.mark.parametrize("size", [(60, 8), (24, 8)])  # (24, 8): scrolled sideways too
async def test_rows_assembled_once_per_frame_are_what_datatable_assembles(
    size: tuple[int, int],
) -> None:
    app = TableApp()
    async with app.run_test(size=size) as pilot:
        table = app.query_one(KeyedTable)
        for n in range(5):
            note = Text(f"note {n}", "bold red" if n % 2 else "")
            table.upsert(f"k{n}", (f"agent{n % 3}", Text("active", "green"), note))
        await pilot.pause()
        states = [
            lambda: None,
            lambda: table.move_cursor(row=2),
            lambda: setattr(table, "hover_coordinate", Coordinate(3, 1)),
            lambda: setattr(table, "_show_hover_cursor", True),
            lambda: table.scroll_to(x=7, animate=False),
            lambda: table.blur(),
        ]
        for change in states:
            change()
            await pilot.pause()
            assert drawn_segments(table, per_frame=True) == drawn_segments(table, per_frame=False)


async def test_rows_added_on_screen_are_drawn_and_rows_added_below_leave_the_lines_as_drawn() -> (
    None
):
    app = TableApp()
    async with app.run_test(size=(60, 8)) as pilot:
        table = app.query_one(KeyedTable)
        row = lambda n: (f"k{n}", (f"agent{n}", "active", ""))  # noqa: E731
        table.extend([row(n) for n in range(3)])
        await pilot.pause()
        table.extend([row(n) for n in range(3, 10)])  # two of them on screen
        await pilot.pause()
        assert [line.split()[0] for line in drawn(table)[1:]] == [f"agent{n}" for n in range(7)]
        before = drawn(table)
        table.extend([row(n) for n in range(10, 30)])  # all below the screen
        await pilot.pause()
        assert drawn(table) == before
        table.scroll_end(animate=False)
        await pilot.pause()
        shown = drawn(table)
        assert shown[-1].split()[0] == "agent29"
        table._lines.clear()
        table._clear_caches()
        assert drawn(table) == shown  # what DataTable draws afresh


class TableBesideButton(App[None]):
    def compose(self) -> ComposeResult:
        yield KeyedTable(COLUMNS)
        yield Button("other")


@pytest.mark.parametrize("theme", ["ansi-dark", "textual-dark"])
async def test_the_cursor_row_follows_focus_and_a_hidden_cursor_as_datatable_draws_it(
    theme: str,
) -> None:
    app = TableBesideButton()
    async with app.run_test(size=(60, 8)) as pilot:
        app.theme = theme  # an ANSI theme: focus leaves the table's own style as it was
        table = app.query_one(KeyedTable)
        for n in range(4):
            table.upsert(f"k{n}", (f"agent{n}", "active", ""))
        await pilot.pause()
        for change in (
            lambda: app.query_one(Button).focus(),
            lambda: table.focus(),
            lambda: restyle(app, "KeyedTable > .datatable--cursor { background: red; }"),
            lambda: setattr(table, "show_cursor", False),
        ):
            change()
            await pilot.pause()
            painted = table.render_lines(Region(0, 0, table.size.width, 3))
            assert painted == table_drawn_afresh(table, 3)


def restyle(app: App[None], css: str) -> None:
    """CSS added while the app runs (the cursor's colours change, the theme does not)."""
    app.stylesheet.add_source(css, read_from=("test", "restyle"))
    app.refresh_css()


def table_drawn_afresh(table: KeyedTable, lines: int) -> list[Strip]:
    table._lines.clear()
    table._drawn_cells.clear()
    table._placed_cells.clear()
    table._clear_caches()
    table._styles_cache.clear()
    return table.render_lines(Region(0, 0, table.size.width, lines))


async def test_a_row_drawn_again_after_a_change_is_what_a_fresh_table_draws() -> None:
    app = TableApp()
    async with app.run_test(size=(60, 8)) as pilot:
        table = app.query_one(KeyedTable)
        for n in range(3):
            table.upsert(f"k{n}", (f"agent{n}", "active", Text("note", "bold")))
        await pilot.pause()
        table.set_cell("k1", "state", Text("crashed", "red"))
        await pilot.pause()
        spliced = table.render_line(2)
        table._lines.clear()  # drawn whole, by DataTable
        assert list(table.render_line(2)) == list(spliced)


async def test_one_line_rows_place_every_row_and_cell_where_datatable_would() -> None:
    app = TableApp()
    async with app.run_test(size=(60, 12)) as pilot:
        table = app.query_one(KeyedTable)
        table.extend([(f"k{n:02d}", (f"agent{n}", "active", "")) for n in range(40)])
        table.reorder("name", force=True)
        await pilot.pause()
        assert table._total_row_height == DataTable._total_row_height.fget(table) == 40
        for y in range(41):  # the header, then a line a row
            assert table._get_offsets(y) == DataTable._get_offsets(table, y)
        for ask in (table._get_offsets, partial(DataTable._get_offsets, table)):
            with pytest.raises(LookupError):
                ask(41)
        for row in (0, 7, 39):
            assert table._get_row_region(row) == DataTable._get_row_region(table, row)
            for column in range(3):
                place = Coordinate(row, column)
                assert table._get_cell_region(place) == DataTable._get_cell_region(table, place)


async def test_a_taller_row_sends_every_question_back_to_datatable() -> None:
    app = TableApp()
    async with app.run_test(size=(60, 12)) as pilot:
        table = app.query_one(KeyedTable)
        table.add_row("tall", "two", "lines", key="tall", height=2)
        table.add_row("short", "one", "line", key="short")
        await pilot.pause()
        assert table._total_row_height == 3
        assert table._get_offsets(3)[0].value == "short"
        assert table._get_row_region(1).y == 3
