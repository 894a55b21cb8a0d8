"""The prompt a review's comments become: one message to the agent, each comment with
where it points (``file:line``), the line quoted as the reviewer saw it, and the text."""

from __future__ import annotations

from collections.abc import Sequence

from runeconsole.services.review.changes import Changes
from runeconsole.services.review.records import Comment


def compose(comments: Sequence[Comment], changes: Changes) -> str:
    where = changes.branch or "your worktree"
    base = (changes.base_ref or "").removeprefix("refs/heads/") or "its base"
    ahead = f", {changes.ahead} commit{'s' * (changes.ahead != 1)} ahead of {base}"
    head = f" at {changes.head[:8]}" if changes.head else ""
    lines = [f"Review comments on your changes ({where}{ahead if changes.ahead else ''}{head}):"]
    for number, comment in enumerate(comments, 1):
        lines.append("")
        lines.append(f"{number}. {comment.place}")
        if comment.quoted is not None:
            lines.append(f"   > {comment.quoted}")
        lines.extend(f"   {line}" for line in comment.text.strip().splitlines())
    lines.append("")
    lines.append("Please address each comment, then commit your work.")
    return "\n".join(lines)
