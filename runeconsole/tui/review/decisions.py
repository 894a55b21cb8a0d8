"""The review screen's decisions: ``A`` approves (the branch joins the merge queue), ``S``
sends the comments to the agent as one prompt; each asked first, run in a worker, and
what came back shown (the review is read again: its comments and state moved)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.screen import Screen

from runeconsole.core.errors import RuneError
from runeconsole.services.review.records import Comment
from runeconsole.services.review.targets import Loaded, ReviewTarget
from runeconsole.tui.confirm import ConfirmScreen
from runeconsole.tui.workers import background


class ReviewDecisions(Screen[None]):
    target: ReviewTarget
    loaded: Loaded | None
    comments: list[Comment]

    if TYPE_CHECKING:
        Done: Any

        def load(self, action: str = "load") -> None: ...

    def action_approve(self) -> None:
        if not self.target.decides:
            self.notify("this branch is queued already; it has no agent here", severity="warning")
            return
        changes = self.loaded.diff.changes if self.loaded else None
        branch = changes.branch if changes else "its branch"
        body = (
            f"{branch} joins the merge queue with {self.target.label}'s identity, worktree and "
            "node and bead ids; its predicted conflicts are shown at once."
        )
        self.app.push_screen(
            ConfirmScreen(f"Approve {self.target.label}?", body, "Approve"),
            lambda yes: self.decide("approve") if yes else None,
        )

    def action_send(self) -> None:
        if not self.comments:
            self.notify("no comments to send: c comments on a line, C on the whole change")
            return
        count = len(self.comments)
        body = "\n".join(f"• {c.file or 'the change'}: {c.text}" for c in self.comments[:6])
        self.app.push_screen(
            ConfirmScreen(
                f"Send {count} comment{'s' * (count != 1)} to {self.target.label}?",
                body + "\n\nThey reach the agent as one prompt, typed into its pane.",
                "Send",
            ),
            lambda yes: self.decide("send") if yes else None,
        )

    @background("review-decide")
    def decide(self, action: str) -> None:
        try:
            said = self.target.approve() if action == "approve" else self.target.send()
        except RuneError as exc:
            self.post_message(self.Done(action, said=exc.message, error=True))
            return
        self.post_message(self.Done(action, said=said))
        self.app.call_from_thread(self.load, "reload")  # its comments and state moved
