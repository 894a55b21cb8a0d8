"""KeyedTable keeps its rows by key: a change redraws only its own cells, rows added below
the screen draw nothing, columns fit their values, the rows on screen are the ones asked."""

from __future__ import annotations

from typing import Any

import pytest
from rich.text import Text
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Button, Static, TabbedContent, TabPane

from runeconsole.tui.widgets.keyed_table import KeyedTable
from runeconsole.tui.widgets.table_cells import Painted
from runeconsole.tui.widgets.table_view import SIZE_LAG
from tests.support.tables import COLUMNS, TableApp, agents, drawn

AUTO = (("name", "NAME", 8), ("note", "NOTE", None))


async def test_a_changed_cell_is_drawn_and_the_other_rows_keep_the_lines_already_drawn() -> None:
    app = TableApp()
    async with app.run_test(size=(60, 12)) as pilot:
        table = app.table
        for n in range(6):
            table.upsert(f"k{n}", (f"agent{n}", "active", Text(f"note {n}", "bold")))
        await pilot.pause()
        before = [table.render_line(y) for y in range(8)]
        table.upsert("k3", ("agent3", "crashed", Text(f"note {3}", "bold")))
        table.upsert("k4", ("agent4", "active", Text("note 4", "bold")))  # nothing differs
        table.set_cell("k5", "note", "moved on")
        await pilot.pause()
        after = [table.render_line(y) for y in range(8)]
        assert "crashed" in after[4].text and "active" not in after[4].text
        assert "moved on" in after[6].text
        assert [y for y in range(8) if after[y] is not before[y]] == [4, 6]


async def test_skipped_columns_keep_their_value_and_a_row_shows_none_as_blank() -> None:
    app = TableApp()
    async with app.run_test(size=(60, 8)) as pilot:
        table = app.table
        table.upsert("k1", ("agent1", "active"))  # fewer values than columns: the rest blank
        table.upsert("k1", ("agent1", "crashed", "late"), skip=frozenset({"state"}))
        await pilot.pause()
        assert table.get_row("k1") == ["agent1", "active", "late"]
        with pytest.raises(ValueError):
            table.upsert("k2", ("a", "b", "c", "d"))


async def test_sync_shows_exactly_the_rows_given_and_a_dropped_row_comes_back_last() -> None:
    app = TableApp()
    async with app.run_test(size=(60, 10)) as pilot:
        table = app.table
        table.sync(agents(range(5)))
        table.sync(agents((0, 2, 4)))
        assert table.keys() == ["k0", "k2", "k4"] and not table.has("k1")
        table.drop("k0")
        table.drop("k0")  # already gone: nothing
        table.upsert("k0", ("agent0", "back", ""))
        await pilot.pause()
        assert table.keys() == ["k2", "k4", "k0"] and table.get_row_index("k0") == 2
        assert [line.split()[0] for line in drawn(table)[1:4]] == ["agent2", "agent4", "agent0"]


async def test_replacing_every_row_keeps_the_order_given_and_the_cursor_on_its_row() -> None:
    app = TableApp()
    async with app.run_test(size=(60, 8)) as pilot:
        table = app.table
        for key, values in agents(range(10)):
            table.upsert(key, values)
        table.move_cursor(row=4)
        table.replace(agents((9, 4, 1), "kept"))
        await pilot.pause()
        assert table.keys() == ["k9", "k4", "k1"] and table.cursor_key() == "k4"
        assert "kept" in app.export_screenshot() and not table.has("k0")
        table.upsert("k0", ("agent0", "back", ""))  # later changes still go by key
        await pilot.pause()
        assert table.has("k0") and table.row_count == 4
        with pytest.raises(ValueError):
            table.extend([("k0", ("again", "", ""))])


