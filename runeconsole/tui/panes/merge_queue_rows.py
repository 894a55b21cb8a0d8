"""What the Merge queue pane draws: its header line (the queue's figures), the batches at
work, and of an entry its row, its detail and its search text."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rich.text import Text

from runeconsole.core.timeutil import format_age
from runeconsole.services.merge_queue import (
    COMPLETED,
    FAILED,
    IN_PROGRESS,
    NORMAL,
    PENDING,
    PRIORITIES,
    Prediction,
    QueueEntry,
    QueueState,
    QueueStats,
)
from runeconsole.services.merge_queue.priority import SHORT
from runeconsole.services.merge_queue.stats import batch_line
from runeconsole.tui.panes.merge_queue_where import remote_detail

COLUMNS = (
    ("pos", "#", 2),
    ("priority", "PRI", 4),
    ("status", "STATUS", 11),
    ("branch", "BRANCH", 18),
    ("identity", "IDENTITY", 14),
    ("age", "AGE", 5),
    ("conflicts", "CONFLICTS", 12),
    ("id", "ID", None),
)
STATUS_STYLE = {PENDING: "", IN_PROGRESS: "bold yellow", FAILED: "bold red", COMPLETED: "green"}
PRIORITY_STYLE = {"urgent": "bold red", "high": "yellow", "normal": "", "low": "dim"}
BATCH_STYLE = {"testing": "yellow", "green": "green", "red": "bold red", "planned": "dim"}


def conflicts_cell(entry: QueueEntry, prediction: Prediction | None) -> Text:
    if entry.status == FAILED:
        files = entry.conflict_files
        return Text(", ".join(files) if files else str(entry.reason or "failed"), "red")
    if entry.status != PENDING or prediction is None:
        return Text("")
    if prediction.error:
        return Text(prediction.error, "red")
    if prediction.conflicts:
        return Text(", ".join(prediction.files) or "yes", "yellow")
    return Text("none", "dim")


def priority_cell(entry: QueueEntry) -> Text:
    """``high``; an entry raised by waiting has an arrow (the detail says how far)."""
    given = entry.priority
    now = PRIORITIES[entry.lane] if entry.status == PENDING else given
    if now != given:
        return Text(f"{SHORT[given] or given[:3]}↑", PRIORITY_STYLE[now])
    return Text(SHORT[given], PRIORITY_STYLE[given])


def status_cell(entry: QueueEntry) -> Text:
    """The status; in a batch, its step and the batch (``test b7``; ``waiting b7`` for an
    unreachable remote: the detail says for what)."""
    batch = entry.batch_id
    if entry.status == IN_PROGRESS and batch:
        step = "waiting" if entry.step.startswith("waiting for ") else entry.step
        return Text(f"{step} {batch}", STATUS_STYLE[IN_PROGRESS])
    text = "flaky" if entry.status == COMPLETED and entry.get("flaky") else entry.status
    return Text(text, STATUS_STYLE.get(entry.status, ""))


def row_values(
    entry: QueueEntry, prediction: Prediction | None, now: datetime
) -> tuple[object, ...]:
    return (
        str(entry.position or ""),
        priority_cell(entry),
        status_cell(entry),
        entry.branch,
        entry.identity or "",
        age_of(entry, now),
        conflicts_cell(entry, prediction),
        entry.entry_id,
    )


def age_of(entry: QueueEntry, now: datetime) -> str:
    queued = entry.queued_at()
    return format_age((now - queued).total_seconds() if queued else None)


def pr_number(entry: QueueEntry) -> int | None:
    number = entry.get("pr_number")
    return number if isinstance(number, int) and not isinstance(number, bool) else None


def detail_text(
    entry: QueueEntry | None,
    prediction: Prediction | None,
    now: datetime | None = None,
    remote: str | None = None,
) -> Text:
    """What the operator needs about the selected entry: its pull request, why it failed,
    what it would hit, which batch it is in; on a queue that lands on ``remote``, its
    branch there and its wait for the remote (``now``: how long)."""
    if entry is None:
        return Text("the merge queue is empty", "dim")
    text = Text.assemble((entry.entry_id, "bold"), f"  {entry.branch}  ")
    number = pr_number(entry)
    if number is not None:
        text.append(f"PR #{number}", "bold cyan")
        text.append("  ")
    text.append(entry.status, STATUS_STYLE.get(entry.status, ""))
    if entry.priority != NORMAL or entry.lane != PRIORITIES.index(NORMAL):
        text.append(f"  {entry.priority}", PRIORITY_STYLE[entry.priority])
        if entry.status == PENDING and PRIORITIES[entry.lane] != entry.priority:
            text.append(f" (taken as {PRIORITIES[entry.lane]}: it has waited)", "dim")
    if entry.get("attempts"):
        text.append(f"  attempt {entry.get('attempts')}", "dim")
    if now is not None:
        for line in remote_detail(entry, now, remote):
            text.append("\n")
            text.append_text(line)
    if entry.status == FAILED:
        text.append(f"\nreason: {entry.reason or 'failed'}", "bold red")
        if entry.get("error"):
            text.append(f"  {entry.get('error')}", "red")
        if entry.conflict_files:
            text.append("\nconflicting files: ", "bold")
            text.append(", ".join(entry.conflict_files))
        tail = entry.get("output_tail")
        if isinstance(tail, list) and tail:
            text.append("\n" + "\n".join(str(line) for line in tail[-3:]), "dim")
    elif entry.status == PENDING and prediction is not None:
        text.append("\npredicted: ", "bold")
        text.append(prediction.summary(), "yellow" if prediction.conflicts else "green")
    elif entry.status == IN_PROGRESS and entry.get("processor_pid") is None:
        text.append("\nheld by another processor: processing waits for it", "yellow")
    elif entry.status == IN_PROGRESS and entry.batch_id:
        at = "" if entry.step.startswith("waiting for ") else f", at {entry.step}"
        text.append(f"\nin batch {entry.batch_id}{at}", "yellow")
    elif entry.status == COMPLETED and entry.get("merged_commit"):
        text.append(f"\nmerged as {str(entry.get('merged_commit'))[:12]}", "green")
        if entry.get("flaky"):
            text.append("  flaky: it passed on a retry", "yellow")
    for note in entry.get("notes") or []:
        text.append(f"\nnote: {note}", "dim")
    return text


def search_fields(entry: QueueEntry) -> tuple[str, ...]:
    """What the filter looks in (``#12``: the entry of pull request 12)."""
    number = pr_number(entry)
    return (
        entry.entry_id,
        entry.branch,
        f"#{number}" if number is not None else "",
        entry.identity or "",
        entry.status,
        entry.priority,
        entry.batch_id or "",
    )


def header_text(state: QueueState, stats: QueueStats, processing: str | None) -> Text:
    """Running or paused (or unreadable), what this console processes, and the figures:
    depth, wait p50/p95, landed per hour, failure rate."""
    text = Text()
    if state.error:
        text.append(f"unreadable: {state.error}", "bold red")
    elif state.paused:
        text.append("PAUSED", "bold yellow")
        text.append(" space resumes", "dim")
    else:
        text.append("running", "green")
    if processing:
        text.append(f" · processing {processing}", "bold")
    text.append(f" · depth {stats.depth}")
    if stats.wait_p50 is not None:
        text.append(
            f" · wait p50 {format_age(stats.wait_p50)} p95 {format_age(stats.wait_p95)}", "dim"
        )
    text.append(f" · {stats.landed_per_hour:.1f} landed/h", "dim")
    if stats.failure_rate is not None:
        style = "red" if stats.failure_rate >= 0.2 else "dim"
        text.append(f" · {stats.failure_rate:.0%} failed", style)
    return text


def batches_text(batches: list[dict[str, Any]], now: datetime, live: bool) -> Text:
    """The batches at work, one line each, in landing order: step, elapsed time, slot,
    what it was built on; a half of a red batch (bisection) says which. ``live``: their
    processor still runs (else they are what a dead one left, until the next recovers)."""
    if not live:
        return Text(
            f"{len(batches)} batch(es) left by a processor that is gone: the next "
            "`merge-queue process` recovers their entries",
            "yellow",
        )
    lines = [
        Text(batch_line(batch, now), BATCH_STYLE.get(str(batch.get("state")), ""))
        for batch in batches
    ]
    return Text("\n").join(lines)
