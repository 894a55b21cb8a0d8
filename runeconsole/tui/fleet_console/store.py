"""Every row the fleet console shows, as the merged event stream left it: rows by
``(kind, key)``, each with its source, and each source's state. No Textual here; the app
applies a batch of events and tells the panes which keys of their kinds moved."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from runeconsole.services.cost.totals import Totals
from runeconsole.services.liveness import GREEN, RED, YELLOW, AgentRecord
from runeconsole.services.sources.fleet import SOURCE
from runeconsole.services.supervision.observations import AgentObservation
from runeconsole.services.supervision.problems import Problem, find_problems
from runeconsole.services.supervision.settings import SupervisorSettings

AGENT, OBSERVATION, QUESTION = "agent", "observation", "question"
QUEUE, SUSPENDED, PERMISSION = "queue", "suspended", "permission"
PROBLEM = "problem"  # worked out here from an agent's row and its reading, not streamed


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
        self.settings = SupervisorSettings()
        self._problems_of: dict[str, set[str]] = defaultdict(set)  # agent -> its problem keys
        self.spending = Totals()  # dollars by source, and the plan's headroom

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
            if kind in (AGENT, QUESTION, PERMISSION, QUEUE) and event.get("source"):
                moved[SOURCE].changed.add(str(event["source"]))
        for key in moved[AGENT].changed | moved[AGENT].removed:
            self.spending.update(key, self.rows[AGENT].get(key), self.source(AGENT, key))
        agents = moved[AGENT].changed | moved[AGENT].removed | moved[OBSERVATION].changed
        if agents | moved[OBSERVATION].removed:
            moved[PROBLEM] = self.rejudge(agents | moved[OBSERVATION].removed)
        return moved

    def record(self, key: str) -> AgentRecord | None:
        row = self.rows[AGENT].get(key)
        return None if row is None else AgentRecord.from_json(row, key)

    def observation(self, key: str) -> AgentObservation | None:
        row = self.rows[OBSERVATION].get(key)
        if not row:
            return None
        try:
            return AgentObservation.from_json(row)
        except (KeyError, TypeError, ValueError):  # another version's shape: left out
            return None

    def rejudge(self, agents: set[str], now: datetime | None = None) -> Moved:
        """The problems of these agents again (crashed, stale, waiting, low context: the
        project console's own rules, ``find_problems``); ``now``: ages as of then (a stale
        agent's time without a heartbeat moves on), else as the stream last said."""
        moved = Moved()
        for agent in agents:
            before = self._problems_of.pop(agent, set())
            record = self.record(agent)
            found: list[Problem] = []
            if record is not None:
                observation = self.observation(agent)
                readings = {agent: observation} if observation is not None else {}
                found = find_problems([record], readings, self.settings, now=now)
            kept = set()
            for problem in found:
                key = f"{agent}/{problem.kind}"
                self.rows[PROBLEM][key] = {
                    "agent": agent,
                    "kind": problem.kind,
                    "detail": problem.detail,
                    "order": problem.sort_key,
                }
                self.source_of[(PROBLEM, key)] = self.source_of.get((AGENT, agent), "")
                kept.add(key)
                moved.changed.add(key)
            for key in before - kept:
                self.rows[PROBLEM].pop(key, None)
                self.source_of.pop((PROBLEM, key), None)
                moved.removed.add(key)
            if kept:
                self._problems_of[agent] = kept
        return moved

    def counts(self, source: str) -> dict[str, int]:
        """One source's figures: agents by colour, open questions and permission requests,
        queue entries waiting."""
        counts = dict.fromkeys((GREEN, YELLOW, RED, "questions", "permissions", "queue"), 0)
        counts["problems"] = 0
        for key, row in self.rows[AGENT].items():
            if self.source_of.get((AGENT, key)) == source:
                colour = row.get("liveness")
                if colour in counts:
                    counts[colour] += 1
        for key, row in self.rows[QUESTION].items():
            if self.source_of.get((QUESTION, key)) == source and row.get("state") == "pending":
                counts["questions"] += 1
        for key, row in self.rows[PERMISSION].items():
            if self.source_of.get((PERMISSION, key)) == source and row.get("state") == "pending":
                counts["permissions"] += 1
        for key in self.rows[PROBLEM]:
            if self.source_of.get((PROBLEM, key)) == source:
                counts["problems"] += 1
        for key, row in self.rows[QUEUE].items():
            if self.source_of.get((QUEUE, key)) == source and row.get("status") == "pending":
                counts["queue"] += 1
        return counts
