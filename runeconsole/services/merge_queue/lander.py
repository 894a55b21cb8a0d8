"""Landing a green batch: ``main`` moves from the batch's base to its tip with one
compare-and-swap, the checkout of ``main`` follows, and every entry is finished with its
own commit (``MERGE_COMPLETE``, its branch settled, its agent's hook). Before the ref
moves each entry records the commit it lands as (``tested_commit``) and the batch's tip,
so a processor killed at any moment leaves enough for recovery to tell a landed batch
from one that did not land. A checkout of ``main`` whose local files the batch would
overwrite fails only the entries that touch them (``main_dirty``); the rest are built
again without them.

With a ``remote`` the batch lands by a push of its tip as a fast-forward: refused
because someone pushed meanwhile, it is ``MOVED`` (built again on what they pushed),
unless the remote already holds the tip (a push that went through before an answer was
lost); refused by the remote itself (a hook, a protected branch), its entries fail."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from runeconsole.adapters import git_remote as gr
from runeconsole.adapters import git_worktrees as gw
from runeconsole.core.crash_points import pause_point
from runeconsole.services.merge_queue.model import GIT_ERROR, MAIN_DIRTY, EntryChanges, Outcome
from runeconsole.services.merge_queue.outcomes import Recorder
from runeconsole.services.merge_queue.queue_file import QueueFile
from runeconsole.services.merge_queue.target import Target
from runeconsole.services.merge_queue.work import Work, Write

LANDED, REFUSED, MOVED = "landed", "refused", "moved"
T = TypeVar("T")
# Runs a call that talks to the remote, waiting (with back-off) while it is unreachable.
Reach = Callable[[Callable[[], T]], T]


@dataclass
class Landed:
    """How a landing went: ``LANDED``; ``REFUSED`` (``outcomes``: the entries failed,
    ``keep``: those to build again); ``MOVED`` (main moved under the batch)."""

    kind: str
    outcomes: list[Outcome] = field(default_factory=list)
    keep: list[str] = field(default_factory=list)


class Lander:
    def __init__(self, queue: QueueFile, recorder: Recorder, target: Target) -> None:
        self.queue = queue
        self.recorder = recorder
        self.target = target
        self.root = queue.root

    def land(self, work: Work, write: Write, reach: Reach[object]) -> Landed:
        batch = work.batch
        base, tip = str(batch.base), str(batch.tip)
        # Written before the ref moves: recovery can tell a landed batch from a lost one.
        landing: dict[str, EntryChanges] = {
            entry_id: {"tested_commit": commit, "base_commit": base, "batch_tip": tip}
            for entry_id, commit in work.commits.items()
        }
        if self.target.remote is not None:
            return self._push(work, write, landing, reach)
        done = work.begin(write, self.queue.now(), "merge", extra=landing)
        self.queue.flush()
        pause_point("merge-queue-batch-tested")
        holder = gw.checked_out_at(self.root, self.target.main_name)
        refusal = self.target.checkout_refuses(holder, base, tip)
        if refusal is not None and self.target.main_is(base):
            done("refused")
            return self._refused(work, holder, refusal)
        notes: list[str] = []
        if refusal is None and gw.compare_and_swap(self.root, self.queue.main_ref, tip, base):
            refusal = self.target.follow_in_checkout(holder, base, tip, notes)
            if refusal is None:
                done("ok")
                return Landed(LANDED, self._finish(work, notes))
            done("refused")
            return self._refused(work, holder, refusal)
        done("main moved")
        return Landed(MOVED)

    def _push(
        self, work: Work, write: Write, landing: dict[str, EntryChanges], reach: Reach[object]
    ) -> Landed:
        """The tip pushed to the remote's main; the local main follows."""
        remote = self.target.remote
        assert remote is not None
        tip, target = str(work.batch.tip), self.target.main_name
        done = work.begin(write, self.queue.now(), "push", extra=landing)
        self.queue.flush()
        pause_point("merge-queue-batch-tested")
        pushed = reach(lambda: remote.push(tip))
        assert isinstance(pushed, gr.PushResult)
        if pushed.kind != gr.PUSHED:
            # Refused: did someone push meanwhile (``[rejected]``, or a ref update lost
            # inside the remote: ``[remote rejected] (failed to update ref)``), or had
            # this very push landed before its answer was lost?
            reach(remote.fetch)
            now = gw.resolve_commit(self.root, self.queue.main_ref)
            if now is None or not gw.is_ancestor(self.root, tip, now):
                if now != work.batch.base or pushed.kind == gr.REJECTED:
                    remote.count_race()
                    done(f"{target} moved")
                    return Landed(MOVED)
                done("refused")
                why = f"{target} refused the push: {pushed.detail}"
                failed = [self.recorder.fail(run, GIT_ERROR, why) for run in work.members]
                return Landed(REFUSED, failed)
        pause_point("merge-queue-batch-pushed")
        remote.record_push(tip)
        notes = remote.follow(tip)
        done("ok")
        return Landed(LANDED, self._finish(work, notes))

    def _finish(self, work: Work, notes: list[str]) -> list[Outcome]:
        """Every entry of the landed batch finished with its own commit."""
        pause_point("merge-queue-batch-landed")
        batch = work.batch
        flaky = batch.flaky
        landed = []
        for run in work.members:
            run.notes.extend(notes)
            if len(batch.entries) > 1:
                run.notes.append(f"landed in batch {batch.describe()}")
            if flaky:
                run.notes.append("failed alone, then passed on a retry: marked flaky")
                run.entry["flaky"] = True
            commit = work.commits[run.entry_id]
            landed.append((run, commit, str(run.entry.get("original_commit") or commit)))
        if flaky:
            self.queue.update_entries({run.entry_id: {"flaky": True} for run, _, _ in landed})
        return self.recorder.finish_all(landed, str(batch.base))

    def _refused(self, work: Work, holder: Path | None, refusal: str) -> Landed:
        """The checkout of main refused the batch: fail the entries whose files it holds
        (all of them, if that cannot be told), keep the others to build again."""
        runs = work.members
        blocked: dict[str, list[str]] = {}
        if len(runs) > 1 and holder is not None:
            parents, before = {}, str(work.batch.base)
            for run in runs:
                parents[run.entry_id], before = before, work.commits[run.entry_id]
            blocked = self.target.blocked(holder, parents, work.commits)
        if not blocked or holder is None:
            return Landed(REFUSED, [self.recorder.fail(run, MAIN_DIRTY, refusal) for run in runs])
        outcomes = []
        for run in runs:
            if run.entry_id in blocked:
                why = self.target.overwrite_refusal(holder, ", ".join(blocked[run.entry_id]))
                outcomes.append(self.recorder.fail(run, MAIN_DIRTY, why))
        keep = [run.entry_id for run in runs if run.entry_id not in blocked]
        return Landed(REFUSED, outcomes, keep)
