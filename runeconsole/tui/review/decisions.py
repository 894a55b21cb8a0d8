"""The review screen's decisions: ``A`` approves (the branch joins the merge queue), ``S``
sends the comments to the agent as one prompt; each asked first (``confirms.py``), run in
a worker, and what came back shown (the review is read again: its comments and state
moved)."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from textual.screen import Screen
from textual.worker import Worker

from runeconsole.core.errors import RuneError
from runeconsole.services.review.records import Comment
from runeconsole.services.review.targets import Loaded, ReviewTarget
from runeconsole.tui.review.confirms import approve_window, send_window
from runeconsole.tui.support.workers import background


class ReviewDecisions(Screen[None]):
    target: ReviewTarget
    loaded: Loaded | None
    comments: list[Comment]

    if TYPE_CHECKING:
        Done: Any

        def load(self, action: str = "load") -> Worker[None]: ...

    def action_approve(self) -> None:
        if not self.target.decides:
            self.notify("this branch is queued already; it has no agent here", severity="warning")
            return
        window = approve_window(self.target.label, self.loaded)
        self.app.push_screen(window, partial(self._confirmed, "approve"))

    def action_send(self) -> None:
        if not self.comments:
            self.notify("no comments to send: c comments on a line, C on the whole change")
            return
        window = send_window(self.target.label, self.comments)
        self.app.push_screen(window, partial(self._confirmed, "send"))

    def _confirmed(self, decision: str, yes: bool | None) -> None:
        if yes:
            self.decide(decision)

    @background("review-decide")
    def decide(self, action: str) -> None:
        try:
            said = self.target.approve() if action == "approve" else self.target.send()
        except RuneError as exc:
            self.post_message(self.Done(action, said=exc.message, error=True))
            return
        self.post_message(self.Done(action, said=said))
        self.app.call_from_thread(self.load, "reload")  # its comments and state moved
