"""An identity's lifecycle as fields: a new identity, the agent id it takes, the identity it
replaces kept in ``history/``, its end (crashed, terminated) and the ``AGENT_*`` signal
that tells of each change.

Plain functions on the fields, for whoever holds the identity's lock: the ``Registry``
(its ``register``, ``mark_crashed``, ``mark_terminated``) and Claude Code's hook, which
registers and ends agents in the same write as the event's own change. It imports
nothing the hook does not already hold (no dataclasses, no typing, no talisman).
"""

from __future__ import annotations

import os
from datetime import timedelta

from runeconsole.core.errors import RuneError, UnreadableFile
from runeconsole.core.files import create_exclusive, dump_json, read_json_object
from runeconsole.core.paths import ProjectPaths
from runeconsole.core.timeutil import compact_stamp, iso_z
from runeconsole.core.validate import validate_id, validate_name
from runeconsole.services.signal_parties import GUARDIAN, agent_payload, role_of

TYPE_CHECKING = False  # typing itself is not imported: the hook starts faster
if TYPE_CHECKING:
    from datetime import datetime
    from pathlib import Path
    from typing import Any, TypedDict, Unpack

    # The records an identity holds, as their writers and readers across the services know
    # them (for the type checker alone: read from a file, a dict keeps every key it has).
    class Handoff(TypedDict, total=False):
        """A hand-off, as ``runeconsole handoff`` keeps it in the identity's metadata."""

        state: str  # requested, then how it ended (saved, forced…)
        requested_at: str
        timeout: float
        finished_at: str

    class PendingInput(TypedDict):
        """Text waiting for a pane safe to type in, and the signal sent once it is typed."""

        text: str
        signal_type: str | None

    class AgentMetadata(TypedDict, total=False):
        """An identity's ``metadata``: what the console and the hook keep of an agent beside the
        harness's fields, as the supervision, the dispatch, the hook and the panes read and
        write it. A key not named here is kept as read (the dict is the file's)."""

        started_by: str  # who made the identity: the hook, ``spawn --background``…
        found_by: str
        background: bool  # a Claude Code background session
        command: list[str]  # what a respawn re-runs
        tmux_socket: str | None  # the server it was spawned on (None: the default one)
        respawns: int
        auto_respawns: int  # against the auto-respawn limit
        respawn_cause: str
        resumed: dict[str, str]  # the agent and session it resumes
        forked_from: dict[str, Any]  # the agent, session and turn it is a fork of
        task_id: str  # the task it is an attempt of
        node_id: str  # the pipeline node it was started for
        setup_failed: bool  # its worktree's setup failed: never started
        handoff: Handoff
        context_warning: str | None  # the urgency last raised, or None once cleared
        crashed_reason: str
        terminated_reason: str
        pending_input: list[PendingInput] | None

    class IdentityChanges(TypedDict, total=False):
        """What the console and the CLI merge into an identity (``Registry.update``)."""

        status: str
        terminated_at: str
        pid: int | None
        session_id: str
        predecessor_id: str
        worktree: str
        worktree_path: str
        kind: str  # a Claude Code background session's agent: "background"
        background_id: str
        background_state: str | None
        session_name: str
        last_seen: str
        last_heartbeat: str
        activity: str  # what the hook says the agent is doing (the demo's scenes write it)
        waiting_for: str | None
        context_left_percent: int | None
        tokens: dict[str, int]
        cost: dict[str, Any]
        rate_limits: dict[str, Any]

    class Details(TypedDict, total=False):
        """What a registration may say of the agent besides its role and name."""

        session_id: str | None
        worktree: str | None
        tmux_session: str | None
        pid: int | None
        node_id: str | None
        bead_id: str | None
        predecessor_id: str | None
        metadata: AgentMetadata | None


ACTIVE, CRASHED, TERMINATED = "active", "crashed", "terminated"
ENDED_AT = {CRASHED: "crashed_at", TERMINATED: "terminated_at"}
ENDED_SIGNAL = {CRASHED: "AGENT_CRASHED", TERMINATED: "AGENT_TERMINATED"}
REGISTERED_SIGNAL = "AGENT_REGISTERED"


def identity_path(paths: ProjectPaths, key: str) -> Path:
    # The harness takes names as given: '.' is allowed, a way out of the directory not.
    return paths.identities / f"{validate_name(key, 'agent key')}.json"


def current(path: Path | str) -> dict[str, Any] | None:
    """The identity at ``path`` now; ``None`` when there is none or it cannot be read."""
    try:
        return read_json_object(path)
    except UnreadableFile:
        return None


