"""The fleet model of a root: its agents (``FleetRecords``) fed from its files, at the
cost of what changed.

It reads no file the feeders did not name:

- ``apply_paths(paths)``: file events (identities, hooks, the saved monitor pass);
- ``scan()`` (in a worker) then ``apply_scan(scan)``: the rescan that recovers from
  dropped events, by ``stat`` (``StatIndex``): only files whose stamp moved are read,
  and a read older than what an event brought meanwhile is dropped, never applied;
- and what ``FleetRecords`` takes: a monitor pass, the tick.

A consumer shows ``snapshot()`` once and then follows the changes; that is what the
console's Agents and Problems panes do, and what a line-per-change JSON stream does. No
Textual here: the console wraps each ``FleetChange`` in a message.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from runeconsole.core.files import is_temp_name
from runeconsole.core.gc_passes import collector_paused
from runeconsole.services.fleet.index import (
    FULL_SECONDS,
    Listing,
    Stamp,
    StatIndex,
    stamp_of,
    stat_path,
)
from runeconsole.services.fleet.problem import Judge
from runeconsole.services.fleet.records import FleetChange, FleetRecords, Observations
from runeconsole.services.hook_files import HookFile, HookFiles
from runeconsole.services.liveness import AgentRecord
from runeconsole.services.registry import Registry

RESCAN_COST_FACTOR = 100  # a paced rescan waits this many times its last CPU time


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


def hook_phase(hook: HookFile | None) -> str | None:
    if hook is None or hook.error:
        return None
    return hook.work_phase or hook.phase


class FleetModel(FleetRecords):
    """A root's agents, fed from its identity and hook files and the saved monitor pass."""

    def __init__(
        self,
        registry: Registry,
        hook_files: HookFiles,
        *,
        saved_observations: Callable[[], Observations] | None = None,
        observations_path: Path | None = None,
        supervised: Callable[[AgentRecord], bool] | None = None,
        full_rescan_seconds: float = FULL_SECONDS,
        judge: Judge | None = None,
    ) -> None:
        super().__init__(registry.settings, registry.clock, supervised=supervised, judge=judge)
        self.registry, self.hook_files = registry, hook_files
        self._saved_observations = saved_observations or dict
        self.observations_path = observations_path
        self._identities = StatIndex(registry.paths.identities, full_rescan_seconds)
        self._hook_files = StatIndex(registry.paths.hook_files, full_rescan_seconds)
        self._reads: dict[str, int] = {}  # identity reads applied per key (stale-read guard)
        self._hook_reads: dict[str, int] = {}
        self._next_rescan = 0.0  # monotonic moment a paced rescan may run again

    # -- feeding it --------------------------------------------------------------------

    def load(self, *, judged: bool = True) -> FleetChange:
        """Read everything (the first fill): a scan against an empty model. ``judged``
        false: the agents' problems are left to ``judge_all`` (the console judges them
        after the first rows are painted: 15 % of a 10,000-agent load)."""
        with collector_paused():
            scan = self.scan()
            scan.observations = self._saved_observations()
            return self.apply_scan(scan, judged=judged)

    def apply_paths(self, paths: Iterable[Path]) -> FleetChange:
        """File events: read again the identity and hook files named, and the saved
        monitor pass if it is among them (and no monitor of this process reports)."""
        # The layout makes each a new path when asked for (three joins): kept by the indexes.
        identities, hook_files = self._identities.directory, self._hook_files.directory
        changed: set[str] = set()
        news: set[str] = set()  # of changed, the agents changed in more than a heartbeat
        removed: set[str] = set()
        counts = False
        with self._lock:
            for path in paths:
                name = path.name
                if not name.endswith(".json") or is_temp_name(name):
                    continue
                key = name[: -len(".json")]
                parent = path.parent
                if parent == identities:
                    record, stamp = self._read(path)
                    if stamp is None:
                        self._reads[key] = self._reads.get(key, 0) + 1
                        if self._remove(key):
                            removed.add(key)
                            changed.discard(key)
                            counts = True
                        continue
                    if not record.beat_of(self.records.get(key)):
                        news.add(key)
                    counts |= self._put(record)
                    self._identities.remember(key, stamp)
                    self._reads[key] = self._reads.get(key, 0) + 1
                    changed.add(key)
                    removed.discard(key)
                elif parent == hook_files:
                    stamp = stat_path(str(path))
                    phase = hook_phase(self.hook_files.read_path(path)) if stamp else None
                    self._hook_reads[key] = self._hook_reads.get(key, 0) + 1
                    if stamp is None:
                        self._hook_files.forget(key)
                    else:
                        self._hook_files.remember(key, stamp)
                    if self.phases.get(key) != phase:
                        self.phases[key] = phase
                        if key in self.records:
                            changed.add(key)
                            news.add(key)
                elif path == self.observations_path and not self.monitoring:
                    observed = self._observe(self._saved_observations())
                    changed |= observed
                    news |= observed
            changed &= self.records.keys()
        return self._judged(
            FleetChange(
                frozenset(changed), frozenset(removed), counts, beats=frozenset(changed - news)
            )
        )

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
        for key, (path, _listed) in listing.changed.items():
            record, stamp = self._read(path, now)
            if stamp is None:  # gone since it was listed: the next scan says so
                continue
            scan.records[key] = (record, stamp, reads.get(key, 0))
        scan.gone = {key: reads.get(key, 0) for key in listing.gone}
        hooks = self._hook_files.scan(known_hooks, paced=paced)
        for key, (path, listed) in hooks.changed.items():
            stamp = listed or stat_path(path)
            phase = hook_phase(self.hook_files.read_path(Path(path)))
            scan.phases[key] = (phase, stamp, hook_reads.get(key, 0))
        scan.phases_gone = {key: hook_reads.get(key, 0) for key in hooks.gone}
        if not self.monitoring:
            scan.observations = self._saved_observations()
        return scan

    def _read(
        self, path: Path | str, now: datetime | None = None
    ) -> tuple[AgentRecord, Stamp | None]:
        """An identity file's record and its stamp before the read (taken from the file
        opened), None when nothing is there."""
        record, info = self.registry.read_with_stat(path, now)
        if info is not None:
            return record, stamp_of(info)
        return record, stat_path(record.location)  # a link or FIFO has one; a gone file not

    def apply_scan(self, scan: Scan, *, judged: bool = True) -> FleetChange:
        """Apply a rescan's reads, except where an event brought a newer read of the same
        file meanwhile (its read count moved since the scan began); ``judged`` false: the
        problems are not judged (``load``)."""
        changed: set[str] = set()
        news: set[str] = set()  # of changed, the agents changed in more than a heartbeat
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
                if not record.beat_of(old):
                    news.add(key)
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
                    news.add(key)
            for key, base in scan.phases_gone.items():
                if hook_reads.get(key, 0) == base:
                    self._hook_files.forget(key)
                    if self.phases.pop(key, None) is not None:
                        changed.add(key)
                        news.add(key)
            if scan.observations is not None and not self.monitoring:
                observed = self._observe(scan.observations)
                changed |= observed
                news |= observed
            changed &= self.records.keys()
        beats = frozenset(changed - news)
        change = FleetChange(frozenset(changed), frozenset(removed), counts, beats=beats)
        return self._judged(change) if judged else change

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

    def follow_events(self, reliable: bool) -> None:
        """Whether file events tell of every change to the identities and hooks (inotify
        on a local file system): the paced rescan then trusts them between its full
        passes (``StatIndex.watched``)."""
        with self._lock:
            self._identities.watched = self._hook_files.watched = reliable

    def events_lost(self) -> None:
        """Some file events never came: the next rescan reads every file again."""
        with self._lock:
            self._identities.lost()
            self._hook_files.lost()

    def _remove(self, key: str) -> bool:
        self._identities.forget(key)
        return super()._remove(key)
