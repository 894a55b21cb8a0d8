"""Every row of a fleet file's sources, as typed records: the fleet console's model.

The agents go into a ``FleetRecords`` (the model the project console keeps of its root):
their colours as each source judged them, counted by source as they change, their pane
readings, and their problems judged once, there. The other kinds are kept by key with
their source (``Keyed``), the open ones counted per source as they change; each source
has its state, and the dollars its agents spent (``Totals``) are kept as they change.
``apply`` takes a batch of decoded rows (``decode.py``) and says what moved, so the
console redraws those rows only. No Textual here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from runeconsole.adapters.clock import Clock
from runeconsole.services.claude.permissions.service import PermissionRequest
from runeconsole.services.cost.totals import Totals
from runeconsole.services.events.sections import (
    AGENT,
    OBSERVATION,
    PERMISSION,
    PIPELINE,
    QUESTION,
    QUEUE,
    QUEUE_STATE,
    SUSPENDED,
)
from runeconsole.services.fleet import FleetChange, FleetRecords, Judge
from runeconsole.services.fleet.tally import Tally
from runeconsole.services.liveness import AgentRecord, LivenessSettings
from runeconsole.services.merge_queue import PENDING as QUEUED
from runeconsole.services.merge_queue import QueueEntry, QueueState
from runeconsole.services.pane_observation import AgentObservation
from runeconsole.services.pipelines.record import Pipeline
from runeconsole.services.sources.decode import Row, SourceState
from runeconsole.services.sources.fleet import SOURCE
from runeconsole.services.suspension import ContextRecord
from runeconsole.services.worker_questions import PENDING, Question

R = TypeVar("R")
OPEN = "open"


@dataclass
class Moved:
    """The keys of one kind a batch changed or removed."""

    changed: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)

    def put(self, key: str) -> None:
        self.changed.add(key)
        self.removed.discard(key)

    def drop(self, key: str) -> None:
        self.removed.add(key)
        self.changed.discard(key)


class Keyed(Generic[R]):
    """Records of one kind by key, each with its source; those ``is_open`` counted per
    source as they change."""

    def __init__(self, is_open: Callable[[R], bool] | None = None) -> None:
        self.records: dict[str, R] = {}
        self.sources: dict[str, str] = {}
        self._is_open = is_open
        self._open = Tally()

    def get(self, key: str) -> R | None:
        return self.records.get(key)

    def source(self, key: str) -> str:
        return self.sources.get(key, "")

    def put(self, key: str, record: R, source: str) -> None:
        self.records[key] = record
        self.sources[key] = source
        if self._is_open is not None:
            self._open.put(key, OPEN if self._is_open(record) else None, source)

    def drop(self, key: str) -> bool:
        self._open.drop(key)
        self.sources.pop(key, None)
        return self.records.pop(key, None) is not None

    def open_count(self, source: str) -> int:
        return self._open.count(OPEN, source)


@dataclass
class Batch:
    """What a batch of rows moved: keys by kind, the agents' change (problems included),
    and the sources whose state or figures moved."""

    kinds: dict[str, Moved] = field(default_factory=dict)
    agents: FleetChange = field(default_factory=FleetChange)
    sources: set[str] = field(default_factory=set)

    def of(self, kind: str) -> Moved:
        return self.kinds.setdefault(kind, Moved())


class SourcesModel:
    def __init__(self, names: list[str], clock: Clock, *, judge: Judge | None = None) -> None:
        self.names = names
        self.states = {name: SourceState(name) for name in names}
        # Colours come as each source judged them, by its own settings: never judged here.
        self.agents = FleetRecords(LivenessSettings(), clock, judge=judge)
        self.questions: Keyed[Question] = Keyed(lambda q: q.state == PENDING)
        self.permissions: Keyed[PermissionRequest] = Keyed(lambda r: r.open)
        self.suspended: Keyed[ContextRecord] = Keyed()
        self.queue: Keyed[QueueEntry] = Keyed(lambda e: e.status == QUEUED)
        # Pipelines by stem; open: a human gate waits on the operator.
        self.pipelines: Keyed[Pipeline] = Keyed(lambda p: bool(p.gates))
        self.queue_states: dict[str, QueueState] = {}  # by source
        self.spending = Totals()  # dollars by source, and the plan's headroom
        self._keyed: dict[str, Keyed[Any]] = {
            QUESTION: self.questions,
            PERMISSION: self.permissions,
            SUSPENDED: self.suspended,
            QUEUE: self.queue,
            PIPELINE: self.pipelines,
        }

    # -- reading -----------------------------------------------------------------------

    def state(self, name: str) -> SourceState:
        return self.states.get(name) or SourceState(name)

    def counts(self, source: str) -> dict[str, int]:
        """One source's figures: its agents by colour, its problems, open questions and
        permission requests, queue entries waiting."""
        return {
            **self.agents.counts(source),
            "problems": self.agents.problem_count(source),
            "questions": self.questions.open_count(source),
            "permissions": self.permissions.open_count(source),
            "queue": self.queue.open_count(source),
            "gates": self.pipelines.open_count(source),
        }

    # -- taking rows in ------------------------------------------------------------------

    def apply(self, rows: Iterable[Row]) -> Batch:
        batch = Batch()
        agents: list[tuple[Row, AgentRecord]] = []
        for row in rows:
            if row.kind == AGENT and isinstance(row.record, AgentRecord):
                agents.append((row, row.record))
                continue
            self._flush(agents, batch)
            agents = []
            self._apply(row, batch)
        self._flush(agents, batch)
        return batch

    def _apply(self, row: Row, batch: Batch) -> None:
        kind, key, source, record = row.kind, row.key, row.source, row.record
        if kind == SOURCE and isinstance(record, SourceState):
            self.states[key] = record
            batch.sources.add(key)
        elif kind == AGENT:  # a remove
            batch.agents |= self.agents.remove([key])
            self.spending.update(key, None)
            batch.sources.add(source)
        elif kind == OBSERVATION:
            observation = record if isinstance(record, AgentObservation) else None
            batch.agents |= self.agents.observe(key, observation)
            batch.sources.add(source)
        elif kind == QUEUE_STATE:
            if isinstance(record, QueueState):
                self.queue_states[source] = record
            else:
                self.queue_states.pop(source, None)
            batch.sources.add(source)
        elif kind in self._keyed:
            keyed = self._keyed[kind]
            if record is None:
                if keyed.drop(key):
                    batch.of(kind).drop(key)
            else:
                keyed.put(key, record, source)
                batch.of(kind).put(key)
            batch.sources.add(source)

    def _flush(self, agents: list[tuple[Row, AgentRecord]], batch: Batch) -> None:
        """Upserted agents, a source's run at a time (one lock, one judging of each)."""
        by_source: dict[str, list[AgentRecord]] = {}
        phases: dict[str, str | None] = {}
        for row, record in agents:
            by_source.setdefault(row.source, []).append(record)
            phases[record.key] = row.phase
            self.spending.update(record.key, None if record.error else record.fields, row.source)
        for source, records in by_source.items():
            batch.agents |= self.agents.apply_records(
                records, source=source, phases=phases, judged=True
            )
            batch.sources.add(source)
