"""The queue's figures: depth, how long entries wait (p50, p95), how many land an hour,
how many fail, flaky runs per test command, and the batches at work. Computed from the
entries as read, over the last day, so the CLI (``merge-queue stats``), the pane's
header and the simulated day of the benchmarks all count alike."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from runeconsole.core.timeutil import format_age, parse_iso
from runeconsole.services.merge_queue.model import (
    BATCHES,
    COMPLETED,
    FAILED,
    FLAKY_COUNTS,
    IN_PROGRESS,
    PENDING,
    WINDOW,
    QueueEntry,
    QueueState,
)
from runeconsole.services.merge_queue.priority import waiting_since

WINDOW_HOURS = 24.0  # figures count the entries finished this long ago at most


def percentile(values: list[float], pct: float) -> float:
    """The value ``pct`` % of the way up the sorted values (nearest rank)."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return ordered[index]


@dataclass(frozen=True)
class QueueStats:
    depth: int  # waiting or being processed
    pending: int
    in_progress: int
    landed: int  # in the window
    failed: int
    wait_p50: float | None  # seconds from joining the queue to its outcome
    wait_p95: float | None
    landed_per_hour: float
    failure_rate: float | None  # failed / finished
    flaky: dict[str, int] = field(default_factory=dict)
    batches: list[dict[str, Any]] = field(default_factory=list)  # at work now
    window: int | None = None  # speculative runs allowed now
    parallel_runs: int = 1  # test slots in use (with ``auto``: from the measured share)
    batch_max: int = 1
    parallel_runs_auto: bool = False
    cpu_share: float | None = None  # CPU seconds per second of a test run, measured
    test_timeout: str = ""  # the limit a test run has now, and where it comes from
    test_timeout_seconds: float | None = None
    remote: dict[str, Any] | None = None  # where main is, here and there (``remote``)

    def to_json(self) -> dict[str, Any]:
        return {
            **{k: v for k, v in self.__dict__.items() if k not in ("wait_p50", "wait_p95")},
            "wait_p50_seconds": _round(self.wait_p50),
            "wait_p95_seconds": _round(self.wait_p95),
            "landed_per_hour": round(self.landed_per_hour, 2),
            "failure_rate": _round(self.failure_rate, 4),
            "cpu_share": _round(self.cpu_share, 3),
            "window_hours": WINDOW_HOURS,
        }


def _round(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)


def finished_at(entry: QueueEntry) -> datetime | None:
    return parse_iso(entry.get("completed_at"))


def figures(
    entries: Iterable[QueueEntry], now: datetime, hours: float = WINDOW_HOURS
) -> dict[str, Any]:
    """Depth, waits, landings and failures of ``entries`` as of ``now``."""
    counts = {PENDING: 0, IN_PROGRESS: 0, COMPLETED: 0, FAILED: 0}
    waits: list[float] = []
    earliest: datetime | None = None
    for entry in entries:
        status = entry.status
        if status in (PENDING, IN_PROGRESS):
            counts[status] += 1
            continue
        done = finished_at(entry)
        if status not in counts or done is None or (now - done).total_seconds() > hours * 3600:
            continue
        counts[status] += 1
        joined = waiting_since(entry.fields) or done
        waits.append(max(0.0, (done - joined).total_seconds()))
        earliest = joined if earliest is None else min(earliest, joined)
    finished = counts[COMPLETED] + counts[FAILED]
    span = (now - earliest).total_seconds() / 3600 if earliest is not None else hours
    return {
        "depth": counts[PENDING] + counts[IN_PROGRESS],
        "pending": counts[PENDING],
        "in_progress": counts[IN_PROGRESS],
        "landed": counts[COMPLETED],
        "failed": counts[FAILED],
        "wait_p50": percentile(waits, 50) if waits else None,
        "wait_p95": percentile(waits, 95) if waits else None,
        "landed_per_hour": counts[COMPLETED] / min(hours, max(1.0, span)),
        "failure_rate": counts[FAILED] / finished if finished else None,
    }


def queue_stats(
    state: QueueState, now: datetime, *, parallel_runs: int, batch_max: int, **more: Any
) -> QueueStats:
    data = state.data
    flaky = data.get(FLAKY_COUNTS)
    flaky = (
        {str(k): v for k, v in flaky.items() if isinstance(v, int)}
        if isinstance(flaky, dict)
        else {}
    )
    batches = data.get(BATCHES)
    window = data.get(WINDOW)
    return QueueStats(
        **figures(state.entries, now),
        flaky=flaky,
        batches=[b for b in batches if isinstance(b, dict)] if isinstance(batches, list) else [],
        window=window if isinstance(window, int) and not isinstance(window, bool) else None,
        parallel_runs=parallel_runs,
        batch_max=batch_max,
        **more,
    )


def batch_line(batch: dict[str, Any], now: datetime) -> str:
    """One batch at work in words: ``b7 4 entries · test 1m12s · slot 1 · on main``; a
    half of a red batch says so (``b9 half 1 of b7``)."""
    entries = batch.get("entries")
    count = len(entries) if isinstance(entries, list) else 0
    name = str(batch.get("batch_id") or "?")
    if batch.get("half_of"):
        name += f" half {batch.get('half')} of {batch.get('half_of')}"
    on = batch.get("on")
    state, step = batch.get("state"), str(batch.get("step") or "waiting")
    if state == "green":
        step = f"passed, lands after {on}" if on else "passed, landing"
    elif state == "red":
        step = "failed: splitting" if batch.get("known_red") else "failed"
    began = parse_iso(batch.get("step_started_at"))
    if began is not None and state != "green":
        step += f" {format_age((now - began).total_seconds())}"
    parts = [name, f"{count} entr{'y' if count == 1 else 'ies'}", step]
    if isinstance(batch.get("slot"), int):
        parts.append(f"slot {batch['slot']}")
    parts.append(f"on {on or batch.get('target') or 'main'}")
    runs = batch.get("runs")
    if isinstance(runs, int) and runs > 1:
        parts.append(f"run {runs}")
    return " · ".join(parts)
