"""Sequential merge queue: ``.claude/state/merge-queue.json``.

Branches land on ``main`` one at a time: rebase onto ``main`` in a detached worktree
the queue owns, run the test command there, then move ``main`` with a compare-and-
swap so untested code never lands. The file is the harness's format; we keep every
field it writes (and any we do not know) and add ours beside them. Every change is
a locked read-modify-write; processing holds a second lock for its whole run, so
the CLI and the console can never process at the same time.

One job a module, imports pointing one way: ``model`` (statuses, entries, reports: a
leaf) and ``settings``; ``queue_file`` (the file and every change to it);
``predictions`` (conflicts, in the object store only); ``processor`` with ``landing``
(main, its checkout and the merged branch), ``outcomes`` (how an attempt is recorded),
``delivery`` (the signals owed, to whoever asked), ``recovery`` (after a processor died)
and ``holders`` (entries another processor holds); ``intake`` (the ``MERGE_READY``
signals for us, and only those, made entries); and ``service.MergeQueue``, which joins
them. The names callers use are re-exported here.
"""

from runeconsole.services.merge_queue.intake import OUR_NAME
from runeconsole.services.merge_queue.model import (
    BASE_MOVED,
    BRANCH_MISSING,
    COMPLETED,
    CONFLICT,
    FAILED,
    GIT_ERROR,
    IN_PROGRESS,
    INTERRUPTED,
    MAIN_DIRTY,
    PENDING,
    PICKED_UP,
    RECOVERED,
    STATUSES,
    TESTS_FAILED,
    TIMEOUT,
    Outcome,
    Prediction,
    ProcessPlan,
    ProcessReport,
    Progress,
    ProgressCallback,
    QueueBusy,
    QueueEntry,
    QueueState,
    QueueStatus,
    UnknownEntry,
)
from runeconsole.services.merge_queue.predictions import ConflictPredictor
from runeconsole.services.merge_queue.service import MergeQueue
from runeconsole.services.merge_queue.settings import MergeQueueSettings

__all__ = [
    "BASE_MOVED",
    "BRANCH_MISSING",
    "COMPLETED",
    "CONFLICT",
    "FAILED",
    "GIT_ERROR",
    "INTERRUPTED",
    "IN_PROGRESS",
    "MAIN_DIRTY",
    "OUR_NAME",
    "PENDING",
    "PICKED_UP",
    "RECOVERED",
    "STATUSES",
    "TESTS_FAILED",
    "TIMEOUT",
    "ConflictPredictor",
    "MergeQueue",
    "MergeQueueSettings",
    "Outcome",
    "Prediction",
    "ProcessPlan",
    "ProcessReport",
    "Progress",
    "ProgressCallback",
    "QueueBusy",
    "QueueEntry",
    "QueueState",
    "QueueStatus",
    "UnknownEntry",
]
