"""``?``: the keys, from the live bindings of the app and the focused pane."""

from __future__ import annotations

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from runeconsole.tui.modals.detail_modal import DetailModal

Keys = tuple[tuple[str, str], ...]


def console_keys(panes: int) -> Keys:
    """The keys of every pane of a console of ``panes`` panes (their number keys)."""
    return (
        ("?", "this help"),
        ("/", "filter the current pane (esc clears)"),
        ("j / k, ↑ / ↓", "move"),
        ("1" if panes == 1 else f"1 … {panes}", "switch pane"),
        ("ctrl+p", "command palette (jump to an agent, change theme)"),
        ("a", "the oldest permission request, blocking question or gate waiting on you"),
        ("S", 'search every conversation (words, "phrases", prefix*; agent: tool: who:)'),
        ("q", "quit"),
    )


class HelpScreen(DetailModal):
    """The keys: a console's own (``panes``: how many it has), then the focused pane's
    (its ``HELP_KEYS``); a screen of its own (the review) lists only its keys."""

    BINDINGS = [Binding("question_mark", "dismiss", "Close", show=False)]

    def __init__(
        self, pane_title: str = "", pane_keys: Keys = (), *, panes: int | None = None
    ) -> None:
        super().__init__()
        self.pane_title = pane_title
        self.pane_keys = pane_keys
        self.common = console_keys(panes) if panes else ()

    def compose(self) -> ComposeResult:
        sections = [("Keys", self.common), (self.pane_title, self.pane_keys)]
        with VerticalScroll(id="detail"):
            for number, (title, keys) in enumerate((t, k) for t, k in sections if k):
                if number == 0:
                    yield Static(f"[b]{title}[/b]", id="detail-title")
                else:
                    yield Static(f"\n[b]{title}[/b]")
                yield Static(self._table(keys))

    @staticmethod
    def _table(keys: Keys) -> Table:
        table = Table.grid(padding=(0, 3))
        table.add_column(style="bold cyan", no_wrap=True, min_width=14)
        table.add_column()
        for key, text in keys:
            table.add_row(key, text)
        return table
