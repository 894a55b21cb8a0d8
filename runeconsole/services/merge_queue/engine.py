"""Processing as a train of batches: form a batch from the head of the queue, build it on
``main`` (or on the tip of the batch ahead: a speculative run), test it in a slot while
the next is built, and act on the front batch's result as ``train`` decides: land it,
split it, run it again, fail its culprit. Everything is written to the queue's file as
it happens (each entry's step, the batches at work, the window), so the console and
``status`` show it, and a processor killed at any point leaves what recovery needs.

With ``batch_max: 1`` and ``parallel_runs: 1`` this is the sequential queue: one entry,
rebased, tested and landed before the next is taken. With a ``remote``, a batch built on
``main`` is built on the remote's, fetched first; a remote that cannot be reached is
waited for (each try in the entries' step and the log), and past the wait the run stops
with every entry it held back in the queue, never failed for the network.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from datetime import timedelta
from typing import Any, TypeVar

from runeconsole.adapters import git_remote as gr
from runeconsole.adapters import git_worktrees as gw
from runeconsole.core.crash_points import pause_point
from runeconsole.core.errors import RuneError
from runeconsole.core.timeutil import iso_z
from runeconsole.services.merge_queue.builder import Builder
from runeconsole.services.merge_queue.claims import QueueClaims
from runeconsole.services.merge_queue.cpu_share import SlotCount
from runeconsole.services.merge_queue.evidence import Evidence
from runeconsole.services.merge_queue.lander import LANDED, MOVED, Lander
from runeconsole.services.merge_queue.model import (
    BASE_MOVED,
    BATCH_SEQ,
    BATCHES,
    GIT_ERROR,
    TESTS_FAILED,
    TIMEOUT,
    WINDOW,
    EntryChanges,
    ProcessReport,
    ProgressCallback,
    QueueEntry,
    is_remote_only,
    remote_branch_of,
)
from runeconsole.services.merge_queue.outcomes import Recorder, Run
from runeconsole.services.merge_queue.slots import Finished, Slots
from runeconsole.services.merge_queue.stats import figures
from runeconsole.services.merge_queue.taking import AGAIN, Taker
from runeconsole.services.merge_queue.target import Target
from runeconsole.services.merge_queue.train import (
    FAIL,
    FORM,
    LAND,
    RED,
    RETRY,
    SPLIT,
    Batch,
    Train,
)
from runeconsole.services.merge_queue.work import Work

POLL = 1.0  # seconds between looks at the queue while runs go on (new entries, company)
T = TypeVar("T")


class Engine:
    def __init__(
        self,
        queue: QueueClaims,
        recorder: Recorder,
        target: Target,
        identity: Callable[[], list[str]],
        *,
        not_ready: Callable[[QueueEntry], str | None],
        pick_up: Callable[[], list[str]],
        run_all: bool,
        progress: ProgressCallback | None,
        report: ProcessReport,
    ) -> None:
        settings = self.settings = queue.settings
        self.queue, self.recorder = queue, recorder
        self.progress, self.report = progress, report
        state = queue.read()
        self.slot_count = SlotCount(settings, state.data)
        self.slots = Slots(queue.root, self.slot_count.count, settings.git_timeout)
        self.builder = Builder(recorder, target, self.slots, identity, settings.git_timeout)
        self.lander = Lander(queue, recorder, target)
        self.remote = target.remote
        self.seq = queue.batch_seq()
        window = state.data.get(WINDOW)
        known = figures(state.entries, queue.clock.now())  # how often entries fail lately
        self.train = Train(
            parallel_runs=self.slot_count.count,
            flaky_retries=settings.flaky_retries,
            new_id=self.new_id,
            window=window if isinstance(window, int) and not isinstance(window, bool) else None,
            evidence=Evidence(failed=known["failed"], done=known["landed"] + known["failed"]),
        )
        self.taker = Taker(
            queue,
            run_all=run_all,
            not_ready=not_ready,
            pick_up=pick_up,
            report=report,
            new_id=self.new_id,
        )
        self.runs: dict[str, Run] = {}
        self.works: dict[str, Work] = {}  # by batch id
        self.moves = 0  # changes published so far

    def run(self) -> None:
        try:
            while True:
                moves = self.moves
                self.act_on_results()
                self.fill()
                if not self.train.batches and self.taker.company is None:
                    break
                if self.moves != moves:
                    continue  # something changed: look again before waiting
                self.queue.flush()
                finished = self.slots.wait(POLL)
                if finished is not None:
                    self.absorb(finished)
        finally:
            self.slots.close()
            if self.moves:
                self.queue.show_batches([], self.train.window, {})

    # -- the queue's file ------------------------------------------------------------------------

    def new_id(self) -> str:
        """The next batch's name (written with the next ``publish``)."""
        self.seq += 1
        return f"b{self.seq}"

    def publish(self, changes: dict[str, EntryChanges] | None = None) -> None:
        """The batches at work and the window, with entries' ``changes`` (their steps),
        written with the next write (at the latest before waiting for a run)."""
        self.moves += 1
        shown = [self.works[b.batch_id].snapshot() for b in self.train.batches]
        for batch in shown:
            batch["target"] = self.settings.target  # what a batch on main is built on
        fields = {BATCHES: shown, WINDOW: self.train.window, BATCH_SEQ: self.seq}
        self.queue.write_later(fields, changes)

    # -- forming and starting batches ----------------------------------------------------------

    def fill(self) -> None:
        """Build and start what the slots have room for, forming new batches to do so; a
        second half waiting for its first's result rather than an idle slot. Stops at a
        batch found red without a run (what it means is decided first)."""
        while True:
            wanted = self.train.wanted()
            if wanted == FORM and self.form():
                continue
            if not isinstance(wanted, Batch):
                wanted = self.train.next_to_build(idle=True)
            if wanted is None or not self.start(wanted) or wanted.state == RED:
                return

    def form(self) -> bool:
        """Claim the next batch from the head of the queue; False if none is to be formed."""
        size = self.train.batch_size(self.settings.batch_max)
        taken = self.taker.take(busy=bool(self.train.batches), size=size)
        if taken is None or isinstance(taken, str):
            return taken == AGAIN
        batch_id, claimed, command = taken
        for entry in claimed:
            self.runs[entry["entry_id"]] = Run(entry, progress=self.progress)
        batch = Batch(batch_id, [entry["entry_id"] for entry in claimed])
        self.train.add(batch)
        self.works[batch_id] = Work(batch, self.runs, command, self.progress)
        self.publish()
        pause_point("merge-queue-batch-claimed")
        return True

    def start(self, batch: Batch) -> bool:
        """Build ``batch`` in a free slot and start its test run (or, built already and due
        a retry, run it again). False: no slot is free yet."""
        work = self.works[batch.batch_id]
        if not batch.retry_due and self.train.red_unbuilt(batch):
            work.report("test", f"{batch.describe()} holds what a red run failed for: splitting it")
            self.publish()
            return True
        slot = self.slots.take()
        if slot is None:
            return False
        work.slot = slot
        try:
            if batch.retry_due:
                work.report("retry", "failed alone: running its tests again (flaky_retries)")
                pause_point("merge-queue-flaky-retry")
                self.slots.check_out(slot, str(batch.tip))
                self.test(work)
                return True
            tested = self.build(work)
        except gr.RemoteUnreachable as exc:
            self.slots.give_back(slot)
            work.slot = None
            self.remote_gone(exc)
            return True
        except RuneError as exc:
            self.slots.give_back(slot)
            work.slot = None
            self.give_up(work, exc.message)
            return True
        if not tested:
            self.slots.give_back(slot)
            work.slot = None
            self.publish()
            return True
        pause_point("merge-queue-batch-built")
        self.test(work)
        if batch.on is not None:
            pause_point("merge-queue-speculative-started")
        return True

    def build(self, work: Work) -> bool:
        """Verify and rebase the batch; True: it is to be tested."""
        batch = work.batch
        write, now = self.publish, self.queue.now
        on = self.train.base_for(batch)
        fetched = self._fetch(work, on_main=on is None)
        verified = self.builder.verify(work, write, now(), fetched)
        self._leave(batch, [o.entry_id for o in self._count(verified)])
        main = gw.resolve_commit(self.queue.root, self.queue.main_ref)
        if main is None:
            raise RuneError(f"branch {self.settings.target!r} disappeared")
        base = on.tip if on is not None and on.tip else main
        built = self.builder.build(work, base, main, write, now())
        self._leave(batch, [o.entry_id for o in self._count(built.outcomes)])
        if built.waiting:
            self.queue.release(built.waiting, "conflicts with an entry ahead still in flight")
            self.taker.waiting.update(built.waiting)
            self._leave(batch, built.waiting)
        if built.tip is None or not batch.entries:
            self._stop(self.train.drop(batch))
            del self.works[batch.batch_id]
            return False
        work.commits = {e: c for e, c in work.commits.items() if e in batch.entry_ids}
        if self.train.built(batch, on, base, built.tip, self.builder.tree(built.tip)):
            return True
        work.report("test", f"{batch.describe()}: holds what failed before; red without a run")
        return False

    # -- the remote -------------------------------------------------------------------------------

    def _fetch(self, work: Work, *, on_main: bool) -> dict[str, str | None]:
        """With a remote: its main fetched (for a batch built on main), and each teammate's
        branch the batch holds not yet looked up; their commits (``None``: gone)."""
        remote = self.remote
        if remote is None:
            return {}
        if on_main:
            self.reach(work, remote.fetch)
        fetched: dict[str, str | None] = {}
        for run in work.members:
            branch = remote_branch_of(run.entry)
            if (
                branch is not None
                and is_remote_only(run.entry)
                and "original_commit" not in run.entry
            ):
                fetched[run.entry_id] = self.reach(
                    work, functools.partial(remote.fetch_branch, branch)
                )
        return fetched

    def reach(self, work: Work, action: Callable[[], T]) -> T:
        """``action`` (it talks to the remote) until the remote answers; each wait is the
        batch's entries' step (``remote_wait`` says why) and a line of the log."""
        assert self.remote is not None
        waited = False
        name = self.remote.name
        wait_since: dict[str, str] = {}

        def on_wait(exc: gr.RemoteUnreachable, pause: float, tries: int) -> None:
            nonlocal waited
            waited = True
            now = self.queue.clock.now()
            wait = {
                "reason": exc.reason,
                "tries": tries,
                "next_try_in_seconds": round(pause, 1),
                "next_try_at": iso_z(now + timedelta(seconds=pause)),
                "since": wait_since.setdefault("at", iso_z(now)),
            }
            work.step = step = f"waiting for {name}"
            self.publish(
                {e: {"current_step": step, "remote_wait": wait} for e in work.batch.entries}
            )
            work.report("wait", f"{exc.message}; trying again in {pause:.0f}s (try {tries})")

        result = self.remote.waiting(action, on_wait)
        if waited:
            work.report("wait", f"{name} answers again")
            self.queue.write_later({}, {e: {"remote_wait": None} for e in work.batch.entries})
        return result

    def remote_gone(self, exc: gr.RemoteUnreachable) -> None:
        """The remote stayed away past ``remote_wait_seconds``: every batch's entries go
        back to wait in the queue, not failed, and the run stops taking."""
        entries = [e for b in self.train.batches for e in b.entries]
        for batch in list(self.train.batches):
            self._stop([batch])
            self.train.drop(batch)
            self.works.pop(batch.batch_id, None)
        waited = f"{self.settings.remote_wait_seconds:g}s"
        why = f"{exc.message}; waited {waited}: back in the queue until it answers"
        if entries:
            self.queue.release(entries, why)
            self.queue.update_entries(
                {
                    e: {"remote_wait": {"reason": exc.reason, "gave_up_at": self.queue.now()}}
                    for e in entries
                }
            )
        self.taker.stopped = True
        self.report.stopped = why
        self.publish()

    def test(self, work: Work) -> None:
        batch = work.batch
        state = self.queue.read()
        limit = self.queue.test_limit(state, work.command)
        env = {
            **os.environ,
            "RUNECONSOLE_MERGE_ENTRY": batch.entries[-1],
            "RUNECONSOLE_MERGE_ENTRIES": " ".join(batch.entries),
            "RUNECONSOLE_MERGE_BATCH": batch.batch_id,
            "RUNECONSOLE_MERGE_COMMIT": str(batch.tip),
        }
        self.train.started(batch)
        work.end_test = work.begin(self.publish, self.queue.now(), "test")
        # Written before the tests start, not with the next write: a processor killed while
        # they run is then said to have died during the tests, not during the step before.
        self.queue.flush()
        assert work.slot is not None
        work.token = self.slots.start(
            work.slot,
            work.command,
            env=env,
            timeout=limit,
            on_line=lambda line: work.report("test", line, output=True),
        )

    # -- results ---------------------------------------------------------------------------------

    def absorb(self, finished: Finished) -> None:
        """A test run ended: record it; a stopped run (its batch was sent back) is ignored."""
        self.slots.give_back(finished.slot)
        work = next((w for w in self.works.values() if w.token == finished.token), None)
        self._measured(work.command if work else self.settings.test_command, finished)
        if work is None or finished.result.cancelled:
            return
        result = work.result = finished.result
        work.token, work.slot = None, None
        passed = not result.timed_out and result.returncode == 0
        batch = work.batch
        if passed:  # passed on a retry, after failing alone: flaky
            flaky = batch.runs > 1 and not batch.known_red
            self.queue.remember_run(work.command, result.seconds, flaky=flaky)
        sent_back = self.train.finished(batch, passed, retryable=not result.timed_out)
        word = (
            "timeout" if result.timed_out else "passed" if passed else f"exit {result.returncode}"
        )
        if work.end_test is not None:  # with the batch's new state, in one write
            work.end_test(word, {"output_tail": result.tail})
        self._stop(sent_back)

    def _measured(self, command: list[str] | None, finished: Finished) -> None:
        """A run ended (stopped ones too: they used the machine): its CPU share is
        measured, and with ``parallel_runs: auto`` the slots follow it."""
        if command is None:
            return
        count = self.slot_count.ended(command, finished.result.seconds)
        self.queue.write_later(self.slot_count.meter.pending())
        if count is not None:
            self.slots.count = count
            self.train.resize(count)

    def act_on_results(self) -> None:
        """Act on the front batch's result until the front has none."""
        while (decision := self.train.decide()) is not None:
            action, front = decision
            work = self.works[front.batch_id]
            if action == LAND:
                self.land(work)
            elif action == SPLIT:
                self.split(work)
            elif action == RETRY:
                self.train.retry(front)
                self.publish({e: {"current_step": "retry"} for e in front.entries})
            elif action == FAIL:
                self.fail_culprit(work)

    def land(self, work: Work) -> None:
        batch = work.batch
        try:
            landed = self.lander.land(work, self.publish, lambda call: self.reach(work, call))
        except gr.RemoteUnreachable as exc:
            self.remote_gone(exc)
            return
        except RuneError as exc:
            self.give_up(work, exc.message)
            return
        self._count(landed.outcomes)
        if landed.kind == LANDED:
            self._stop(self.train.landed(batch))
            self._mark_flaked(work.command)
            self._done(batch)
            return
        if landed.kind == MOVED:
            batch.rounds += 1
            target, most = self.settings.target, self.settings.max_rebase_rounds
            moved = f"{target} moved during the run (was {str(batch.base)[:12]})"
            for run in work.members:
                run.notes.append(f"{moved}; rebasing again")
            if batch.rounds < most:
                work.report(
                    "rebase", f"{moved}: rebasing again, round {batch.rounds + 1} of {most}"
                )
            if batch.rounds >= most:
                why = f"{target} kept moving: gave up after {most} rebases"
                self._count([self.recorder.fail(run, BASE_MOVED, why) for run in work.members])
                self._stop(self.train.drop(batch))
                self._stop(self.train.moved())
                self._done(batch)
                return
            self._stop(self.train.moved())  # it, and every green batch beside it on main
        elif landed.keep:
            self._stop(self.train.rebuild(batch, landed.keep))
        else:
            self._stop(self.train.drop(batch))
            self._done(batch)
            return
        work.commits = {}
        self.publish()

    def split(self, work: Work) -> None:
        red = work.batch
        halves, stop = self.train.split(red)
        self._stop(stop)
        for half in halves:
            self.works[half.batch_id] = Work(half, self.runs, work.command, self.progress)
        del self.works[red.batch_id]
        first, second = halves
        work.report(
            "bisect",
            f"{red.describe()} failed: testing its halves {first.describe()} and "
            f"{second.describe()}",
        )
        self.publish({e: {"current_step": "bisect"} for e in red.entries})
        pause_point("merge-queue-bisect-split")

    def fail_culprit(self, work: Work) -> None:
        """A single entry failed alone (and on every retry): it fails, with its output."""
        batch, result = work.batch, work.result
        (run,) = work.members
        if batch.half_of:
            run.notes.append(f"found by bisecting: it fails alone ({batch.describe()})")
        if result is not None and result.timed_out:
            limit = f"{self.queue.test_limit(self.queue.read(), work.command):g}s"
            outcome = self.recorder.fail(
                run, TIMEOUT, f"tests still running after {limit}; stopped"
            )
        else:
            code = result.returncode if result is not None else "?"
            if batch.runs > 1:
                run.notes.append(f"failed on each of its {batch.runs} runs")
            outcome = self.recorder.fail(run, TESTS_FAILED, f"tests failed (exit {code})")
        self._count([outcome])
        self._stop(self.train.fail(batch))
        self._done(batch)

    def give_up(self, work: Work, message: str) -> None:
        """Git itself failed for this batch: its entries fail (``git_error``)."""
        self._count([self.recorder.fail(run, GIT_ERROR, message) for run in work.members])
        self._stop(self.train.drop(work.batch))
        self._done(work.batch)

    # -- bookkeeping -----------------------------------------------------------------------------

    def _count(self, outcomes: list[Any]) -> list[Any]:
        self.report.outcomes.extend(outcomes)
        return outcomes

    def _leave(self, batch: Batch, entry_ids: list[str]) -> None:
        """Entries that have an outcome, or went back to wait, leave the batch."""
        if entry_ids:
            gone = set(entry_ids)
            batch.entries = [e for e in batch.entries if e not in gone]
            batch.entry_ids = set(batch.entries)
            self.train.left(entry_ids)

    def _mark_flaked(self, command: list[str]) -> None:
        """Red runs whose entries have all landed flaked: their entries are marked."""
        while self.train.evidence.flaked:
            entries = self.train.evidence.flaked.pop(0)
            notes = {e: self.runs[e].notes if e in self.runs else [] for e in entries}
            self.queue.mark_flaky(notes, command)

    def _done(self, batch: Batch) -> None:
        """A batch left the train (landed or failed): entries sent back may try again."""
        self.works.pop(batch.batch_id, None)
        self.taker.waiting.clear()
        self.publish()

    def _stop(self, batches: list[Batch]) -> None:
        """Batches sent back to be built again on a new base: their runs stop."""
        if not batches:
            return
        for batch in batches:
            work = self.works.get(batch.batch_id)
            if work is None:
                continue
            if work.token is not None:
                self.slots.stop(work.token)
                if work.end_test is not None:
                    work.end_test("stopped", summary="stopped: what it was built on changed")
            work.token, work.slot, work.step, work.commits = None, None, "waiting", {}
            work.report("waiting", "sent back: to be built again on the new base")
        self.publish({e: {"current_step": "waiting"} for b in batches for e in b.entries})
        pause_point("merge-queue-batch-sent-back")
