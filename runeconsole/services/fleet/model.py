"""The fleet model: every agent of a root, kept current at the cost of what changed.

One ``FleetModel`` holds what the console shows of the agents: each identity as read
(``AgentRecord``), its hook's work phase, and the monitor's last reading of its pane.
It is fed by three things and reads no file the feeders did not name:

- ``apply_paths(paths)``: file events (identities, hooks, the saved monitor pass);
- ``scan()`` (in a worker) then ``apply_scan(scan)``: the rescan that recovers from
  dropped events, by ``stat`` (``StatIndex``): only files whose stamp moved are read,
  and a read older than what an event brought meanwhile is dropped, never applied;
- ``apply_observations(observations)``: a monitor pass.

Time changes colours too: ``tick(now)`` rejudges only the agents whose colour is due
to change (a heap of each record's next-change moment), so a silent agent turns yellow
and red on time while the tick costs nothing for the others. Counts by colour are kept
as records change; ``supervised()`` is the monitor's list, kept as records change.

Every feeder returns a ``FleetChange`` (the keys to redraw, the keys gone, whether the
counts moved); ``snapshot()`` is the whole state. A consumer shows ``snapshot()`` once
and then follows the changes; that is what the console's Agents and Problems panes do,
and what a line-per-change JSON stream does. Records of another source (decoded from
such a stream) enter with ``apply_records``. No Textual here: the console wraps each
``FleetChange`` in a message. The model is safe to call from several threads (one lock);
callers must not mutate the records it hands out.
"""

from __future__ import annotations

import heapq
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from runeconsole.core.files import is_temp_name
from runeconsole.core.gcpause import collector_paused
from runeconsole.services.fleet.index import FULL_SECONDS, Listing, Stamp, StatIndex, stat_path
from runeconsole.services.hooks import Hook, Hooks
from runeconsole.services.liveness import LIVENESS_ORDER, AgentRecord
from runeconsole.services.registry import Registry
from runeconsole.services.supervision.observations import AgentObservation

Observations = dict[str, AgentObservation]
RESCAN_COST_FACTOR = 100  # a paced rescan waits this many times its last CPU time


@dataclass(frozen=True)
class FleetChange:
    """What one feed changed: ``changed`` keys (new, re-read, recoloured, or their phase
    or pane reading moved) to redraw, ``removed`` keys, and whether the counts moved."""

    changed: frozenset[str] = frozenset()
    removed: frozenset[str] = frozenset()
    counts: bool = False

    def __bool__(self) -> bool:
        return bool(self.changed or self.removed or self.counts)

    def __or__(self, other: FleetChange) -> FleetChange:
        return FleetChange(
            (self.changed | other.changed) - other.removed,
            (self.removed | other.removed) - other.changed,
            self.counts or other.counts,
        )


@dataclass
class Scan:
    """A rescan's reads, made off the UI thread (``FleetModel.scan``)."""

    # key -> (record, its stamp when read, the key's read count when the scan began)
    records: dict[str, tuple[AgentRecord, Stamp | None, int]] = field(default_factory=dict)
    gone: dict[str, int] = field(default_factory=dict)
    phases: dict[str, tuple[str | None, Stamp | None, int]] = field(default_factory=dict)
    phases_gone: dict[str, int] = field(default_factory=dict)
    observations: Observations | None = None
    read_at_ns: int = 0


def hook_phase(hook: Hook | None) -> str | None:
    if hook is None or hook.error:
        return None
    return hook.work_phase or hook.phase


def drawn(observation: AgentObservation | None) -> object:
    """What of an observation a row shows (its timestamp changes every pass)."""
    if observation is None:
        return None
    return (observation.state, observation.screen, observation.urgency)