async def test_sorting_keeps_the_cursor_on_its_row_and_reorder_sorts_only_when_rows_came() -> None:
    app = TableApp()
    async with app.run_test(size=(60, 8)) as pilot:
        table = app.table
        for n in range(30):
            table.upsert(f"k{n:02d}", (f"agent{29 - n:02d}", "active", ""))
        table.move_cursor(row=3)
        table.reorder("name")
        await pilot.pause()
        assert table.keys()[0] == "k29" and table.cursor_key() == "k03"
        table.set_cell("k00", "name", "aaa")
        table.reorder("name")  # no row added since: left as it is
        assert table.keys()[0] == "k29"
        table.reorder("name", force=True)
        assert table.keys()[0] == "k00" and table.cursor_key() == "k03"
        table.move_cursor(row=0)
        await pilot.pause()
        assert drawn(table)[1].split()[0] == "aaa"


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


async def test_a_change_on_screen_reaches_it_and_one_off_screen_is_drawn_when_scrolled_to() -> None:
    app = TableApp()
    async with app.run_test(size=(60, 8)) as pilot:
        table = app.table
        for key, values in agents(range(30), digits=2):
            table.upsert(key, values)
        await pilot.pause()
        table.set_cell("k02", "state", "stale")
        table.set_cell("k25", "state", "gone")  # off screen: nothing to paint now
        await pilot.pause()
        assert "stale" in app.export_screenshot()
        table.move_cursor(row=25)
        await pilot.pause()
        assert "gone" in app.export_screenshot()


async def test_a_row_marked_stale_off_screen_is_rebuilt_once_when_drawn_or_read() -> None:
    app = TableApp(rows=agents(range(30), digits=2))
    async with app.run_test(size=(60, 8)) as pilot:
        table = app.table
        await pilot.pause()
        asked: list[str] = []
        now = {"k25": ("agent25", "rebuilt", ""), "k27": ("agent27", "read", "")}

        def rebuild(key: str) -> tuple[object, ...] | None:
            asked.append(key)
            return now.get(key)

        assert not table.stale("k02")  # on screen: the caller draws it now
        table.rebuild = rebuild
        assert not table.stale("k02") and not table.stale("nobody")
        assert table.stale("k25") and table.stale("k27") and table.stale("k29")
        await pilot.pause()
        assert asked == []  # nothing off screen is built
        assert table.get_row("k27") == ["agent27", "read", ""]
        table.move_cursor(row=25)
        await pilot.pause()
        assert "rebuilt" in app.export_screenshot()
        table.upsert("k29", ("agent29", "upserted", ""))  # written since: no rebuild
        table.move_cursor(row=29)
        await pilot.pause()
        assert "upserted" in app.export_screenshot()
        assert asked == ["k27", "k25"]


async def test_a_table_whose_column_follows_its_values_rebuilds_nothing_later() -> None:
    app = TableApp(columns=AUTO, rows=[(f"k{n:02d}", (f"a{n}", "x")) for n in range(30)])
    async with app.run_test(size=(60, 8)) as pilot:
        await pilot.pause()
        app.table.rebuild = lambda key: None
        assert not app.table.stale("k25")  # its width could change: upserted at once


async def test_only_the_rows_on_screen_are_asked_for_their_moving_cells() -> None:
    app = TableApp(rows=agents(range(30), digits=2))
    async with app.run_test(size=(60, 8)) as pilot:
        table = app.table
        await pilot.pause()
        asked: list[str] = []

        def cells_of(key: str) -> dict[str, object] | None:
            asked.append(key)
            return {"note": "1m05s"} if key == "k03" else None

        table.refresh_visible(cells_of)
        await pilot.pause()
        assert asked == table.visible_keys() and asked[0] == "k00" and len(asked) <= 8
        assert "1m05s" in drawn(table)[4]


