"""The filter line over the pane: the table it narrows keeps its focused look while the
line has the keys, and looks blurred once the keys went anywhere else."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Input

from runeconsole.adapters.clock import ManualClock
from runeconsole.tui.console.app import RuneConsole
from runeconsole.tui.widgets.table_view import TableView
from tests.tui.test_console import scene_console


def look(table: TableView) -> tuple[object, object]:
    return table.get_component_rich_style("table-view--cursor"), table.styles.background_tint


async def filter_opened(app: RuneConsole, pilot: Pilot[None]) -> tuple[object, object]:
    """The look of the focused table, then ``/`` and a character typed."""
    await pilot.pause()
    focused = look(app.agents_pane.table)
    await pilot.press("slash", "r")
    assert app.query_one("#filter", Input).has_focus and not app.agents_pane.table.has_focus
    return focused


async def test_the_table_keeps_its_focused_look_while_the_filter_line_narrows_it(
    project: Path, clock: ManualClock
) -> None:
    app = scene_console(project, clock)
    async with app.run_test() as pilot:
        table = app.agents_pane.table
        focused = await filter_opened(app, pilot)
        assert look(table) == focused
        await pilot.press("escape")
        await pilot.pause()
        assert table.has_focus and look(table) == focused and not table.has_class("-lit")


async def test_the_table_looks_blurred_once_the_filter_line_hands_the_keys_elsewhere(
    project: Path, clock: ManualClock
) -> None:
    app = scene_console(project, clock)
    async with app.run_test() as pilot:
        focused = await filter_opened(app, pilot)
        app.screen.set_focus(None)  # a click on a tab, a window over the console
        await pilot.pause()
        assert not app.agents_pane.table.has_focus and look(app.agents_pane.table) != focused
