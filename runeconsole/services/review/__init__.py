"""Reviewing agents' work: what each changed against its base, and deciding on it.

One job a module: ``changes`` (the model: files, commits, where each change lives),
``compute`` (git works them out), ``cache`` (kept per worktree, computed again only when
something moved), ``diff`` (a unified diff read into numbered lines), ``records`` (reviews
kept on disk), ``states`` (``review_state``), ``prompt`` (comments as one prompt),
``locate`` (where an agent works), ``settings``; ``service.Reviews`` joins them.
"""

from runeconsole.services.review.cache import ChangesCache
from runeconsole.services.review.changes import Changes, FileChange
from runeconsole.services.review.diff import FileDiff, ReviewDiff, read_patch
from runeconsole.services.review.records import (
    APPROVED,
    CHANGES_REQUESTED,
    NEW,
    OLD,
    Comment,
    ReviewRecord,
    ReviewRecords,
)
from runeconsole.services.review.service import Approval, NoWorktree, Reviews, Sent
from runeconsole.services.review.settings import ReviewSettings
from runeconsole.services.review.states import REVIEW_STATES, review_state

__all__ = [
    "APPROVED",
    "CHANGES_REQUESTED",
    "NEW",
    "OLD",
    "REVIEW_STATES",
    "Approval",
    "Changes",
    "ChangesCache",
    "Comment",
    "FileChange",
    "FileDiff",
    "NoWorktree",
    "ReviewDiff",
    "ReviewRecord",
    "ReviewRecords",
    "ReviewSettings",
    "Reviews",
    "Sent",
    "read_patch",
    "review_state",
]
