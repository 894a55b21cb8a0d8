"""Which agents' conversations to index after the fleet moved: those whose hooks' last
event says a turn was written (a Stop, a tool's result, a subagent's end, a compaction,
the session's end), once per event. A heartbeat, or any other change of the identity,
feeds nothing: at 10,000 agents the check is two dictionary lookups an agent."""

from __future__ import annotations

import threading
from collections.abc import Iterable

from runeconsole.services.liveness import AgentRecord

FEED_ON = frozenset(
    {
        "Stop",
        "StopFailure",
        "PostToolUse",
        "PostToolUseFailure",
        "SubagentStop",
        "PostCompact",
        "SessionEnd",
    }
)


class FeedDue:
    """The agents whose transcript grew since they were last taken, by their hooks'
    ``claude.last_event`` and its time (thread-safe: the fleet changes from workers)."""

    def __init__(self) -> None:
        self._taken: dict[str, object] = {}  # key -> the last_event_at taken
        self._due: set[str] = set()
        self._lock = threading.Lock()

    def saw(self, records: Iterable[AgentRecord | None]) -> None:
        for record in records:
            if record is None or record.error:
                continue
            claude = record.fields.get("claude")
            if not isinstance(claude, dict) or claude.get("last_event") not in FEED_ON:
                continue
            at = claude.get("last_event_at")
            with self._lock:
                if self._taken.get(record.key) != at:
                    self._taken[record.key] = at
                    self._due.add(record.key)

    def take(self) -> list[str]:
        """The agents due, each once (sorted)."""
        with self._lock:
            due, self._due = self._due, set()
        return sorted(due)
