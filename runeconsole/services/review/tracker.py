"""Every agent's changes kept current for a console, at the cost of what the agents do.

The tracker is told which agents' identities changed (``note``) and says which are due
for a look (``due``), at most once per ``refresh_seconds`` each: a change inside that
window is put off to its end, so the last state of a burst is always looked at. What kind
of look depends on what changed: a hook event (any field but the heartbeat's) asks git
(``probe``); a heartbeat alone only ``stat``s what a commit, a ``git add`` or an edit of
an already changed file would touch (``ChangesCache``). Nothing changing costs nothing:
no timer runs, no file is read.

``look`` (run it in a worker) brings back what a row shows (``Standing``): the changes,
the agent's latest review and the status of the queue entry its approval made. Its
``review_state`` is worked out on the caller's side from the record as it is now, so an
agent going idle shows ``ready`` at once, without waiting for git.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from runeconsole.services.liveness import HEARTBEAT_FIELDS, AgentRecord
from runeconsole.services.merge_queue import QueueState
from runeconsole.services.review.locate import worktree_of
from runeconsole.services.review.service import Reviews, queue_status
from runeconsole.services.review.states import Standing


class ChangeTracker:
    def __init__(
        self,
        reviews: Reviews,
        refresh_seconds: float | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.reviews = reviews
        self.refresh = refresh_seconds or reviews.settings.refresh_seconds
        self.clock = clock
        self.standing: dict[str, Standing] = {}
        self.worktrees: dict[str, Path] = {}
        self._marks: dict[str, dict[str, Any]] = {}
        self._records: dict[str, AgentRecord] = {}  # the read of each agent last told of
        self._looked: dict[str, float] = {}  # when each agent was last looked at
        self._waiting: dict[str, tuple[float, bool]] = {}  # key -> (due at, probe)
        self._lock = threading.Lock()

    # -- told what changed -------------------------------------------------------------

    def note(self, records: Iterable[AgentRecord], *, force: bool = False) -> None:
        """These identities were read again (or are new): those with a worktree are due
        for a look, now or when their window ends. ``force``: a look with git, now."""
        now = self.clock()
        with self._lock:
            for record in records:
                key = record.key
                if not force and self._records.get(key) is record:
                    continue  # the same read, recoloured by time alone: nothing to look at
                self._records[key] = record
                worktree = None if record.error else worktree_of(record, None, self.reviews.root)
                if worktree is None:
                    self._drop(key)
                    continue
                moved = self.worktrees.get(key) != worktree
                self.worktrees[key] = worktree
                mark = {k: v for k, v in record.fields.items() if k not in HEARTBEAT_FIELDS}
                work = force or moved or self._marks.get(key) != mark
                self._marks[key] = mark
                last = self._looked.get(key)
                due = now if force or last is None else max(now, last + self.refresh)
                if due > now:  # put off: to a whole second, so looks due together run as one
                    due = math.ceil(due)
                earlier = self._waiting.get(key)
                if earlier is not None:
                    due, work = min(due, earlier[0]), work or earlier[1]
                self._waiting[key] = (due, work)

    def forget(self, keys: Iterable[str]) -> None:
        with self._lock:
            for key in keys:
                self._drop(key)

    def _drop(self, key: str) -> None:
        self.standing.pop(key, None)
        self._records.pop(key, None)
        self.worktrees.pop(key, None)
        self._marks.pop(key, None)
        self._looked.pop(key, None)
        self._waiting.pop(key, None)

    # -- what to look at ---------------------------------------------------------------

    def due(self) -> list[tuple[str, Path, bool]]:
        """The agents due now, ``(key, worktree, probe)``; they count as looked at."""
        now = self.clock()
        with self._lock:
            ready = [(k, due, probe) for k, (due, probe) in self._waiting.items() if due <= now]
            for key, _, _ in ready:
                del self._waiting[key]
                self._looked[key] = now
            return [(k, self.worktrees[k], probe) for k, _, probe in ready]

    def next_due(self) -> float | None:
        """When the next put-off look is due (the tracker's clock), if any."""
        with self._lock:
            return min((due for due, _ in self._waiting.values()), default=None)

    # -- looking (in a worker) ---------------------------------------------------------

    def look(self, wanted: list[tuple[str, Path, bool]]) -> dict[str, Standing]:
        """Each agent's standing now: its changes (git only when ``probe`` or something
        moved), its latest review and its queue entry's status. Only the agents whose
        standing moved are returned (a heartbeat that found nothing new redraws nothing)."""
        queue: QueueState | None = None
        found: dict[str, Standing] = {}
        for key, worktree, probe in wanted:
            changes = self.reviews.changes_at(worktree, probe=probe)
            latest = self.reviews.records.latest(key)
            status = None
            if latest is not None and latest.queue_entry is not None:
                queue = queue or self.reviews.queue.read()
                status = queue_status(queue, latest)
            found[key] = Standing(changes, latest, status)
        with self._lock:
            for key, standing in list(found.items()):
                if key not in self.worktrees or self.standing.get(key) == standing:
                    del found[key]
                else:
                    self.standing[key] = standing
        return found
