"""Processing started from this console, watched live under the Merge queue pane: it runs
in a worker, and each batch's latest line of each step (with the time since processing
started), then the tail of the test output, are shown; hidden until something was
processed from here. Its messages go on up to the pane: ``Stepped`` (the rows follow the
queue as each step leaves it) and ``Processed`` (the outcome)."""

from __future__ import annotations

import time
from collections import deque
from typing import Any

from rich.text import Text
from textual.message import Message

from runeconsole.core.errors import RuneError
from runeconsole.services.dispatch.service import tidy_after_landing
from runeconsole.services.merge_queue import (
    PICKED_UP,
    RECOVERED,
    MergeQueue,
    MergeQueueSettings,
    ProcessReport,
    Progress,
    QueueEntry,
    QueueState,
)
from runeconsole.tui.support.workers import background
from runeconsole.tui.widgets.steady_static import SteadyStatic

OUTPUT_LINES = 3  # test output shown under the steps while processing
STEP_LINES = 6  # the latest steps shown (several batches may be at work)
OUTCOMES = ("merged", "failed")


class QueueProcessing(SteadyStatic):
    DEFAULT_CSS = """
    QueueProcessing {
        height: auto;
        max-height: 9;
        padding: 0 1;
        border-top: solid $panel;
        display: none;
    }
    """

    class Stepped(Message):
        """A step of processing, with the queue as it stands after it (``None``: output)."""

        def __init__(self, event: Progress, state: QueueState | None) -> None:
            super().__init__()
            self.event = event
            self.state = state

    class Processed(Message):
        """Processing ended: its report, or the error that stopped it."""

        def __init__(
            self, result: ProcessReport | None, error: str | None, tidied: list[str] | None = None
        ) -> None:
            super().__init__()
            self.result = result
            self.error = error
            self.tidied = tidied or []  # the landed worktrees removed or kept, said

    def __init__(self, queue: MergeQueue, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.queue = queue
        self.processing: str | None = None  # the entry or batch at work, while processing
        self.started = 0.0
        self.step = ""
        self.steps: dict[tuple[str, str], Text] = {}  # (batch or entry, step) -> latest line
        self.output: deque[Text] = deque(maxlen=OUTPUT_LINES)

    @staticmethod
    def question(
        pending: list[QueueEntry], settings: MergeQueueSettings, every: bool
    ) -> tuple[str, str]:
        """What processing would do, asked before it starts: (title, body)."""
        head = pending[0]
        if every:
            side_by_side = (
                "as many testing side by side as the cores hold at the tests' CPU share"
                if settings.parallel_runs_auto
                else f"{settings.parallel_runs} testing side by side"
            )
            return "Process the whole queue?", (
                f"{len(pending)} waiting: batches of up to {settings.batch_max}, "
                f"{side_by_side}, each moved onto "
                f"{settings.main_branch} if its tests pass, until the queue is empty."
            )
        if len(pending) > 1 and settings.batch_max > 1:
            count = min(len(pending), settings.batch_max)
            return "Process the head batch?", (
                f"Rebase up to {count} entries from {head.branch} one on the next onto "
                f"{settings.main_branch}, test the tip, and merge them if it passes (a red "
                f"batch is split until each culprit fails alone)."
            )
        return "Process the head of the queue?", (
            f"Rebase {head.branch} onto {settings.main_branch}, run the tests, "
            f"and merge it if they pass.\n{head.entry_id}"
        )

    def doing(self) -> str | None:
        """``b7: test 3.2s`` while processing, else ``None``."""
        if not self.processing:
            return None
        return f"{self.processing}: {self.step} {time.monotonic() - self.started:.1f}s"

    def start(self, entry_id: str, every: bool) -> None:
        """Process the head batch (``every``: until the queue is empty) in a worker."""
        self.processing, self.started, self.step = entry_id, time.monotonic(), "starting"
        self.steps.clear()
        self.output.clear()
        self._show()
        self.run(every)

    @background("merge-queue-process", exclusive=True)
    def run(self, every: bool) -> None:
        def report(event: Progress) -> None:
            step = not event.output and event.step not in (RECOVERED, PICKED_UP)
            self.post_message(self.Stepped(event, self.queue.read() if step else None))

        try:
            result = self.queue.process(run_all=every, progress=report)
        except Exception as exc:  # shown, and the pane stops saying it is processing
            reason = exc.message if isinstance(exc, RuneError) else f"{type(exc).__name__}: {exc}"
            self.post_message(self.Processed(None, reason))
            return
        tidied = [r.describe() for r in tidy_after_landing(self.queue.project, result)]
        self.post_message(self.Processed(result, None, tidied))

    def on_queue_processing_stepped(self, message: Stepped) -> None:
        """A step's line replaces that batch's line for the step; output joins the tail.
        The message goes on to the pane (its rows follow)."""
        event = message.event
        if event.step in (RECOVERED, PICKED_UP):  # before processing: not a step of it
            self.app.notify(event.message, title="Merge queue")
            return
        several = event.batch is not None and event.entry_id == event.batch
        who = f"{event.entry_id} " if several else ""
        if event.output:
            self.output.append(Text(f"  │ {who}{event.message}", "dim"))
        else:
            self.processing, self.step = event.batch or event.entry_id, event.step
            if event.step == "rebase":  # a new round: the old test output is stale
                self.output.clear()
            style = "red" if event.step == "failed" else "green" if event.step == "merged" else ""
            line = Text(f"{event.elapsed:6.1f}s  {who}{event.message}", style)
            # An entry's outcome replaces the one before (a batch of eight lands at once).
            key = ("", event.step) if event.step in OUTCOMES else (event.entry_id, event.step)
            self.steps.pop(key, None)  # the latest goes last
            self.steps[key] = line
            while len(self.steps) > STEP_LINES:
                del self.steps[next(iter(self.steps))]
        self._show()

    def on_queue_processing_processed(self, message: Processed) -> None:
        """Tell the outcome; the message goes on to the pane (it reads the queue again)."""
        self.processing = None
        if message.error is not None:
            self.app.notify(message.error, title="Merge queue", severity="error")
        for outcome in message.result.outcomes if message.result else []:
            if outcome.merged:
                self.app.notify(f"merged {outcome.branch}", title="Merge queue")
            else:
                self.app.notify(
                    f"{outcome.branch}: {outcome.reason}", title="Merge queue", severity="error"
                )
        if message.tidied:
            self.app.notify("\n".join(message.tidied), title="Worktrees", markup=False)

    def lines(self) -> list[Text]:
        return [*self.steps.values(), *self.output]

    def _show(self) -> None:
        lines = self.lines()
        self.display = bool(lines)
        self.update(Text("\n").join(lines))
