"""The batches in flight, in the order they land, and the rules that move them.

The front batch is built on ``main``; each batch behind it on the tip of the one ahead
(a speculative run: it tests what ``main`` will be once the batches ahead land). At most
``window`` batches test at once: one more after a clean landing, half after a failure
(an entry failing; not a batch split to find one), never over ``parallel_runs`` (Zuul's
gate). Only the front lands.

A red batch is split in halves, which take its place, wherever it is in the train
(bisection: each culprit ends as a single entry that fails alone). A batch whose tree
once tested red is red without another run (the second half of a red batch whose first
half landed as it was tested; a single entry so has failed alone). A single that fails
runs again ``flaky_retries`` times before it fails; meanwhile what is behind it is built
without it (most fail again), and taken back onto it if it passes. Only the front fails.
A batch that fails, is split or is built again sends everything built on it back, to be
built again on the new base.

Decisions only, no git, processes or files: the processor and the simulated day of the
benchmarks follow the same rules.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

PLANNED, TESTING, GREEN, RED = "planned", "testing", "green", "red"
LAND, SPLIT, RETRY, FAIL = "land", "split", "retry", "fail"
FORM = "form"  # wanted: a new batch from the queue


@dataclass(eq=False)
class Batch:
    """Entries rebased one on the next and tested once, at the tip."""

    batch_id: str
    entries: list[str]
    half_of: str | None = None  # the red batch this is a half of
    half: int = 0  # 1 or 2 for a half; 0 for a batch formed from the queue
    state: str = PLANNED
    runs: int = 0  # test runs of its current build (a retry is a second)
    rounds: int = 0  # built again because main moved under it
    base: str | None = None  # what it was built on
    tip: str | None = None
    tree: str | None = None  # the tip's tree: equal trees test alike
    on: str | None = None  # the batch it was built on (None: main)
    known_red: bool = False  # red without a run: its tree failed before
    retryable: bool = True  # a failure a retry may cure (not a timeout)
    left_out: bool = False  # a single failed once: what is behind is built without it
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
    ) -> None:
        self.parallel_runs = max(1, parallel_runs)
        self.flaky_retries = max(0, flaky_retries)
        self.new_id = new_id
        self.window = min(self.parallel_runs, max(1, window or self.parallel_runs))
        self.batches: list[Batch] = []
        self.red_trees: set[str] = set()

    # -- what to do next ------------------------------------------------------------------------

    def testing(self) -> list[Batch]:
        return [b for b in self.batches if b.state == TESTING]

    def next_to_build(self) -> Batch | None:
        """The first planned batch, if the window has room and the batch it is built on
        is built and not red (nothing is built on a red tip: it will change)."""
        if len(self.testing()) >= self.window:
            return None
        for batch in self.batches:
            if batch.state == PLANNED:
                ahead = self.ahead_of(batch)
                return batch if ahead is None or ahead.state in (TESTING, GREEN) else None
        return None

    def room_for_more(self) -> bool:
        """A new batch could be built at the end of the train now."""
        if len(self.testing()) >= self.window:
            return False
        return all(b.state in (TESTING, GREEN) or b.left_out for b in self.batches)

    def wanted(self) -> Batch | str | None:
        """What the window has room for now: a batch to build (or run again), ``FORM``
        (a new batch from the queue, built at the end), or nothing."""
        batch = self.next_to_build()
        if batch is not None:
            return batch
        return FORM if self.room_for_more() else None

    def ahead_of(self, batch: Batch) -> Batch | None:
        """The batch ``batch`` is built on: the nearest ahead of it that is not left out
        (``None``: main)."""
        n = self.batches.index(batch)
        return next((b for b in reversed(self.batches[:n]) if not b.left_out), None)

    def decide(self) -> tuple[str, Batch] | None:
        """What a result means now: the front lands, or its culprit fails; a red batch of
        several is split, and a red single runs again, wherever it is (if the batches
        ahead land as built, it stays red; if they do not, it is built again anyway)."""
        if not self.batches:
            return None
        front = self.batches[0]
        if front.state == GREEN:
            return LAND, front
        for batch in self.batches:
            if batch.state == RED and len(batch.entries) > 1:
                return SPLIT, batch
            if batch.state == RED and self._may_retry(batch):
                return RETRY, batch
        return (FAIL, front) if front.state == RED else None

    def _may_retry(self, batch: Batch) -> bool:
        return batch.retryable and len(batch.entries) == 1 and batch.runs <= self.flaky_retries

    # -- what happened --------------------------------------------------------------------------

    def add(self, batch: Batch) -> None:
        self.batches.append(batch)

    def built(self, batch: Batch, base: str, tip: str, tree: str | None) -> bool:
        """``batch`` is built (on the batch ahead's tip, or on main). True: test it; False:
        its tree failed before, so it is red already (several entries only)."""
        ahead = self.ahead_of(batch)
        batch.base, batch.tip, batch.tree = base, tip, tree
        batch.on = ahead.batch_id if ahead is not None else None
        batch.runs, batch.retryable, batch.left_out = 0, True, False
        if tree is None or tree not in self.red_trees:
            return True
        batch.state, batch.known_red = RED, True
        if len(batch.entries) == 1:
            # The red run of its tree was this entry alone on what is below it: it has
            # failed alone once; what is behind is built without it while it runs again.
            batch.runs = 1
            batch.left_out = self._may_retry(batch)
        return False

    def started(self, batch: Batch) -> None:
        batch.state = TESTING
        batch.runs += 1

    def finished(self, batch: Batch, passed: bool, *, retryable: bool = True) -> list[Batch]:
        """A test run of ``batch`` ended; returns the batches sent back (built on a red
        tip)."""
        batch.state = GREEN if passed else RED
        batch.retryable = retryable
        if passed:
            if batch.left_out:  # it passed on a retry: what is behind must hold it
                batch.left_out = False
                return self._invalidate_behind(batch)
            return []
        if batch.tree is not None:
            self.red_trees.add(batch.tree)
        if batch.left_out:
            return []  # what is behind was built without it already
        sent_back = self._invalidate_behind(batch)
        if self._may_retry(batch):
            # Most that fail alone fail again: build what is behind without it meanwhile.
            batch.left_out = True
        return sent_back

    def landed(self, batch: Batch) -> None:
        self.batches.remove(batch)
        if batch.runs == 1:  # clean: green at its first run
            self.window = min(self.parallel_runs, self.window + 1)

    def split(self, batch: Batch) -> tuple[list[Batch], list[Batch]]:
        """Replace the red ``batch`` by its halves; returns (halves, batches sent back)."""
        stop = self._invalidate_behind(batch)
        middle = (len(batch.entries) + 1) // 2
        halves = [
            Batch(self.new_id(), batch.entries[:middle], half_of=batch.batch_id, half=1),
            Batch(self.new_id(), batch.entries[middle:], half_of=batch.batch_id, half=2),
        ]
        n = self.batches.index(batch)
        self.batches[n : n + 1] = halves
        return halves, stop

    def retry(self, batch: Batch) -> None:
        """Run the single red ``batch`` again as it is built."""
        batch.state = PLANNED

    def fail(self, batch: Batch) -> list[Batch]:
        """The culprit fails: it leaves, and what was built on it goes back to be built
        (nothing, when it was left out of what is behind it)."""
        stop = [] if batch.left_out else self._invalidate_behind(batch)
        self.batches.remove(batch)
        self._failure()
        return stop

    def rebuild(self, batch: Batch, entries: list[str] | None = None) -> list[Batch]:
        """Build ``batch`` again (main moved under it, or ``entries`` are what is left of
        it); returns the batches sent back (everything built on it goes back too)."""
        stop = self._invalidate_behind(batch)
        if batch.state != PLANNED:
            stop.append(batch)
        if entries is not None:
            batch.entries = list(entries)
            batch.entry_ids = set(entries)
        batch.state, batch.tip, batch.tree, batch.runs = PLANNED, None, None, 0
        return stop

    def drop(self, batch: Batch) -> list[Batch]:
        """A batch left without entries (each failed while it was built) leaves the train."""
        stop = self._invalidate_behind(batch)
        self.batches.remove(batch)
        return stop

    def _invalidate_behind(self, batch: Batch) -> list[Batch]:
        """Everything behind ``batch`` is built on its tip: back to planned, to be built
        again; returns those sent back (the runs of those that were testing stop)."""
        sent_back = []
        for behind in self.batches[self.batches.index(batch) + 1 :]:
            if behind.state != PLANNED or behind.tip is not None:
                sent_back.append(behind)
                behind.state, behind.tip, behind.tree, behind.runs = PLANNED, None, None, 0
                behind.left_out = False
        return sent_back

    def _failure(self) -> None:
        self.window = max(1, self.window // 2)
