"""``MergeQueue``: the queue's file with processing and conflict predictions on top, the one
entry point the CLI and the console use."""

from __future__ import annotations

import functools

from runeconsole.services.merge_queue.claims import QueueClaims
from runeconsole.services.merge_queue.cpu_share import samples, share_of, slots_now
from runeconsole.services.merge_queue.forming import next_batch
from runeconsole.services.merge_queue.intake import Intake
from runeconsole.services.merge_queue.model import (
    WINDOW,
    Prediction,
    ProcessPlan,
    ProcessReport,
    ProgressCallback,
    QueueEntry,
    QueueState,
)
from runeconsole.services.merge_queue.predictions import ConflictPredictor
from runeconsole.services.merge_queue.processor import Processor
from runeconsole.services.merge_queue.remote import Remote, RemoteWhere
from runeconsole.services.merge_queue.stats import QueueStats, queue_stats
from runeconsole.services.merge_queue.timeouts import describe as describe_limit


class MergeQueue(QueueClaims):
    @functools.cached_property
    def predictor(self) -> ConflictPredictor:
        """Kept with the queue: its cache spares the entries nothing has changed for."""
        settings = self.settings
        return ConflictPredictor(
            self.root, settings.main_branch, settings.predict_limit, settings.remote
        )

    def process(
        self, *, run_all: bool = False, progress: ProgressCallback | None = None
    ) -> ProcessReport:
        """Process the head entry (or every pending entry) under the processor lock."""
        return Processor(self).process(run_all=run_all, progress=progress)

    def not_ready(self, head: QueueEntry) -> str | None:
        """Why ``process`` would refuse ``head`` before starting, or ``None``."""
        return Processor(self).not_ready(head)

    def pick_up_signals(self) -> list[str]:
        """Turn the ``MERGE_READY`` signals for us into entries (``intake``)."""
        return Intake(self).pick_up()

    def plan(self) -> ProcessPlan:
        """What ``process`` would do now, in its order: recover what a dead processor left
        (an entry queued again goes first, at its place), pick up ``MERGE_READY`` signals
        (new entries join the tail), then the head: its prediction, why it would refuse;
        and the batches the waiting entries would form."""
        state = self.read()
        processor = Processor(self)
        recovered, requeued = processor.recovery.would_recover(state)
        requests = [r for r in Intake(self).requests(state) if r.new]
        again = [e for e in state.entries if e.entry_id in requeued]
        waiting = sorted([*state.pending(), *again], key=lambda e: (e.lane, e.index))
        waiting += [r.preview(len(state.entries) + n) for n, r in enumerate(requests)]
        head = waiting[0] if waiting else None
        known = head is not None and head.get("entry_id") is not None
        command = head.get("test_command") if head else None
        return ProcessPlan(
            paused=state.paused,
            busy_pid=self.processor_pid(),
            refused=processor.not_ready(head) if head else None,
            head=head,
            prediction=self.predict(state).get(head.entry_id) if known and head else None,
            test_command=command or self.settings.test_command,
            recovered=recovered,
            picked_up=[r.to_json() for r in requests],
            batches=self.batches_of(waiting),
            window=self.window(state),
        )

    def batches_of(self, waiting: list[QueueEntry]) -> list[list[QueueEntry]]:
        """The batches ``waiting`` (in the order taken) would form, one after the other."""
        batches: list[list[QueueEntry]] = []
        left = list(waiting)
        while left:
            batch = next_batch(left, self.settings.batch_max, self.settings.test_command)
            batches.append(batch)
            taken = {id(e) for e in batch}
            left = [e for e in left if id(e) not in taken]
        return batches

    def window(self, state: QueueState) -> int:
        """How many batches may test at once now (the speculative window)."""
        stored = state.data.get(WINDOW)
        runs = slots_now(self.settings, state.data, self.settings.test_command or [])
        return min(runs, max(1, stored)) if isinstance(stored, int) else runs

    def stats(self) -> QueueStats:
        """Depth, waits, landings an hour, failures, flaky runs, the batches at work."""
        settings, state = self.settings, self.read()
        command = settings.test_command or []
        return queue_stats(
            state,
            self.clock.now(),
            parallel_runs=slots_now(settings, state.data, command),
            batch_max=settings.batch_max,
            parallel_runs_auto=settings.parallel_runs_auto,
            cpu_share=share_of(samples(state.data, command)),
            test_timeout=describe_limit(settings, state.data, command),
            test_timeout_seconds=self.test_limit(state),
            remote=self.where().to_json(self.clock.now().timestamp()) if settings.remote else None,
        )

    def fetch_now(self) -> str | None:
        """The remote's main fetched now, the outcome kept; why it failed, or ``None``
        (``remote`` must be set)."""
        return Remote(self).fetch_now()

    def where(self) -> RemoteWhere:
        """Where main is, locally and on the remote (no network; ``remote`` must be set)."""
        return Remote(self).where()

    def predict(self, state: QueueState | None = None) -> dict[str, Prediction]:
        """Predicted conflicts of every pending entry (cached until something changes)."""
        return self.predictor.predict(state or self.read())
