"""Processing the merge queue: one entry at a time, rebase -> test -> compare-and-swap.

Runs under the processor lock (one processor per project, whoever asks). Work
happens in a detached worktree the queue owns inside the git directory, never in
an agent's worktree or the operator's checkout; ``main`` only ever moves with
``update-ref NEW OLD`` to a commit that passed the tests. A processor killed at any
step leaves enough on disk (pid file, ``current_step``, ``tested_commit``) for the
next one to clean up and either finish, fail or retry the entry.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runeconsole.adapters import git_worktrees as gw
from runeconsole.adapters.processes import run_streaming, stop_processes_in
from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.core.locks import LockBusy, owned
from runeconsole.core.pause import pause_point
from runeconsole.core.pids import process_start
from runeconsole.services.hooks import MERGE_QUEUE, Hooks
from runeconsole.services.merge_queue import (
    BASE_MOVED,
    BRANCH_MISSING,
    COMPLETED,
    CONFLICT,
    FAILED,
    GIT_ERROR,
    IN_PROGRESS,
    INTERRUPTED,
    MAIN_DIRTY,
    PICKED_UP,
    RECOVERED,
    TESTS_FAILED,
    TIMEOUT,
    MergeQueue,
    Outcome,
    ProcessReport,
    Progress,
    ProgressCallback,
    QueueBusy,
    QueueEntry,
    command_args,
    id_or_none,
)

SIGNAL_SOURCE = "runeconsole"
FALLBACK_TARGET = "guardian"
WORKTREE_DIR = "runeconsole-merge-queue"
HOLDER_WAIT = 1.0  # seconds to wait for a new lock holder's pid file, to name it


@dataclass
class _Run:
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


class Processor:
    """Processes a ``MergeQueue``; holds no state between runs."""

    def __init__(self, queue: MergeQueue) -> None:
        self.queue = queue
        self.root = queue.root
        self.paths = queue.paths
        self.settings = queue.settings
        self.signals = queue.signals
        self.hooks = Hooks(queue.project, queue.signals)
        self._identity: list[str] | None = None

    def identity(self) -> list[str]:
        """Committer options for the queue's rebases (looked up once per run)."""
        if self._identity is None:
            self._identity = gw.identity_fallback(self.root)
        return self._identity

    @contextlib.contextmanager
    def _processor(self) -> Iterator[dict[str, Any]]:
        """Hold the processor lock; yields what a dead predecessor left in the pid file."""
        held = contextlib.ExitStack()
        try:
            me: dict[str, Any] = {"started_at": self.queue.now()}
            started = process_start(os.getpid())
            if started is not None:  # tells a later reader this pid was not reused
                me["process_start"] = started
            leftover = held.enter_context(
                owned(
                    self.queue.processor_lock,
                    self.queue.processor_file,
                    "the merge-queue processor",
                    **me,
                )
            )
        except LockBusy:
            # Not the pid LockBusy read (unchecked: a dead holder's, for a moment).
            pid = self._holder_pid()
            who = f"pid {pid}" if pid is not None else "another process"
            raise QueueBusy(
                f"queue is being processed by {who}; try again when it finishes"
            ) from None
        with held:
            yield leftover

    def _holder_pid(self) -> int | None:
        """The lock holder's pid; it writes its pid file just after taking the lock."""
        deadline = time.monotonic() + HOLDER_WAIT
        while (pid := self.queue.processor_pid()) is None and time.monotonic() < deadline:
            time.sleep(0.02)
        return pid

    def worktree_path(self) -> Path:
        return gw.common_dir(self.root) / WORKTREE_DIR

    def process(
        self, *, run_all: bool = False, progress: ProgressCallback | None = None
    ) -> ProcessReport:
        """Process the head entry (or every pending entry) under the processor lock."""
        with self._processor() as leftover:
            report = ProcessReport()
            report.recovered = self.recover(leftover)
            report.picked_up = self.queue.pick_up_signals()
            if progress is not None:  # told before any processing output
                for note in report.recovered:
                    progress(Progress("", RECOVERED, note, 0.0))
                for entry_id in report.picked_up:
                    message = f"picked up MERGE_READY as {entry_id}"
                    progress(Progress(entry_id, PICKED_UP, message, 0.0))
            while True:
                state = self.queue.read()
                if not state.pending():
                    break
                try:
                    if state.paused:
                        raise RuneError("the merge queue is paused; `merge-queue resume` first")
                    problem = self.not_ready(state.pending()[0])
                    if problem:
                        raise RuneError(problem)
                except RuneError as exc:
                    if not report.outcomes:
                        raise
                    report.stopped = exc.message  # keep what was already merged
                    break
                entry = self.queue.claim_head()
                if entry is None:
                    break
                report.outcomes.append(self._process_entry(entry, progress))
                if not run_all:
                    break
            return report

    def not_ready(self, head: QueueEntry) -> str | None:
        """Why processing ``head`` would be refused before anything is claimed (the setup
        is wrong, so nothing may change), or ``None``."""
        if command_args(head.get("test_command")) is None and self.settings.test_command is None:
            return (
                "no test command: set runeconsole.merge_queue.test_command in "
                ".claude/talisman.yml (or give the entry --test-command)"
            )
        if gw.resolve_commit(self.root, self.queue.main_ref) is None:
            return f"branch {self.settings.main_branch!r} does not exist in {self.root}"
        return None

    def _process_entry(self, entry: dict[str, Any], progress: ProgressCallback | None) -> Outcome:
        run = _Run(entry, progress=progress)
        worktree = self.worktree_path()
        try:
            outcome = self._attempt(run, worktree)
        except RuneError as exc:
            outcome = self._fail(run, GIT_ERROR, exc.message)
        finally:
            with contextlib.suppress(RuneError):
                gw.remove_worktree(self.root, worktree)
        return outcome

    def _step(self, run: _Run, name: str) -> Callable[[str, dict[str, Any] | None], None]:
        """Record the start of a step now; the returned function records its end."""
        began = time.monotonic()
        at = self.queue.now()
        self.queue.update_entry(run.entry_id, {"current_step": name})
        run.report(name, f"{name}…")

        def finish(result: str, extra: dict[str, Any] | None = None) -> None:
            step = {"step": name, "started_at": at, "seconds": round(time.monotonic() - began, 3)}
            step["result"] = result
            run.steps.append(step)
            self.queue.update_entry(run.entry_id, {"steps": list(run.steps), **(extra or {})})
            run.report(name, f"{name}: {result} ({step['seconds']:.1f}s)")

        return finish

    def _attempt(self, run: _Run, worktree: Path) -> Outcome:
        entry = run.entry
        branch = str(entry.get("branch") or "")
        done = self._step(run, "verify")
        original = (
            gw.resolve_commit(self.root, f"refs/heads/{branch}")
            if gw.valid_branch_name(branch)
            else None
        )
        if original is None:
            done("branch missing", None)
            return self._fail(run, BRANCH_MISSING, f"branch {branch!r} does not exist")
        command = command_args(entry.get("test_command")) or self.settings.test_command or []
        done("ok", {"original_commit": original})
        gw.remove_worktree(self.root, worktree)
        gw.add_detached(self.root, worktree, original, timeout=self.settings.git_timeout)
        for _round in range(self.settings.max_rebase_rounds):
            base = gw.resolve_commit(self.root, self.queue.main_ref)
            if base is None:
                raise RuneError(f"branch {self.settings.main_branch!r} disappeared")
            done = self._step(run, "rebase")
            rebased = gw.rebase(
                worktree, base, timeout=self.settings.git_timeout, identity=self.identity()
            )
            if not rebased.ok:
                if rebased.conflicts:
                    done("conflict", None)
                    return self._fail(
                        run,
                        CONFLICT,
                        f"rebase onto {self.settings.main_branch} conflicts",
                        self._conflict_files(base, original, rebased.conflicts),
                    )
                done("failed", None)
                return self._fail(run, GIT_ERROR, f"rebase failed: {rebased.detail}")
            tested = rebased.head or ""
            done("ok", {"base_commit": base, "tested_commit": None})
            if tested == base:
                run.notes.append("nothing to merge: the branch is already in main")
                return self._finish(run, base, base, original)
            failure = self._test(run, worktree, command, tested)
            if failure is not None:
                return failure
            done = self._step(run, "merge")
            holder = gw.checked_out_at(self.root, self.settings.main_branch)
            refusal = self._checkout_refuses(holder, base, tested)
            if refusal is not None and self._main_is(base):
                done("refused", None)
                return self._fail(run, MAIN_DIRTY, refusal)
            # Written before the ref moves: recovery can tell a landed merge from a lost one.
            self.queue.update_entry(run.entry_id, {"tested_commit": tested, "base_commit": base})
            if refusal is None and gw.compare_and_swap(
                self.root, self.queue.main_ref, tested, base
            ):
                refusal = self._follow_in_checkout(holder, base, tested, run.notes)
                if refusal is None:
                    done("ok", None)
                    return self._finish(run, tested, base, original, sync_checkout=False)
                done("refused", None)
                return self._fail(run, MAIN_DIRTY, refusal)
            done("main moved", None)
            run.notes.append(f"main moved during the run (was {base[:12]}); rebasing again")
        return self._fail(
            run,
            BASE_MOVED,
            f"main kept moving: gave up after {self.settings.max_rebase_rounds} rebases",
        )

    def _main_is(self, commit: str) -> bool:
        return gw.resolve_commit(self.root, self.queue.main_ref) == commit

    def _checkout_refuses(self, holder: Path | None, base: str, tested: str) -> str | None:
        """Why the checkout of main could not follow a move from base to tested, if it could not.

        Asked before main moves (``read-tree -n``): a checkout that cannot be
        fast-forwarded would be left behind its own branch. Tracked edits and untracked
        files in the paths the merge writes both count.
        """
        if holder is None:
            return None
        complaint = gw.fast_forward_checkout(holder, base, tested, dry_run=True)
        if complaint is None:
            return None
        files = gw.local_changes(holder, gw.changed_between(self.root, base, tested))
        what = ", ".join(files) if files else complaint
        return (
            f"the checkout of {self.settings.main_branch} in {holder} has local files this "
            f"merge would overwrite: {what}; commit, move or remove them, then retry"
        )

    def _follow_in_checkout(
        self, holder: Path | None, base: str, tested: str, notes: list[str]
    ) -> str | None:
        """Fast-forward the checkout of main just moved; if it refuses, move main back.

        The dry run passed a moment ago, so a refusal means someone changed the checkout
        since: putting main back (compare-and-swap, to a commit that was main) leaves
        branch and checkout agreeing, rather than a checkout behind its own branch.
        """
        if holder is None or tested == base:
            return None
        pause_point("merge-queue-main-moved")
        complaint = gw.fast_forward_checkout(holder, base, tested)
        if complaint is None:
            return None
        if not gw.compare_and_swap(self.root, self.queue.main_ref, base, tested):
            notes.append(f"{holder} not fast-forwarded: {complaint}")  # main moved on: it stands
            return None
        return f"the checkout of {self.settings.main_branch} in {holder} changed: {complaint}"

    def _conflict_files(self, base: str, original: str, first_stop: list[str]) -> list[str]:
        """Every file the branch conflicts on, not only those of the commit the rebase stopped at.

        ``merge-tree`` merges the whole branch with main in the object store; a file only
        one commit conflicts on (a later commit undoes it) still comes from the rebase.
        """
        try:
            whole = gw.merge_tree(self.root, base, original).conflicts
        except RuneError:  # e.g. unrelated histories: the rebase's list is all there is
            whole = []
        return sorted(set(first_stop) | set(whole))

    def _test(self, run: _Run, worktree: Path, command: list[str], tested: str) -> Outcome | None:
        done = self._step(run, "test")

        env = {
            **os.environ,
            "RUNECONSOLE_MERGE_ENTRY": run.entry_id,
            "RUNECONSOLE_MERGE_COMMIT": tested,
        }
        result = run_streaming(
            command,
            worktree,
            self.settings.test_timeout,
            on_line=lambda line: run.report("test", line, output=True),
            env=env,
        )
        extra = {"output_tail": result.tail}
        if result.timed_out:
            done("timeout", extra)
            limit = f"{self.settings.test_timeout:g}s"
            return self._fail(run, TIMEOUT, f"tests still running after {limit}; stopped")
        if result.returncode != 0:
            done(f"exit {result.returncode}", extra)
            return self._fail(run, TESTS_FAILED, f"tests failed (exit {result.returncode})")
        done("passed", extra)
        return None

    def _fail(self, run: _Run, reason: str, error: str, files: list[str] | None = None) -> Outcome:
        files = files or []
        payload = self._payload(run.entry, reason=reason, error=error, conflict_files=files)
        kinds = ["MERGE_CONFLICT", "MERGE_FAILED"] if reason == CONFLICT else ["MERGE_FAILED"]
        outgoing = [self._outgoing(run, kind, payload) for kind in kinds]
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
            },
        )
        self._deliver(run.entry_id, outgoing)
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

    def _finish(
        self, run: _Run, tested: str, base: str, original: str, *, sync_checkout: bool = True
    ) -> Outcome:
        """After ``main`` points at ``tested``: tidy refs and checkouts, tell everyone.

        The merge has happened: a tidying step that fails becomes a note, never a failure.
        ``sync_checkout``: the checkout of main still has to follow (after a crash).
        """
        entry = run.entry
        tidying: list[Callable[[], list[str]]] = [
            lambda: self._settle_branch(str(entry.get("branch")), tested, original),
            lambda: self._mark_hook_merged(entry.get("identity_name")),
        ]
        if sync_checkout:
            tidying.insert(0, lambda: self._sync_main_checkout(base, tested))
        for tidy in tidying:
            try:
                run.notes.extend(tidy())
            except RuneError as exc:
                run.notes.append(f"after the merge: {exc.message}")
        outgoing = [
            self._outgoing(run, "MERGE_COMPLETE", self._payload(entry, merged_commit=tested))
        ]
        final = self.queue.update_entry(
            run.entry_id,
            {
                "status": COMPLETED,
                "completed_at": self.queue.now(),
                "merged_commit": tested,
                "tested_commit": tested,
                "current_step": None,
                "notes": run.notes,
                "signals_pending": outgoing,
            },
        )
        self._deliver(run.entry_id, outgoing)
        run.report("merged", f"merged {final.get('branch')} as {tested[:12]}")
        return Outcome(
            run.entry_id, str(final.get("branch")), COMPLETED, merged_commit=tested, notes=run.notes
        )

    def _sync_main_checkout(self, base: str, tested: str) -> list[str]:
        """Fast-forward the worktree that has main checked out (if any) from base to tested."""
        holder = gw.checked_out_at(self.root, self.settings.main_branch)
        if holder is None or tested == base:
            return []
        if gw.resolve_commit(self.root, self.queue.main_ref) != tested:
            return [f"{holder} left as it is: main has moved on since"]
        complaint = gw.fast_forward_checkout(holder, base, tested)
        return [f"{holder} not fast-forwarded: {complaint}"] if complaint else []

    def _settle_branch(self, branch: str, tested: str, original: str) -> list[str]:
        """Delete the merged branch (or point it at what was tested) unless it is in use."""
        ref = f"refs/heads/{branch}"
        current = gw.resolve_commit(self.root, ref)
        if current is None:
            return []
        if current not in (original, tested):
            return [f"{branch} moved while queued; left as it is"]
        holder = gw.checked_out_at(self.root, branch)
        if holder is not None:
            return [f"{branch} is checked out in {holder}; left as it is"]
        if self.settings.keep_branch:
            done = gw.compare_and_swap(self.root, ref, tested, current)
        else:
            done = gw.delete_ref(self.root, ref, current)
        return [] if done else [f"{branch} changed meanwhile; left as it is"]

    def _mark_hook_merged(self, identity: Any) -> list[str]:
        """Set the identity's hook (if it has one) to ``merged``; other fields are kept."""
        key = id_or_none(identity)
        if key is not None and self.hooks.read(key) is not None:
            self.hooks.update(key, phase="merged", writer=MERGE_QUEUE)
        return []

    @staticmethod
    def _target(entry: dict[str, Any]) -> str:
        """The entry's identity when it can name a signal file, else the guardian."""
        return id_or_none(entry.get("identity_name")) or FALLBACK_TARGET

    @staticmethod
    def _payload(entry: dict[str, Any], **extra: Any) -> dict[str, Any]:
        keys = ("entry_id", "node_id", "branch", "identity_name", "bead_id", "pr_number")
        return {**{k: entry.get(k) for k in keys}, **extra}

    def _outgoing(self, run: _Run, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        """A signal to send, as recorded in the entry's ``signals_pending`` until it is sent.

        ``delivery_id`` (entry, attempt, type) lets recovery tell whether a processor
        that died after recording it had already sent it.
        """
        attempt = run.entry.get("attempts")
        delivery = f"{run.entry_id}.{attempt if isinstance(attempt, int) else 0}.{kind}"
        return {
            "signal_type": kind,
            "target": self._target(run.entry),
            "payload": {**payload, "delivery_id": delivery},
        }

    def _deliver(
        self, entry_id: str, outgoing: list[dict[str, Any]], *, unless_sent: bool = False
    ) -> list[str]:
        """Send the signals an entry's outcome owes, then clear its ``signals_pending``.

        The outcome is recorded with its signals first, so a processor killed before
        sending them leaves them for ``recover`` to send (``unless_sent``: skip any
        that did go out just before the kill). Returns the types sent.
        """
        pause_point("merge-queue-signals-due")
        sent = []
        for item in outgoing:
            kind, target, payload = _signal_parts(item)
            if kind is None or (unless_sent and self._was_sent(kind, target, payload)):
                continue
            self._signal(kind, target, payload)
            sent.append(kind)
        self.queue.update_entry(entry_id, {"signals_pending": []})
        return sent

    def _was_sent(self, kind: str, target: str, payload: dict[str, Any]) -> bool:
        delivery = payload.get("delivery_id")
        found = [
            *self.signals.pending(signal_type=kind, target=target),
            *self.signals.processed(signal_type=kind, target=target),
        ]
        return any(signal.payload.get("delivery_id") == delivery for signal in found)

    def _signal(self, signal_type: str, target: str, payload: dict[str, Any]) -> None:
        with contextlib.suppress(InvalidInput):
            self.signals.send(signal_type, SIGNAL_SOURCE, target, payload)

    # -- crash recovery ----------------------------------------------------------------------

    def recover(self, leftover: dict[str, Any]) -> list[str]:
        """Clean up after a processor that died (kill -9 at any step). Holds the processor lock."""
        notes: list[str] = []
        worktree = self.worktree_path()
        stopped = stop_processes_in(worktree)
        if stopped:
            who = leftover.get("pid", "a processor")
            notes.append(f"stopped {len(stopped)} process(es) left running by {who}")
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
                sent = self._deliver(entry.entry_id, owed, unless_sent=True)
                what = ", ".join(sent) if sent else "nothing (all had gone out)"
                notes.append(f"{entry.entry_id}: sent the signals its processor had not: {what}")
        return notes

    def _recover_entry(self, entry: dict[str, Any]) -> str:
        run = _Run(dict(entry), notes=["interrupted; recovered"])
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
            self._finish(run, tested, base, str(original))
            return f"{entry_id}: had merged before the interruption; finished it"
        attempts = entry.get("attempts") if isinstance(entry.get("attempts"), int) else 1
        if self.settings.on_interrupted == "retry" and attempts < self.settings.max_attempts:
            self.queue.requeue(entry_id, INTERRUPTED)
            return f"{entry_id}: interrupted; queued again (attempt {attempts + 1})"
        step = entry.get("current_step") or "?"
        self._fail(run, INTERRUPTED, f"processing stopped during {step} (the processor died)")
        return f"{entry_id}: interrupted during {step}; marked failed"


def _signal_parts(item: Any) -> tuple[str | None, str, dict[str, Any]]:
    """(type, target, payload) of a ``signals_pending`` item; type ``None`` if malformed."""
    if not isinstance(item, dict):
        return None, "", {}
    kind, target, payload = item.get("signal_type"), item.get("target"), item.get("payload")
    if not (isinstance(kind, str) and isinstance(target, str) and isinstance(payload, dict)):
        return None, "", {}
    return kind, target, payload
