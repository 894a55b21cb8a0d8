"""``SteadyStatic``: the same content again leaves the widget (and the screen's layout)
alone; any change of words or styles is shown."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import App, ComposeResult

from runeconsole.tui.widgets.steady_static import SteadyStatic


class Counted(SteadyStatic):
    refreshes = 0

    def refresh(self, *args: Any, **kwargs: Any) -> Any:
        self.refreshes += 1
        return super().refresh(*args, **kwargs)


class OneLine(App[None]):
    def compose(self) -> ComposeResult:
        yield Counted(Text("queue: 3 waiting", "bold"))


async def test_the_same_content_again_asks_for_no_layout_and_no_repaint() -> None:
    app = OneLine()
    async with app.run_test() as pilot:
        line = app.query_one(Counted)
        await pilot.pause()
        before = line.refreshes
        line.update(Text("queue: 3 waiting", "bold"))  # a rescan that found nothing new
        assert line.refreshes == before
        line.update(Text("queue: 3 waiting", "bold red"))  # the same words, another look
        assert line.refreshes > before
        changed = line.refreshes
        line.update(Text("queue: 2 waiting", "bold red"))
        assert line.refreshes > changed
        await pilot.pause()
        assert line.render().plain == "queue: 2 waiting"  # type: ignore[union-attr]