async def test_the_moving_cells_of_every_row_on_screen_are_drawn_anew_scrolled_sideways_too() -> (
    None
):
    app = TableApp(rows=agents(range(30), digits=2))
    async with app.run_test(size=(30, 8)) as pilot:  # narrower than the table
        table = app.table
        await pilot.pause()
        table.scroll_to(x=8, animate=False)
        await pilot.pause()
        table.refresh_visible(lambda key: {"note": f"{key[1:]}s"} if key != "k02" else None)
        await pilot.pause()
        rows = zip(table.visible_keys(), drawn(table)[1:], strict=False)
        assert all((f"{key[1:]}s" in line) == (key != "k02") for key, line in rows)
        assert table.get_cell("k02", "note") != "02s" and table.get_cell("k29", "note") != "29s"


async def test_fixed_width_columns_size_the_table_and_it_scrolls_to_its_last_row() -> None:
    app = TableApp()
    async with app.run_test(size=(60, 8)) as pilot:
        table = app.table
        table.replace(agents(range(200), digits=3))
        await pilot.pause()
        assert table.virtual_size.height == 201  # the header and every row
        assert table.virtual_size.width == 8 + 10 + 12 + 6  # a space either side of each
        table.move_cursor(row=199)
        await pilot.pause()
        assert "agent199" in app.export_screenshot()


async def test_an_auto_width_column_fits_its_widest_value_shown_and_shrinks_back() -> None:
    app = TableApp(AUTO)
    async with app.run_test(size=(80, 8)) as pilot:
        table = app.table
        table.upsert("k1", ("a", "short"))
        await pilot.pause()
        width = table.virtual_size.width
        table.upsert("k2", ("b", "a much longer note"))
        await pilot.pause()
        assert table.virtual_size.width == width + len("a much longer note") - len("short")
        table.set_cell("k2", "note", "tiny")
        await pilot.pause()
        assert table.virtual_size.width == width
        table.upsert("k3", ("c", "another long note"))
        table.drop("k3")
        await pilot.pause()
        assert table.virtual_size.width == width
        assert "short" in drawn(table)[1]


class CountingTable(KeyedTable):
    """Counts the lines it paints (a line kept and shown again is not painted)."""

    drawn_lines = 0

    def __init__(self, *args: Any, **options: Any) -> None:
        super().__init__(*args, **options)
        paint = self._painter.line

        def counted(*args: Any, **options: Any) -> Painted:
            self.drawn_lines += 1
            return paint(*args, **options)

        self._painter.line = counted  # type: ignore[method-assign]


async def test_rows_added_below_the_screen_draw_no_line_and_the_scrollbar_follows_soon() -> None:
    app = TableApp(rows=agents(range(20), digits=3), kind=CountingTable)
    async with app.run_test(size=(60, 8)) as pilot:
        table = app.query_one(CountingTable)
        await pilot.pause()
        table.drawn_lines = 0
        table.extend(agents(range(20, 300), digits=3))
        await pilot.pause()
        assert table.drawn_lines == 0
        await pilot.pause(SIZE_LAG + 0.1)
        assert table.virtual_size.height == 301 and table.drawn_lines == 0
        await pilot.press("ctrl+end")
        assert table.cursor_key() == "k299" and "agent299" in drawn(table)[-1]


async def test_rows_that_still_overflow_the_screen_move_the_scrollbar_without_a_layout() -> None:
    """A filter that leaves more rows than the screen holds, or a fill's chunk: the
    scrollbar's thumb follows the row count and nothing else of the screen is laid out
    again; rows that fit the screen take the scrollbar away (a layout), and a table
    scrolled past its new end comes back to it."""
    app = TableApp(rows=agents(range(300), digits=3))
    async with app.run_test(size=(60, 8)) as pilot:
        table = app.table
        await pilot.pause()
        layouts: list[object] = []
        app.screen.screen_layout_refresh_signal.subscribe(app, layouts.append)
        await pilot.press("ctrl+end")
        assert table.scroll_y == table.max_scroll_y > 0
        for key in [f"k{n:03d}" for n in range(150, 300)]:
            table.drop(key)
        await pilot.pause(SIZE_LAG + 0.1)
        assert layouts == []
        assert table.virtual_size.height == 151
        assert table.vertical_scrollbar.window_virtual_size == 151
        assert table.scroll_y == table.max_scroll_y
        assert "agent149" in drawn(table)[-1]
        table.replace(agents(range(2), digits=3))
        await pilot.pause()
        assert layouts and not table.show_vertical_scrollbar


