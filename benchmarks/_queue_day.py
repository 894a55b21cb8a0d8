"""The merge queue's rules on a fake clock: entries arrive (at random over a day, with a
fixed seed, or as a benchmark lays them out), some break the tests, one may flake, every
test run takes the same time. What happens is decided by the processor's own modules,
``forming`` (which entries make a batch) and ``train`` (the window, bisection, retries),
driven here by events instead of git and processes; the figures come from
``stats.figures``, as the pane's. With ``cpu_share`` the slots are ``parallel_runs: auto``:
``parallel_runs`` of them until the first run ends, then as many as that share leaves room
for on ``cpus`` cores (``cpu_share.slots_for``).

A tree is the set of entries in it, built as the processor builds it (on the tree of the
batch it is built on): a batch tests red when its tree holds a broken entry, or a flaky
one the first time a tree holds it; equal trees test alike, as they do for real.
"""

from __future__ import annotations

import heapq
import itertools
import random
from dataclasses import dataclass, field
from typing import Any

from runeconsole.adapters.clock import ManualClock
from runeconsole.core.timeutil import iso_z
from runeconsole.services.merge_queue.cpu_share import slots_for
from runeconsole.services.merge_queue.forming import next_batch
from runeconsole.services.merge_queue.model import QueueEntry
from runeconsole.services.merge_queue.stats import figures
from runeconsole.services.merge_queue.train import (
    FAIL,
    LAND,
    RETRY,
    SPLIT,
    TESTING,
    Batch,
    Train,
)

COMMAND = ["make", "test"]


@dataclass
class Day:
    entries: int = 200
    hours: float = 10.0  # they arrive over this long (200 in 10 h: 20 an hour)
    failing: float = 0.10
    test_minutes: float = 5.0
    batch_max: int = 8
    parallel_runs: int = 2  # with ``cpu_share``: the slots until the first run ends
    flaky_retries: int = 1
    seed: int = 23
    cpu_share: float | None = None  # ``parallel_runs: auto``: each run's measured share
    cpus: int = 2


GOOD, BAD, FLAKY = "good", "bad", "flaky"
Workload = list[tuple[float, str]]  # (seconds after the start it arrives, its kind)


def random_day(day: Day) -> Workload:
    rng = random.Random(day.seed)
    arrivals = sorted(rng.uniform(0, day.hours * 3600) for _ in range(day.entries))
    broken = set(rng.sample(range(day.entries), round(day.failing * len(arrivals))))
    return [(moment, BAD if n in broken else GOOD) for n, moment in enumerate(arrivals)]


@dataclass
class Result:
    runs: int = 0
    figures: dict[str, Any] = field(default_factory=dict)
    finished_hours: float = 0.0  # when the last entry had its outcome, from the first arrival


