"""Every row the fleet console shows, as the merged event stream left it: rows by
``(kind, key)``, each with its source, and each source's state. No Textual here; the app
applies a batch of events and tells the panes which keys of their kinds moved."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from runeconsole.services.liveness import GREEN, RED, YELLOW
from runeconsole.services.sources.fleet import SOURCE

AGENT, OBSERVATION, QUESTION = "agent", "observation", "question"
QUEUE, SUSPENDED = "queue", "suspended"


@dataclass
class Moved:
    """The keys of one kind that changed or went in a batch of events."""

    changed: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)


class FleetRows:
    def __init__(self, sources: list[str]) -> None:
        self.sources = sources
        self.rows: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
        self.source_of: dict[tuple[str, str], str] = {}
        self.states: dict[str, dict[str, Any]] = {name: {"state": "connecting"} for name in sources}

    def get(self, kind: str, key: str) -> dict[str, Any] | None:
        return self.rows[kind].get(key)

    def source(self, kind: str, key: str) -> str:
        return self.source_of.get((kind, key), "")

    def keys(self, kind: str) -> list[str]:
        return list(self.rows[kind])

    def apply(self, events: list[dict[str, Any]]) -> dict[str, Moved]:
        """Take in a batch of events; what moved, by kind (``source`` for the sources)."""
        moved: dict[str, Moved] = defaultdict(Moved)
        for event in events:
            kind, key = str(event.get("kind") or ""), str(event.get("key") or "")
            if event.get("event") == "upsert" and kind == SOURCE:
                self.states[key] = dict(event.get("data") or {})
                moved[SOURCE].changed.add(key)
            elif event.get("event") == "upsert":
                self.rows[kind][key] = dict(event.get("data") or {})
                self.source_of[(kind, key)] = str(event.get("source") or "")
                moved[kind].changed.add(key)
                moved[kind].removed.discard(key)
            elif event.get("event") == "remove":
                self.rows[kind].pop(key, None)
                moved[kind].removed.add(key)
                moved[kind].changed.discard(key)
                source = self.source_of.pop((kind, key), "")
                if source:
                    moved[SOURCE].changed.add(source)
            else:
                continue
            if kind in (AGENT, QUESTION, QUEUE) and event.get("source"):
                moved[SOURCE].changed.add(str(event["source"]))
        return moved

    def counts(self, source: str) -> dict[str, int]:
        """One source's figures: agents by colour, open questions, queue entries waiting."""
        counts = {GREEN: 0, YELLOW: 0, RED: 0, "questions": 0, "queue": 0}
        for key, row in self.rows[AGENT].items():
            if self.source_of.get((AGENT, key)) == source:
                colour = row.get("liveness")
                if colour in counts:
                    counts[colour] += 1
        for key, row in self.rows[QUESTION].items():
            if self.source_of.get((QUESTION, key)) == source and row.get("state") == "pending":
                counts["questions"] += 1
        for key, row in self.rows[QUEUE].items():
            if self.source_of.get((QUEUE, key)) == source and row.get("status") == "pending":
                counts["queue"] += 1
        return counts
