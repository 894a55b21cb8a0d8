"""Cleaning up after a processor that died, at any step (kill -9 included), by the next
one, under the processor lock: its leftover processes and worktree go, an entry it left
in progress is finished (its merge had landed), queued again or failed, and the signals
its outcomes owed are sent."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from runeconsole.adapters import git_worktrees as gw
from runeconsole.adapters.processes import stop_processes_in
from runeconsole.core.errors import RuneError
from runeconsole.services.merge_queue.delivery import Outbox
from runeconsole.services.merge_queue.model import COMPLETED, FAILED, IN_PROGRESS, INTERRUPTED
from runeconsole.services.merge_queue.outcomes import Recorder, Run
from runeconsole.services.merge_queue.queue_file import QueueFile


class Recovery:
    def __init__(self, queue: QueueFile, recorder: Recorder, outbox: Outbox) -> None:
        self.queue = queue
        self.root = queue.root
        self.settings = queue.settings
        self.recorder = recorder
        self.outbox = outbox

    def recover(self, leftover: dict[str, Any], worktree: Path) -> list[str]:
        """What was cleaned up, a line each; ``leftover`` is the dead processor's pid file,
        ``worktree`` the queue's own."""
        notes: list[str] = []
        killed = stop_processes_in(worktree)
        if killed:
            who = leftover.get("pid", "a processor")
            notes.append(f"stopped {len(killed)} process(es) left running by {who}")
        registered = any(wt.path == worktree for wt in gw.worktrees(self.root))
        if worktree.exists() or registered:
            if worktree.exists():
                with contextlib.suppress(RuneError):
                    if gw.rebase_in_progress(worktree):
                        notes.append("discarded a rebase left in progress in the queue's worktree")
            gw.remove_worktree(self.root, worktree)
            notes.append(f"removed the leftover worktree {worktree}")
        for entry in self.queue.read().entries:
            if entry.status == IN_PROGRESS and entry.get("processor_pid"):
                notes.append(self._recover_entry(entry.fields))
        for entry in self.queue.read().entries:
            owed = entry.get("signals_pending")
            if entry.status in (COMPLETED, FAILED) and isinstance(owed, list) and owed:
                sent = self.outbox.deliver(entry.entry_id, owed, unless_sent=True)
                what = ", ".join(sent) if sent else "nothing (all had gone out)"
                notes.append(f"{entry.entry_id}: sent the signals its processor had not: {what}")
        return notes

    def _recover_entry(self, entry: dict[str, Any]) -> str:
        run = Run(dict(entry), notes=["interrupted; recovered"])
        entry_id = run.entry_id
        tested, base = entry.get("tested_commit"), entry.get("base_commit")
        main = gw.resolve_commit(self.root, self.queue.main_ref)
        landed = isinstance(tested, str) and isinstance(base, str) and main is not None
        if (
            landed
            and gw.resolve_commit(self.root, tested)
            and gw.is_ancestor(self.root, tested, main)
        ):
            original = entry.get("original_commit") or tested
            self.recorder.finish(run, tested, base, str(original))
            return f"{entry_id}: had merged before the interruption; finished it"
        attempts = entry.get("attempts") if isinstance(entry.get("attempts"), int) else 1
        if self.settings.on_interrupted == "retry" and attempts < self.settings.max_attempts:
            self.queue.requeue(entry_id, INTERRUPTED)
            return f"{entry_id}: interrupted; queued again (attempt {attempts + 1})"
        step = entry.get("current_step") or "?"
        stopped = f"processing stopped during {step} (the processor died)"
        self.recorder.fail(run, INTERRUPTED, stopped)
        return f"{entry_id}: interrupted during {step}; marked failed"
