"""``?``: the keys, from the live bindings of the app and the focused pane."""

from __future__ import annotations

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

KEYS = (
    ("?", "this help"),
    ("/", "filter the current pane (esc clears)"),
    ("j / k, ↑ / ↓", "move"),
    ("enter", "details of the selected row"),
    ("1 … 9", "switch pane"),
    ("ctrl+p", "command palette (jump to an agent, switch pane)"),
    ("q", "quit"),
)


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "dismiss", "Close"),
        Binding("q", "dismiss", "Close", show=False),
        Binding("question_mark", "dismiss", "Close", show=False),
    ]

    def __init__(self, extra: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__()
        self.extra = extra

    def compose(self) -> ComposeResult:
        table = Table.grid(padding=(0, 3))
        table.add_column(style="bold cyan", no_wrap=True)
        table.add_column()
        for key, text in (*KEYS, *self.extra):
            table.add_row(key, text)
        with VerticalScroll(id="help"):
            yield Static("[b]Keys[/b]", id="help-title")
            yield Static(table)
