"""The filter line draws a typed character and what it filtered in one frame, at once:
the end of its batch wakes the screen, which would otherwise wait for whatever next
woke it (a timer, the cursor's blink) to draw the pane that the character narrowed."""

from __future__ import annotations

import asyncio
import time

from textual import events
from textual.app import App, ComposeResult
from textual.widgets import Static

from runeconsole.tui.widgets.filter_box import FilterBox


class Narrowed(Static):
    """What the filter narrows: the text typed, and the times it was drawn."""

    drawn = 0

    def render(self) -> str:
        self.drawn += 1
        return f"rows matching {self.typed!r}"

    typed = ""


class FilterApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Narrowed()
        yield FilterBox()

    def on_filter_box_filter(self, message: FilterBox.Filter) -> None:
        narrowed = self.query_one(Narrowed)
        narrowed.typed = message.text
        narrowed.refresh()


async def test_a_typed_character_and_the_rows_it_narrowed_are_drawn_without_waiting() -> None:
    app = FilterApp()
    async with app.run_test(size=(60, 6)) as pilot:
        box, narrowed = app.query_one(FilterBox), app.query_one(Narrowed)
        box.cursor_blink = False  # nothing else to wake the screen
        box.open()
        await pilot.pause()
        drawn = narrowed.drawn
        # As a terminal sends it (``pilot.press`` also waits until every widget is drawn).
        app.post_message(events.Key("x", "x"))
        deadline = time.monotonic() + 3
        while narrowed.drawn == drawn and time.monotonic() < deadline:
            await asyncio.sleep(0.02)  # not pilot.pause(): that wakes every widget itself
        assert narrowed.drawn > drawn and narrowed.typed == "x"
