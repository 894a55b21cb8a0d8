"""Hook files `.claude/state/hooks/{role}-{name}.json`: an agent's crash-safe work state.

The harness writes ``phase`` (planning .. merged); we add ``work_phase``
(investigation .. completion) and friends; we read both and write the union, and
keep every field we do not know. ``files_modified`` always comes from git in the
agent's worktree, never from whoever calls us: the hook must list what is really
uncommitted when a successor takes over. Each change is a locked read-modify-write
with an atomic replace, followed by a ``HOOK_UPDATED`` signal carrying the hook (both in
``hook_file_changes``, which Claude Code's hook also writes through).

The supervisor writes hooks too (the monitor records the phase it reads on screen, a
kill or handoff refreshes ``files_modified``), so each write says who made it
(``updated_by``) and the agent's own writes are counted (``agent_updates``): a
handoff is confirmed only by the agent, never by the supervisor's own writes.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from runeconsole.core.errors import InvalidInput, RuneError, UnreadableFile
from runeconsole.core.files import (
    atomic_write_json,
    create_exclusive,
    is_temp_name,
    read_bytes,
    read_json_object,
)
from runeconsole.core.locks import locked
from runeconsole.core.timeutil import compact_stamp, iso_z
from runeconsole.core.validate import name_or_none, validate_id, validate_name
from runeconsole.services.hook_file_changes import (
    AGENT,
    agent_updates,
    announcement,
    hook_path,
    uncommitted_files,
    write_changes,
)
from runeconsole.services.pane_patterns import WORK_PHASES
from runeconsole.services.project import Project
from runeconsole.services.signals import Signals

HARNESS_PHASES = ("planning", "executing", "impl_complete", "validating", "merged")
MAX_TEXT = 4000
MONITOR, SUPERVISOR, MERGE_QUEUE = "monitor", "supervisor", "merge_queue"
# The fields the supervisor's own writes (monitor, kill, handoff) change.
SUPERVISOR_FIELDS = frozenset(
    {"work_phase", "files_modified", "updated_at", "last_checkpoint_at", "updated_by"}
)


@dataclass
class HookFile:
    """One hook file as read: every field kept; ``error`` when it cannot be used.
    ``replaced``: where the hook this one replaced was kept (set by ``create``)."""

    key: str
    path: Path
    fields: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    replaced: Path | None = None

    def get(self, name: str, default: Any = None) -> Any:
        return self.fields.get(name, default)

    @property
    def phase(self) -> str | None:
        return self.fields.get("phase")

    @property
    def work_phase(self) -> str | None:
        return self.fields.get("work_phase")

    @property
    def summary(self) -> str | None:
        return self.fields.get("work_summary")

    @property
    def files_modified(self) -> list[str]:
        files = self.fields.get("files_modified")
        return [str(f) for f in files] if isinstance(files, list) else []

    def to_json(self) -> dict[str, Any]:
        if self.error:
            return {"key": self.key, "path": str(self.path), "error": self.error}
        return {**self.fields, "key": self.key, "path": str(self.path)}


def _choice(value: str | None, allowed: tuple[str, ...], what: str) -> str | None:
    if value is not None and value not in allowed:
        raise InvalidInput(f"{what} {value!r} is not one of: {' | '.join(allowed)}")
    return value


def _text(value: str | None, what: str) -> str | None:
    if value is not None and len(value) > MAX_TEXT:
        raise InvalidInput(f"{what} is longer than {MAX_TEXT} characters")
    return value


def agent_wrote(before: dict[str, Any], after: HookFile | None) -> bool:
    """Whether the agent updated its hook since ``before`` (the fields as they were).

    Our writers count the agent's updates; a tool that does not know that count (the
    harness's scripts) shows itself by changing a field the supervisor never writes.
    """
    if after is None or after.error:
        return False
    fields = after.fields
    if agent_updates(fields) > agent_updates(before):
        return True
    ignored = SUPERVISOR_FIELDS | {"agent_updates"}
    return any(fields.get(k) != before.get(k) for k in (fields.keys() | before.keys()) - ignored)


class HookFiles:
    def __init__(self, project: Project, signals: Signals | None = None) -> None:
        self.project = project
        self.root, self.paths, self.clock = project.root, project.paths, project.clock
        self.signals = signals or Signals(project)

    def path_for(self, key: str) -> Path:
        return hook_path(self.paths, key)

    def archived(self, hook_id: str) -> Path:
        """Where a replaced hook is kept (``hooks/history/{hook_id}.json``)."""
        return self.paths.hook_history / f"{validate_name(hook_id, 'hook id')}.json"

    def _archive(self, key: str, now: datetime) -> Path | None:
        """Keep the hook about to be replaced, byte for byte (never overwriting a kept one)."""
        path = self.path_for(key)
        try:
            data = read_bytes(path, follow_symlinks=False)
        except UnreadableFile:  # missing, or a link or pipe: nothing of the agent's to keep
            return None
        old = self.read_path(path)
        hook_id = old.get("hook_id")
        if name_or_none(hook_id) is None:
            hook_id = f"hook-{key}-{compact_stamp(now)}-unreadable"
        kept = self.archived(hook_id)
        with contextlib.suppress(FileExistsError):
            create_exclusive(self.paths.inside(kept), data)
        return kept

    def read_path(self, path: Path) -> HookFile:
        key = path.name[: -len(".json")]
        try:
            return HookFile(key, path, read_json_object(path))
        except UnreadableFile as exc:
            return HookFile(key, path, error=exc.reason)

    def read(self, key: str) -> HookFile | None:
        """The hook of ``key``; ``None`` if it has none (bad files come back with ``error``)."""
        path = self.path_for(key)
        return self.read_path(path) if path.exists() else None

    def get(self, key: str) -> HookFile:
        hook = self.read(key)
        if hook is None:
            raise RuneError(f"no hook for {key!r} in {self.paths.hook_files}")
        if hook.error:
            raise RuneError(f"hook of {key!r} ({hook.path}) is unreadable: {hook.error}")
        return hook

    def list(self) -> list[HookFile]:
        try:
            entries = list(os.scandir(self.paths.hook_files))
        except FileNotFoundError:
            return []
        hooks = [
            self.read_path(Path(entry.path))
            for entry in entries
            if entry.name.endswith(".json") and not is_temp_name(entry.name) and entry.is_file()
        ]
        return sorted(hooks, key=lambda hook: hook.key)

    def create(
        self,
        role: str,
        name: str,
        *,
        node: str | None = None,
        bead: str | None = None,
        worktree: Path | None = None,
        summary: str | None = None,
        instructions: str | None = None,
        predecessor: HookFile | None = None,
        fresh: bool = False,
    ) -> HookFile:
        """The initial hook at spawn: a successor inherits its predecessor's work state.
        ``fresh``: the worktree was just made, so git is not asked what it changed.

        A hook already there is kept in ``hooks/history/`` first (``archived``), so a fresh
        ``spawn`` of the key never loses the resumption instructions it held.
        """
        key = f"{validate_id(role, 'role')}-{validate_id(name, 'name')}"
        for value, what in ((node, "node id"), (bead, "bead id")):
            if value is not None:
                validate_id(value, what)
        now = self.clock.now()
        stamp = iso_z(now)
        inherited = dict(predecessor.fields) if predecessor and not predecessor.error else {}
        fields: dict[str, Any] = {
            **inherited,
            "hook_id": f"hook-{key}-{compact_stamp(now)}",
            "role": role,
            "name": name,
            "identity_name": key,
            "phase": inherited.get("phase") or "planning",
            "work_phase": inherited.get("work_phase") or "investigation",
            "current_node": node if node is not None else inherited.get("current_node"),
            "current_bead": bead if bead is not None else inherited.get("current_bead"),
            "work_summary": _text(summary, "summary") or inherited.get("work_summary"),
            "resumption_instructions": _text(instructions, "instructions")
            or inherited.get("resumption_instructions"),
            "predecessor_hook_id": inherited.get("hook_id"),
            "created_at": stamp,
            "updated_at": stamp,
            "last_checkpoint_at": inherited.get("last_checkpoint_at"),
            "files_modified": uncommitted_files(worktree) if worktree and not fresh else [],
            "tests_status": inherited.get("tests_status"),
            "updated_by": SUPERVISOR,
            "agent_updates": 0,
        }
        fields.setdefault("last_committed_node", None)
        fields.setdefault("merged_at", None)
        with locked(self.paths.lock_for(f"hook-{key}"), what=f"hook {key}"):
            replaced = self._archive(key, now)
            atomic_write_json(self.paths.inside(self.path_for(key)), fields)
        hook = self._announce(key, fields)
        hook.replaced = replaced
        return hook

    def update(
        self,
        key: str,
        *,
        phase: str | None = None,
        work_phase: str | None = None,
        summary: str | None = None,
        bead: str | None = None,
        node: str | None = None,
        tests_status: str | None = None,
        instructions: str | None = None,
        worktree: Path | None = None,
        writer: str = AGENT,
    ) -> HookFile:
        """Change the given fields (others kept) and re-read ``files_modified`` from git.

        A missing hook is created; ``worktree`` is where git is asked (the agent's own
        worktree, from its identity); without one ``files_modified`` stays as it was.
        ``writer``: ``agent`` unless the supervisor or merge queue writes (``MONITOR``,
        ``SUPERVISOR``, ``MERGE_QUEUE``), so a handoff can tell the agent's save apart.
        """
        changes: dict[str, Any] = {
            "phase": _choice(phase, HARNESS_PHASES, "phase"),
            "work_phase": _choice(work_phase, WORK_PHASES, "work phase"),
            "work_summary": _text(summary, "summary"),
            "current_bead": validate_id(bead, "bead id") if bead is not None else None,
            "current_node": validate_name(node, "node id") if node is not None else None,
            "tests_status": _text(tests_status, "tests status"),
            "resumption_instructions": _text(instructions, "instructions"),
        }
        changes = {name: value for name, value in changes.items() if value is not None}
        if worktree is not None:
            changes["files_modified"] = uncommitted_files(worktree)
        fields = write_changes(self.paths, key, changes, writer, self.clock.now())
        return self._announce(key, fields)

    def _announce(self, key: str, fields: dict[str, Any]) -> HookFile:
        self.signals.send(*announcement(key, fields))
        return HookFile(key, self.path_for(key), fields)