async def test_a_row_shown_again_with_other_values_is_drawn_with_them() -> None:
    """Dropped and added back, or replaced by a filter: a line drawn before is not reused."""
    app = TableApp(rows=agents(range(3)))
    async with app.run_test(size=(60, 8)) as pilot:
        table = app.table
        await pilot.pause()
        assert "active" in drawn(table)[2]
        table.drop("k1")
        table.upsert("k1", ("agent1", "crashed", ""))
        await pilot.pause()
        assert "crashed" in drawn(table)[3]
        table.replace(agents((1, 0), "stale"))
        await pilot.pause()
        assert "stale" in drawn(table)[1] and "crashed" not in " ".join(drawn(table))


async def test_a_row_changed_all_day_keeps_one_drawn_line_not_one_per_change() -> None:
    """A line drawn for values the row no longer has can never be shown again: keeping it
    would grow the console's memory with every change until the cache is full."""
    app = TableApp(rows=agents(range(3)))
    async with app.run_test(size=(60, 8)) as pilot:
        table = app.table
        await pilot.pause()
        for n in range(200):
            table.set_cell("k1", "note", f"change {n}")
            assert f"change {n}" in table.render_line(2).text
            table.move_cursor(row=n % 3)
            table.render_line(1 + n % 3)
        assert table.lines_kept == 4  # the header's and each row's


class RegionsTable(KeyedTable):
    """Notes each region asked to be repainted."""

    asked: list[Region]

    def refresh(self, *regions: Region, **kwargs: bool) -> RegionsTable:
        self.__dict__.setdefault("asked", []).extend(regions)
        return super().refresh(*regions, **kwargs)


async def test_a_changed_cell_repaints_its_own_region_only() -> None:
    app = TableApp(rows=agents(range(5)), kind=RegionsTable)
    async with app.run_test(size=(60, 8)) as pilot:
        table = app.query_one(RegionsTable)
        await pilot.pause()
        table.asked = []
        table.set_cell("k2", "state", "crashed")  # NAME is 8 wide, STATE 10: x 10 to 22
        assert table.asked == [Region(10, 3, 12, 1)]
        await pilot.pause()
        assert "crashed" in drawn(table)[3]


def styled(strips: list[Strip]) -> list[list[tuple[str, object]]]:
    return [[(segment.text, segment.style) for segment in strip] for strip in strips]


@pytest.mark.parametrize(
    "css", ["", "KeyedTable { padding: 0 1; }", "KeyedTable { tint: red 20%; }"]
)
async def test_the_tables_lines_are_what_textual_s_own_styling_would_make_of_them(
    css: str,
) -> None:
    """The table hands its kept lines to the compositor itself (Textual's styling of a
    plain widget's line only copies it): every cell as Textual would draw it (its colours
    through the app's line filters, control characters dropped), focused or not, the
    cursor's and the hover's rows too, cut to a column; a table with a box or a tint is
    styled by Textual."""
    rows = [
        (key, (name, Text(state, style="bold red"), "\x1b[2J"))
        for key, (name, state, _) in agents(range(30), digits=2)
    ]
    app = TableApp(rows=rows)
    app.CSS = css
    async with app.run_test(size=(50, 10)) as pilot:
        table = app.table
        await pilot.pause()
        await pilot.press("j", "j")
        await pilot.hover(KeyedTable, offset=(3, 5))
        for focused in (True, False):
            if not focused:
                app.query_one(Button).focus()
            await pilot.pause()
            for crop in (Region(0, 0, *table.size), Region(7, 2, 9, 5)):
                table.refresh()
                ours = table.render_lines(crop)
                table.refresh()
                textual_s = ScrollView.render_lines(table, crop)
                assert styled(ours) == styled(textual_s)
