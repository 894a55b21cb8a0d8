"""What the processor knows of one batch while it works on it: its entries' runs (their
steps, notes and outcomes), the commits it was built into, its slot and test run; and
the steps it records, in each entry of the queue's file (one write a step, for the whole
batch) and as progress."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from runeconsole.adapters.processes import StreamResult
from runeconsole.services.merge_queue.model import EntryChanges, Progress, ProgressCallback
from runeconsole.services.merge_queue.outcomes import Run
from runeconsole.services.merge_queue.train import Batch

# Writes entries' changes (``{entry_id: fields}``) with the batches at work, in one write.
Write = Callable[[dict[str, EntryChanges]], None]
StepEnd = Callable[..., None]


@dataclass(eq=False)
class Work:
    batch: Batch
    runs: dict[str, Run]  # every entry's run (shared by the halves of a batch)
    command: list[str]
    progress: ProgressCallback | None = None
    commits: dict[str, str] = field(default_factory=dict)  # entry -> its commit in the chain
    slot: int | None = None
    token: int | None = None  # of the test run under way
    step: str = "claimed"
    step_at: str | None = None  # when that step began (ISO, the queue's clock)
    started: float = field(default_factory=time.monotonic)
    result: StreamResult | None = None  # of the last test run
    end_test: StepEnd | None = None

    def snapshot(self) -> dict[str, Any]:
        """The batch as the queue's file shows it (``batches``): for the pane and status."""
        batch = self.batch
        return {
            "batch_id": batch.batch_id,
            "entries": list(batch.entries),
            "state": batch.state,
            "step": self.step,
            "step_started_at": self.step_at,
            "slot": None if self.slot is None else self.slot + 1,
            "on": batch.on,
            "half_of": batch.half_of,
            "half": batch.half,
            "runs": batch.runs,
            "rounds": batch.rounds,
            "known_red": batch.known_red,
            "tip": batch.tip,
            "pid": os.getpid(),
        }

    @property
    def members(self) -> list[Run]:
        return [self.runs[e] for e in self.batch.entries if e in self.runs]

    @property
    def label(self) -> str:
        """How progress names it: the entry itself when it is alone."""
        entries = self.batch.entries
        return entries[0] if len(entries) == 1 else self.batch.batch_id

    def report(self, step: str, message: str, output: bool = False) -> None:
        if self.progress is not None:
            elapsed = time.monotonic() - self.started
            slot = None if self.slot is None else self.slot + 1
            event = Progress(self.label, step, message, elapsed, output, self.batch.batch_id, slot)
            self.progress(event)

    def begin(
        self,
        write: Write,
        now: str,
        name: str,
        runs: list[Run] | None = None,
        *,
        extra: dict[str, EntryChanges] | None = None,
        quiet: bool = False,
    ) -> StepEnd:
        """Record the start of step ``name`` for ``runs`` (the batch's entries) now, with
        ``extra`` fields (``{entry_id: fields}``) in the same write (``quiet``: no write, for
        a step too short to be worth one); the returned function records its end:
        ``(result, extra=None, summary=None)``, where ``result`` is one word for all or
        ``{entry_id: word}``, ``extra`` fields to write (for all, or ``{entry_id: fields}``
        with ``per_entry=True``)."""
        runs = self.members if runs is None else runs
        began = time.monotonic()
        self.step, self.step_at = name, now
        if not quiet:
            more = extra or {}
            write({r.entry_id: {"current_step": name, **more.get(r.entry_id, {})} for r in runs})
        self.report(name, f"{name}…")

        def finish(
            result: str | dict[str, str],
            extra: dict[str, Any] | None = None,
            summary: str | None = None,
            *,
            per_entry: bool = False,
        ) -> None:
            seconds = round(time.monotonic() - began, 3)
            changes: dict[str, EntryChanges] = {}
            for run in runs:
                word = result if isinstance(result, str) else result.get(run.entry_id, "ok")
                run.steps.append({"step": name, "started_at": now, "seconds": seconds})
                run.steps[-1]["result"] = word
                more = (extra or {}).get(run.entry_id, {}) if per_entry else (extra or {})
                # The step's own fields for the entry, as it gave them.
                changes[run.entry_id] = cast(EntryChanges, {"steps": list(run.steps), **more})
            write(changes)
            said = summary or (result if isinstance(result, str) else _summary(result))
            self.report(name, f"{name}: {said} ({seconds:.1f}s)")

        return finish


def _summary(results: dict[str, str]) -> str:
    """``3 ok, 1 conflict``: how many entries ended each way."""
    counts: dict[str, int] = {}
    for word in results.values():
        counts[word] = counts.get(word, 0) + 1
    if set(counts) == {"ok"}:
        return "ok"
    return ", ".join(f"{n} {word}" for word, n in counts.items())
