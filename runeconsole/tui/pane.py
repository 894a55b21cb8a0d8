"""What every live pane offers the app: the directories it watches and how it refreshes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from textual.containers import Vertical
from textual.message import Message
from textual.reactive import reactive

from runeconsole.tui.keyed_table import KeyedTable

# Every pane's id: its tab (``goto_pane``), its figures in the status bar (``Summary``),
# and, with ``-pane`` after it, its widget's DOM id.
AGENTS, PROBLEMS, QUESTIONS = "agents", "problems", "questions"
SUSPENDED, MERGE_QUEUE = "suspended", "merge-queue"
PERMISSIONS = "permissions"


def matches(text: str, *fields: object) -> bool:
    """The console's filter, in every pane: ``text``, in any case, inside one of the row's
    fields (an empty filter shows every row)."""
    return not text or text.lower() in " ".join(str(f) for f in fields if f).lower()


class LivePane(Vertical):
    """A pane kept current by file events, a periodic rescan and a one-second tick.

    The filter typed under the pane is ``filter_text``; a pane draws only the rows that
    ``shows``, and redraws them in ``refilter`` when the filter changes."""

    filter_text: reactive[str] = reactive("", init=False)

    PANE_ID: ClassVar[str] = ""
    TITLE: ClassVar[str] = ""
    HELP_KEYS: ClassVar[tuple[tuple[str, str], ...]] = ()
    """This pane's own keys, listed by ``?`` after the global ones."""
    WRITES: ClassVar[frozenset[str]] = frozenset()
    """This pane's actions that write: none is offered on a read-only root."""

    class Summary(Message):
        """A pane's headline figures changed (shown in the status bar)."""

        def __init__(self, pane_id: str, figures: dict[str, int]) -> None:
            super().__init__()
            self.pane_id = pane_id
            self.figures = figures

    class FollowDirectory(Message):
        """A directory of this pane's appeared after start (a new signal or context
        directory): the app watches it, then calls the pane's ``read_directory``, so
        nothing written between the read and the watch is missed."""

        def __init__(self, pane: LivePane, directory: Path) -> None:
            super().__init__()
            self.pane = pane
            self.directory = directory

    class OperatorWanted(Message):
        """Something holds an agent up: reach the operator outside the console too
        (``runeconsole.notify.command``)."""

        def __init__(self, key: str, title: str, body: str) -> None:
            super().__init__()
            self.key = key
            self.title = title
            self.body = body

    def __init__(self, *, id: str | None = None, **kwargs: Any) -> None:
        super().__init__(id=id or f"{self.PANE_ID}-pane", **kwargs)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """A writing action is neither shown nor run on a read-only root."""
        return not (action in self.WRITES and getattr(self.app, "read_only", None))

    def writable(self) -> bool:
        """For a writing action reached without its key (Enter on a row): False, and the
        reason said, on a read-only root."""
        reason = getattr(self.app, "read_only", None)
        if reason:
            self.notify(f"Read-only: {reason}", severity="warning", markup=False)
        return not reason

    def summarise(self, figures: dict[str, int]) -> None:
        """Tell the app this pane's headline figures (it shows them in the status bar)."""
        self.post_message(self.Summary(self.PANE_ID, figures))

    def watch_dirs(self) -> list[Path]:
        raise NotImplementedError

    def follow(self, directory: Path) -> None:
        """Ask the app to watch ``directory``; ``read_directory`` follows once it does."""
        self.post_message(self.FollowDirectory(self, directory))

    def read_directory(self, directory: Path) -> None:
        """A directory asked for with ``follow`` is watched now: read what it holds."""

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
        self.filter_text = text

    def watch_filter_text(self) -> None:
        self.refilter()

    def refilter(self) -> None:
        """The filter changed: show exactly the rows that match it."""

    def shows(self, *fields: object) -> bool:
        """Whether a row with these fields passes the filter."""
        return matches(self.filter_text, *fields)

    def place(
        self,
        table: KeyedTable,
        key: str,
        fields: Sequence[object],
        row: Callable[[], Sequence[object]],
        *,
        moving: frozenset[str] = frozenset(),
        hidden: bool = False,
    ) -> bool:
        """One record's row, by the filter: upserted when its ``fields`` match (and it is
        not ``hidden``), else dropped; ``row`` is built only when shown. Once shown, its
        ``moving`` cells (ages, countdowns) are left to the tick. True when shown."""
        if hidden or not self.shows(*fields):
            table.drop(key)
            return False
        table.upsert(key, row(), skip=moving if table.has(key) else frozenset())
        return True
