"""What every live pane offers the app: the directories it watches and how it refreshes."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from textual.containers import Vertical
from textual.message import Message

# Every pane's id: its tab (``goto_pane``), its figures in the status bar (``Summary``),
# and, with ``-pane`` after it, its widget's DOM id.
AGENTS, PROBLEMS, QUESTIONS = "agents", "problems", "questions"
SUSPENDED, MERGE_QUEUE = "suspended", "merge-queue"
PERMISSIONS = "permissions"


class LivePane(Vertical):
    """A pane kept current by file events, a periodic rescan and a one-second tick."""

    PANE_ID: ClassVar[str] = ""
    TITLE: ClassVar[str] = ""
    HELP_KEYS: ClassVar[tuple[tuple[str, str], ...]] = ()
    """This pane's own keys, listed by ``?`` after the global ones."""

    class Summary(Message):
        """A pane's headline figures changed (shown in the status bar)."""

        def __init__(self, pane_id: str, figures: dict[str, int]) -> None:
            super().__init__()
            self.pane_id = pane_id
            self.figures = figures

    def __init__(self, *, id: str | None = None, **kwargs: Any) -> None:
        super().__init__(id=id or f"{self.PANE_ID}-pane", **kwargs)

    def summarise(self, figures: dict[str, int]) -> None:
        """Tell the app this pane's headline figures (it shows them in the status bar)."""
        self.post_message(self.Summary(self.PANE_ID, figures))

    def watch_dirs(self) -> list[Path]:
        raise NotImplementedError

    def apply_changes(self, paths: set[Path]) -> None:
        """Refresh what ``paths`` (already filtered to ``watch_dirs``) affect, by key."""
        raise NotImplementedError

    def rescan(self) -> None:
        """Re-read everything (covers dropped events and unavailable watching)."""
        raise NotImplementedError

    def tick(self) -> None:
        """Once a second: move clocks and countdowns; no file reads."""

    def filter(self, text: str) -> None:
        """Show only rows matching ``text`` (empty shows all)."""