def new_identity(
    paths: ProjectPaths, role: str, name: str, now: datetime, **details: Unpack[Details]
) -> dict[str, Any]:
    """The fields of a freshly registered identity (every id checked); its ``agent_id`` is
    decided by ``replacing``, under the lock, where the identity it replaces is known."""
    validate_id(role, "role")
    validate_id(name, "name")
    for field, what in (
        ("predecessor_id", "predecessor agent id"),
        ("tmux_session", "tmux session"),
        ("node_id", "node id"),
        ("bead_id", "bead id"),
    ):
        value = details.get(field)
        if value is not None:
            validate_id(value, what)
    worktree = details.get("worktree")
    stamp = iso_z(now)
    return {
        "agent_id": "",
        "role": role,
        "name": name,
        "session_id": details.get("session_id"),
        "worktree": worktree,
        "worktree_path": worktree,
        "status": ACTIVE,
        "created_at": stamp,
        "last_heartbeat": stamp,
        "last_seen": stamp,
        "crashed_at": None,
        "terminated_at": None,
        "predecessor_id": details.get("predecessor_id"),
        "metadata": details.get("metadata") or {},
        "pid": details.get("pid"),
        "tmux_session": details.get("tmux_session"),
        "node_id": details.get("node_id"),
        "bead_id": details.get("bead_id"),
        "hook_path": str(paths.hook_files / f"{role}-{name}.json"),
    }


# What an identity carries for its key rather than for itself, kept when a successor
# replaces it: ``cost``, the key's spending, whose ledger outlives its sessions
# (``services/cost/ledger.py``). Dropped, the fleet's "today" would fall back by the
# agent's spending until its new session booked something.
KEPT_FOR_THE_KEY = ("cost",)


def replacing(
    paths: ProjectPaths,
    key: str,
    fields: dict[str, Any],
    previous: dict[str, Any] | None,
    now: datetime,
) -> None:
    """Under the identity's lock, before ``fields`` replace ``previous`` (the identity as
    read there, ``None`` if none or unreadable): they take an agent id of their own and
    ``previous`` is kept in ``history/`` so a successor's chain can be followed; what
    belongs to the key (``KEPT_FOR_THE_KEY``) goes on."""
    fields["agent_id"] = _new_agent_id(paths, key, now, fields.get("predecessor_id"), previous)
    if previous is not None:
        fields.update({k: previous[k] for k in KEPT_FOR_THE_KEY if k in previous})
    _archive(paths, previous)


def _new_agent_id(
    paths: ProjectPaths,
    key: str,
    now: datetime,
    predecessor_id: object,
    previous: dict[str, Any] | None,
) -> str:
    """``{key}-{YYYYMMDDTHHMMSSZ}`` (the harness form), never one already taken: a
    successor started within the same second as its predecessor takes the next second,
    so chains never point at themselves."""
    taken = {predecessor_id, previous.get("agent_id") if previous is not None else None}
    moment = now
    while True:
        agent_id = f"{key}-{compact_stamp(moment)}"
        archived = paths.identity_history / f"{agent_id}.json"
        if agent_id not in taken and not os.path.lexists(archived):
            return agent_id
        moment += timedelta(seconds=1)


def _archive(paths: ProjectPaths, previous: dict[str, Any] | None) -> None:
    """Keep the identity being replaced (never overwriting one kept before)."""
    agent_id = previous.get("agent_id") if previous is not None else None
    if not isinstance(agent_id, str):
        return
    try:
        validate_name(agent_id, "agent id")
        target = paths.inside(paths.identity_history / f"{agent_id}.json")
        create_exclusive(target, dump_json(previous))
    except (FileExistsError, RuneError):
        pass


def end(key: str, fields: dict[str, Any], status: str, reason: str | None, now: datetime) -> bool:
    """``fields`` marked ``status`` (``CRASHED`` or ``TERMINATED``) at ``now``, with the
    reason in their metadata; False when they already were (nothing changed). A terminated
    identity is never marked crashed."""
    if fields.get("status") == status:
        return False
    if fields.get("status") == TERMINATED:
        raise RuneError(f"agent {key!r} is already terminated")
    fields["status"] = status
    fields[ENDED_AT[status]] = iso_z(now)
    if reason:
        metadata = fields.get("metadata")
        metadata = metadata if isinstance(metadata, dict) else {}
        metadata[f"{status}_reason"] = reason
        fields["metadata"] = metadata
    return True


def announcement(
    signal_type: str, key: str, fields: dict[str, Any], reason: str | None = None
) -> tuple[str, str, str, dict[str, Any]]:
    """The ``AGENT_*`` signal of a change: its type, source (the agent's role), target (the
    guardian, as the harness's runner sends) and payload."""
    return signal_type, role_of(fields), GUARDIAN, agent_payload(signal_type, key, fields, reason)
