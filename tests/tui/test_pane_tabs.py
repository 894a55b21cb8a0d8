"""The tab strip: one widget drawing the panes' titles and the bar under the active one,
as Textual's tabs look; a click on a title shows its pane, and a pane switch makes and
styles no widget."""

from __future__ import annotations

from pathlib import Path

from textual.app import App, ComposeResult

from runeconsole.adapters.clock import ManualClock
from runeconsole.tui.widgets.pane_tabs import PaneTabs
from tests.tui.test_console import scene_console


class Strip(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.chosen: list[str] = []

    def compose(self) -> ComposeResult:
        yield PaneTabs([("a", "1 Alpha"), ("b", "2 Beta"), ("c", "3 Gamma")])

    def on_pane_tabs_chosen(self, message: PaneTabs.Chosen) -> None:
        self.chosen.append(message.tab)


def text(tabs: PaneTabs, y: int) -> str:
    return "".join(segment.text for segment in tabs.render_line(y))


def lit(tabs: PaneTabs) -> list[int]:
    """The columns of the bar drawn in the highlight's colour."""
    bar = tabs.get_component_rich_style("pane-tabs--bar")
    return [
        column
        for column, segment in enumerate(
            segment for segment in tabs.render_line(1) for _ in segment.text
        )
        if segment.style is not None and segment.style.color == bar.color
    ]


async def test_the_strip_draws_the_titles_and_lights_the_bar_under_the_active_one() -> None:
    app = Strip()
    async with app.run_test(size=(40, 4)) as pilot:
        await pilot.pause()
        tabs = app.query_one(PaneTabs)
        assert text(tabs, 0) == " 1 Alpha  2 Beta  3 Gamma ".ljust(40)
        assert len(text(tabs, 1)) == 40
        assert lit(tabs) == list(range(1, 8))  # under "1 Alpha", not its padding
        tabs.active = "c"
        await pilot.pause()
        assert lit(tabs) == list(range(18, 25))  # under "3 Gamma"


async def test_a_click_on_a_title_or_under_it_chooses_that_tab() -> None:
    app = Strip()
    async with app.run_test(size=(40, 4)) as pilot:
        await pilot.pause()
        await pilot.click(PaneTabs, offset=(12, 0))  # " 2 Beta "
        await pilot.click(PaneTabs, offset=(20, 1))  # under " 3 Gamma "
        await pilot.click(PaneTabs, offset=(35, 0))  # past the last title
        await pilot.pause()
        assert app.chosen == ["b", "c"]


async def test_the_title_under_the_pointer_is_lit_and_a_new_title_is_drawn() -> None:
    app = Strip()
    async with app.run_test(size=(40, 4)) as pilot:
        await pilot.pause()
        tabs = app.query_one(PaneTabs)
        plain = list(tabs.render_line(0))
        await pilot.hover(PaneTabs, offset=(12, 0))
        await pilot.pause()
        assert tabs.hovered == "b"
        assert list(tabs.render_line(0))[1].style != plain[1].style
        tabs.set_title("b", "2 Bee")
        await pilot.pause()
        assert text(tabs, 0).startswith(" 1 Alpha  2 Bee  3 Gamma ")


async def test_a_pane_switch_shows_the_pane_lights_its_tab_and_makes_no_widget(
    project: Path, clock: ManualClock
) -> None:
    app = scene_console(project, clock)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        widgets = len(list(app.screen.walk_children()))
        await pilot.press("2")
        await pilot.pause()
        tabs = app.query_one(PaneTabs)
        assert tabs.active == "problems" and app.current_pane().PANE_ID == "problems"
        await pilot.click(PaneTabs, offset=(3, 0))  # " 1 Agents "
        await pilot.pause()
        assert tabs.active == "agents" and app.current_pane().PANE_ID == "agents"
        assert app.focused is app.current_pane().table
        assert len(list(app.screen.walk_children())) == widgets
