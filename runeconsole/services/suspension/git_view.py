"""The work tree as a context file is judged against: what ``git diff`` says changed, and
the suspend stashes that hold a task's partial work."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from runeconsole.adapters import git
from runeconsole.core.errors import RuneError

STASH_PREFIX = "rune-suspend-task-"


@dataclass
class GitView:
    """The work tree's changes, read once (one ``git diff``); the suspend stashes are
    read only when a stale context asks where its files went."""

    root: Path
    modified: frozenset[str] | None = None
    note: str = ""
    _stashes: list[tuple[str, str]] | None = None
    _stash_files: dict[str, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def read(cls, root: Path) -> GitView:
        try:
            modified = frozenset(git.changed_files(root))
        except RuneError as exc:
            return cls(root, None, note=f"git state unknown: {exc}")
        return cls(root, modified)

    @property
    def stashes(self) -> list[tuple[str, str]]:
        """``(ref, message)`` of the ``rune-suspend-task-…`` stashes (read on first use)."""
        if self._stashes is None:
            try:
                listed = git.stash_list(self.root)
            except RuneError:
                listed = []
            self._stashes = [s for s in listed if s[1].startswith(STASH_PREFIX)]
        return self._stashes

    def task_stashes(self, task_id: str) -> dict[str, frozenset[str]]:
        """This task's ``rune-suspend-task-{id}-{epoch}`` stashes and the files each holds."""
        held = {}
        for ref, message in self.stashes:
            if not message.startswith(f"{STASH_PREFIX}{task_id}-"):
                continue
            if ref not in self._stash_files:
                try:
                    self._stash_files[ref] = frozenset(git.stash_files(self.root, ref))
                except RuneError:
                    self._stash_files[ref] = frozenset()
            held[message] = self._stash_files[ref]
        return held

    def stashed_for(self, task_id: str) -> frozenset[str]:
        """Files held by this task's suspend stashes."""
        return frozenset().union(*self.task_stashes(task_id).values())

    def diverged(self, files_modified: list[str]) -> list[str]:
        """Context files not changed in the work tree now: Rune's resume compares
        ``files_modified`` with ``git diff --name-only HEAD --`` and nothing else."""
        if self.modified is None:
            return []
        return [f for f in files_modified if f not in self.modified]

    def held(self, task_id: str, files: list[str]) -> dict[str, str]:
        """Which of ``files`` the task's suspend stash holds: file -> stash message."""
        found = {}
        for message, names in self.task_stashes(task_id).items():
            for name in files:
                if name in names and name not in found:
                    found[name] = message
        return found
