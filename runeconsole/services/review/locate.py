"""Where an agent works: its identity's ``worktree_path`` / ``worktree``, else its hook
file's, else the ``cwd`` its Claude Code session reported. A relative path (the harness
writes ``.claude/worktrees/impl_auth``) is under the project root."""

from __future__ import annotations

from pathlib import Path

from runeconsole.services.hook_files import HookFile
from runeconsole.services.liveness import AgentRecord


def _path(value: object, root: Path) -> Path | None:
    if not isinstance(value, str) or not value or "\0" in value:
        return None
    path = Path(value).expanduser()
    return path if path.is_absolute() else root / path


def worktree_of(record: AgentRecord, hook: HookFile | None, root: Path) -> Path | None:
    found = record.worktree_in(root)
    if found is not None:
        return found
    if hook is not None and not hook.error:
        found = _path(hook.get("worktree_path") or hook.get("worktree"), root)
        if found is not None:
            return found
    claude = record.get("claude")
    return _path(claude.get("cwd"), root) if isinstance(claude, dict) else None
