"""Processing the merge queue: batches rebased, tested and moved onto ``main`` with a
compare-and-swap (``engine``), one processor at a time.

Runs under the processor lock (one processor per project, whoever asks). Work
happens in detached worktrees the queue owns inside the git directory (``slots``), never
in an agent's worktree or the operator's checkout; ``main`` only ever moves with
``update-ref NEW OLD`` to a commit that passed the tests. A processor killed at any
step leaves enough on disk (pid file, ``current_step``, ``tested_commit``) for the
next one to clean up and either finish, fail or retry each entry (``recovery``).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from typing import Any

from runeconsole.adapters import git_remote as gr
from runeconsole.adapters import git_worktrees as gw
from runeconsole.core.locks import LockBusy, owned
from runeconsole.core.pids import process_start
from runeconsole.services.hook_files import HookFiles as Hooks
from runeconsole.services.merge_queue.claims import QueueClaims
from runeconsole.services.merge_queue.delivery import Outbox
from runeconsole.services.merge_queue.engine import Engine
from runeconsole.services.merge_queue.holders import blocking, waiting_message
from runeconsole.services.merge_queue.intake import Intake
from runeconsole.services.merge_queue.model import (
    PICKED_UP,
    RECOVERED,
    ProcessReport,
    Progress,
    ProgressCallback,
    QueueBusy,
    QueueEntry,
    command_args,
)
from runeconsole.services.merge_queue.outcomes import Recorder
from runeconsole.services.merge_queue.recovery import Recovery
from runeconsole.services.merge_queue.target import Target

HOLDER_WAIT = 1.0  # seconds to wait for a new lock holder's pid file, to name it


class Processor:
    """Processes a queue; holds no state between runs."""

    def __init__(self, queue: QueueClaims) -> None:
        self.queue = queue
        self.root = queue.root
        self.paths = queue.paths
        self.settings = queue.settings
        self.signals = queue.signals
        self.hooks = Hooks(queue.project, queue.signals)
        self.outbox = Outbox(queue)
        self.target = Target(queue)
        self.recorder = Recorder(queue, self.outbox, self.target, self.hooks)
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

    def process(
        self, *, run_all: bool = False, progress: ProgressCallback | None = None
    ) -> ProcessReport:
        """Process the head entry (or every pending entry) under the processor lock."""
        with self._processor() as leftover:
            report = ProcessReport()
            report.recovered = self.recovery.recover(leftover)
            report.picked_up = Intake(self.queue).pick_up()
            if progress is not None:  # told before any processing output
                for note in report.recovered:
                    progress(Progress("", RECOVERED, note, 0.0))
                for entry_id in report.picked_up:
                    message = f"picked up MERGE_READY as {entry_id}"
                    progress(Progress(entry_id, PICKED_UP, message, 0.0))
            Engine(
                self.queue,
                self.recorder,
                self.target,
                self.identity,
                not_ready=self.not_ready,
                pick_up=Intake(self.queue).pick_up,
                run_all=run_all,
                progress=progress,
                report=report,
            ).run()
            return report

    def not_ready(self, head: QueueEntry) -> str | None:
        """Why processing ``head`` would be refused before anything is claimed (the setup
        is wrong, or another processor is merging, so nothing may change), or ``None``."""
        state = self.queue.read()
        limit = self.queue.test_limit(state)
        holder = blocking(state, self.queue.clock.now(), limit)
        if holder is not None:
            return waiting_message(holder, limit)
        if command_args(head.get("test_command")) is None and self.settings.test_command is None:
            return (
                "no test command: set runeconsole.merge_queue.test_command in "
                ".claude/talisman.yml (or give the entry --test-command)"
            )
        remote = self.settings.remote
        if remote is not None:
            if gr.remote_url(self.root, remote) is None:
                return (
                    f"runeconsole.merge_queue.remote is {remote!r}, which is not a remote of "
                    f"{self.root} (`git remote -v` lists them)"
                )
            return None  # its main is fetched before each batch
        if gw.resolve_commit(self.root, self.queue.main_ref) is None:
            return f"branch {self.settings.main_branch!r} does not exist in {self.root}"
        return None
