"""Cleaning up after a processor that died, at any step (kill -9 included), by the next
one, under the processor lock: its leftover processes and worktree go, an entry it left
in progress is finished (its merge had landed), queued again or failed, and the signals
its outcomes owed are sent.

An interrupted entry failed for no fault of its own, so it is run again, once: its
``interruptions`` are counted, and only a second one fails it (``on_interrupted: fail``
fails it at the first). An entry another processor (the harness's guardian) left in
progress is recovered the same way once it is provably dead (``holders``); one still
held is left alone, and processing waits for it."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from runeconsole.adapters import git_worktrees as gw
from runeconsole.adapters.processes import stop_processes_in
from runeconsole.core.errors import RuneError
from runeconsole.services.merge_queue.claims import QueueClaims
from runeconsole.services.merge_queue.delivery import Outbox
from runeconsole.services.merge_queue.holders import Holder, claimed_by_us, holders
from runeconsole.services.merge_queue.model import (
    BATCHES,
    COMPLETED,
    FAILED,
    IN_PROGRESS,
    INTERRUPTED,
    QueueState,
)
from runeconsole.services.merge_queue.outcomes import Recorder, Run
from runeconsole.services.merge_queue.slots import slot_worktrees

LANDED, REQUEUE, FAIL = "landed", "requeue", "fail"


class Recovery:
    def __init__(self, queue: QueueClaims, recorder: Recorder, outbox: Outbox) -> None:
        self.queue = queue
        self.root = queue.root
        self.settings = queue.settings
        self.recorder = recorder
        self.outbox = outbox
        self.remote = recorder.target.remote

    def recover(self, leftover: dict[str, Any]) -> list[str]:
        """What was cleaned up, a line each; ``leftover`` is the dead processor's pid file.
        Runs under the processor lock: an entry a runeconsole processor claimed is one
        whose processor is gone."""
        notes: list[str] = []
        for worktree in slot_worktrees(self.root):
            notes += self._clear_worktree(worktree, leftover)
        state = self.queue.read()
        left = [e for e in state.entries if e.status == IN_PROGRESS]
        if left and self.remote is not None:
            notes += self._ask_remote()
        for entry in self.queue.read().entries:
            if entry.status == IN_PROGRESS and claimed_by_us(entry):
                notes.append(self._recover_entry(entry.fields))
        for holder in self.dead_holders(self.queue.read()):
            notes.append(self._recover_entry(holder.entry.fields, holder.describe()))
        for entry in self.queue.read().entries:
            owed = entry.get("signals_pending")
            if entry.status in (COMPLETED, FAILED) and isinstance(owed, list) and owed:
                sent = self.outbox.deliver(entry.entry_id, owed, unless_sent=True)
                what = ", ".join(sent) if sent else "nothing (all had gone out)"
                notes.append(f"{entry.entry_id}: sent the signals its processor had not: {what}")
        if self.queue.read().data.get(BATCHES):
            self.queue.show_batches([], None, {})  # a dead processor's batches
        return notes

    def _ask_remote(self) -> list[str]:
        """The remote's main fetched, so an entry whose push went through before its
        processor died is found landed there; unreachable, what was fetched last is used."""
        assert self.remote is not None
        try:
            self.remote.fetch()
        except RuneError as exc:
            name = self.remote.name
            return [f"could not ask {name} what landed ({exc.message}); going by its last fetch"]
        return []

    def _clear_worktree(self, worktree: Path, leftover: dict[str, Any]) -> list[str]:
        """Stop what a dead processor left running in a slot's worktree, and remove it."""
        notes = []
        killed = stop_processes_in(worktree)
        if killed:
            who = leftover.get("pid", "a processor")
            notes.append(f"stopped {len(killed)} process(es) left running by {who}")
        if worktree.exists():
            with contextlib.suppress(RuneError):
                if gw.rebase_in_progress(worktree):
                    notes.append("discarded a rebase left in progress in the queue's worktree")
        gw.remove_worktree(self.root, worktree)
        notes.append(f"removed the leftover worktree {worktree}")
        return notes

    def dead_holders(self, state: QueueState) -> list[Holder]:
        """Entries other processors hold that are provably dead."""
        limit = self.queue.test_limit(state)
        return [h for h in holders(state, self.queue.clock.now()) if h.dead(limit)]

    def would_recover(self, state: QueueState) -> tuple[list[str], set[str]]:
        """What ``recover`` would say of the entries (leftover processes and worktree
        aside), and which entries it would queue again: for a dry run. Changes nothing."""
        notes: list[str] = []
        requeued: set[str] = set()
        ours = [e for e in state.entries if e.status == IN_PROGRESS and claimed_by_us(e)]
        if self.queue.processor_pid() is not None:
            ours = []  # a processor is at work on them
        foreign = [h.entry for h in self.dead_holders(state)]
        for entry in [*ours, *foreign]:
            verdict, attempts = self._verdict(entry.fields, foreign=entry in foreign)
            if verdict == REQUEUE:
                requeued.add(entry.entry_id)
            notes.append(_note(entry.entry_id, entry.step, verdict, attempts))
        return notes, requeued

    def _verdict(self, entry: dict[str, Any], *, foreign: bool) -> tuple[str, int]:
        """``LANDED`` (its tested commit is in main), ``REQUEUE`` (the one automatic
        re-run) or ``FAIL``; and its attempts so far (one more for another processor's
        entry: that processor did not count its own)."""
        tested, base = entry.get("tested_commit"), entry.get("base_commit")
        main = gw.resolve_commit(self.root, self.queue.main_ref)
        if (
            isinstance(tested, str)
            and isinstance(base, str)
            and main is not None
            and gw.resolve_commit(self.root, tested)
            and gw.is_ancestor(self.root, tested, main)
        ):
            return LANDED, 0
        attempts = _count(entry.get("attempts")) + (1 if foreign else 0)
        again = (
            self.settings.on_interrupted == "retry"
            and _count(entry.get("interruptions")) == 0
            and attempts < self.settings.max_attempts
        )
        return (REQUEUE if again else FAIL), max(attempts, 1)

    def _recover_entry(self, entry: dict[str, Any], holder: str | None = None) -> str:
        run = Run(dict(entry), notes=["interrupted; recovered"])
        if holder is not None:
            run.notes.append(f"recovered from another processor: {holder}")
        entry_id = run.entry_id
        verdict, attempts = self._verdict(entry, foreign=holder is not None)
        step = entry.get("current_step") or "?"
        if verdict == LANDED:
            tested = str(entry["tested_commit"])
            original = entry.get("original_commit") or tested
            tip = entry.get("batch_tip")
            # Of a batch that landed, only its tip's entry brings the checkout of main along.
            sync = not isinstance(tip, str) or tip == tested
            base = str(entry["base_commit"])
            self.recorder.finish(run, tested, base, str(original), sync_checkout=sync)
            return _note(entry_id, step, verdict, attempts)
        count = _count(entry.get("interruptions")) + 1
        if verdict == REQUEUE:
            held = {"recovered_from": holder} if holder is not None else {}
            self.queue.requeue(
                entry_id, INTERRUPTED, interruptions=count, attempts=attempts, **held
            )
            return _note(entry_id, step, verdict, attempts)
        stopped = f"processing stopped during {step} (the processor died)"
        if count > 1:
            stopped += f"; interrupted {count} times, so it is not run again on its own"
        self.queue.update_entry(entry_id, {"interruptions": count, "attempts": attempts})
        run.entry.update(interruptions=count, attempts=attempts)
        self.recorder.fail(run, INTERRUPTED, stopped)
        return _note(entry_id, step, verdict, attempts)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _note(entry_id: str, step: str, verdict: str, attempts: int) -> str:
    if verdict == LANDED:
        return f"{entry_id}: had merged before the interruption; finished it"
    if verdict == REQUEUE:
        return f"{entry_id}: interrupted during {step}; queued again (attempt {attempts + 1})"
    return f"{entry_id}: interrupted during {step}; marked failed"
