"""The agents a console shows, as typed records, kept current at the cost of what changed.

``FleetRecords`` holds each identity as read (``AgentRecord``), its hook's work phase,
the monitor's last reading of its pane (``AgentObservation``), the source it came from
(a fleet file's source; ``""`` for the root itself) and its problems. Counts are kept as
records change (``Tally``): by colour and by source, never by walking the fleet.
Problems are judged once, here, when an agent or its reading changes, by the ``Judge``
the console hands the model (the monitor's rules); both consoles' Problems panes draw
them from here.

It is fed records from anywhere: ``apply_records`` (another source's stream, already
judged there, or records just read), ``apply_observations`` (a monitor pass), and the
tick: ``tick(now)`` rejudges only the agents whose colour is due to change (a heap of each
record's next-change moment). ``FleetModel`` (``model.py``) adds the feeding from a
root's files. Each feeder returns a ``FleetChange``. Safe to call from several threads
(one lock); callers must not mutate the records it hands out.
"""

from __future__ import annotations

import heapq
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from runeconsole.adapters.clock import Clock
from runeconsole.services.fleet.problem import Judge, Problem
from runeconsole.services.fleet.tally import ALL, Tally
from runeconsole.services.liveness import LIVENESS_ORDER, AgentRecord, LivenessSettings
from runeconsole.services.pane_observation import AgentObservation

Observations = dict[str, AgentObservation]
PROBLEMS = "problems"  # the problems' bucket in ``counts``
JUDGE_CHUNK = 500  # agents judged under the lock at a time (``judge_all``)


@dataclass(frozen=True)
class FleetChange:
    """What one feed changed: ``changed`` keys (new, re-read, recoloured, or their phase
    or pane reading moved) to redraw, ``removed`` keys, whether the counts moved, the
    agents whose ``problems`` changed, and the ``beats``: of ``changed``, the agents read
    again after a heartbeat and nothing else (``AgentRecord.beat_of``; a fleet's files
    change mostly so), whose rows' ages move and nothing worked out from their fields."""

    changed: frozenset[str] = frozenset()
    removed: frozenset[str] = frozenset()
    counts: bool = False
    problems: frozenset[str] = frozenset()
    beats: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.changed or self.removed or self.counts or self.problems)

    @property
    def moved(self) -> frozenset[str]:
        """The agents changed in more than their heartbeat's moment, or gone."""
        return (self.changed - self.beats) | self.removed

    def __or__(self, other: FleetChange) -> FleetChange:
        changed = (self.changed | other.changed) - other.removed
        news = (self.changed - self.beats) | (other.changed - other.beats)
        return FleetChange(
            changed,
            (self.removed | other.removed) - other.changed,
            self.counts or other.counts,
            self.problems | other.problems,
            changed - news,
        )


def drawn(observation: AgentObservation | None) -> object:
    """What of an observation a row shows (its timestamp changes every pass)."""
    if observation is None:
        return None
    return (observation.state, observation.screen, observation.urgency)