class Simulation:
    def __init__(self, day: Day, workload: Workload | None = None) -> None:
        self.day = day
        self.workload = random_day(day) if workload is None else workload
        self.flaky: set[str] = set()  # flaky entries not yet seen in a tested tree
        self.clock = ManualClock()
        self.start = self.clock.now()
        self.entries: list[QueueEntry] = []
        self.bad: set[str] = set()
        self.landed: list[str] = []  # main, as the entries landed on it
        self.events: list[tuple[float, int, str, Any]] = []
        self.seq = itertools.count()
        self.ids = itertools.count(1)
        self.train = Train(
            parallel_runs=day.parallel_runs,
            flaky_retries=day.flaky_retries,
            new_id=lambda: f"b{next(self.ids)}",
        )
        self.runs = 0
        self.tokens: dict[int, Batch] = {}

    def now(self) -> float:
        return (self.clock.now() - self.start).total_seconds()

    def at(self, seconds: float, kind: str, payload: Any) -> None:
        heapq.heappush(self.events, (seconds, next(self.seq), kind, payload))

    def run(self) -> Result:
        for n, (moment, kind) in enumerate(self.workload):
            self.at(moment, "arrive", (f"e{n}", kind))
        while self.events:
            moment = self.events[0][0]
            self.clock.advance(moment - self.now())
            while self.events and self.events[0][0] == moment:  # all that happen at once
                _, _, kind, payload = heapq.heappop(self.events)
                if kind == "arrive":
                    self.arrive(*payload)
                elif kind == "ran":
                    self.ran(*payload)
            while True:  # as the processor: act until nothing changes, then wait
                before = self.signature()
                self.settle()
                self.fill()
                if self.signature() == before:
                    break
        # The last event is the last outcome: the figures over the whole day, as of then.
        return Result(
            self.runs, figures(self.entries, self.clock.now(), hours=1e6), self.now() / 3600
        )

    def signature(self) -> tuple[Any, ...]:
        batches = tuple((b.batch_id, b.state, b.runs) for b in self.train.batches)
        return batches, len(self.pending()), len(self.tokens)

    # -- the queue -------------------------------------------------------------------------------

    def arrive(self, entry_id: str, kind: str) -> None:
        fields = {
            "entry_id": entry_id,
            "status": "pending",
            "requested_at": iso_z(self.clock.now()),
        }
        self.entries.append(QueueEntry(fields, len(self.entries)))
        if kind == BAD:
            self.bad.add(entry_id)
        elif kind == FLAKY:
            self.flaky.add(entry_id)

    def pending(self) -> list[QueueEntry]:
        return [e for e in self.entries if e.status == "pending"]

    def finish(self, entry_id: str, status: str) -> None:
        entry = next(e for e in self.entries if e.entry_id == entry_id)
        entry.fields.update(status=status, completed_at=iso_z(self.clock.now()))
        if status == "completed":
            self.landed.append(entry_id)

    # -- the processor's loop, by events ---------------------------------------------------------

    def fill(self) -> None:
        while (wanted := self.train.wanted()) is not None:
            if isinstance(wanted, Batch):
                if not self.start_run(wanted):
                    return  # red without a run: decide first
            elif not self.form():
                idle = self.train.next_to_build(idle=True)
                if idle is None or not self.start_run(idle):
                    return

    def form(self) -> bool:
        chosen = next_batch(self.pending(), self.train.batch_size(self.day.batch_max), COMMAND)
        if not chosen:
            return False
        for entry in chosen:
            entry.fields["status"] = "in_progress"
        self.train.add(Batch(f"b{next(self.ids)}", [e.entry_id for e in chosen]))
        return True

    def start_run(self, batch: Batch) -> bool:
        if not batch.retry_due:
            if self.train.red_unbuilt(batch):
                return False  # holds what a red run failed for: split it
            on = self.train.base_for(batch)  # what it is built on, as for real
            below = on.tree.split(",") if on is not None and on.tree else self.landed
            tree = ",".join(sorted([*below, *batch.entries]))
            base = on.tip if on is not None and on.tip else f"main-{len(self.landed)}"
            if not self.train.built(batch, on, str(base), f"tip-{batch.batch_id}", tree):
                return False  # red already: its tree failed before
        self.train.started(batch)
        self.runs += 1
        token = next(self.seq)
        self.tokens[token] = batch
        self.at(self.now() + self.day.test_minutes * 60, "ran", (token, batch.tree))
        return True

    def ran(self, token: int, tree: str) -> None:
        batch = self.tokens.pop(token, None)
        if batch is None or batch.state != TESTING or batch not in self.train.batches:
            return  # sent back meanwhile: its run was stopped (a flaky entry unseen)
        if self.day.cpu_share is not None:  # auto: the slots follow the measured share
            self.train.resize(slots_for(self.day.cpu_share, self.day.cpus))
        entries = tree.split(",")
        flaked = self.flaky.intersection(entries)  # the first run to end that holds it
        self.flaky -= flaked
        passed = not flaked and not any(entry in self.bad for entry in entries)
        self.stop(self.train.finished(batch, passed))

    def stop(self, batches: list[Batch]) -> None:
        stopped = {id(b) for b in batches}
        for token in [t for t, b in self.tokens.items() if id(b) in stopped]:
            del self.tokens[token]

    def settle(self) -> None:
        while (decision := self.train.decide()) is not None:
            action, front = decision
            if action == LAND:
                for entry in front.entries:
                    self.finish(entry, "completed")
                self.stop(self.train.landed(front))
            elif action == SPLIT:
                self.stop(self.train.split(front)[1])
            elif action == RETRY:
                self.train.retry(front)
            elif action == FAIL:
                self.finish(front.entries[0], "failed")
                self.stop(self.train.fail(front))


def simulate(day: Day, workload: Workload | None = None) -> Result:
    """``workload``: the entries (default: a random day as ``day`` describes)."""
    return Simulation(day, workload).run()
