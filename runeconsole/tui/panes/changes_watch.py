"""Keeps the Agents pane's CHANGES current: told which agents changed, it looks at the
ones due (``services/review/tracker.py``) in one worker at a time and posts what it
found (``Looked``). A look put off to the end of an agent's window is woken by one timer,
set only while such a look waits: with nothing changing, nothing runs."""

from __future__ import annotations

from collections.abc import Iterable

from textual.message import Message
from textual.timer import Timer
from textual.widget import Widget

from runeconsole.services.liveness import AgentRecord
from runeconsole.services.review.states import Standing
from runeconsole.services.review.tracker import ChangeTracker
from runeconsole.tui.support.workers import background, cancelled


class ChangesWatch(Widget):
    DEFAULT_CSS = "ChangesWatch { display: none; }"

    class Looked(Message):
        """Agents looked at; ``last``: the worker is done (the next may start)."""

        def __init__(self, found: dict[str, Standing], last: bool) -> None:
            super().__init__()
            self.found = found
            self.last = last

    def __init__(self, tracker: ChangeTracker) -> None:
        super().__init__()
        self.tracker = tracker
        self._looking = False
        self._timer: Timer | None = None
        self._timer_due: float | None = None

    @property
    def idle(self) -> bool:
        """Nothing being looked at, nothing due (tests and screenshots wait for it)."""
        return not self._looking and self.tracker.next_due() is None

    def note(self, records: Iterable[AgentRecord], *, force: bool = False) -> None:
        self.tracker.note(records, force=force)
        self.kick()

    def forget(self, keys: Iterable[str]) -> None:
        self.tracker.forget(keys)

    def kick(self) -> None:
        """Look at what is due now (one worker at a time); wake up for what is put off."""
        tracker = self.tracker
        due = tracker.next_due()
        if due is None:
            return
        wait = due - tracker.clock()
        if wait <= 0:
            if not self._looking:
                self._looking = True
                self.look()
            return
        if self._timer_due is not None and self._timer_due <= due:
            return  # a wake-up comes soon enough already
        if self._timer is not None:
            self._timer.stop()
        self._timer_due = due
        self._timer = self.set_timer(wait, self._woken)

    def _woken(self) -> None:
        self._timer = self._timer_due = None
        self.kick()

    @background("review-changes")
    def look(self) -> None:
        try:
            while not cancelled():
                due = self.tracker.due()
                if not due:
                    break
                found = self.tracker.look(due)
                if found and not cancelled():
                    self.post_message(self.Looked(found, False))
        finally:
            if not cancelled():
                self.post_message(self.Looked({}, True))

    def on_changes_watch_looked(self, message: Looked) -> None:
        if message.last:
            message.stop()
            self._looking = False
            self.kick()
