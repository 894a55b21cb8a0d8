"""``MergeQueue``: the queue's file with processing and conflict predictions on top, the one
entry point the CLI and the console use."""

from __future__ import annotations

import functools

from runeconsole.services.merge_queue.intake import Intake
from runeconsole.services.merge_queue.model import (
    PENDING,
    Prediction,
    ProcessPlan,
    ProcessReport,
    ProgressCallback,
    QueueEntry,
    QueueState,
)
from runeconsole.services.merge_queue.predictions import ConflictPredictor
from runeconsole.services.merge_queue.processor import Processor
from runeconsole.services.merge_queue.queue_file import QueueFile


class MergeQueue(QueueFile):
    @functools.cached_property
    def predictor(self) -> ConflictPredictor:
        """Kept with the queue: its cache spares the entries nothing has changed for."""
        settings = self.settings
        return ConflictPredictor(self.root, settings.main_branch, settings.predict_limit)

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
        (new entries join the tail), then the head: its prediction, why it would refuse."""
        state = self.read()
        processor = Processor(self)
        recovered, requeued = processor.recovery.would_recover(state)
        requests = [r for r in Intake(self).requests(state) if r.new]
        waiting = [e for e in state.entries if e.status == PENDING or e.entry_id in requeued]
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
        )

    def predict(self, state: QueueState | None = None) -> dict[str, Prediction]:
        """Predicted conflicts of every pending entry (cached until something changes)."""
        return self.predictor.predict(state or self.read())
