"""The filter line over the pane: the table it narrows keeps its focused look while the
line has the keys, and looks blurred once the keys went anywhere else."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input

from runeconsole.adapters.clock import ManualClock
from runeconsole.tui.console.app import RuneConsole
from runeconsole.tui.widgets.table_view import TableView
from tests.tui.test_console import scene_console


def cursor_look(table: TableView) -> tuple[object, object]:
    return table.get_component_rich_style("table-view--cursor"), table.styles.background_tint


async def test_the_table_keeps_its_focused_look_while_the_filter_line_narrows_it(
    project: Path, clock: ManualClock
) -> None:
    app: RuneConsole = scene_console(project, clock)
    async with app.run_test() as pilot:
        table = app.agents_pane.table
        await pilot.pause()
        focused = cursor_look(table)
        await pilot.press("slash", "r")
        assert app.query_one("#filter", Input).has_focus and not table.has_focus
        assert cursor_look(table) == focused
        await pilot.press("escape")
        await pilot.pause()
        assert table.has_focus and cursor_look(table) == focused and not table.has_class("-lit")


async def test_the_table_looks_blurred_once_the_filter_line_hands_the_keys_elsewhere(
    project: Path, clock: ManualClock
) -> None:
    app: RuneConsole = scene_console(project, clock)
    async with app.run_test() as pilot:
        table = app.agents_pane.table
        await pilot.pause()
        focused = cursor_look(table)
        await pilot.press("slash")
        app.screen.set_focus(None)  # a click on a tab, a window over the console
        await pilot.pause()
        assert not table.has_focus and cursor_look(table) != focused
