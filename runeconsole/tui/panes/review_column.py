"""The Agents pane's CHANGES column and each agent's review state: what the pane asks
(``cell``, ``state``, the ready count) and what it tells (agents read again, agents
looked at). The looking itself is ``changes_watch.py``'s; the drawing, the pane's."""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Set as AbstractSet

from rich.text import Text

from runeconsole.services.claude.session.view import agent_view
from runeconsole.services.fleet import FleetRecords
from runeconsole.services.liveness import ACTIVE, AgentRecord
from runeconsole.services.review.states import NONE, READY, settled
from runeconsole.tui.cells.review_cells import changes_cell
from runeconsole.tui.panes.changes_watch import ChangesWatch

BLANK = Text("")


class ReviewColumn:
    def __init__(self, fleet: FleetRecords, watch: ChangesWatch) -> None:
        self.fleet, self.watch = fleet, watch
        self.tracker = watch.tracker
        self.states: dict[str, str] = {}  # review_state of agents with a worktree
        self.ready: set[str] = set()

    def follow(
        self,
        changed: Iterable[str],
        removed: Iterable[str],
        beats: AbstractSet[str] = frozenset(),
    ) -> set[str]:
        """Agents read again (their changes are looked at when due) or gone; the keys
        whose review state moved (it follows what they are doing: worked out now).
        ``beats``: of ``changed``, those read again for a heartbeat alone
        (``FleetChange.beats``): one with no worktree still has none (it is worked out
        from the fields) and is left; a working agent's heartbeat has its worktree looked
        at again when due."""
        for key in removed:
            self.states.pop(key, None)
            self.ready.discard(key)
        self.watch.forget(removed)
        worktrees, get = self.tracker.worktrees, self.fleet.get
        records = [
            r for k in changed if (k in worktrees or k not in beats) and (r := get(k)) is not None
        ]
        self.watch.note(records)
        return {record.key for record in records if self.restate(record.key)}

    def restate(self, key: str) -> bool:
        """Work out ``key``'s review state again; True when it moved."""
        record = self.fleet.get(key)
        if record is None or key not in self.tracker.worktrees:
            return False
        state = self._state_of(record)
        moved = self.states.get(key) != state
        self.states[key] = state
        (self.ready.add if state == READY else self.ready.discard)(key)
        return moved

    def _state_of(self, record: AgentRecord) -> str:
        key = record.key
        view = agent_view(record.fields, self.fleet.observations.get(key))
        standing = self.tracker.standing.get(key)
        if standing is None:
            return NONE if record.error else settled(view, record.status == ACTIVE) or NONE
        return standing.state(record, view, self.fleet.phases.get(key))

    def cell(self, key: str) -> Text:
        standing = self.tracker.standing.get(key)
        if standing is None:
            return BLANK
        return changes_cell(standing.changes, self.states.get(key, NONE))

    def state(self, key: str) -> str:
        """The agent's review state as shown (``none`` without a worktree)."""
        return self.states.get(key, NONE)
