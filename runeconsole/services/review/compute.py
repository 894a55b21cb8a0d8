"""Working out an agent's changes with git: the base (the merge-base of its HEAD with the
main branch, or with the ref a reviewer names), the commits ahead of it, and every file
that differs from it in the working tree, untracked files included.

A worktree's changes (``worktree_changes``) need its ``git status``; a branch with no
worktree to look in (a queue entry whose agent is gone) has only its commits
(``branch_changes``). Failures a person can act on come back as ``Changes.error``.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from runeconsole.adapters import git_diff
from runeconsole.adapters.git_diff import EMPTY_TREE, RepoDirs
from runeconsole.adapters.git_status import Status
from runeconsole.core.errors import RuneError
from runeconsole.services.hook_file_changes import RUNTIME_PREFIXES
from runeconsole.services.review.changes import (
    COMMITTED,
    Changes,
    file_changes,
    places,
)

# The project's own runtime state is nobody's change (a session working in the root).
EXCLUDED = tuple(prefix.rstrip("/") for prefix in RUNTIME_PREFIXES)

One = TypeVar("One")
Other = TypeVar("Other")
# The commits from a base to a head (at most the limit), how many there are in all and
# the paths they changed: what ``git log`` says, the same for as long as both stand.
History = tuple[list[git_diff.Commit], int, set[str]]


def together(first: Callable[[], One], second: Callable[[], Other]) -> tuple[One, Other]:
    """Two git commands that do not need each other's answer, run at once (``first`` on a
    thread of its own): a review after a change waited for five processes one after the
    other; the wait is git's, the thread only waits on its process."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="review-git") as pool:
        started = pool.submit(first)
        other = second()
        return started.result(), other


def main_ref(main_branch: str) -> str:
    return f"refs/heads/{main_branch}"


def find_base(dirs: RepoDirs, head: str, base_ref: str) -> tuple[str | None, str | None]:
    """``(merge-base, None)``, or ``(None, why not)``."""
    base_commit = git_diff.resolve(dirs, base_ref)
    if base_commit is None:
        named = base_ref.removeprefix("refs/heads/")
        return None, f"no {named!r} to compare with in {dirs.toplevel}"
    found = git_diff.merge_base(dirs, base_commit, head)
    if found is None:
        return None, f"{head[:8]} shares no history with {base_ref.removeprefix('refs/heads/')}"
    return found, None


def worktree_changes(
    worktree: Path,
    dirs: RepoDirs,
    status: Status,
    base_ref: str,
    *,
    max_commits: int,
    base: str | None = None,
    context: int | None = None,
    history: History | None = None,
) -> tuple[Changes, str | None, History | None]:
    """The worktree's changes, given its ``status`` (and its ``base`` and the ``history``
    from it to the head, when known: no ``git log`` then); with ``context``, their patch
    too (from the same ``git diff``), else ``None``; and the history, to be kept."""
    where = str(worktree)
    head = status.head
    if head is None:  # no commit yet: everything in it is new
        commits: list[git_diff.Commit] = []
        committed: set[str] = set()
        base, ahead = EMPTY_TREE, 0
    else:
        if base is None:
            base, why = find_base(dirs, head, base_ref)
            if base is None:
                error = Changes(where, status.branch, head, base_ref=base_ref, error=why)
                return error, None, None
    found_base = base

    def files() -> tuple[list[git_diff.RawChange], str | None]:
        untracked = status.untracked
        if context is None:
            return git_diff.changed_files(
                dirs, found_base, untracked=untracked, excluded=EXCLUDED
            ), None
        return git_diff.changed_files_and_patch(
            dirs, found_base, untracked=untracked, excluded=EXCLUDED, context=context
        )

    if head is None:
        raw, text = files()
    elif history is not None:
        (commits, ahead, committed), (raw, text) = history, files()
    else:
        (commits, ahead, committed), (raw, text) = together(
            lambda: git_diff.commits(dirs, found_base, head, max_commits, EXCLUDED), files
        )
    changes = Changes(
        worktree=where,
        branch=status.branch,
        head=head,
        base=base,
        base_ref=base_ref,
        commits=tuple(commits),
        ahead=ahead,
        files=file_changes(raw, places(status, committed)),
    )
    return changes, text, (commits, ahead, committed)


def branch_changes(repo: Path, branch: str, base_ref: str, *, max_commits: int) -> Changes:
    """A branch's commits and their files, with no worktree (nothing uncommitted to see)."""
    try:
        dirs = git_diff.repo_dirs(repo)
        head = git_diff.resolve(dirs, f"refs/heads/{branch}")
        if head is None:
            return Changes(branch=branch, base_ref=base_ref, error=f"no branch {branch!r}")
        base, why = find_base(dirs, head, base_ref)
        if base is None:
            return Changes(branch=branch, head=head, base_ref=base_ref, error=why)
        commits, ahead, _ = git_diff.commits(dirs, base, head, max_commits, EXCLUDED)
        raw = git_diff.changed_files(dirs, base, head=head, excluded=EXCLUDED)
    except RuneError as exc:
        return Changes(branch=branch, base_ref=base_ref, error=exc.message)
    return Changes(
        branch=branch,
        head=head,
        base=base,
        base_ref=base_ref,
        commits=tuple(commits),
        ahead=ahead,
        files=file_changes(raw, {}),
    )


def branch_patch(repo: Path, changes: Changes, context: int) -> str:
    if changes.error or not changes.base or not changes.head:
        return ""
    dirs = git_diff.repo_dirs(repo)
    return git_diff.patch(dirs, changes.base, head=changes.head, excluded=EXCLUDED, context=context)


__all__ = ["COMMITTED", "EXCLUDED", "branch_changes", "branch_patch", "worktree_changes"]
