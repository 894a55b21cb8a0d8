"""Priority lanes with aging: the order pending entries are taken in.

An entry has a priority (``urgent``, ``high``, ``normal``, ``low``; harness entries and
ours without one are ``normal``). Waiting raises it: every ``aging_minutes`` since it
joined the queue (or was queued again) lifts it one level, up to ``urgent``, so a steady
stream of urgent work cannot starve anything. Within a level the queue's own order
holds (the file's order, which ``move`` changes). A leaf: pure functions of the entries
and the time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from runeconsole.core.timeutil import parse_iso

URGENT, HIGH, NORMAL, LOW = "urgent", "high", "normal", "low"
PRIORITIES = (URGENT, HIGH, NORMAL, LOW)  # most pressing first; a level is its index
SHORT = {URGENT: "urg", HIGH: "high", NORMAL: "", LOW: "low"}  # as a narrow column shows it


def priority_of(fields: Mapping[str, Any]) -> str:
    """The priority an entry was given (anything unknown is ``normal``)."""
    value = fields.get("priority")
    return value if value in PRIORITIES else NORMAL


def waiting_since(fields: Mapping[str, Any]) -> datetime | None:
    """When the entry last joined the queue: queued again (``waiting_since``), else asked
    for (``requested_at``), else enqueued (the harness's ``enqueued_at``)."""
    for name in ("waiting_since", "requested_at", "enqueued_at"):
        found = parse_iso(fields.get(name))
        if found is not None:
            return found
    return None


def lane(fields: Mapping[str, Any], now: datetime, aging_minutes: float) -> int:
    """The level it is taken at now: its priority, raised one level per ``aging_minutes``
    waited (0 is ``urgent``)."""
    level = PRIORITIES.index(priority_of(fields))
    since = waiting_since(fields)
    if since is None or aging_minutes <= 0:
        return level
    waited = max(0.0, (now - since).total_seconds())
    return max(0, level - int(waited // (aging_minutes * 60)))


def ranked(
    items: Iterable[tuple[int, Mapping[str, Any]]], now: datetime, aging_minutes: float
) -> list[tuple[int, int]]:
    """``(lane, index)`` of ``(index, fields)`` pairs, in the order they are taken: by
    lane, then by index (the queue's own order)."""
    return sorted((lane(fields, now, aging_minutes), index) for index, fields in items)
