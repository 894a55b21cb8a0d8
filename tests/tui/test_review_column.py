"""The Agents pane's review column follows the agents read again: a working agent's
heartbeat has its worktree looked at again when due; a heartbeat of an agent with no
worktree is left (its worktree is worked out from fields a heartbeat leaves as they were)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from types import SimpleNamespace

from runeconsole.adapters.clock import ManualClock
from runeconsole.core.timeutil import iso_z
from runeconsole.services.fleet import FleetRecords
from runeconsole.services.liveness import AgentRecord, LivenessSettings
from runeconsole.tui.panes.review_column import ReviewColumn


class NotedWatch:
    """What the column tells its watch: the agents noted, in order."""

    def __init__(self, worktrees: dict[str, Path]) -> None:
        self.tracker = SimpleNamespace(worktrees=worktrees, standing={})
        self.noted: list[str] = []

    def note(self, records: Iterable[AgentRecord]) -> None:
        self.noted += [record.key for record in records]

    def forget(self, keys: Iterable[str]) -> None:
        pass


def test_a_heartbeat_has_only_a_working_agents_worktree_looked_at_again(
    tmp_path: Path, clock: ManualClock
) -> None:
    fleet = FleetRecords(LivenessSettings(60, 300), clock)
    seen = iso_z(clock.now())
    fleet.apply_records(
        [
            AgentRecord("busy", "", {"status": "active", "last_seen": seen, "worktree_path": "w"}),
            AgentRecord("idle", "", {"status": "active", "last_seen": seen}),
        ]
    )
    watch = NotedWatch({"busy": tmp_path / "w"})
    column = ReviewColumn(fleet, watch)  # type: ignore[arg-type]  # the watch's two calls
    column.follow({"busy", "idle"}, (), beats=frozenset({"busy", "idle"}))
    assert watch.noted == ["busy"]
    watch.noted.clear()
    column.follow(["idle"], ())  # read again with more than a heartbeat: noted
    assert watch.noted == ["idle"]
