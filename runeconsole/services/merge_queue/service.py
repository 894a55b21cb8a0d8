"""``MergeQueue``: the queue's file with processing and conflict predictions on top, the one
entry point the CLI and the console use."""

from __future__ import annotations

from runeconsole.services.merge_queue.model import (
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
from runeconsole.services.merge_queue.settings import MergeQueueSettings
from runeconsole.services.project import Project
from runeconsole.services.signals import Signals


class MergeQueue(QueueFile):
    def __init__(
        self,
        project: Project,
        settings: MergeQueueSettings | None = None,
        signals: Signals | None = None,
    ) -> None:
        super().__init__(project, settings, signals)
        main, limit = self.settings.main_branch, self.settings.predict_limit
        self.predictor = ConflictPredictor(self.root, main, limit)

    def process(
        self, *, run_all: bool = False, progress: ProgressCallback | None = None
    ) -> ProcessReport:
        """Process the head entry (or every pending entry) under the processor lock."""
        return Processor(self).process(run_all=run_all, progress=progress)

    def not_ready(self, head: QueueEntry) -> str | None:
        """Why ``process`` would refuse ``head`` before starting, or ``None``."""
        return Processor(self).not_ready(head)

    def plan(self) -> ProcessPlan:
        """What ``process`` would do now: the head, its prediction, why it would refuse."""
        state = self.read()
        pending = state.pending()
        head = pending[0] if pending else None
        command = head.get("test_command") if head else None
        return ProcessPlan(
            paused=state.paused,
            busy_pid=self.processor_pid(),
            refused=self.not_ready(head) if head else None,
            head=head,
            prediction=self.predict(state).get(head.entry_id) if head else None,
            test_command=command or self.settings.test_command,
        )

    def predict(self, state: QueueState | None = None) -> dict[str, Prediction]:
        """Predicted conflicts of every pending entry (cached until something changes)."""
        return self.predictor.predict(state or self.read())
