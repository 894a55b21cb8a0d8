"""What a review screen reads and acts on, whoever holds the agent: this project
(``LocalReview``), a branch with no agent (``BranchReview``: read only), or a source of a
fleet (``ActionsReview``: the same CLI commands, over SSH for a remote one, their JSON
read back). Each ``load`` and decision blocks (git, files, a network round trip): call
them off the UI thread."""

from __future__ import annotations

from typing import Any, Protocol

from runeconsole.core.errors import RuneError
from runeconsole.services.review.changes import Changes
from runeconsole.services.review.diff import ReviewDiff, read_patch
from runeconsole.services.review.records import Comment
from runeconsole.services.review.report import (
    approval_message,
    comment_message,
    sent_message,
)
from runeconsole.services.review.service import Reviews


class Loaded:
    """A review as loaded: the diff, the open review's comments, the agent's state."""

    __slots__ = ("comments", "diff", "state")

    def __init__(self, diff: ReviewDiff, comments: list[Comment], state: str) -> None:
        self.diff, self.comments, self.state = diff, comments, state


class ReviewTarget(Protocol):
    label: str  # shown in the title: the agent's key (source/key in a fleet) or branch
    decides: bool  # comments, approval and sending are possible

    def load(self) -> Loaded: ...

    def comment(self, text: str, file: str | None, line: int | None, side: str) -> str: ...

    def approve(self) -> str: ...

    def send(self) -> str: ...


def _loaded(report: dict[str, Any]) -> Loaded:
    """A ``review --json`` report read back (every field checked by ``from_json``)."""
    changes = Changes.from_json(report)
    text = report.get("diff")
    review = report.get("review")
    rows = review.get("comments") if isinstance(review, dict) else None
    comments = [Comment.from_json(r) for r in rows or () if isinstance(r, dict)]
    state = report.get("review_state")
    return Loaded(read_patch(changes, text if isinstance(text, str) else ""), comments, str(state))


class LocalReview:
    decides = True

    def __init__(self, reviews: Reviews, key: str) -> None:
        self.reviews, self.key, self.label = reviews, key, key

    def load(self) -> Loaded:
        reviews, key = self.reviews, self.key
        record, _ = reviews.target(key)
        diff = reviews.diff(key)
        review = reviews.records.open_review(key)
        comments = review.comments if review is not None else []
        return Loaded(diff, comments, reviews.state(record, changes=diff.changes))

    def comment(self, text: str, file: str | None, line: int | None, side: str) -> str:
        record = self.reviews.comment(self.key, text, file=file, line=line, side=side)
        return comment_message(self.key, record.to_json())

    def approve(self) -> str:
        return approval_message(self.key, self.reviews.approve(self.key).to_json())

    def send(self) -> str:
        return sent_message(self.key, self.reviews.send(self.key).to_json())


class BranchReview:
    """A queued branch whose agent is unknown here: its commits, read only."""

    decides = False

    def __init__(self, reviews: Reviews, branch: str) -> None:
        self.reviews, self.branch, self.label = reviews, branch, branch

    def load(self) -> Loaded:
        return Loaded(self.reviews.branch_diff(self.branch), [], "none")

    def _refused(self) -> str:
        raise RuneError(f"{self.branch} has no agent here: nothing to comment on or send to")

    def comment(self, text: str, file: str | None, line: int | None, side: str) -> str:
        return self._refused()

    def approve(self) -> str:
        return self._refused()

    def send(self) -> str:
        return self._refused()


class ReviewActions(Protocol):
    """The review calls of a fleet source's actions (``services/sources/actions.py``)."""

    def review(self, key: str) -> Any: ...

    def review_comment(
        self, key: str, text: str, file: str | None, line: int | None, side: str
    ) -> Any: ...

    def review_approve(self, key: str) -> Any: ...

    def review_send(self, key: str) -> Any: ...


class ActionsReview:
    """An agent of a fleet's source, reviewed through that source's actions."""

    decides = True

    def __init__(self, actions: ReviewActions, key: str, label: str) -> None:
        self.actions, self.key, self.label = actions, key, label

    def load(self) -> Loaded:
        report = self.actions.review(self.key)
        if not isinstance(report, dict):
            raise RuneError(f"{self.label}: no review came back")
        return _loaded(report)

    def comment(self, text: str, file: str | None, line: int | None, side: str) -> str:
        data = self.actions.review_comment(self.key, text, file, line, side)
        return comment_message(self.label, data if isinstance(data, dict) else {})

    def approve(self) -> str:
        data = self.actions.review_approve(self.key)
        return approval_message(self.label, data if isinstance(data, dict) else {})

    def send(self) -> str:
        data = self.actions.review_send(self.key)
        return sent_message(self.label, data if isinstance(data, dict) else {})
