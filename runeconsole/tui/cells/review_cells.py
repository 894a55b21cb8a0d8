"""How an agent's changes and review state are drawn: the Agents pane's CHANGES cell
(``+120 −34 5f``), and the words and colours each ``review_state`` has on screen."""

from __future__ import annotations

from rich.text import Text

from runeconsole.services.review.changes import Changes

# Headed ``±``: in an 80-column pane the column begins at its last column, where the
# header reads whole and so does the first character of each cell, the review mark.
CHANGES_COLUMN = ("changes", "±", 15)
STATE_STYLE = {
    "ready": "bold green",
    "approved": "bold cyan",
    "merged": "dim",
    "needs_input": "bold yellow",
    "working": "",
    "none": "dim",
}
STATE_MARK = {"ready": "●", "approved": "✓", "merged": "⛙"}


def compact(count: int) -> str:
    """``980``, ``12k``, ``1.2M``: a count in at most four characters."""
    if count < 1000:
        return str(count)
    if count < 10_000:
        return f"{count / 1000:.1f}k"
    if count < 1_000_000:
        return f"{count // 1000}k"
    return f"{count / 1_000_000:.1f}M"


def changes_cell(changes: Changes | None, state: str) -> Text:
    """``● +120 −34 5f``: lines added and removed and files changed, marked by the review
    state (``●`` ready, ``✓`` approved, ``⛙`` merged); why it cannot be read, in red."""
    if changes is None:
        return Text("")
    if changes.error:
        reason = "gone" if changes.error.endswith("is gone") else "unreadable"
        return Text(reason, "red")
    mark = STATE_MARK.get(state)
    text = Text(f"{mark} " if mark else "  ", STATE_STYLE.get(state, ""))
    if not changes.files:
        text.append("·" if not changes.ahead else f"{changes.ahead}c", "dim")
        return text
    text.append(f"+{compact(changes.added)}", "green")
    text.append(f" −{compact(changes.removed)}", "red")
    text.append(f" {compact(len(changes.files))}f", "dim")
    return text
