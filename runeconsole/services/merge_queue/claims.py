"""The processor's changes to the merge queue's file: claiming entries (one, or a batch),
giving them back untouched, queueing again those a dead processor held, the batches at
work (for the pane and ``status``), the speculative window, and the history the queue
learns from (green run times, flaky runs). Each a locked read-modify-write."""

from __future__ import annotations

import os
from typing import Any

from runeconsole.services.merge_queue.edits import QueueEdits
from runeconsole.services.merge_queue.model import (
    BATCH_SEQ,
    BATCHES,
    FLAKY_COUNTS,
    IN_PROGRESS,
    PENDING,
    WINDOW,
    QueueEntry,
    node_id_from,
)
from runeconsole.services.merge_queue.queue_file import SIGNALS_ACTED_ON
from runeconsole.services.merge_queue.timeouts import command_key, remember_green


class QueueClaims(QueueEdits):
    """Everything a processor writes; ``edits`` is what the operator writes."""

    def claim_batch(self, entries: list[QueueEntry], batch_id: str | None) -> list[dict[str, Any]]:
        """Mark those of ``entries`` that are still pending in progress for this process,
        in batch ``batch_id``; returns them as claimed, in the order given."""
        claimed = []
        with self._mutate() as data:
            items = [i for i in data["entries"] if isinstance(i, dict)]
            for entry in entries:
                item = _pending_item(items, entry)
                if item is None:
                    continue  # removed, or taken, since it was read
                attempts = item.get("attempts")
                item.update(
                    status=IN_PROGRESS,
                    started_at=self.now(),
                    completed_at=None,
                    error=None,
                    reason=None,
                    conflict_files=[],
                    attempts=(attempts if isinstance(attempts, int) else 0) + 1,
                    processor_pid=os.getpid(),
                    steps=[],
                    current_step="claimed",
                    batch_id=batch_id,
                    remote_wait=None,
                )
                if not isinstance(item.get("entry_id"), str):
                    item["entry_id"] = f"mq-{node_id_from(str(item.get('branch')))}-claimed"
                self._record(data, "start", item["entry_id"], batch=batch_id)
                claimed.append(dict(item))
        return claimed

    def release(self, entry_ids: list[str], reason: str) -> None:
        """Give entries claimed a moment ago back to the queue, at their places, as if they
        had not been claimed (an entry that conflicts only with a batch-mate waits for the
        next batch)."""
        with self._mutate() as data:
            for entry_id in entry_ids:
                item = self._find(data, entry_id)
                attempts = item.get("attempts")
                item.update(
                    status=PENDING,
                    started_at=None,
                    current_step=None,
                    processor_pid=None,
                    batch_id=None,
                    attempts=max(0, attempts - 1) if isinstance(attempts, int) else 0,
                )
                self._record(data, "release", entry_id, reason=reason)

    def requeue(self, entry_id: str, reason: str, **changes: Any) -> None:
        """Put an entry whose processor died back in the queue, at its place (``changes``
        are recorded in it too)."""
        with self._mutate() as data:
            item = self._find(data, entry_id)
            item.update(status=PENDING, current_step=None, processor_pid=None, started_at=None)
            item.update(batch_id=None)
            item.update(changes)
            self._record(data, "requeue", entry_id, reason=reason)

    def remember_signals(self, acted_on: list[str], present: set[str]) -> None:
        """Add ``acted_on`` to the signals already turned into entries (``SIGNALS_ACTED_ON``),
        forgetting those no longer in the signals directory (``present``). The file is only
        rewritten when that changes the list (the console asks every few seconds)."""

        def kept(data: dict[str, Any]) -> tuple[list[str], list[str]]:
            known = data.get(SIGNALS_ACTED_ON)
            known = [n for n in known if isinstance(n, str)] if isinstance(known, list) else []
            return known, [n for n in dict.fromkeys([*known, *acted_on]) if n in present]

        before, after = kept(self.read().data)
        if before == after:
            return
        with self._mutate() as data:
            data[SIGNALS_ACTED_ON] = kept(data)[1]

    # -- batches and what the queue learns ------------------------------------------------------

    def batch_seq(self) -> int:
        """The last batch number given (``b1``, ``b2``, …: numbered for the life of the
        queue's file; the processor, alone under its lock, counts on from here)."""
        last = self.read().data.get(BATCH_SEQ)
        return last if isinstance(last, int) and not isinstance(last, bool) else 0

    def show_batches(
        self,
        batches: list[dict[str, Any]],
        window: int | None,
        changes: dict[str, Any],
        seq: int | None = None,
    ) -> None:
        """The batches at work now and the window (top-level ``batches``, ``window``), with
        their entries' ``changes`` (``{entry_id: fields}``) and the last batch number
        given (``seq``), in one write."""
        with self._mutate() as data:
            data[BATCHES] = batches
            if window is not None:
                data[WINDOW] = window
            if seq is not None:
                data[BATCH_SEQ] = seq
            for item in data["entries"]:
                if isinstance(item, dict) and item.get("entry_id") in changes:
                    item.update(changes[item["entry_id"]])

    def mark_flaky(self, notes: dict[str, list[str]], command: list[str]) -> None:
        """A red run whose entries (``{entry_id: its notes so far}``) have all landed since
        flaked: each is marked ``flaky`` (which of them flaked cannot be told), and one
        flaky run of ``command`` is counted."""
        note = "its batch failed once and every entry of it passed since: marked flaky"
        self.update_entries({e: {"flaky": True, "notes": [*n, note]} for e, n in notes.items()})
        self.remember_run(command, None, flaky=True)

    def remember_run(self, command: list[str], seconds: float | None, *, flaky: bool) -> None:
        """A green run of ``command`` (its time, for ``test_timeout_seconds: auto``; none:
        a flaky run found later); and, ``flaky``: a run that failed, then passed, counted
        per command."""
        with self._mutate() as data:
            if seconds is not None:
                remember_green(data, command, seconds)
            if flaky:
                counts = data.get(FLAKY_COUNTS)
                counts = counts if isinstance(counts, dict) else {}
                key = command_key(command)
                count = counts.get(key)
                counts[key] = (count if isinstance(count, int) else 0) + 1
                data[FLAKY_COUNTS] = counts


def _pending_item(items: list[dict[str, Any]], entry: QueueEntry) -> dict[str, Any] | None:
    """``entry``'s item in the file if it still waits: by id, or (no id: a harness entry
    written without one) the first pending item of its branch."""
    wanted = entry.get("entry_id")
    for item in items:
        if item.get("status") != PENDING:
            continue
        if wanted is not None and item.get("entry_id") == wanted:
            return item
        if wanted is None and item.get("entry_id") is None and item.get("branch") == entry.branch:
            return item
    return None
