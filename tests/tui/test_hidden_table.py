"""A table on a hidden tab: what changed while it was hidden is what it draws when its
tab is chosen (no line kept from before), and a row scrolled to shows as it is now."""

from __future__ import annotations

from rich.text import Text
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.widgets import TabbedContent, TabPane

from runeconsole.tui.widgets.keyed_table import KeyedTable
from tests.support.tables import COLUMNS


class TabsApp(App[None]):
    def compose(self) -> ComposeResult:
        with TabbedContent(id="tabs"):
            with TabPane("one", id="one"):
                yield KeyedTable(COLUMNS, id="first")
            with TabPane("two", id="two"):
                yield KeyedTable(COLUMNS, id="second")


def lines(table: KeyedTable) -> list[str]:
    return [strip.text.rstrip() for strip in table.render_lines(Region(0, 0, *table.size))]


async def test_a_table_shows_what_changed_while_its_tab_was_hidden() -> None:
    app = TabsApp()
    async with app.run_test(size=(60, 12)) as pilot:
        table = app.query_one("#second", KeyedTable)
        table.extend([(f"k{n}", (f"agent{n}", Text("active"), "")) for n in range(5)])
        app.query_one(TabbedContent).active = "two"
        await pilot.pause()
        assert "agent3" in "\n".join(lines(table))
        app.query_one(TabbedContent).active = "one"
        await pilot.pause()
        table.set_cell("k3", "state", Text("crashed"))
        table.set_cell("k1", "note", "moved")
        table.drop("k4")
        app.query_one(TabbedContent).active = "two"
        await pilot.pause()
        shown = lines(table)
        assert any("agent3" in line and "crashed" in line for line in shown)
        assert any("agent1" in line and "moved" in line for line in shown)
        assert not any("agent4" in line for line in shown)
