"""A hook file's fields changed under its lock, the ``HOOK_UPDATED`` signal that tells of
it, and what git says is uncommitted in the agent's worktree (``files_modified``).

Plain functions for whoever writes a hook file: ``HookFiles`` (the agent, the monitor,
the supervisor, the merge queue) and Claude Code's hook checkpointing before a
compaction, which imports nothing beyond these (no dataclasses, no typing, no registry).
"""

from __future__ import annotations

from runeconsole.adapters import git_status
from runeconsole.core.errors import RuneError, UnreadableFile
from runeconsole.core.files import atomic_write_json, read_json_object
from runeconsole.core.locks import locked
from runeconsole.core.paths import ProjectPaths
from runeconsole.core.timeutil import compact_stamp, iso_z
from runeconsole.core.validate import validate_name
from runeconsole.services.signal_parties import GUARDIAN, role_of

TYPE_CHECKING = False  # typing itself is not imported: the hook starts faster
if TYPE_CHECKING:
    from datetime import datetime
    from pathlib import Path
    from typing import Any

AGENT = "agent"  # the writer that counts as the agent's own save
RUNTIME_PREFIXES = (".claude/state/", ".claude/attractor/", "tmp/.rune-signals/")
GIT_SECONDS = 30.0


def hook_path(paths: ProjectPaths, key: str) -> Path:
    return paths.hook_files / f"{validate_name(key, 'agent key')}.json"


def uncommitted_files(worktree: Path) -> list[str]:
    """Changed tracked files (staged or not; a rename by its new name) plus untracked ones,
    from the top of the repository, in one ``git status``: everything a kill would put at
    risk. Our own runtime state (identities, hooks, signals) is not the agent's work and
    is left out even where a project forgot to ignore it."""
    entries = git_status.status(worktree, timeout=GIT_SECONDS).entries
    found = {entry.path for entry in entries}
    return sorted(name for name in found if not name.startswith(RUNTIME_PREFIXES))


def agent_updates(fields: dict[str, Any]) -> int:
    count = fields.get("agent_updates")
    return count if isinstance(count, int) and not isinstance(count, bool) else 0


def write_changes(
    paths: ProjectPaths, key: str, changes: dict[str, Any], writer: str, now: datetime
) -> dict[str, Any]:
    """``changes`` merged into the hook of ``key`` (created when missing) under its lock,
    stamped as a checkpoint at ``now`` by ``writer``; the fields as written."""
    path = hook_path(paths, key)
    stamp = iso_z(now)
    with locked(paths.lock_for(f"hook-{key}"), what=f"hook {key}"):
        fields = _read_for_update(key, path, now)
        fields.update(changes)
        fields["updated_at"] = fields["last_checkpoint_at"] = stamp
        fields["updated_by"] = writer
        if writer == AGENT:
            fields["agent_updates"] = agent_updates(fields) + 1
        if changes.get("phase") == "merged":
            fields["merged_at"] = stamp
        atomic_write_json(paths.inside(path), fields)
    return fields


def _read_for_update(key: str, path: Path, now: datetime) -> dict[str, Any]:
    if not path.exists():
        role, _, name = key.partition("-")
        return {
            "hook_id": f"hook-{key}-{compact_stamp(now)}",
            "role": role,
            "name": name,
            "identity_name": key,
            "created_at": iso_z(now),
        }
    try:
        return read_json_object(path)
    except UnreadableFile as exc:
        raise RuneError(
            f"hook of {key!r} cannot be updated: {exc.reason}; fix or remove {path}"
        ) from None


def announcement(key: str, fields: dict[str, Any]) -> tuple[str, str, str, dict[str, Any]]:
    """The ``HOOK_UPDATED`` signal of a write: type, source (the agent's role), target (the
    guardian) and payload (the hook as written, with its key)."""
    return "HOOK_UPDATED", role_of(fields), GUARDIAN, {"key": key, **fields}
