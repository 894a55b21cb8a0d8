"""``m``: the window in which the operator types a message to an agent.

Enter sends the line through ``send`` (``say`` in-process, or on the agent's source over
SSH) off the UI thread; the window closes once the message is in the agent's pane. A
refusal (the agent waits on a permission, has ended, has no pane…) stays in the window,
in red, with the text kept: answer what it waits on, then Enter again. Escape closes it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from runeconsole.core.errors import RuneError
from runeconsole.tui.support.workers import background

Send = Callable[[str], Any]
PREVIEW_CHARS = 40  # of the message, in the toast that says it was sent


class MessageModal(ModalScreen[bool]):
    """Returns True once the message was delivered (None: closed without sending)."""

    DEFAULT_CSS = """
    MessageModal { align: center middle; }
    MessageModal #message {
        width: 90%;
        max-width: 100;
        height: auto;
        border: round $accent;
        padding: 0 1;
        background: $surface;
    }
    MessageModal #message-title { height: auto; padding-bottom: 1; }
    MessageModal #message-status { height: auto; }
    """
    BINDINGS = [Binding("escape", "dismiss(None)", "Close")]

    def __init__(self, agent: str, send: Send, *, where: str | None = None) -> None:
        super().__init__()
        self.agent = agent
        self.where = where
        self.send = send
        self.sending = False

    def compose(self) -> ComposeResult:
        title = Text.assemble(("Message to ", "bold"), (self.agent, "bold cyan"))
        if self.where:
            title.append(f" on {self.where}", "cyan")
        title.append("\npasted into its pane as one prompt and submitted", "dim")
        with Vertical(id="message"):
            yield Static(title, id="message-title")
            yield Input(placeholder="your message; enter sends, esc closes", id="message-text")
            yield Static(id="message-status")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value
        if self.sending or not text.strip():
            return
        self.sending = True
        self._status(Text("sending…", "dim"))
        self.deliver(text)

    @background("message-send")
    def deliver(self, text: str) -> None:
        """Off the UI thread: tmux, or an SSH round trip to the agent's source."""
        try:
            self.send(text)
        except Exception as exc:  # a refusal, or the source is down: said in the window
            said = exc.message if isinstance(exc, RuneError) else f"{type(exc).__name__}: {exc}"
            self.app.call_from_thread(self.refused, said)
            return
        self.app.call_from_thread(self.delivered, text)

    def delivered(self, text: str) -> None:
        """Sent: the window closes and a toast says what went where (each message its own
        toast: a second one to the same agent is confirmed too)."""
        line = " ".join(text.split())
        if len(line) > PREVIEW_CHARS:
            line = line[: PREVIEW_CHARS - 1] + "…"
        where = f" on {self.where}" if self.where else ""
        self.app.notify(f"sent to {self.agent}{where}: “{line}”", title="Message", markup=False)
        self.dismiss(True)

    def refused(self, reason: str) -> None:
        self.sending = False
        self._status(Text.assemble(("not sent: ", "bold red"), (reason, "red")))

    def _status(self, text: Text) -> None:
        if self.is_mounted:
            self.query_one("#message-status", Static).update(text)
