"""An agent's window's peek: its screen and last message, one widget of four parts."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from textual.app import App, ComposeResult

from runeconsole.tui.modals.agent_peek import AgentPeek
from tests.support.polling import until

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
READ = {
    "screen": "$ make test\n3 failed: test_login, test_logout, test_refresh",
    "screen_from": "tmux session rune-worker-a",
    "last_message": "Two tests fail on the expired token.",
    "last_message_at": "2026-11-30T11:58:00Z",
}


class Peeking(App[None]):
    def __init__(self, read: dict[str, Any]) -> None:
        super().__init__()
        self.read = read

    def compose(self) -> ComposeResult:
        yield AgentPeek(lambda: self.read, lambda: NOW, every=0)


async def test_the_screen_and_the_message_can_be_selected_and_copied_as_drawn() -> None:
    app = Peeking(READ)
    async with app.run_test(size=(60, 12)) as pilot:
        peek = app.query_one(AgentPeek)
        await until(pilot, lambda: peek.last is not None)
        peek.text_select_all()
        await pilot.pause()
        selected = app.screen.get_selected_text() or ""
        assert "tmux session rune-worker-a" in selected
        assert " $ make test\n 3 failed: test_login, test_logout, test_refresh" in selected
        assert "Last message · 2m00s ago\nTwo tests fail on the expired token." in selected


async def test_a_peek_with_no_screen_says_why_and_leaves_the_box_out() -> None:
    app = Peeking({"screen": "", "screen_from": None, "screen_note": "no tmux session"})
    async with app.run_test(size=(60, 12)) as pilot:
        peek = app.query_one(AgentPeek)
        await until(pilot, lambda: peek.last is not None)
        title, screen, _, message = peek.parts()
        assert screen is None and "no tmux session" in title.plain
        assert message.plain == "(none yet)"
