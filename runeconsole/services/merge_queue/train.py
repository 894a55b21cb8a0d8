"""The batches in flight and the rules that move them.

Every run should count whichever way the batches around it go. A batch is built on the
tip of the batch most likely to pass (a speculative run: it tests what ``main`` will be
once that one lands) when that is worth more than a run beside it on ``main``: on it, the
run counts if that batch passes; beside it, unless both pass (then only one lands, and
the other is built again on the new ``main``). So a batch in doubt (a half of a red batch
under test, a single running again) carries nothing and what else there is tests beside
it, while one likely to pass (formed from a queue that seldom fails, passed before) is
built on. One batch is built on each tip (with many slots they stack, never fan out:
of two on one tip only one could land). How likely: from the share of entries failing,
``evidence``. At most
``window`` batches are stacked so: one more after a clean landing, half after a failure
(an entry failing, not a batch split to find one), never over ``parallel_runs`` (Zuul's
gate); new batches take ``batch_max`` entries at a full window and fewer below it.

Any batch that passed on ``main`` as it is now lands, wherever it is in the train; a batch
built on the ``main`` it moved from is built again (one still testing runs on: red, it is
red on the new ``main`` too, as that holds what it held; green, it is built again first).

A red batch is split in halves, which take its place (bisection: each culprit ends as a
single entry that fails alone). The second half waits for the first's result while there
is other work: if the first lands, the second holds what failed and is split without a
run. A single that fails runs again ``flaky_retries`` times, then fails (built on
``main``). A batch that fails, is split or is built again sends everything built on it
back, to be built again.

Decisions only, no git, processes or files: the processor and the simulated day of the
benchmarks follow the same rules.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from runeconsole.services.merge_queue.evidence import Evidence

PLANNED, TESTING, GREEN, RED = "planned", "testing", "green", "red"
LAND, SPLIT, RETRY, FAIL = "land", "split", "retry", "fail"
FORM = "form"  # wanted: a new batch from the queue
PASSED_BEFORE = 0.95  # the chance a batch that passed on an older main passes again
HOLDS_A_FAILURE = 0.05  # the chance a batch holding what failed passes


@dataclass(eq=False)
class Batch:
    """Entries rebased one on the next and tested once, at the tip."""

    batch_id: str
    entries: list[str]
    half_of: str | None = None  # the red batch this is a half of
    half: int = 0  # 1 or 2 for a half; 0 for a batch formed from the queue
    state: str = PLANNED
    runs: int = 0  # test runs of its current build (a retry is a second)
    rounds: int = 0  # built again because main moved under it (not by this train)
    base: str | None = None  # what it was built on
    tip: str | None = None
    tree: str | None = None  # the tip's tree: equal trees test alike
    on: str | None = None  # the batch it was built on (None: main)
    generation: int = 0  # how many of the train's landings main had when it was built
    known_red: bool = False  # red without a run of its own
    retryable: bool = True  # a failure a retry may cure (not a timeout)
    left_out: bool = False  # a single running again: nothing is built on it
    flaky: bool = False  # failed alone, then passed on a retry: lands marked flaky
    passed_before: bool = False  # passed on a main moved since: built again
    share: float | None = None  # a half: the chance it holds no culprit
    entry_ids: set[str] = field(default_factory=set, repr=False)

    def __post_init__(self) -> None:
        self.entry_ids = set(self.entries)

    @property
    def retry_due(self) -> bool:
        """Built, failed, and to be run again as it is (no rebuild)."""
        return self.state == PLANNED and self.tip is not None and self.runs > 0

    def describe(self) -> str:
        """``b7 (3 entries)``, ``b9 (half 1 of b7, 2 entries)``."""
        size = f"{len(self.entries)} entr{'y' if len(self.entries) == 1 else 'ies'}"
        if self.half_of:
            return f"{self.batch_id} (half {self.half} of {self.half_of}, {size})"
        return f"{self.batch_id} ({size})"


class Train:
    def __init__(
        self,
        *,
        parallel_runs: int,
        flaky_retries: int,
        new_id: Callable[[], str],
        window: int | None = None,
        evidence: Evidence | None = None,
    ) -> None:
        self.parallel_runs = max(1, parallel_runs)
        self.flaky_retries = max(0, flaky_retries)
        self.new_id = new_id
        self.window = min(self.parallel_runs, max(1, window or self.parallel_runs))
        self.evidence = evidence or Evidence()
        self.batches: list[Batch] = []
        self.generation = 0  # landings so far: main moved this many times

    def resize(self, parallel_runs: int) -> None:
        """The slots changed (``parallel_runs: auto``): slots added are open to the window
        at once; slots gone close it as far as they reach."""
        grown = max(0, parallel_runs - self.parallel_runs)
        self.parallel_runs = max(1, parallel_runs)
        self.window = max(1, min(self.parallel_runs, self.window + grown))

    # -- what the train holds -------------------------------------------------------------------

    def below(self, batch: Batch) -> Batch | None:
        """The batch ``batch`` is built on (``None``: main)."""
        return next((b for b in self.batches if b.batch_id == batch.on), None) if batch.on else None

    def testing(self) -> list[Batch]:
        return [b for b in self.batches if b.state == TESTING]

    def on_main(self, batch: Batch) -> bool:
        """Built on ``main`` as it is now."""
        return batch.tip is not None and batch.on is None and batch.generation == self.generation

    def stale(self, batch: Batch) -> bool:
        """Built on a ``main`` moved since (directly, or under what it is built on)."""
        below = self.below(batch)
        if below is not None:
            return self.stale(below)
        return batch.tip is not None and batch.generation < self.generation

    def depth(self, batch: Batch) -> int:
        """1 on main, 2 on a batch on main, …"""
        below = self.below(batch)
        return 1 if below is None else 1 + self.depth(below)

    def held(self, batch: Batch) -> set[str]:
        """The entries a build of ``batch`` holds beyond main: its own and those below."""
        below = self.below(batch)
        return batch.entry_ids | (self.held(below) if below is not None else set())

    def chance(self, batch: Batch) -> float:
        """How likely ``batch`` is to pass on what it is built on."""
        if batch.state == GREEN:
            return 1.0
        if batch.state == RED or batch.left_out:
            return 0.0
        if batch.passed_before:
            return PASSED_BEFORE
        if self.evidence.holds_a_red_run(batch.entry_ids):
            return HOLDS_A_FAILURE
        if batch.share is not None:
            return batch.share
        return (1 - self.evidence.failure_rate()) ** len(batch.entries)

    def chain(self, batch: Batch) -> float:
        """How likely ``batch`` and everything it is built on are to pass."""
        below = self.below(batch)
        return self.chance(batch) * (1.0 if below is None else self.chain(below))

    def carries(self, batch: Batch) -> bool:
        """Something may be built on ``batch``'s tip: it tests or passed, on main as it is."""
        return batch.state in (GREEN, TESTING) and not batch.left_out and not self.stale(batch)

    def waits(self, batch: Batch) -> bool:
        """A second half whose first half has no result yet."""
        return batch.half == 2 and any(
            b.half_of == batch.half_of and b.half == 1 and b.state in (PLANNED, TESTING, GREEN)
            for b in self.batches
        )

    def batch_size(self, batch_max: int) -> int:
        """Entries a new batch takes: ``batch_max`` at a full window, fewer below it (after
        failures a red batch has fewer entries to bisect)."""
        return max(1, math.ceil(batch_max * self.window / self.parallel_runs))

    # -- what to do next ------------------------------------------------------------------------

    def base_for(self, batch: Batch) -> Batch | None:
        """What ``batch`` is to be built on: the batch most likely to pass of those that
        carry, when a run on it counts more often than one beside it on main, and the
        window has room; else ``None`` (main)."""
        # Only the tip of a stack: a second batch on one carrier would be built beside the
        # first, and of the two only one could land.
        occupied = {b.on for b in self.batches if b is not batch and b.tip is not None}
        carriers = [
            b
            for b in self.batches
            if b is not batch and self.carries(b) and b.batch_id not in occupied
        ]
        best = max(carriers, key=self.chain, default=None)
        if best is None or self.depth(best) >= self.window:
            return None
        # On it: counts if it passes. Beside it: counts unless both pass.
        return best if self.chain(best) * (1 + self.chance(batch)) >= 1 else None

    def next_to_build(self, *, idle: bool = False) -> Batch | None:
        """The first planned batch in the train, if a slot is free; a second half waits
        for its first unless the slot would be ``idle`` otherwise."""
        if len(self.testing()) >= self.parallel_runs:
            return None
        ready = [b for b in self.batches if b.state == PLANNED and (idle or not self.waits(b))]
        return ready[0] if ready else None

    def room_for_more(self) -> bool:
        """A new batch could be built now: a slot is free and nothing else waits for it."""
        if len(self.testing()) >= self.parallel_runs:
            return False
        return all(b.state in (TESTING, GREEN) or b.left_out or self.waits(b) for b in self.batches)

    def wanted(self) -> Batch | str | None:
        """What the slots have room for now: a batch to build (or run again), ``FORM``
        (a new batch from the queue), or nothing."""
        batch = self.next_to_build()
        if batch is not None:
            return batch
        return FORM if self.room_for_more() else None

    def decide(self) -> tuple[str, Batch] | None:
        """What the results mean now: a batch that passed on ``main`` lands; a red batch
        of several is split and a red single runs again, wherever they are; a red single
        built on ``main`` with no retry left fails."""
        for batch in self.batches:
            if batch.state == GREEN and self.on_main(batch):
                return LAND, batch
        for batch in self.batches:
            if batch.state != RED:
                continue
            if len(batch.entries) > 1:
                return SPLIT, batch
            if self._may_retry(batch):
                return RETRY, batch
            if batch.on is None:
                return FAIL, batch
        return None

    def _may_retry(self, batch: Batch) -> bool:
        return batch.retryable and len(batch.entries) == 1 and batch.runs <= self.flaky_retries

    # -- what happened --------------------------------------------------------------------------

    def add(self, batch: Batch) -> None:
        self.batches.append(batch)

    def red_unbuilt(self, batch: Batch) -> bool:
        """A batch of several holding all a red run may still be failing for is red without
        a build or a run: True, and it is to be split."""
        if len(batch.entries) < 2 or not self.evidence.holds_a_red_run(batch.entry_ids):
            return False
        batch.state, batch.known_red, batch.tip, batch.on = RED, True, None, None
        return True

    def built(self, batch: Batch, on: Batch | None, base: str, tip: str, tree: str | None) -> bool:
        """``batch`` is built on ``on``'s tip (``None``: main). True: test it; False: it is
        red already (its tree failed, or it holds what a red run failed for)."""
        batch.base, batch.tip, batch.tree = base, tip, tree
        batch.on = on.batch_id if on is not None else None
        batch.generation = self.generation
        batch.runs, batch.retryable, batch.left_out, batch.known_red = 0, True, False, False
        several = len(batch.entries) > 1
        inferred = (several or self.flaky_retries > 0) and self.evidence.holds_a_red_run(
            batch.entry_ids
        )
        if not self.evidence.tree_failed(tree) and not inferred:
            return True
        batch.state, batch.known_red = RED, True
        if len(batch.entries) == 1:
            # It has failed alone once (its tree's red run, or what a red run failed for
            # is all in it); nothing is built on it while it runs again, for real.
            batch.runs = 1
            batch.left_out = self._may_retry(batch)
        return False

    def started(self, batch: Batch) -> None:
        batch.state = TESTING
        batch.runs += 1

    def finished(self, batch: Batch, passed: bool, *, retryable: bool = True) -> list[Batch]:
        """A test run of ``batch`` ended; returns the batches sent back (built on a red
        tip, or on one built again)."""
        batch.state = GREEN if passed else RED
        batch.retryable = retryable
        if passed:
            self.evidence.ran_green(self.held(batch))
            if batch.runs > 1 and not batch.known_red:
                batch.flaky = True  # failed alone, passed on a retry
            batch.left_out = False
            return self.rebuild(batch) if self.stale(batch) else []
        own = [] if batch.known_red else batch.entries
        self.evidence.ran_red(batch.batch_id, own, self.held(batch), batch.tree)
        sent_back = self._send_back(batch)
        batch.left_out = self._may_retry(batch)
        if batch.half == 1:  # the culprit is in this half: the other likely passes
            for other in self.batches:
                if other.half_of == batch.half_of and other.half == 2:
                    other.share = None
        return sent_back

    def landed(self, batch: Batch) -> list[Batch]:
        """``batch`` moved main; returns the batches built on the main it moved from, to
        be built again (one still testing runs on)."""
        self.batches.remove(batch)
        self.generation += 1
        self.evidence.landed_entries(batch.entry_ids)
        if batch.runs == 1:  # clean: green at its first run
            self.window = min(self.parallel_runs, self.window + 1)
        sent_back: list[Batch] = []
        for other in list(self.batches):
            if other.on == batch.batch_id:
                other.on, other.generation = None, self.generation
            elif other.state == GREEN and other.on is None and self.stale(other):
                sent_back += self.rebuild(other)  # (a retry due runs as it was built)
        return sent_back

    def moved(self) -> list[Batch]:
        """``main`` moved by another hand (someone's commit, a teammate's push): what was
        built on it as it was is stale; returns the green ones, built again now (one still
        testing is built again when it passes)."""
        self.generation += 1
        sent_back: list[Batch] = []
        for other in list(self.batches):
            if other.state == GREEN and other.on is None and self.stale(other):
                sent_back += self.rebuild(other)
        return sent_back

    def split(self, batch: Batch) -> tuple[list[Batch], list[Batch]]:
        """Replace the red ``batch`` by its halves; returns (halves, batches sent back)."""
        stop = self._send_back(batch)
        middle = (len(batch.entries) + 1) // 2
        first = Batch(self.new_id(), batch.entries[:middle], half_of=batch.batch_id, half=1)
        second = Batch(self.new_id(), batch.entries[middle:], half_of=batch.batch_id, half=2)
        # One culprit, as likely anywhere: a half holds none as often as the other holds it.
        first.share = len(second.entries) / len(batch.entries)
        second.share = len(first.entries) / len(batch.entries)
        n = self.batches.index(batch)
        self.batches[n : n + 1] = [first, second]
        if batch.half == 1:  # the second half likely passes: it goes first
            for sibling in [b for b in self.batches if b.half_of == batch.half_of]:
                self.batches.remove(sibling)
                self.batches.insert(n, sibling)
        return [first, second], stop

    def retry(self, batch: Batch) -> None:
        """Run the single red ``batch`` again as it is built."""
        batch.state = PLANNED

    def fail(self, batch: Batch) -> list[Batch]:
        """The culprit fails: it leaves, and what was built on it goes back to be built."""
        stop = self._send_back(batch)
        self.batches.remove(batch)
        self.window = max(1, self.window // 2)
        for entry_id in batch.entries:
            self.evidence.failed_entry(entry_id)
        return stop

    def left(self, entry_ids: list[str]) -> None:
        """Entries left their batch without landing or failing a test (a conflict, gone
        back to wait)."""
        self.evidence.left(entry_ids)

    def rebuild(self, batch: Batch, entries: list[str] | None = None) -> list[Batch]:
        """Build ``batch`` again (main moved under it, or ``entries`` are what is left of
        it); returns the batches sent back, itself and everything built on it. One that
        had passed goes first: it is likely to pass again, and others are built on it."""
        stop = self._send_back(batch)
        if batch.state != PLANNED or batch.tip is not None:
            stop.append(batch)
        if batch.state == GREEN:
            batch.passed_before = True
            self.batches.remove(batch)
            self.batches.insert(0, batch)
        if entries is not None:
            batch.entries, batch.entry_ids = list(entries), set(entries)
        self._unbuild(batch)
        return stop

    def drop(self, batch: Batch) -> list[Batch]:
        """A batch left without entries (each failed while it was built) leaves the train."""
        stop = self._send_back(batch)
        self.batches.remove(batch)
        return stop

    def _send_back(self, batch: Batch) -> list[Batch]:
        """Everything built on ``batch``'s tip (and on theirs): back to planned, to be
        built again; returns those sent back (the runs of those that were testing stop)."""
        sent_back = []
        for other in list(self.batches):
            if other.on == batch.batch_id and other.tip is not None:
                sent_back += self._send_back(other)
                sent_back.append(other)
                self._unbuild(other)
        return sent_back

    @staticmethod
    def _unbuild(batch: Batch) -> None:
        batch.state, batch.tip, batch.tree, batch.runs, batch.on = PLANNED, None, None, 0, None
        batch.known_red, batch.left_out = False, False
