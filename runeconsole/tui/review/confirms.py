"""The review screen's two decisions, each asked first: ``A`` approves the agent's work
into the merge queue, ``S`` sends the comments to the agent as one prompt."""

from __future__ import annotations

from runeconsole.services.review.records import Comment
from runeconsole.services.review.targets import Loaded
from runeconsole.tui.confirm import ConfirmScreen


def approve_window(label: str, loaded: Loaded | None) -> ConfirmScreen:
    changes = loaded.diff.changes if loaded else None
    branch = changes.branch if changes else "its branch"
    body = (
        f"{branch} joins the merge queue with {label}'s identity, worktree and node and bead "
        "ids; its predicted conflicts are shown at once."
    )
    return ConfirmScreen(f"Approve {label}?", body, "Approve")


def send_window(label: str, comments: list[Comment]) -> ConfirmScreen:
    count = len(comments)
    body = "\n".join(f"• {c.file or 'the change'}: {c.text}" for c in comments[:6])
    return ConfirmScreen(
        f"Send {count} comment{'s' * (count != 1)} to {label}?",
        body + "\n\nThey reach the agent as one prompt, typed into its pane.",
        "Send",
    )
