"""How an attempt ends: recorded in the entry (with the signals it owes), the signals
sent, and the outcome reported. After a merge, the tidying (the checkout of main, the
merged branch, the agent's hook) never turns the merge into a failure: a step that
fails becomes a note."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from runeconsole.core.crash_points import pause_point
from runeconsole.core.errors import RuneError
from runeconsole.services.hook_files import MERGE_QUEUE
from runeconsole.services.hook_files import HookFiles as Hooks
from runeconsole.services.merge_queue.delivery import Outbox
from runeconsole.services.merge_queue.model import (
    COMPLETED,
    CONFLICT,
    FAILED,
    EntryChanges,
    Outcome,
    Progress,
    ProgressCallback,
    id_or_none,
)
from runeconsole.services.merge_queue.queue_file import QueueFile
from runeconsole.services.merge_queue.target import Target


@dataclass
class Run:
    """What one processing attempt knows, for recording and reporting."""

    entry: dict[str, Any]
    started: float = field(default_factory=time.monotonic)
    steps: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    progress: ProgressCallback | None = None

    @property
    def entry_id(self) -> str:
        return str(self.entry["entry_id"])

    def report(self, step: str, message: str, output: bool = False) -> None:
        if self.progress is not None:
            elapsed = time.monotonic() - self.started
            self.progress(Progress(self.entry_id, step, message, elapsed, output))


class Recorder:
    def __init__(self, queue: QueueFile, outbox: Outbox, target: Target, hooks: Hooks) -> None:
        self.queue = queue
        self.outbox = outbox
        self.target = target
        self.hooks = hooks

    def fail(self, run: Run, reason: str, error: str, files: list[str] | None = None) -> Outcome:
        files = files or []
        payload = self.outbox.payload(run.entry, reason=reason, error=error, conflict_files=files)
        kinds = ["MERGE_CONFLICT", "MERGE_FAILED"] if reason == CONFLICT else ["MERGE_FAILED"]
        outgoing = [self.outbox.outgoing(run.entry, kind, payload) for kind in kinds]
        entry = self.queue.update_entry(
            run.entry_id,
            {
                "status": FAILED,
                "reason": reason,
                "error": error,
                "conflict_files": files,
                "completed_at": self.queue.now(),
                "current_step": None,
                "notes": run.notes,
                "signals_pending": outgoing,
                "remote_wait": None,
            },
        )
        self.outbox.deliver(run.entry_id, outgoing)
        run.report(
            "failed", f"failed: {reason}: {error}" + (f" ({', '.join(files)})" if files else "")
        )
        return Outcome(
            run.entry_id,
            str(entry.get("branch")),
            FAILED,
            reason,
            error,
            files,
            output_tail=list(entry.get("output_tail") or []),
            notes=run.notes,
        )

    def finish(
        self, run: Run, tested: str, base: str, original: str, *, sync_checkout: bool = True
    ) -> Outcome:
        """After ``main`` points at ``tested``: tidy refs and checkouts, tell everyone.

        ``sync_checkout``: the checkout of main still has to follow (after a crash).
        """
        return self.finish_all([(run, tested, original)], base, sync_checkout=sync_checkout)[0]

    def finish_all(
        self,
        landed: list[tuple[Run, str, str]],
        base: str,
        *,
        sync_checkout: bool = False,
    ) -> list[Outcome]:
        """Entries that landed together (``(run, its commit, its branch's commit)``, in
        landing order): each tidied, then every outcome recorded in one write with the
        signals it owes, then those sent."""
        branches = self._settle_branches(landed)
        for run, tested, original in landed:
            notes = [*branches.get(str(run.entry.get("branch")), [])]
            notes += self._settle_remote(run, original)
            self._tidy(run, tested, base, notes, sync_checkout)
            pause_point("merge-queue-batch-tidying")
        owed: dict[str, list[dict[str, Any]]] = {}
        changes: dict[str, EntryChanges] = {}
        for run, tested, _ in landed:
            complete = self.outbox.payload(run.entry, merged_commit=tested)
            owed[run.entry_id] = [self.outbox.outgoing(run.entry, "MERGE_COMPLETE", complete)]
            changes[run.entry_id] = {
                "status": COMPLETED,
                "completed_at": self.queue.now(),
                "merged_commit": tested,
                "tested_commit": tested,
                "current_step": None,
                "notes": run.notes,
                "signals_pending": owed[run.entry_id],
                "remote_wait": None,
            }
        self.queue.update_entries(changes)
        self.outbox.deliver_all(owed)
        outcomes = []
        for run, tested, _ in landed:
            branch = run.entry.get("branch")
            run.report("merged", f"merged {branch} as {tested[:12]}")
            outcomes.append(
                Outcome(run.entry_id, str(branch), COMPLETED, merged_commit=tested, notes=run.notes)
            )
        return outcomes

    def _settle_branches(self, landed: list[tuple[Run, str, str]]) -> dict[str, list[str]]:
        """The merged branches, all at once (``Target.settle_branches``): never a failure."""
        items = [
            (str(run.entry.get("branch")), tested, original) for run, tested, original in landed
        ]
        try:
            return self.target.settle_branches(items)
        except RuneError as exc:
            return {branch: [f"after the merge: {exc.message}"] for branch, _, _ in items}

    def _settle_remote(self, run: Run, original: str) -> list[str]:
        """The entry's branch on the remote (``Target.settle_remote``): never a failure."""
        try:
            return self.target.settle_remote(run.entry, original)
        except RuneError as exc:
            return [f"after the merge: {exc.message}"]

    def _tidy(
        self, run: Run, tested: str, base: str, branch_notes: list[str] | None, sync: bool
    ) -> None:
        """The checkout of main, the merged branch's notes, the agent's hook: never a
        failure."""
        entry = run.entry
        tidying: list[Callable[[], list[str]]] = [
            lambda: list(branch_notes or []),
            lambda: self._mark_hook_merged(entry.get("identity_name")),
        ]
        if sync:
            tidying.insert(0, lambda: self.target.sync_main_checkout(base, tested))
        for tidy in tidying:
            try:
                run.notes.extend(tidy())
            except RuneError as exc:
                run.notes.append(f"after the merge: {exc.message}")

    def _mark_hook_merged(self, identity: Any) -> list[str]:
        """Set the identity's hook (if it has one) to ``merged``; other fields are kept."""
        key = id_or_none(identity)
        if key is not None and self.hooks.read(key) is not None:
            self.hooks.update(key, phase="merged", writer=MERGE_QUEUE)
        return []