class FleetRecords:
    """Agents: records, phases, pane readings, sources, counts, deadlines, problems."""

    def __init__(
        self,
        settings: LivenessSettings,
        clock: Clock,
        *,
        supervised: Callable[[AgentRecord], bool] | None = None,
        judge: Judge | None = None,
    ) -> None:
        self.settings, self.clock = settings, clock
        self._is_supervised = supervised or (lambda record: False)
        self.judge = judge
        self._lock = threading.RLock()
        self.records: dict[str, AgentRecord] = {}
        self.phases: dict[str, str | None] = {}
        self.observations: Observations = {}
        self.sources: dict[str, str] = {}  # key -> its source (absent: the root itself)
        self.problems: dict[str, list[Problem]] = {}  # agent key -> its problems, if any
        self._colours = Tally()
        self._problem_count = Tally()
        self._supervised: dict[str, AgentRecord] = {}
        self._deadlines: list[tuple[float, str, int]] = []  # (moment, key, generation)
        self._generation: dict[str, int] = {}  # bumped by every stored record (deadlines)
        self.monitoring = False  # a monitor in this process reports: ignore saved passes

    # -- reading the model -------------------------------------------------------------

    def snapshot(self) -> list[AgentRecord]:
        """Every record, by key."""
        with self._lock:
            return [self.records[key] for key in sorted(self.records)]

    def get(self, key: str) -> AgentRecord | None:
        return self.records.get(key)

    def __len__(self) -> int:
        return len(self.records)

    def source(self, key: str) -> str:
        return self.sources.get(key, "")

    def counts(self, source: str | None = ALL) -> dict[str, int]:
        """Agents by liveness colour (red, yellow, green, grey), of one source or all."""
        with self._lock:
            found = self._colours.counts(source)
            return {colour: found.get(colour, 0) for colour in LIVENESS_ORDER}

    def problem_count(self, source: str | None = ALL) -> int:
        with self._lock:
            return self._problem_count.count(PROBLEMS, source)

    def supervised(self) -> list[AgentRecord]:
        """Records the monitor looks after (active, with a session on our tmux server)."""
        with self._lock:
            return list(self._supervised.values())

    # -- feeding it --------------------------------------------------------------------

    def apply_records(
        self,
        records: Iterable[AgentRecord],
        *,
        whole: bool = False,
        source: str = "",
        phases: Mapping[str, str | None] | None = None,
        judged: bool = False,
    ) -> FleetChange:
        """Records from elsewhere, of ``source``: ``whole``, they are all of its records (its
        keys not among them are removed); ``phases``, their work phases; ``judged``, their
        colours are as their source judged them (by its own settings) and stay so."""
        changed: set[str] = set()
        counts = False
        with self._lock:
            now = self.clock.now()
            for record in records:
                if not judged:
                    record.rejudge(now, self.settings)
                if source:
                    self.sources[record.key] = source
                counts |= self._put(record, schedule=not judged)
                if phases is not None:
                    self.phases[record.key] = phases.get(record.key)
                changed.add(record.key)
            removed = set()
            if whole:
                for key in [k for k in self.records if self.source(k) == source]:
                    if key not in changed and self._remove(key):
                        removed.add(key)
                        counts = True
        return self._judged(FleetChange(frozenset(changed), frozenset(removed), counts))

    def remove(self, keys: Iterable[str]) -> FleetChange:
        """These agents are gone (another source's stream removed them)."""
        with self._lock:
            removed = frozenset(key for key in keys if self._remove(key))
        return self._judged(FleetChange(removed=removed, counts=bool(removed)))

    def apply_observations(self, observations: Observations) -> FleetChange:
        """A monitor pass: the keys whose pane reading, as a row shows it, moved."""
        with self._lock:
            changed = self._observe(observations) & self.records.keys()
        return self._judged(FleetChange(frozenset(changed)))

    def observe(self, key: str, observation: AgentObservation | None) -> FleetChange:
        """One agent's reading (another source's stream), or none any more."""
        with self._lock:
            observations = dict(self.observations)
            if observation is None:
                observations.pop(key, None)
            else:
                observations[key] = observation
            changed = self._observe(observations) & self.records.keys()
        return self._judged(FleetChange(frozenset(changed)))

    def tick(self, now: datetime) -> FleetChange:
        """Rejudge the records whose colour is due to change by ``now`` (and only those)."""
        changed: set[str] = set()
        moment = now.timestamp()
        with self._lock:
            heap = self._deadlines
            while heap and heap[0][0] <= moment:
                _, key, generation = heapq.heappop(heap)
                record = self.records.get(key)
                if record is None or self._generation.get(key) != generation:
                    continue
                if record.rejudge(now, self.settings):
                    self._colours.put(key, record.liveness, self.source(key))
                    changed.add(key)
                self._schedule(record)
        return self._judged(FleetChange(frozenset(changed), counts=bool(changed)))

    def restate(self, keys: Iterable[str], now: datetime) -> FleetChange:
        """These agents' problems judged again as of ``now`` (a stale agent's silence grows
        with time alone): the agents whose problems read differently now."""
        return self._judge(set(keys), now)

    def judge_all(self) -> FleetChange:
        """Every agent's problems judged (after a load that left them: ``FleetModel.load``),
        a chunk at a time: the lock is held for a chunk, never for the fleet, so a file
        event on the UI thread waits no longer."""
        with self._lock:
            keys = list(self.records)
        change = FleetChange()
        for at in range(0, len(keys), JUDGE_CHUNK):
            change |= self._judge(set(keys[at : at + JUDGE_CHUNK]), None)
        return change

    # -- inside --------------------------------------------------------------------------

    def _put(self, record: AgentRecord, *, schedule: bool = True) -> bool:
        """Store ``record`` (already judged now); True if the counts moved."""
        key = record.key
        self.records[key] = record
        moved = self._colours.put(key, record.liveness, self.source(key))
        if not record.error and self._is_supervised(record):
            self._supervised[key] = record
        else:
            self._supervised.pop(key, None)
        self._generation[key] = self._generation.get(key, 0) + 1
        if schedule:
            self._schedule(record)
        return moved

    def _remove(self, key: str) -> bool:
        old = self.records.pop(key, None)
        if old is None:
            return False
        self._colours.drop(key)
        self._supervised.pop(key, None)
        self._generation.pop(key, None)
        self.sources.pop(key, None)
        return True

    def _schedule(self, record: AgentRecord) -> None:
        moment = record.next_change(self.settings)
        if moment is not None:
            entry = (moment.timestamp(), record.key, self._generation[record.key])
            heapq.heappush(self._deadlines, entry)
        if len(self._deadlines) > 4 * len(self.records) + 64:  # superseded entries pile up
            self._deadlines = [e for e in self._deadlines if self._generation.get(e[1]) == e[2]]
            heapq.heapify(self._deadlines)

    def _observe(self, observations: Observations) -> set[str]:
        old = self.observations
        changed = {
            key
            for key in observations.keys() | old.keys()
            if drawn(observations.get(key)) != drawn(old.get(key))
        }
        self.observations = dict(observations)
        return changed

    def _judged(self, change: FleetChange) -> FleetChange:
        """``change`` with the agents whose problems it changed. A heartbeat alone, of an
        agent with none, brings none: its colour, its fields and the day it was last seen
        (a budget's) are as they were (``AgentRecord.beat_of``)."""
        if self.judge is None or not (change.changed or change.removed):
            return change
        problems, beats = self.problems, change.beats
        keys = {key for key in change.changed if key not in beats or key in problems}
        return change | self._judge(keys | change.removed, None)

    def _judge(self, keys: set[str], now: datetime | None) -> FleetChange:
        if self.judge is None:
            return FleetChange()
        moved: set[str] = set()
        counts = False
        with self._lock:
            for key in keys:
                record = self.records.get(key)
                found = (
                    [] if record is None else self.judge(record, self.observations.get(key), now)
                )
                if found == self.problems.get(key, []):
                    continue
                moved.add(key)
                if found:
                    self.problems[key] = found
                else:
                    self.problems.pop(key, None)
                source = self.source(key)
                counts |= self._problem_count.put(key, PROBLEMS, source, weight=len(found))
        return FleetChange(problems=frozenset(moved), counts=counts)
