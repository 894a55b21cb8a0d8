"""``?``: the keys, from the live bindings of the app and the focused pane."""

from __future__ import annotations

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from runeconsole.tui.modals.detail_modal import DetailModal

KEYS = (
    ("?", "this help"),
    ("/", "filter the current pane (esc clears)"),
    ("j / k, ↑ / ↓", "move"),
    ("1 … 9", "switch pane"),
    ("ctrl+p", "command palette (jump to an agent, change theme)"),
    ("q", "quit"),
)


class HelpScreen(DetailModal):
    """The keys: global ones, then the focused pane's (its ``HELP_KEYS``)."""

    BINDINGS = [Binding("question_mark", "dismiss", "Close", show=False)]

    def __init__(self, pane_title: str = "", pane_keys: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__()
        self.pane_title = pane_title
        self.pane_keys = pane_keys

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="detail"):
            yield Static("[b]Keys[/b]", id="detail-title")
            yield Static(self._table(KEYS))
            if self.pane_keys:
                yield Static(f"\n[b]{self.pane_title}[/b]")
                yield Static(self._table(self.pane_keys))

    @staticmethod
    def _table(keys: tuple[tuple[str, str], ...]) -> Table:
        table = Table.grid(padding=(0, 3))
        table.add_column(style="bold cyan", no_wrap=True, min_width=14)
        table.add_column()
        for key, text in keys:
            table.add_row(key, text)
        return table
