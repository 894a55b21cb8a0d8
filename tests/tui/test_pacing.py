"""``after_frame``: work kept behind the frame, whatever its pause."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Static

from runeconsole.tui.support.pacing import after_frame
from tests.support.polling import until


class Paced(App[None]):
    def compose(self) -> ComposeResult:
        yield Static("paced")


@pytest.mark.parametrize("seconds", [0, 0.0, 0.01])
async def test_work_after_a_frame_runs_whatever_its_pause_even_none(seconds: float) -> None:
    app = Paced()
    ran: list[str] = []
    async with app.run_test() as pilot:
        await pilot.pause(0.05)  # the clock has moved since the app started
        after_frame(app.query_one(Static), seconds, lambda: ran.append("ran"))
        await until(pilot, lambda: ran == ["ran"])
