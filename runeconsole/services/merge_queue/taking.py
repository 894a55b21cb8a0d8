"""Taking the next batch from the head of the queue, for the processor: pending entries
in the order taken (``forming``), never while the queue is paused or refused, waiting for
company within ``batch_wait_seconds``, claimed under the queue's lock (an entry removed or
taken meanwhile is left out)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from runeconsole.core.errors import RuneError
from runeconsole.services.merge_queue.claims import QueueClaims
from runeconsole.services.merge_queue.forming import command_of, next_batch, wait_for_company
from runeconsole.services.merge_queue.model import ProcessReport, QueueEntry

AGAIN = "again"  # claimed nothing: the entries were taken or removed since read


class Taker:
    def __init__(
        self,
        queue: QueueClaims,
        *,
        run_all: bool,
        not_ready: Callable[[QueueEntry], str | None],
        pick_up: Callable[[], list[str]],
        report: ProcessReport,
        new_id: Callable[[], str],
    ) -> None:
        self.queue, self.settings = queue, queue.settings
        self.run_all, self.not_ready, self.pick_up, self.report = (
            run_all,
            not_ready,
            pick_up,
            report,
        )
        self.new_id = new_id
        self.waiting: set[str] = set()  # sent back until something lands or fails
        self.company: float | None = None  # while a partial batch waits: until when
        self.stopped = False
        self.taken = 0

    def take(
        self, busy: bool, size: int
    ) -> tuple[str, list[dict[str, Any]], list[str]] | str | None:
        """The next batch claimed, of ``size`` entries at most: (batch id, its entries,
        their test command); ``AGAIN`` to look once more; ``None`` when none is to be
        taken now. ``busy``: batches are at work (a refusal then stops taking, instead of
        being raised)."""
        if self.stopped or (self.taken and not self.run_all):
            return None
        if self.taken:
            self.report.picked_up += self.pick_up()
        state = self.queue.read()
        pending = state.pending()
        if not pending:
            self.company = None
            return None
        try:
            if state.paused:
                raise RuneError("the merge queue is paused; `merge-queue resume` first")
            problem = self.not_ready(pending[0])
            if problem:
                raise RuneError(problem)
        except RuneError as exc:
            if not self.report.outcomes and not busy:
                raise
            self.report.stopped, self.stopped = exc.message, True  # keep what was done
            return None
        settings = self.settings
        chosen = next_batch(pending, size, settings.test_command, self.waiting)
        if not chosen or self._waits_for_company(chosen, size):
            return None
        batch_id = self.new_id()
        claimed = self.queue.claim_batch(chosen, batch_id)
        if not claimed:
            return AGAIN
        self.taken += 1
        return batch_id, claimed, command_of(chosen[0], settings.test_command) or []

    def _waits_for_company(self, chosen: list[QueueEntry], size: int) -> bool:
        settings = self.settings
        wait = wait_for_company(chosen, size, settings.batch_wait_seconds, self.queue.clock.now())
        if wait > 0 and self.company is None:
            self.company = time.monotonic() + wait
        if self.company is not None and time.monotonic() < self.company:
            return True
        self.company = None
        return False
