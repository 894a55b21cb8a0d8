"""What ``review --json`` and the review actions report, and the same in one line of
words: one home for both, so the CLI, the console and the fleet console (reading another
source's JSON) say the same thing."""

from __future__ import annotations

from typing import Any

from runeconsole.services.review.records import ReviewRecord
from runeconsole.services.review.service import Reviews


def review_report(
    reviews: Reviews, key: str, base: str | None = None, *, stat: bool = False
) -> dict[str, Any]:
    """``review KEY --json``: the changes, the diff (unless ``stat``), the agent's review
    state and its open review."""
    record, worktree = reviews.target(key)
    if stat:
        changes, text = reviews.changes_at(worktree, base), None
    else:
        found = reviews.diff(key, base)
        changes, text = found.changes, found.text
    report: dict[str, Any] = {
        "agent": key,
        "review_state": reviews.state(record, changes=changes),
        **changes.to_json(),
    }
    if text is not None:
        report["diff"] = text
    review = reviews.records.open_review(key)
    report["review"] = review.to_json() if review else None
    return report


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' * (count != 1)}"


def approval_message(key: str, data: dict[str, Any]) -> str:
    """``Approval.to_json()`` in words: where the branch is queued, and its conflicts."""
    entry = data.get("entry") or {}
    position = entry.get("position")
    where = f"position {position}" if position else entry.get("status") or "?"
    verb = "queued" if data.get("created") else "already queued"
    found = data.get("predicted_conflicts") or {}
    files = sorted({*(found.get("against_main") or ()), *(found.get("against_queue") or ())})
    if found.get("error"):
        conflicts = f"cannot predict: {found['error']}"
    else:
        conflicts = "with " + ", ".join(files) if files else "none predicted"
    return (
        f"approved {key}: {entry.get('branch')} {verb} as {entry.get('entry_id')} ({where}); "
        f"predicted conflicts: {conflicts}"
    )


def comment_message(key: str, data: dict[str, Any]) -> str:
    """A review's JSON after a comment: which review, how many comments wait."""
    comments = data.get("comments") or []
    last = comments[-1] if comments else {}
    place = "the whole change"
    if last.get("file"):
        place = last["file"] + (f":{last['line']}" if last.get("line") else "")
    return (
        f"{key}: comment on {place} in review {data.get('id')} "
        f"({_plural(len(comments), 'comment')}, not sent yet)"
    )


def sent_message(key: str, data: dict[str, Any]) -> str:
    return f"sent {_plural(int(data.get('comments') or 0), 'comment')} to {key}"


def review_line(record: ReviewRecord) -> str:
    """One review in a line: its id, verdict, comments, the head it was made on, when,
    and the queue entry an approval made."""
    if record.error:
        return f"{record.id}  unreadable: {record.error}"
    verdict = record.verdict or "open"
    count = len(record.comments)
    when = record.get("decided_at") or record.get("updated_at") or ""
    head = str(record.head or "")[:8]
    entry = f"  {record.queue_entry}" if record.queue_entry else ""
    return f"{record.id}  {verdict:<17} {_plural(count, 'comment')}  {head}  {when}{entry}"
