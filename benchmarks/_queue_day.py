"""A simulated day of the merge queue: entries arrive at random (a fixed seed), a share of
them break the tests, every test run takes the same time, on a fake clock. The queue's
own rules decide what happens: ``forming`` (which entries make a batch) and ``train``
(the window, bisection, retries) are the processor's modules, driven here by events
instead of git and processes; the figures come from ``stats.figures``, as the pane's.

A tree is the set of entries in it: a batch tests red when its tree holds a broken
entry, and equal trees test alike (as they do for real: the same tree, the same run).
"""

from __future__ import annotations

import heapq
import itertools
import random
from dataclasses import dataclass, field
from typing import Any

from runeconsole.adapters.clock import ManualClock
from runeconsole.core.timeutil import iso_z
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
    parallel_runs: int = 2
    flaky_retries: int = 1
    seed: int = 23


@dataclass
class Result:
    runs: int = 0
    figures: dict[str, Any] = field(default_factory=dict)
    finished_hours: float = 0.0  # when the last entry had its outcome, from the first arrival


class Simulation:
    def __init__(self, day: Day) -> None:
        self.day = day
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
        rng = random.Random(self.day.seed)
        span = self.day.hours * 3600
        arrivals = sorted(rng.uniform(0, span) for _ in range(self.day.entries))
        broken = set(rng.sample(range(self.day.entries), round(self.day.failing * len(arrivals))))
        for n, moment in enumerate(arrivals):
            self.at(moment, "arrive", (f"e{n}", n in broken))
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

    def arrive(self, entry_id: str, bad: bool) -> None:
        fields = {
            "entry_id": entry_id,
            "status": "pending",
            "requested_at": iso_z(self.clock.now()),
        }
        self.entries.append(QueueEntry(fields, len(self.entries)))
        if bad:
            self.bad.add(entry_id)

    def pending(self) -> list[QueueEntry]:
        return [e for e in self.entries if e.status == "pending"]

    def finish(self, entry_id: str, status: str) -> None:
        entry = next(e for e in self.entries if e.entry_id == entry_id)
        entry.fields.update(status=status, completed_at=iso_z(self.clock.now()))
        if status == "completed":
            self.landed.append(entry_id)

    # -- the processor's loop, by events ---------------------------------------------------------

    def fill(self) -> None:
        while True:
            batch = self.train.next_to_build()
            if batch is None:
                if not self.train.room_for_more() or not self.form():
                    return
                continue
            self.start_run(batch)

    def form(self) -> bool:
        chosen = next_batch(self.pending(), self.day.batch_max, COMMAND)
        if not chosen:
            return False
        for entry in chosen:
            entry.fields["status"] = "in_progress"
        self.train.add(Batch(f"b{next(self.ids)}", [e.entry_id for e in chosen]))
        return True

    def start_run(self, batch: Batch) -> None:
        if not batch.retry_due:
            ahead = self.train.ahead_of(batch)
            below = list(self.landed)
            for other in self.train.batches[: self.train.batches.index(batch)]:
                below += other.entries
            tree = ",".join(sorted([*below, *batch.entries]))
            base = ahead.tip if ahead is not None and ahead.tip else "main"
            if not self.train.built(batch, str(base), f"tip-{batch.batch_id}", tree):
                return  # red already: its tree failed before
        self.train.started(batch)
        self.runs += 1
        token = next(self.seq)
        self.tokens[token] = batch
        tree = batch.tree or ""
        red = any(entry in self.bad for entry in tree.split(","))
        self.at(self.now() + self.day.test_minutes * 60, "ran", (token, not red))

    def ran(self, token: int, passed: bool) -> None:
        batch = self.tokens.pop(token, None)
        if batch is None or batch.state != TESTING or batch not in self.train.batches:
            return  # sent back meanwhile: its run was stopped
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
                self.train.landed(front)
            elif action == SPLIT:
                self.stop(self.train.split(front)[1])
            elif action == RETRY:
                self.train.retry(front)
            elif action == FAIL:
                self.finish(front.entries[0], "failed")
                self.stop(self.train.fail(front))


def simulate(day: Day) -> Result:
    return Simulation(day).run()