class FleetModel:
    """Agents of one root: records, phases, pane readings, counts, deadlines."""

    def __init__(
        self,
        registry: Registry,
        hooks: Hooks,
        *,
        saved_observations: Callable[[], Observations] | None = None,
        observations_path: Path | None = None,
        supervised: Callable[[AgentRecord], bool] | None = None,
        full_rescan_seconds: float = FULL_SECONDS,
    ) -> None:
        self.registry, self.hooks = registry, hooks
        self.settings = registry.settings
        self._saved_observations = saved_observations or dict
        self.observations_path = observations_path
        self._is_supervised = supervised or (lambda record: False)
        self._lock = threading.RLock()
        self._identities = StatIndex(registry.paths.identities, full_rescan_seconds)
        self._hook_files = StatIndex(registry.paths.hooks, full_rescan_seconds)
        self.records: dict[str, AgentRecord] = {}
        self.phases: dict[str, str | None] = {}
        self.observations: Observations = {}
        self._counts = dict.fromkeys(LIVENESS_ORDER, 0)
        self._supervised: dict[str, AgentRecord] = {}
        self._deadlines: list[tuple[float, str, int]] = []  # (moment, key, generation)
        self._generation: dict[str, int] = {}  # bumped by every stored record (deadlines)
        self._reads: dict[str, int] = {}  # identity reads applied per key (stale-read guard)
        self._hook_reads: dict[str, int] = {}
        self.monitoring = False  # a monitor in this process reports: ignore saved passes
        self._next_rescan = 0.0  # monotonic moment a paced rescan may run again

    # -- reading the model -------------------------------------------------------------

    def snapshot(self) -> list[AgentRecord]:
        """Every record, by key."""
        with self._lock:
            return [self.records[key] for key in sorted(self.records)]

    def get(self, key: str) -> AgentRecord | None:
        return self.records.get(key)

    def __len__(self) -> int:
        return len(self.records)

    def counts(self) -> dict[str, int]:
        """Agents by liveness colour (red, yellow, green, grey)."""
        with self._lock:
            return dict(self._counts)

    def supervised(self) -> list[AgentRecord]:
        """Records the monitor looks after (active, with a session on our tmux server)."""
        with self._lock:
            return list(self._supervised.values())

    def next_deadline(self) -> float | None:
        """The epoch second at which some colour is next due to change, if any."""
        with self._lock:
            return self._deadlines[0][0] if self._deadlines else None

    # -- feeding it --------------------------------------------------------------------

    def load(self) -> FleetChange:
        """Read everything (the first fill): a scan against an empty model."""
        with collector_paused():
            scan = self.scan()
            scan.observations = self._saved_observations()
            return self.apply_scan(scan)

    def apply_paths(self, paths: Iterable[Path]) -> FleetChange:
        """File events: read again the identity and hook files named, and the saved
        monitor pass if it is among them (and no monitor of this process reports)."""
        layout = self.registry.paths
        changed: set[str] = set()
        removed: set[str] = set()
        counts = False
        with self._lock:
            for path in paths:
                name = path.name
                if not name.endswith(".json") or is_temp_name(name):
                    continue
                key = name[: -len(".json")]
                if path.parent == layout.identities:
                    stamp = stat_path(str(path))
                    if stamp is None:
                        self._reads[key] = self._reads.get(key, 0) + 1
                        if self._remove(key):
                            removed.add(key)
                            changed.discard(key)
                            counts = True
                        continue
                    record = self.registry.read_path(path)
                    counts |= self._put(record)
                    self._identities.remember(key, stamp)
                    self._reads[key] = self._reads.get(key, 0) + 1
                    changed.add(key)
                    removed.discard(key)
                elif path.parent == layout.hooks:
                    stamp = stat_path(str(path))
                    phase = hook_phase(self.hooks.read_path(path)) if stamp else None
                    self._hook_reads[key] = self._hook_reads.get(key, 0) + 1
                    if stamp is None:
                        self._hook_files.forget(key)
                    else:
                        self._hook_files.remember(key, stamp)
                    if self.phases.get(key) != phase:
                        self.phases[key] = phase
                        changed.add(key) if key in self.records else None
                elif path == self.observations_path and not self.monitoring:
                    changed |= self._observe(self._saved_observations())
        return FleetChange(frozenset(changed & self.records.keys()), frozenset(removed), counts)

    def scan(self, *, paced: bool = False) -> Scan:
        """The rescan's reads (run it in a worker): files whose stamp moved, by ``stat``;
        ``paced``: a stat of every file only when its directory moved or a full pass is
        due (``StatIndex``), the console's periodic rescan."""
        with self._lock:
            known = dict(self._identities.stamps)
            known_hooks = dict(self._hook_files.stamps)
            reads, hook_reads = dict(self._reads), dict(self._hook_reads)
        scan = Scan(read_at_ns=time.time_ns())
        listing: Listing = self._identities.scan(known, paced=paced)
        now = self.registry.clock.now()
        for key, (path, stamp) in listing.changed.items():
            scan.records[key] = (self.registry.read_path(path, now), stamp, reads.get(key, 0))
        scan.gone = {key: reads.get(key, 0) for key in listing.gone}
        hooks = self._hook_files.scan(known_hooks, paced=paced)
        for key, (path, stamp) in hooks.changed.items():
            phase = hook_phase(self.hooks.read_path(Path(path)))
            scan.phases[key] = (phase, stamp, hook_reads.get(key, 0))
        scan.phases_gone = {key: hook_reads.get(key, 0) for key in hooks.gone}
        if not self.monitoring:
            scan.observations = self._saved_observations()
        return scan

    def apply_scan(self, scan: Scan) -> FleetChange:
        """Apply a rescan's reads, except where an event brought a newer read of the same
        file meanwhile (its read count moved since the scan began)."""
        changed: set[str] = set()
        removed: set[str] = set()
        counts = False
        with self._lock:
            reads = self._reads
            for key, (record, stamp, base) in scan.records.items():
                if reads.get(key, 0) != base:  # an event brought a newer read meanwhile
                    continue
                reads[key] = base + 1
                old = self.records.get(key)
                self._identities.remember(key, stamp, scan.read_at_ns)
                if old is not None and old.fields == record.fields and old.error == record.error:
                    continue
                counts |= self._put(record)
                changed.add(key)
            for key, base in scan.gone.items():
                if reads.get(key, 0) == base and self._remove(key):
                    removed.add(key)
                    counts = True
            hook_reads = self._hook_reads
            for key, (phase, stamp, base) in scan.phases.items():
                if hook_reads.get(key, 0) != base:
                    continue
                hook_reads[key] = base + 1
                self._hook_files.remember(key, stamp, scan.read_at_ns)
                if self.phases.get(key) != phase:
                    self.phases[key] = phase
                    changed.add(key)
            for key, base in scan.phases_gone.items():
                if hook_reads.get(key, 0) == base:
                    self._hook_files.forget(key)
                    if self.phases.pop(key, None) is not None:
                        changed.add(key)
            if scan.observations is not None and not self.monitoring:
                changed |= self._observe(scan.observations)
            changed &= self.records.keys()
        return FleetChange(frozenset(changed), frozenset(removed), counts)

    def rescan(self, *, paced: bool = False) -> FleetChange:
        """``scan`` and ``apply_scan`` in one (off the UI thread, or in tests). ``paced``
        (the console's timer): skipped until ``RESCAN_COST_FACTOR`` times the last paced
        rescan's CPU time has passed, so recovering from dropped events stays near 1 % of
        a core however large the fleet or busy its directory."""
        if paced and time.monotonic() < self._next_rescan:
            return FleetChange()
        started = time.thread_time()
        change = self.apply_scan(self.scan(paced=paced))
        if paced:
            cost = time.thread_time() - started
            self._next_rescan = time.monotonic() + RESCAN_COST_FACTOR * cost
        return change

    def apply_observations(self, observations: Observations) -> FleetChange:
        """A monitor pass: the keys whose pane reading, as a row shows it, moved."""
        with self._lock:
            changed = self._observe(observations) & self.records.keys()
        return FleetChange(frozenset(changed))

    def apply_records(self, records: Iterable[AgentRecord], *, whole: bool = False) -> FleetChange:
        """Records from elsewhere (another source's stream); ``whole``: they are all of them,
        so keys not among them are removed."""
        changed: set[str] = set()
        counts = False
        with self._lock:
            now = self.registry.clock.now()
            for record in records:
                record.rejudge(now, self.settings)
                counts |= self._put(record)
                changed.add(record.key)
            removed = set()
            if whole:
                for key in [k for k in self.records if k not in changed]:
                    self._remove(key)
                    removed.add(key)
                    counts = True
        return FleetChange(frozenset(changed), frozenset(removed), counts)

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
                before = record.liveness
                record.rejudge(now, self.settings)
                if record.liveness != before:
                    self._counts[before] -= 1
                    self._counts[record.liveness] += 1
                    changed.add(key)
                self._schedule(record)
        return FleetChange(frozenset(changed), counts=bool(changed))

    # -- inside --------------------------------------------------------------------------

    def _put(self, record: AgentRecord) -> bool:
        """Store ``record`` (already judged now); True if the counts moved."""
        key = record.key
        old = self.records.get(key)
        self.records[key] = record
        moved = old is None or old.liveness != record.liveness
        if old is not None:
            self._counts[old.liveness] -= 1
        self._counts[record.liveness] += 1
        if not record.error and self._is_supervised(record):
            self._supervised[key] = record
        else:
            self._supervised.pop(key, None)
        self._generation[key] = self._generation.get(key, 0) + 1
        self._schedule(record)
        return moved

    def _remove(self, key: str) -> bool:
        self._identities.forget(key)
        old = self.records.pop(key, None)
        if old is None:
            return False
        self._counts[old.liveness] -= 1
        self._supervised.pop(key, None)
        self._generation.pop(key, None)
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
