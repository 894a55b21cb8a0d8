"""The rare events that change an agent's life: registered when its session is first seen
(or seen again after it ended), terminated at SessionEnd, its hook file checkpointed
before a compaction.

Registration and the end are made in the hook's own write of the identity (``agent_state``),
the checkpoint in one write of the hook file, each followed by its signal. They go
through the registry's and the hook files' own field functions (``identity_fields``,
``hook_file_changes``, ``signal_writer``), which import no dataclasses, typing, YAML or
filelock: these events cost the hook little more than a tool call.
"""

from __future__ import annotations

import os
from pathlib import Path

from runeconsole.core.paths import ProjectPaths
from runeconsole.services import identity_fields, signal_writer
from runeconsole.services.claude.bridge.payload import HookPayload

TYPE_CHECKING = False  # typing itself is not imported: the hook starts faster
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

    from runeconsole.services.identity_fields import AgentMetadata

STARTED_BY = "claude-code"
CLAUDE_HOOK = "claude_hook"  # the writer recorded in hook files (never counted as the agent's)
# An identity brought back by a new session keeps where and how the agent runs.
KEPT_ON_REVIVAL = ("worktree", "tmux_session", "pid", "node_id", "bead_id")
DROPPED_METADATA = ("crashed_reason", "terminated_reason", "handoff", "pending_input")


def registered(
    paths: ProjectPaths,
    role: str,
    name: str,
    payload: HookPayload,
    previous: dict[str, Any] | None,
    now: datetime,
) -> dict[str, Any]:
    """A new identity for the session, as the registry makes one, to be written under the
    identity's lock; ``previous`` (an ended identity of the key, read under that lock) is
    kept in history, becomes its predecessor and lends it its worktree, tmux session and
    metadata."""
    kept: dict[str, Any] = {}
    metadata: AgentMetadata = {"started_by": STARTED_BY}
    predecessor = None
    if previous is not None:
        kept = {k: previous.get(k) for k in KEPT_ON_REVIVAL if previous.get(k) is not None}
        old = previous.get("metadata")
        if isinstance(old, dict):  # the file's own keys, as read, less the dropped ones
            kept_metadata: Any = {k: v for k, v in old.items() if k not in DROPPED_METADATA}
            metadata = kept_metadata
        agent_id = previous.get("agent_id")
        predecessor = agent_id if isinstance(agent_id, str) else None
    worktree = kept.get("worktree") or payload.cwd
    pid = kept.get("pid")
    fields = identity_fields.new_identity(
        paths,
        role,
        name,
        now,
        session_id=payload.session_id,
        worktree=worktree if isinstance(worktree, str) else None,
        tmux_session=kept.get("tmux_session"),
        pid=pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
        node_id=kept.get("node_id"),
        bead_id=kept.get("bead_id"),
        predecessor_id=predecessor,
        metadata=metadata,
    )
    identity_fields.replacing(paths, f"{role}-{name}", fields, previous, now)
    return fields


def end_reason(payload: HookPayload) -> str:
    return f"Claude Code session ended ({payload.text('reason') or 'other'})"


def terminated(key: str, fields: dict[str, Any], payload: HookPayload, now: datetime) -> bool:
    """The session ended: ``fields`` (an active identity) marked terminated, once."""
    return identity_fields.end(key, fields, identity_fields.TERMINATED, end_reason(payload), now)


def announce(
    paths: ProjectPaths, now: datetime, signal: tuple[str, str, str, dict[str, Any]]
) -> None:
    """A signal (``identity_fields.announcement``, ``hook_file_changes.announcement``) written."""
    signal_writer.write(paths, now, *signal)


def announce_change(
    paths: ProjectPaths,
    key: str,
    fields: dict[str, Any],
    payload: HookPayload,
    now: datetime,
    *,
    registered: bool,
) -> None:
    """Once the identity is written: ``AGENT_REGISTERED`` for a registration, else
    ``AGENT_TERMINATED`` for the session's end (as the registry signals them)."""
    if registered:
        signal = identity_fields.announcement(identity_fields.REGISTERED_SIGNAL, key, fields)
    else:
        ended = identity_fields.ENDED_SIGNAL[identity_fields.TERMINATED]
        signal = identity_fields.announcement(ended, key, fields, end_reason(payload))
    announce(paths, now, signal)


def checkpoint(paths: ProjectPaths, key: str, worktree: object, now: datetime) -> None:
    """Before a compaction: the hook file's uncommitted files (one ``git status`` in the
    agent's worktree) and checkpoint time, so a successor starts from the latest state.
    The agent's own fields are left alone."""
    from runeconsole.services import hook_file_changes  # git (subprocess): this event's own

    changes: dict[str, Any] = {}
    if isinstance(worktree, str) and os.path.isdir(worktree):
        changes["files_modified"] = hook_file_changes.uncommitted_files(Path(worktree))
    fields = hook_file_changes.write_changes(paths, key, changes, CLAUDE_HOOK, now)
    announce(paths, now, hook_file_changes.announcement(key, fields))
