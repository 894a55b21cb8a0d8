"""Changes kept per worktree and computed again only when something moved.

Two checks, cheapest first:

- ``quick``: ``stat`` of what a commit, a checkout, a ``git add`` or a move of the base
  touches (the worktree's ``HEAD`` and index, the branch's and the base's refs,
  ``packed-refs``), of the worktree's top directory and of every file the last
  computation found changed. No process is started: a heartbeat costs this.
- ``deep``: ``git status`` (which notices an edit to a file that was clean) and the base's
  commit; the numbers and the diff are worked out again only when these moved.

The diff (the review screen's lines) is kept beside the numbers for the same ``deep``
key, for the few worktrees last reviewed. Safe from several threads: one lock per
worktree, so the console's refresh and an open review never run git twice for it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from runeconsole.adapters import git_diff
from runeconsole.adapters.git_diff import RepoDirs, stamp
from runeconsole.adapters.git_status import Status
from runeconsole.core.errors import RuneError
from runeconsole.services.review.changes import Changes
from runeconsole.services.review.compute import EXCLUDED, History, together, worktree_changes
from runeconsole.services.review.diff import ReviewDiff, read_patch

PATCHES_KEPT = 8


@dataclass
class _Kept:
    dirs: RepoDirs | None = None
    quick: tuple[Any, ...] | None = None
    deep: tuple[Any, ...] | None = None
    changes: Changes | None = None
    bases: dict[tuple[str, str], str] = field(default_factory=dict)  # (head, base ref's commit)
    history: dict[tuple[str, str], History] = field(default_factory=dict)  # (base, head)
    lock: threading.Lock = field(default_factory=threading.Lock)


class ChangesCache:
    def __init__(self, *, max_commits: int = 200) -> None:
        self.max_commits = max_commits
        self._kept: dict[tuple[str, str], _Kept] = {}
        self._patches: OrderedDict[tuple[str, str], tuple[tuple[Any, ...], ReviewDiff]] = (
            OrderedDict()
        )
        self._lock = threading.Lock()
        self.computed = 0  # full computations (tests and benchmarks count them)
        self.probed = 0  # ``git status`` probes

    def _slot(self, worktree: Path, base_ref: str) -> _Kept:
        with self._lock:
            return self._kept.setdefault((str(worktree), base_ref), _Kept())

    def forget(self, worktree: Path) -> None:
        with self._lock:
            for key in [k for k in self._kept if k[0] == str(worktree)]:
                del self._kept[key]

    def changes(
        self, worktree: Path, base_ref: str, *, probe: bool = True, context: int | None = None
    ) -> Changes:
        """The worktree's changes against ``base_ref``: kept ones while nothing moved.
        ``probe=False`` (a heartbeat): trust ``quick`` alone when it has not moved.
        ``context``: a diff will be wanted; if the changes are worked out again, their
        patch comes from the same ``git diff`` and is kept for ``diff``."""
        kept = self._slot(worktree, base_ref)
        with kept.lock:
            return self._changes(worktree, base_ref, kept, probe, context)

    def _changes(
        self, worktree: Path, base_ref: str, kept: _Kept, probe: bool, context: int | None
    ) -> Changes:
        if not worktree.is_dir():
            kept.dirs = kept.quick = kept.deep = None
            gone = Changes(str(worktree), base_ref=base_ref, error=f"worktree {worktree} is gone")
            kept.changes = gone
            return gone
        try:
            if kept.dirs is None:
                kept.dirs = git_diff.repo_dirs(worktree)
            dirs = kept.dirs
            quick = self._quick(dirs, base_ref, kept.changes)
            if not probe and kept.changes is not None and quick == kept.quick:
                return kept.changes
            self.probed += 1
            status, resolved = together(
                lambda: git_diff.status(dirs, EXCLUDED), lambda: git_diff.resolve(dirs, base_ref)
            )
            base_commit = resolved or ""
            deep = (status.text, base_commit, self._dirty(dirs, status))
            if kept.changes is not None and deep == kept.deep:
                kept.quick = self._quick(dirs, base_ref, kept.changes)
                return kept.changes
            base = kept.bases.get((status.head or "", base_commit))
            changes, text, history = worktree_changes(
                worktree,
                dirs,
                status,
                base_ref,
                max_commits=self.max_commits,
                base=base,
                context=context,
                history=kept.history.get((base or "", status.head or "")),
            )
            self.computed += 1
        except RuneError as exc:
            kept.dirs = kept.quick = kept.deep = None
            kept.changes = Changes(str(worktree), base_ref=base_ref, error=exc.message)
            return kept.changes
        if changes.base and changes.head and not changes.error:
            kept.bases = {(changes.head, base_commit): changes.base}
            if history is not None:  # an edit moves neither: no git log next time
                kept.history = {(changes.base, changes.head): history}
        changes = replace(changes, fingerprint=deep)
        kept.changes, kept.deep = changes, deep
        kept.quick = self._quick(dirs, base_ref, changes)
        if text is not None and context is not None:
            self._keep_diff((str(worktree), base_ref), context, read_patch(changes, text))
        return changes

    def diff(self, worktree: Path, base_ref: str, context: int) -> ReviewDiff:
        """The changes (probed now) and their diff, read into lines: kept while they
        stand, so a review opened again costs a ``git status``, not the diff again."""
        changes = self.changes(worktree, base_ref, context=context)
        if changes.error:
            return ReviewDiff(changes, [])
        key = (str(worktree), base_ref)
        with self._lock:
            found = self._patches.get(key)
            if found is not None and found[0] == (changes.fingerprint, context):
                self._patches.move_to_end(key)
                return found[1]
        kept = self._slot(worktree, base_ref)
        dirs = kept.dirs or git_diff.repo_dirs(worktree)
        untracked = [f.path for f in changes.files if "untracked" in f.where]
        text = git_diff.patch(
            dirs, changes.base or "", untracked=untracked, excluded=EXCLUDED, context=context
        )
        diff = read_patch(changes, text)
        self._keep_diff(key, context, diff)
        return diff

    def _keep_diff(self, key: tuple[str, str], context: int, diff: ReviewDiff) -> None:
        with self._lock:
            self._patches[key] = ((diff.changes.fingerprint, context), diff)
            self._patches.move_to_end(key)
            while len(self._patches) > PATCHES_KEPT:
                self._patches.popitem(last=False)

    @staticmethod
    def _dirty(dirs: RepoDirs, status: Status) -> tuple[Any, ...]:
        """What ``git status`` cannot tell apart: a changed file changed again."""
        return tuple(stamp(dirs.toplevel / e.path) for e in status.entries)

    @staticmethod
    def _quick(dirs: RepoDirs, base_ref: str, changes: Changes | None) -> tuple[Any, ...]:
        common, own = dirs.common_dir, dirs.git_dir
        paths = [own / "HEAD", own / "index", common / "packed-refs", dirs.toplevel]
        if base_ref.startswith("refs/"):
            paths.append(common / base_ref)
        if changes is not None:
            if changes.branch:
                paths.append(common / "refs" / "heads" / changes.branch)
            paths += [dirs.toplevel / f.path for f in changes.files]
        return tuple(stamp(path) for path in paths)
