"""Which pending entries make the next batch, and whether it should wait for company.

A batch takes the entries in the order they are taken (priority lanes with aging, then
the queue's order), up to ``batch_max``, all with the same test command (the one tested
at the tip is the one every entry asked for): the first entry decides, and an entry that
asked for another waits for a batch of its own. A partial batch waits until its oldest
entry has waited ``batch_wait_seconds`` (an urgent entry waits for nobody). Pure: the
processor and the simulated day both form batches here.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from runeconsole.services.merge_queue.model import QueueEntry, command_args
from runeconsole.services.merge_queue.priority import URGENT, priority_of, waiting_since


def command_of(entry: QueueEntry, default: list[str] | None) -> list[str] | None:
    """The test command ``entry`` is tested with: its own, else the configured one."""
    return command_args(entry.get("test_command")) or default


def next_batch(
    pending: list[QueueEntry],
    batch_max: int,
    default_command: list[str] | None,
    skip: Collection[str] = (),
) -> list[QueueEntry]:
    """The entries of the next batch, from ``pending`` in the order taken; ``skip``: ids of
    entries that must wait (they conflict with an entry still in flight)."""
    chosen: list[QueueEntry] = []
    command: list[str] | None = None
    for entry in pending:
        if entry.entry_id in skip:
            continue
        mine = command_of(entry, default_command)
        if not chosen:
            command = mine
        elif mine != command:
            continue
        chosen.append(entry)
        if len(chosen) >= batch_max:
            break
    return chosen


def wait_for_company(
    chosen: list[QueueEntry], batch_max: int, wait_seconds: float, now: datetime
) -> float:
    """Seconds the partial batch ``chosen`` should still wait for more entries (0: go)."""
    if not chosen or len(chosen) >= batch_max or wait_seconds <= 0:
        return 0.0
    if any(priority_of(e.fields) == URGENT for e in chosen):
        return 0.0
    joined = [t for t in (waiting_since(e.fields) for e in chosen) if t is not None]
    if not joined:
        return 0.0
    waited = (now - min(joined)).total_seconds()
    return max(0.0, wait_seconds - waited)
