"""The fleet console's window on one agent of any source: its screen and last assistant
message (``peek`` on its source, read again every few seconds while open), and ``m`` to
send it a message (``say`` on its source)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from runeconsole.tui.agent_peek import AgentPeek, Peek
from runeconsole.tui.detail_modal import DetailModal
from runeconsole.tui.message_modal import MessageModal, Send

EVERY_SECONDS = 2.0  # a remote peek is an SSH round trip and a runeconsole start


class FleetPeekModal(DetailModal):
    BINDINGS = [Binding("m", "message", "Message")]

    def __init__(
        self, source: str, key: str, peek: Peek, say: Send, now: Callable[[], Any]
    ) -> None:
        super().__init__()
        self.source, self.key = source, key
        self.peek, self.say, self.now = peek, say, now

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="detail"):
            yield Static(self.title_text(), id="detail-title")
            yield AgentPeek(self.peek, self.now, every=EVERY_SECONDS)

    def title_text(self) -> Text:
        title = Text.assemble((self.source, "bold cyan"), " · ", (self.key, "bold"))
        title.append("   m: send it a message", "dim")
        return title

    def action_message(self) -> None:
        self.app.push_screen(MessageModal(self.key, self.say, where=self.source))
