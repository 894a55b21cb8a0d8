"""The table's cursor: keys, clicks, the messages the panes handle, and its row kept when
rows above it go."""

from __future__ import annotations

import re

from runeconsole.tui.widgets.keyed_table import KeyedTable
from tests.support.paths import REPO
from tests.support.tables import TableApp, agents


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


def test_the_table_s_messages_reach_handlers_named_for_the_table_whichever_sent_them() -> None:
    """``TableView``'s messages are its own, a ``KeyedTable``'s too; a handler named for
    the subclass, or for DataTable as the panes' once were, would never run."""
    assert KeyedTable.RowSelected.handler_name == "on_table_view_row_selected"
    assert KeyedTable.RowHighlighted.handler_name == "on_table_view_row_highlighted"
    never_run = re.compile(r"def on_(keyed_table|data_table)_")
    found = [
        f"{path.relative_to(REPO)}:{number}"
        for path in (REPO / "runeconsole").rglob("*.py")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if never_run.search(line)
    ]
    assert not found
