"""Where an agent's work stands for a reviewer (``review_state``), from what it is doing,
its changes, its last review and the merge queue:

| state | when |
| --- | --- |
| ``needs_input`` | it waits on a question or a permission (answer that first) |
| ``working`` | busy or compacting, or active with nothing telling what it does |
| ``merged`` | its approved head has landed (the queue entry completed), or its hook says merged |
| ``approved`` | its current head was approved and waits in the merge queue |
| ``ready`` | idle or ended, its branch ahead of its base, nothing pending |
| ``none`` | nothing to review: no worktree, nothing ahead, or its changes unreadable |
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from runeconsole.services.claude.session.activity import BUSY, COMPACTING
from runeconsole.services.claude.session.view import AgentView
from runeconsole.services.liveness import ACTIVE, AgentRecord

if TYPE_CHECKING:
    from runeconsole.services.review.changes import Changes
    from runeconsole.services.review.records import ReviewRecord

WORKING, NEEDS_INPUT, READY = "working", "needs_input", "ready"
APPROVED, MERGED, NONE = "approved", "merged", "none"
MERGED_PHASE = "merged"


def settled(view: AgentView | None, active: bool) -> str | None:
    """The state that needs no git (``needs_input``, ``working``), or ``None`` when the
    agent is idle or ended and its changes decide."""
    if view is None:
        return None
    if view.waiting:
        return NEEDS_INPUT
    if view.activity in (BUSY, COMPACTING):
        return WORKING
    if active and view.activity is None:
        return WORKING  # alive, and nothing says it has stopped
    return None


def settled_states(records: list[AgentRecord], views: list[AgentView]) -> dict[str, str | None]:
    """``settled`` for every agent listed (``none`` for an unreadable one); ``None`` where
    the agent's changes must decide."""
    found: dict[str, str | None] = {}
    for record, view in zip(records, views, strict=True):
        found[record.key] = NONE if record.error else settled(view, record.get("status") == ACTIVE)
    return found


def review_state(
    view: AgentView | None,
    *,
    active: bool,
    changes: Changes | None,
    latest: ReviewRecord | None = None,
    entry_status: str | None = None,
    phase: str | None = None,
) -> str:
    """The agent's ``review_state``; ``entry_status``: the status of the queue entry its
    latest approval made (``None`` when there is none)."""
    # Here, not above: most agents are settled without them (``agents --json`` stays quick).
    from runeconsole.services.merge_queue import COMPLETED, IN_PROGRESS, PENDING
    from runeconsole.services.review.records import APPROVED as APPROVED_VERDICT

    early = settled(view, active)
    if early is not None:
        return early
    if changes is None or changes.error:
        return NONE
    approved = latest is not None and latest.verdict == APPROVED_VERDICT
    if approved and latest is not None and latest.head == changes.head:
        if entry_status == COMPLETED:
            return MERGED
        if entry_status in (PENDING, IN_PROGRESS):
            return APPROVED
    if phase == MERGED_PHASE and (latest is None or latest.head == changes.head):
        return MERGED
    return READY if changes.ahead > 0 else NONE


@dataclass(frozen=True)
class Standing:
    """What a look found: the changes (``None``: no worktree), the latest review and the
    status of the queue entry it made."""

    changes: Changes | None
    latest: ReviewRecord | None = None
    entry_status: str | None = None

    def state(self, record: AgentRecord, view: AgentView, phase: str | None) -> str:
        if record.error:
            return NONE
        return review_state(
            view,
            active=record.get("status") == ACTIVE,
            changes=self.changes,
            latest=self.latest,
            entry_status=self.entry_status,
            phase=phase,
        )
