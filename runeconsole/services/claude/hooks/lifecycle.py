"""The rare events that go through the full services: an agent registered when its
session is first seen (or seen again after it ended), terminated at SessionEnd, and its
hook file checkpointed before a compaction. These import the registry and hook services
(YAML, filelock, git): fine once a session, not on every tool call.
"""

from __future__ import annotations

from pathlib import Path

from runeconsole.core.paths import ProjectPaths
from runeconsole.services.claude.bridge.payload import HookPayload

TYPE_CHECKING = False  # typing itself is not imported: the hook starts faster
if TYPE_CHECKING:
    from typing import Any

STARTED_BY = "claude-code"
CLAUDE_HOOK = "claude_hook"  # the writer recorded in hook files (never counted as the agent's)
# An identity brought back by a new session keeps where and how the agent runs.
KEPT_ON_REVIVAL = ("worktree", "tmux_session", "pid", "node_id", "bead_id")
DROPPED_METADATA = ("crashed_reason", "terminated_reason", "handoff", "pending_input")


def register(
    paths: ProjectPaths,
    role: str,
    name: str,
    payload: HookPayload,
    previous: dict[str, Any] | None,
) -> None:
    """A new identity for the session; ``previous`` (an ended identity of the key) becomes
    its predecessor and lends it its worktree, tmux session and metadata."""
    from runeconsole.services.project import Project
    from runeconsole.services.registry import LivenessSettings, Registry

    registry = Registry(Project(paths.root), settings=LivenessSettings())  # no talisman needed
    kept: dict[str, Any] = {}
    metadata: dict[str, Any] = {"started_by": STARTED_BY}
    predecessor = None
    if previous is not None:
        kept = {k: previous.get(k) for k in KEPT_ON_REVIVAL if previous.get(k) is not None}
        old = previous.get("metadata")
        if isinstance(old, dict):
            metadata = {k: v for k, v in old.items() if k not in DROPPED_METADATA}
        agent_id = previous.get("agent_id")
        predecessor = agent_id if isinstance(agent_id, str) else None
    worktree = kept.get("worktree") or payload.cwd
    pid = kept.get("pid")
    registry.register(
        role,
        name,
        session_id=payload.session_id,
        worktree=worktree if isinstance(worktree, str) else None,
        tmux_session=kept.get("tmux_session"),
        pid=pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
        node_id=kept.get("node_id"),
        bead_id=kept.get("bead_id"),
        predecessor_id=predecessor,
        metadata=metadata,
    )


def terminate(paths: ProjectPaths, key: str, agent_id: object, reason: str) -> None:
    """The session ended: the identity is terminated (once; ``AGENT_TERMINATED``)."""
    from runeconsole.services.project import Project
    from runeconsole.services.registry import LivenessSettings, Registry

    registry = Registry(Project(paths.root), settings=LivenessSettings())
    registry.mark_terminated(
        key,
        f"Claude Code session ended ({reason})",
        agent_id=agent_id if isinstance(agent_id, str) else None,
    )


def checkpoint(paths: ProjectPaths, key: str, worktree: object) -> None:
    """Before a compaction: the hook file's uncommitted files and checkpoint time, so a
    successor starts from the latest state. The agent's own fields are left alone."""
    from runeconsole.services.hook_files import HookFiles
    from runeconsole.services.project import Project

    where = Path(worktree) if isinstance(worktree, str) and Path(worktree).is_dir() else None
    HookFiles(Project(paths.root)).update(key, worktree=where, writer=CLAUDE_HOOK)
