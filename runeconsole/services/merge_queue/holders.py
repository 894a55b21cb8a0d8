"""Entries another processor holds: ``in_progress`` entries runeconsole did not claim.

The queue file is shared with the harness's guardian, whose ``process_next`` marks an
entry ``in_progress`` (with ``started_at``, and no pid) while it merges. Two processors
merging at once would each move ``main`` under the other, so such an entry blocks
processing until it finishes, or until it is provably dead: no live owner (a pid, if the
holder recorded one, that is gone) and started longer ago than the test timeout allows.
Then it is recovered as ``interrupted``, like an entry of ours whose processor died.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from runeconsole.core.pids import pid_alive
from runeconsole.core.timeutil import format_age, iso_z, parse_iso
from runeconsole.services.merge_queue.model import IN_PROGRESS, QueueEntry, QueueState

OWNER_PID_FIELDS = ("processor_pid", "pid", "owner_pid")


def claimed_by_us(entry: QueueEntry | dict[str, Any]) -> bool:
    """A runeconsole processor claimed it (it records its pid in ``processor_pid``)."""
    fields = entry.fields if isinstance(entry, QueueEntry) else entry
    pid = fields.get("processor_pid")
    return isinstance(pid, int) and not isinstance(pid, bool)


@dataclass(frozen=True)
class Holder:
    """An entry in progress under another processor, as far as the file tells."""

    entry: QueueEntry
    pid: int | None
    alive: bool
    started: datetime | None
    age: float | None  # seconds since it started, when known

    def dead(self, limit: float) -> bool:
        """Provably dead: no live owner, and started more than ``limit`` seconds ago."""
        return not self.alive and self.age is not None and self.age > limit

    def describe(self) -> str:
        """``mq-x (branch b) is being merged by another processor (…)``: who, since when."""
        if self.pid is not None:
            owner = f"pid {self.pid}, {'running' if self.alive else 'gone'}"
        else:
            owner = "no pid recorded: the harness's guardian?"
        since = (
            f"started {iso_z(self.started)}, {format_age(self.age)} ago"
            if self.started is not None and self.age is not None
            else "no start time recorded"
        )
        entry = self.entry
        return (
            f"{entry.entry_id} ({entry.branch or 'no branch'}) is being merged by another "
            f"processor ({owner}; {since})"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "entry_id": self.entry.entry_id,
            "branch": self.entry.branch,
            "pid": self.pid,
            "alive": self.alive,
            "started_at": iso_z(self.started) if self.started else None,
            "age_seconds": None if self.age is None else round(self.age, 1),
        }


def owner_pid(fields: dict[str, Any]) -> int | None:
    for name in OWNER_PID_FIELDS:
        value = fields.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
        if isinstance(value, str) and value.strip().isdigit():
            return int(value.strip())
    return None


def holders(state: QueueState, now: datetime) -> list[Holder]:
    """The in-progress entries runeconsole did not claim."""
    found = []
    for entry in state.entries:
        if entry.status != IN_PROGRESS or claimed_by_us(entry):
            continue
        pid = owner_pid(entry.fields)
        started = parse_iso(entry.get("started_at"))
        age = (now - started).total_seconds() if started is not None else None
        found.append(Holder(entry, pid, pid is not None and pid_alive(pid), started, age))
    return found


def blocking(state: QueueState, now: datetime, limit: float) -> Holder | None:
    """The first holder that is not provably dead: processing must wait for it."""
    return next((h for h in holders(state, now) if not h.dead(limit)), None)


def waiting_message(holder: Holder, limit: float) -> str:
    return (
        f"{holder.describe()}; runeconsole waits until it finishes, or until it has no live "
        f"owner and started more than {limit:g}s ago (test_timeout_seconds); if you know it "
        f"is dead, `runeconsole merge-queue remove {holder.entry.entry_id}` and queue it again"
    )
