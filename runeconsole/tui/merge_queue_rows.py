"""What the Merge queue pane draws: its header line, and of an entry its row, its detail
and its search text."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text

from runeconsole.core.timeutil import format_age
from runeconsole.services.merge_queue import (
    COMPLETED,
    FAILED,
    IN_PROGRESS,
    PENDING,
    Prediction,
    QueueEntry,
    QueueState,
)

COLUMNS = (
    ("pos", "#", 2),
    ("status", "STATUS", 11),
    ("branch", "BRANCH", 18),
    ("identity", "IDENTITY", 20),
    ("age", "AGE", 5),
    ("conflicts", "CONFLICTS", 12),
    ("id", "ID", None),
)
STATUS_STYLE = {PENDING: "", IN_PROGRESS: "bold yellow", FAILED: "bold red", COMPLETED: "green"}


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


def row_values(
    entry: QueueEntry, prediction: Prediction | None, now: datetime
) -> tuple[object, ...]:
    return (
        str(entry.position or ""),
        Text(entry.status, STATUS_STYLE.get(entry.status, "")),
        entry.branch,
        entry.identity or "",
        age_of(entry, now),
        conflicts_cell(entry, prediction),
        entry.entry_id,
    )


def age_of(entry: QueueEntry, now: datetime) -> str:
    queued = entry.queued_at()
    return format_age((now - queued).total_seconds() if queued else None)


def detail_text(entry: QueueEntry | None, prediction: Prediction | None) -> Text:
    """What the operator needs about the selected entry: why it failed, what it would hit."""
    if entry is None:
        return Text("the merge queue is empty", "dim")
    text = Text.assemble((entry.entry_id, "bold"), f"  {entry.branch}  ")
    text.append(entry.status, STATUS_STYLE.get(entry.status, ""))
    if entry.get("attempts"):
        text.append(f"  attempt {entry.get('attempts')}", "dim")
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
    elif entry.status == COMPLETED and entry.get("merged_commit"):
        text.append(f"\nmerged as {str(entry.get('merged_commit'))[:12]}", "green")
    for note in entry.get("notes") or []:
        text.append(f"\nnote: {note}", "dim")
    return text


def search_fields(entry: QueueEntry) -> tuple[str, ...]:
    """What the filter looks in."""
    return (entry.entry_id, entry.branch, entry.identity or "", entry.status)


def header_text(state: QueueState, processing: str | None) -> Text:
    """Running or paused (or unreadable), what is being processed, and the counts."""
    text = Text()
    if state.error:
        text.append(f"unreadable: {state.error}", "bold red")
    elif state.paused:
        text.append("PAUSED", "bold yellow")
        text.append("  space resumes", "dim")
    else:
        text.append("queue running", "green")
    if processing:
        text.append(f"   processing {processing}", "bold")
    counts = state.counts()
    text.append(
        f"  ·  {counts[PENDING]} queued · {counts[FAILED]} failed · {counts[COMPLETED]} merged",
        "dim",
    )
    return text
