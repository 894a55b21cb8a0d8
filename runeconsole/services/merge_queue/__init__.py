"""The merge queue: ``.claude/state/merge-queue.json``.

Branches land on ``main`` in batches: rebased one on the next in detached worktrees the
queue owns, tested once at the tip, and ``main`` moved there with a compare-and-swap, so
untested code never lands. A red batch is bisected down to its culprits; the next batch
tests speculatively on top of the one ahead; priority lanes age so nothing starves.
``batch_max: 1`` with ``parallel_runs: 1`` is the sequential queue, one entry at a time.
The file is the harness's format; we keep every field it writes (and any we do not know)
and add ours beside them. Every change is a locked read-modify-write; processing holds a
second lock for its whole run, so the CLI and the console can never process at once.

One job a module, imports pointing one way: ``priority`` (lanes and aging) and ``model``
(statuses, entries, reports) are leaves, with ``settings``; ``queue_file`` (reading, the
locked write) under ``edits`` (the operator's changes) under ``claims`` (the processor's);
``stats`` and ``timeouts`` (figures, limits from history); ``predictions`` (conflicts, in
the object store only); ``processor`` runs ``engine``: ``forming`` (which entries make a
batch, pure) and ``taking`` (claiming it), ``train`` (the order batches test and land
in: window, bisection, retries; pure rules), ``slots`` (worktrees and test runs),
``builder`` (a batch rebased into a chain), ``lander`` (a green batch landed) and
``work`` (a batch's steps), on ``target`` (the branch landed on: main or the remote's,
its checkout, the merged branches; ``remote`` fetches and pushes), ``outcomes`` (how an
entry ends), ``delivery`` (the signals owed, to whoever asked); ``recovery`` (after a
processor died) and ``holders`` (entries another processor holds); ``intake`` (the
``MERGE_READY`` signals for us made entries); and ``service.MergeQueue``, which joins
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
from runeconsole.services.merge_queue.priority import HIGH, LOW, NORMAL, PRIORITIES, URGENT
from runeconsole.services.merge_queue.service import MergeQueue
from runeconsole.services.merge_queue.settings import MergeQueueSettings
from runeconsole.services.merge_queue.stats import QueueStats

__all__ = [
    "BASE_MOVED",
    "BRANCH_MISSING",
    "COMPLETED",
    "CONFLICT",
    "FAILED",
    "GIT_ERROR",
    "HIGH",
    "INTERRUPTED",
    "IN_PROGRESS",
    "LOW",
    "MAIN_DIRTY",
    "NORMAL",
    "OUR_NAME",
    "PENDING",
    "PICKED_UP",
    "PRIORITIES",
    "RECOVERED",
    "STATUSES",
    "TESTS_FAILED",
    "TIMEOUT",
    "URGENT",
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
    "QueueStats",
    "QueueStatus",
    "UnknownEntry",
]
