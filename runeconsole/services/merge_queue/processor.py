"""Processing the merge queue: one entry at a time, rebase -> test -> compare-and-swap.

Runs under the processor lock (one processor per project, whoever asks). Work
happens in a detached worktree the queue owns inside the git directory, never in
an agent's worktree or the operator's checkout; ``main`` only ever moves with
``update-ref NEW OLD`` to a commit that passed the tests. A processor killed at any
step leaves enough on disk (pid file, ``current_step``, ``tested_commit``) for the
next one to clean up and either finish, fail or retry the entry (``recovery``).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from runeconsole.adapters import git_worktrees as gw
from runeconsole.adapters.processes import run_streaming
from runeconsole.core.errors import RuneError
from runeconsole.core.locks import LockBusy, owned
from runeconsole.core.pids import process_start
from runeconsole.services.hooks import Hooks
from runeconsole.services.merge_queue.delivery import Outbox
from runeconsole.services.merge_queue.holders import blocking, waiting_message
from runeconsole.services.merge_queue.intake import Intake
from runeconsole.services.merge_queue.landing import Landing
from runeconsole.services.merge_queue.model import (
    BASE_MOVED,
    BRANCH_MISSING,
    CONFLICT,
    GIT_ERROR,
    MAIN_DIRTY,
    PICKED_UP,
    RECOVERED,
    TESTS_FAILED,
    TIMEOUT,
    Outcome,
    ProcessReport,
    Progress,
    ProgressCallback,
    QueueBusy,
    QueueEntry,
    command_args,
)
from runeconsole.services.merge_queue.outcomes import Recorder, Run
from runeconsole.services.merge_queue.queue_file import QueueFile
from runeconsole.services.merge_queue.recovery import Recovery

WORKTREE_DIR = "runeconsole-merge-queue"
HOLDER_WAIT = 1.0  # seconds to wait for a new lock holder's pid file, to name it


class Processor:
    """Processes a queue; holds no state between runs."""

    def __init__(self, queue: QueueFile) -> None:
        self.queue = queue
        self.root = queue.root
        self.paths = queue.paths
        self.settings = queue.settings
        self.signals = queue.signals
        self.hooks = Hooks(queue.project, queue.signals)
        self.outbox = Outbox(queue)
        self.landing = Landing(queue)
        self.recorder = Recorder(queue, self.outbox, self.landing, self.hooks)
        self.recovery = Recovery(queue, self.recorder, self.outbox)
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
            report.recovered = self.recovery.recover(leftover, self.worktree_path())
            report.picked_up = Intake(self.queue).pick_up()
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
        is wrong, or another processor is merging, so nothing may change), or ``None``."""
        limit = self.settings.test_timeout
        holder = blocking(self.queue.read(), self.queue.clock.now(), limit)
        if holder is not None:
            return waiting_message(holder, limit)
        if command_args(head.get("test_command")) is None and self.settings.test_command is None:
            return (
                "no test command: set runeconsole.merge_queue.test_command in "
                ".claude/talisman.yml (or give the entry --test-command)"
            )
        if gw.resolve_commit(self.root, self.queue.main_ref) is None:
            return f"branch {self.settings.main_branch!r} does not exist in {self.root}"
        return None

    def _process_entry(self, entry: dict[str, Any], progress: ProgressCallback | None) -> Outcome:
        run = Run(entry, progress=progress)
        worktree = self.worktree_path()
        try:
            outcome = self._attempt(run, worktree)
        except RuneError as exc:
            outcome = self.recorder.fail(run, GIT_ERROR, exc.message)
        finally:
            with contextlib.suppress(RuneError):
                gw.remove_worktree(self.root, worktree)
        return outcome

    def _step(self, run: Run, name: str) -> Callable[[str, dict[str, Any] | None], None]:
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

    def _attempt(self, run: Run, worktree: Path) -> Outcome:
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
            return self.recorder.fail(run, BRANCH_MISSING, f"branch {branch!r} does not exist")
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
                    return self.recorder.fail(
                        run,
                        CONFLICT,
                        f"rebase onto {self.settings.main_branch} conflicts",
                        self.landing.conflict_files(base, original, rebased.conflicts),
                    )
                done("failed", None)
                return self.recorder.fail(run, GIT_ERROR, f"rebase failed: {rebased.detail}")
            tested = rebased.head or ""
            done("ok", {"base_commit": base, "tested_commit": None})
            if tested == base:
                run.notes.append("nothing to merge: the branch is already in main")
                return self.recorder.finish(run, base, base, original)
            failure = self._test(run, worktree, command, tested)
            if failure is not None:
                return failure
            done = self._step(run, "merge")
            holder = gw.checked_out_at(self.root, self.settings.main_branch)
            refusal = self.landing.checkout_refuses(holder, base, tested)
            if refusal is not None and self.landing.main_is(base):
                done("refused", None)
                return self.recorder.fail(run, MAIN_DIRTY, refusal)
            # Written before the ref moves: recovery can tell a landed merge from a lost one.
            self.queue.update_entry(run.entry_id, {"tested_commit": tested, "base_commit": base})
            if refusal is None and gw.compare_and_swap(
                self.root, self.queue.main_ref, tested, base
            ):
                refusal = self.landing.follow_in_checkout(holder, base, tested, run.notes)
                if refusal is None:
                    done("ok", None)
                    return self.recorder.finish(run, tested, base, original, sync_checkout=False)
                done("refused", None)
                return self.recorder.fail(run, MAIN_DIRTY, refusal)
            done("main moved", None)
            run.notes.append(f"main moved during the run (was {base[:12]}); rebasing again")
        return self.recorder.fail(
            run,
            BASE_MOVED,
            f"main kept moving: gave up after {self.settings.max_rebase_rounds} rebases",
        )

    def _test(self, run: Run, worktree: Path, command: list[str], tested: str) -> Outcome | None:
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
            return self.recorder.fail(run, TIMEOUT, f"tests still running after {limit}; stopped")
        if result.returncode != 0:
            done(f"exit {result.returncode}", extra)
            return self.recorder.fail(run, TESTS_FAILED, f"tests failed (exit {result.returncode})")
        done("passed", extra)
        return None
