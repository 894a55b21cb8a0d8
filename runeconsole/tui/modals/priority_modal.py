"""The window that puts a merge-queue entry in another priority lane: ``u`` ``h`` ``n``
``l``, or escape to leave it where it is."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from runeconsole.services.merge_queue import PRIORITIES

MEANING = {
    "urgent": "into the next batch that has not started",
    "high": "before every normal entry",
    "normal": "in queue order",
    "low": "after the others; waiting still raises it",
}


class PriorityScreen(ModalScreen[str | None]):
    DEFAULT_CSS = """
    PriorityScreen #priority {
        width: 62;
        max-width: 95%;
        height: auto;
        border: round $accent;
        padding: 1 2;
        background: $surface;
    }
    """
    BINDINGS = [
        *(Binding(p[0], f"choose('{p}')", p.capitalize()) for p in PRIORITIES),
        Binding("escape", "choose('')", "Cancel", show=False),
    ]

    def __init__(self, entry: str, current: str, aging_minutes: float) -> None:
        super().__init__()
        self.entry = entry
        self.current = current
        self.aging_minutes = aging_minutes

    def compose(self) -> ComposeResult:
        text = Text.assemble(("Priority of ", "bold"), (self.entry, "bold"), "\n\n")
        for priority in PRIORITIES:
            mark = "●" if priority == self.current else " "
            text.append(f" {mark} {priority[0]}  ", "bold cyan")
            text.append(f"{priority:<7} ", "bold" if priority == self.current else "")
            text.append(f"{MEANING[priority]}\n", "dim")
        text.append(f"\nwaiting {self.aging_minutes:g} minutes raises an entry one level", "dim")
        with Vertical(id="priority"):
            yield Static(text)

    def action_choose(self, priority: str) -> None:
        self.dismiss(priority or None)
