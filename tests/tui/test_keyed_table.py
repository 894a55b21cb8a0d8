"""KeyedTable draws what Textual's DataTable drew (cell by cell, in every state the console
shows), and keeps its rows by key: a change redraws only its own line."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable

import pytest
from rich.style import Style
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.geometry import Region
from textual.pilot import Pilot
from textual.strip import Strip
from textual.widgets import Button, DataTable, Static, TabbedContent, TabPane

from runeconsole.tui.keyed_table import KeyedTable
from runeconsole.tui.table_view import SIZE_LAG
from tests.support.paths import REPO

COLUMNS = (("name", "NAME", 8), ("state", "STATE", 10), ("note", "NOTE", 12))
AUTO = (("name", "NAME", 8), ("note", "NOTE", None))


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

    def on_data_table_row_highlighted(self, message: KeyedTable.RowHighlighted) -> None:
        self.highlighted.append(message.key)

    def on_data_table_row_selected(self, message: KeyedTable.RowSelected) -> None:
        self.selected.append(message.key)


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


def agents(
    numbers: Iterable[int], state: str = "active", digits: int = 0
) -> list[tuple[str, tuple[object, ...]]]:
    """Rows ``k{n}`` of ``agent{n}`` (``n`` zero-padded to ``digits``) in ``state``."""
    return [(f"k{n:0{digits}d}", (f"agent{n:0{digits}d}", state, "")) for n in numbers]


def row(n: int) -> tuple[object, ...]:
    note = Text(f"note {n}", "bold red" if n % 2 else "")
    return (f"agent{n % 3}", Text("active", "green"), note)


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


async def test_the_cursor_keys_move_and_scroll_and_tell_the_row_highlighted() -> None:
    app = TableApp(rows=agents(range(40), digits=2))
    async with app.run_test(size=(60, 8)) as pilot:  # the header and 7 rows
        table = app.table
        table.focus()
        await pilot.press("j", "j", "down", "k")
        assert table.cursor_key() == "k02"
        await pilot.press("pagedown")
        assert table.cursor_key() == "k09" and table.visible_keys()[0] != "k00"
        assert "k09" in table.visible_keys()
        await pilot.press("ctrl+end")
        assert table.cursor_key() == "k39" and "k39" in table.visible_keys()
        await pilot.press("pageup", "up")
        assert table.cursor_key() == "k31"
        await pilot.press("ctrl+home", "enter")
        await pilot.pause()
        assert table.cursor_key() == "k00" and table.visible_keys()[0] == "k00"
        assert app.highlighted[:5] == ["k00", "k01", "k02", "k03", "k02"]
        assert app.highlighted[-1] == "k00" and app.selected == ["k00"]


async def test_a_click_moves_the_cursor_and_a_click_on_the_cursor_row_selects_it() -> None:
    app = TableApp(rows=agents(range(5)))
    async with app.run_test(size=(60, 8)) as pilot:
        table = app.table
        await pilot.pause()
        await pilot.click(KeyedTable, offset=(2, 3))  # the header, then rows 0, 1, 2
        assert table.cursor_key() == "k2" and not app.selected
        await pilot.click(KeyedTable, offset=(2, 3))
        await pilot.click(KeyedTable, offset=(2, 0))  # the header: nothing
        await pilot.pause()
        assert app.selected == ["k2"] and table.cursor_key() == "k2"


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


async def test_the_cursor_stays_on_its_row_when_rows_above_it_go() -> None:
    """Enter acts on the row the operator chose, not on one that slid under the cursor."""
    app = TableApp(rows=agents(range(8)))
    async with app.run_test(size=(60, 10)) as pilot:
        table = app.table
        table.move_cursor(row=5)
        table.sync(agents((1, 3, 5, 6, 7)))
        await pilot.pause()
        assert table.cursor_key() == "k5" and table.cursor_row == 2
        assert "agent5" in table.render_line(1 + 2).text and table.keys()[2] == "k5"
        table.drop("k5")  # its own row: the next one takes its place
        assert table.cursor_key() == "k6"
        table.drop("k7")
        table.drop("k6")  # the last row: the cursor on the new last
        assert table.cursor_key() == "k3" and table.cursor_row == 1
        await pilot.press("enter")
        assert app.selected == ["k3"]


def test_the_table_s_messages_reach_handlers_named_as_datatable_s_were() -> None:
    """The panes kept their handlers' names; one named for the widget would never run."""
    assert KeyedTable.RowSelected.handler_name == "on_data_table_row_selected"
    assert KeyedTable.RowHighlighted.handler_name == "on_data_table_row_highlighted"
    never_run = re.compile(r"def on_(keyed_table|table_view)_")
    found = [
        f"{path.relative_to(REPO)}:{number}"
        for path in (REPO / "runeconsole").rglob("*.py")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if never_run.search(line)
    ]
    assert not found


class CountingTable(KeyedTable):
    drawn_lines = 0

    def render_line(self, y: int) -> Strip:
        self.drawn_lines += 1
        return super().render_line(y)


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
