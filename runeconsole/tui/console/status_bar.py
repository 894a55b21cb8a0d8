"""The top line: where we are and the fleet's counts at a glance."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from runeconsole.tui.panes.pane import AGENTS
from runeconsole.tui.support.theme import LIVENESS_STYLE


def shown_root(root: Path, width: int) -> str:
    """The root as a person reads it: ``~`` for home, long paths cut from the left."""
    text = str(root)
    home = str(Path.home())
    if text == home or text.startswith(home + "/"):
        text = "~" + text[len(home) :]
    return text if len(text) <= width else "…" + text[-(width - 1) :]


class StatusBar(Static):
    spend: reactive[tuple[Text, Text]] = reactive((Text(), Text()), init=False)
    """What the fleet spent today (after the colours), and in all with the plan's headroom
    (at the end): ``tui/app_base/spend.py``."""

    def __init__(self, root: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.root = root
        self.figures: dict[str, dict[str, int]] = {}
        self.order: list[str] = []
        self.notes: dict[str, str] = {}  # by what they are about: "watching", "root"

    def on_mount(self) -> None:
        self.refresh_text()

    def set_figures(self, pane_id: str, figures: dict[str, int]) -> None:
        if self.figures.get(pane_id) != figures:
            self.figures[pane_id] = figures
            self.refresh_text()

    def _rank(self, pane_id: str) -> int:
        return self.order.index(pane_id) if pane_id in self.order else len(self.order)

    def watch_spend(self) -> None:
        self.refresh_text()

    def set_note(self, note: str, about: str = "watching") -> None:
        self.notes[about] = note
        self.refresh_text()

    def refresh_text(self) -> None:
        """Counts first (they matter most), then the root in whatever width is left."""
        text = Text("runeconsole  ", "bold")
        agents = self.figures.get(AGENTS, {})
        for colour in ("green", "yellow", "red", "grey"):
            text.append("● ", LIVENESS_STYLE[colour])
            text.append(f"{agents.get(colour, 0)}  ")
        if self.spend[0]:
            text.append_text(self.spend[0])
            text.append(" ")
        # Pane order, not arrival order; a pane's first figure always shows, the rest when
        # non-zero, so the line fits an 80-column pane.
        for pane_id in sorted(self.figures, key=self._rank):
            if pane_id == AGENTS:
                continue
            for index, (label, count) in enumerate(self.figures[pane_id].items()):
                if index == 0 or count:
                    text.append(f" {label} {count}", "bold" if count else "dim")
        if self.spend[1]:
            text.append("  ")
            text.append_text(self.spend[1])
        for note in self.notes.values():
            if note:
                text.append(f"  {note}", "yellow")
        room = (self.size.width or 80) - 2 - text.cell_len - 3
        if room >= 8:
            root = shown_root(self.root, room)
            text.append(" " * (room - len(root) + 3))
            text.append(root, "dim")
        self.update(text)

    def on_resize(self) -> None:
        self.refresh_text()
