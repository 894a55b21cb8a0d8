"""Git plumbing for the merge queue: refs, detached worktrees, rebase, merge-tree.

Everything goes through ``adapters.git.run_git`` (argument lists, timeouts). Refs are
checked with ``rev-parse --verify --quiet REF^{commit}`` before use, because a bad ref
makes ``merge-tree`` exit 1 with empty output, exactly like a conflict (git 2.39).
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from runeconsole.adapters.git import run_git
from runeconsole.core.errors import RuneError

# What ``git check-ref-format --branch`` refuses, checked without a subprocess per call.
_BAD_BRANCH = re.compile(
    r"^[-/.]|\.\.|@\{|^@$|[\x00-\x20\x7f~^:?*\[\\]|//|/\.|[/.]$|\.lock$|\.lock/"
)
# The queue's rebase is the same everywhere: no hooks, and no ``rebase.updateRefs``
# (it would move the agent's branch, which points into the commits being rebased).
_PLAIN_REBASE = [
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "rebase.updateRefs=false",
    "-c",
    "rebase.autoSquash=false",
]
# More paths than this and ``local_changes`` looks at the whole checkout instead.
MAX_PATHSPEC = 500
# Simulated merges are throw-away objects: give them an identity even where none is set.
# The queue's rebases use it too, but only where git has no identity of its own.
_SYNTHETIC_IDENTITY = ["-c", "user.name=runeconsole", "-c", "user.email=runeconsole@localhost"]


def valid_branch_name(name: object) -> bool:
    return isinstance(name, str) and 0 < len(name) <= 255 and not _BAD_BRANCH.search(name)


def resolve_commit(repo: Path, ref: str) -> str | None:
    """The commit ``ref`` names, or ``None`` if it names none (never raises for a bad ref)."""
    result = run_git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], repo, check=False)
    if result.returncode != 0:
        return None
    return result.stdout.strip() or None


def common_dir(repo: Path) -> Path:
    out = run_git(["rev-parse", "--git-common-dir"], repo, timeout=10).stdout.strip()
    path = Path(out)
    return path if path.is_absolute() else (repo / path).resolve()


def is_ancestor(repo: Path, ancestor: str, descendant: str) -> bool:
    result = run_git(["merge-base", "--is-ancestor", ancestor, descendant], repo, check=False)
    return result.returncode == 0


@dataclass(frozen=True)
class Worktree:
    path: Path
    head: str | None
    branch: str | None  # full ref name, e.g. refs/heads/main; None when detached


def worktrees(repo: Path) -> list[Worktree]:
    out = run_git(["worktree", "list", "--porcelain"], repo, timeout=20).stdout
    found: list[Worktree] = []
    for block in out.strip().split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            key, _, value = line.partition(" ")
            fields[key] = value
        if "worktree" in fields and "bare" not in fields:
            found.append(
                Worktree(Path(fields["worktree"]), fields.get("HEAD"), fields.get("branch"))
            )
    return found


def checked_out_at(repo: Path, branch: str) -> Path | None:
    """The worktree that has ``branch`` checked out, if any (one whose directory is gone, none)."""
    ref = f"refs/heads/{branch}"
    return next((wt.path for wt in worktrees(repo) if wt.branch == ref and wt.path.is_dir()), None)


def checked_out_branches(repo: Path) -> dict[str, Path]:
    """Every branch checked out in a worktree (whose directory is there), and where."""
    return {
        wt.branch.removeprefix("refs/heads/"): wt.path
        for wt in worktrees(repo)
        if wt.branch and wt.branch.startswith("refs/heads/") and wt.path.is_dir()
    }


def changed_between(repo: Path, old: str, new: str) -> list[str]:
    """Paths that differ between two commits (no worktree involved)."""
    out = run_git(["diff", "--name-only", "--no-renames", "-z", old, new], repo, timeout=120)
    return [path for path in out.stdout.split("\0") if path]


def changed_on_branch(repo: Path, base: str, tip: str) -> set[str]:
    """Paths ``tip`` changed since it left ``base`` (``diff base...tip``, no worktree)."""
    out = run_git(
        ["diff", "--name-only", "--no-renames", "-z", f"{base}...{tip}"], repo, timeout=120
    )
    return {path for path in out.stdout.split("\0") if path}


def add_detached(repo: Path, path: Path, commit: str, *, timeout: float = 300) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    run_git(
        [
            "-c",
            "core.hooksPath=/dev/null",
            "worktree",
            "add",
            "--detach",
            "--quiet",
            str(path),
            commit,
        ],
        repo,
        timeout=timeout,
    )


def switch_detached(worktree: Path, commit: str, *, timeout: float = 300) -> None:
    """Point a worktree we own at ``commit`` (detached), whatever it held: tracked files
    reset, untracked and ignored ones (a previous test run's) removed."""
    run_git(
        ["-c", "core.hooksPath=/dev/null", "checkout", "--quiet", "--detach", "--force", commit],
        worktree,
        timeout=timeout,
    )
    run_git(["clean", "-ffdxq"], worktree, timeout=timeout)


def tree_of(repo: Path, commit: str) -> str | None:
    """The tree a commit holds (two commits with one tree test alike)."""
    result = run_git(["rev-parse", "--verify", "--quiet", f"{commit}^{{tree}}"], repo, check=False)
    return result.stdout.strip() or None if result.returncode == 0 else None


def remove_worktree(repo: Path, path: Path) -> None:
    """Remove a worktree we own, whatever state it was left in (rebase, half-made)."""
    if path.exists():
        result = run_git(["worktree", "remove", "--force", "--force", str(path)], repo, check=False)
        if result.returncode != 0 and path.exists():
            shutil.rmtree(path, ignore_errors=True)
    run_git(["worktree", "prune"], repo, timeout=30)


def rebase_in_progress(worktree: Path) -> bool:
    for name in ("rebase-merge", "rebase-apply"):
        out = run_git(["rev-parse", "--git-path", name], worktree, timeout=10).stdout.strip()
        candidate = Path(out) if Path(out).is_absolute() else worktree / out
        if candidate.exists():
            return True
    return False


@dataclass(frozen=True)
class RebaseResult:
    ok: bool
    head: str | None = None
    conflicts: list[str] = field(default_factory=list)
    detail: str = ""


def identity_fallback(repo: Path) -> list[str]:
    """``-c`` options naming a committer, for the queue's own commits, when git has none.

    A rebase writes commits, and git refuses to when neither the user's config nor the
    environment names a committer; the queue then commits as ``runeconsole`` for that
    run only (nothing is written to any config). Empty when git has an identity.
    """
    result = run_git(["var", "GIT_COMMITTER_IDENT"], repo, timeout=10, check=False)
    return [] if result.returncode == 0 else list(_SYNTHETIC_IDENTITY)


def rebase(
    worktree: Path,
    onto: str,
    *,
    timeout: float = 300,
    identity: list[str] | None = None,
    start: str | None = None,
) -> RebaseResult:
    """Rebase the detached HEAD of ``worktree`` (or the commit ``start``, checked out
    detached first: one git call) onto ``onto``; on conflict list files and abort.

    ``identity``: ``-c`` options from ``identity_fallback`` (the rebase commits).
    """
    result = run_git(
        [
            *_PLAIN_REBASE,
            *(identity or []),
            "rebase",
            "--no-autostash",
            "--quiet",
            onto,
            *([start] if start else []),
        ],
        worktree,
        timeout=timeout,
        check=False,
    )
    if result.returncode == 0:
        return RebaseResult(True, head=resolve_commit(worktree, "HEAD"))
    conflicts = unmerged_files(worktree)
    detail = (result.stderr or result.stdout).strip()
    if rebase_in_progress(worktree):
        run_git(["rebase", "--abort"], worktree, timeout=120, check=False)
    return RebaseResult(
        False, conflicts=conflicts, detail=detail.splitlines()[-1] if detail else ""
    )


def unmerged_files(worktree: Path) -> list[str]:
    out = run_git(["diff", "--name-only", "--diff-filter=U", "-z"], worktree, timeout=60).stdout
    return sorted({name for name in out.split("\0") if name})


def compare_and_swap(repo: Path, ref: str, new: str, old: str) -> bool:
    """Move ``ref`` to ``new`` only if it still points at ``old`` (git's own CAS)."""
    return run_git(["update-ref", ref, new, old], repo, check=False).returncode == 0


def set_ref(repo: Path, ref: str, commit: str) -> None:
    """``ref`` pointed at ``commit``, whatever it held (for refs that are ours to keep)."""
    run_git(["update-ref", ref, commit], repo)


def update_refs(repo: Path, changes: dict[str, tuple[str, str]]) -> bool:
    """Several refs moved at once, each from the commit it must still hold: ``{ref: (new,
    old)}``, ``new`` empty to delete it. All or none (git's own transaction)."""
    lines = [
        f"delete {ref} {old}" if not new else f"update {ref} {new} {old}"
        for ref, (new, old) in changes.items()
    ]
    result = run_git(["update-ref", "--stdin"], repo, input="\n".join(lines) + "\n", check=False)
    return result.returncode == 0


def fast_forward_checkout(
    worktree: Path, old: str, new: str, *, dry_run: bool = False
) -> str | None:
    """Bring a worktree whose branch moved from ``old`` to ``new`` up to date.

    ``read-tree -m -u`` is a two-tree fast-forward of index and files; it checks every
    path before writing any, and refuses rather than overwrite local changes or
    untracked files. ``dry_run`` (``-n``) makes the same checks and writes nothing, so
    it can be asked before the branch moves. Returns git's complaint, or ``None``.
    """
    # read-tree trusts the index's cached file stats: refresh them first, or a file merely
    # touched (same content, new mtime) reads as "not uptodate" and blocks the merge.
    run_git(["update-index", "-q", "--refresh"], worktree, timeout=300, check=False)
    args = ["read-tree", *(["-n"] if dry_run else []), "-m", "-u", old, new]
    result = run_git(args, worktree, timeout=300, check=False)
    if result.returncode == 0:
        return None
    lines = (result.stderr or result.stdout).strip().splitlines()
    return lines[0].removeprefix("error: ") if lines else "read-tree failed"


def local_changes(worktree: Path, paths: list[str]) -> list[str]:
    """Which of ``paths`` the worktree has changed, staged or untracked (``status`` lines).

    Names what stops a fast-forward; ignored files are left out, as git overwrites them.
    """
    if not paths:
        return []
    args = ["status", "--porcelain", "-z", "--untracked-files=all", "--no-renames"]
    if len(paths) <= MAX_PATHSPEC:
        args += ["--", *(f":(literal){path}" for path in paths)]
    wanted = set(paths)
    found = []
    for item in run_git(args, worktree, timeout=60).stdout.split("\0"):
        state, name = item[:2], item[3:]
        if name in wanted:
            found.append(f"{name} ({'untracked' if state == '??' else 'changed'})")
    return sorted(found)


@dataclass(frozen=True)
class MergeTree:
    clean: bool
    tree: str
    conflicts: list[str]


class MergeTreeError(RuneError):
    """``merge-tree`` could not merge the two at all; ``detail`` is git's reason."""

    def __init__(self, ours: str, theirs: str, detail: str) -> None:
        super().__init__(f"git merge-tree {ours} {theirs}: {detail}")
        self.detail = detail


def merge_tree(repo: Path, ours: str, theirs: str) -> MergeTree:
    """Merge two commits in the object store only (no index, no worktree)."""
    result = run_git(
        ["merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", ours, theirs],
        repo,
        timeout=120,
        check=False,
    )
    if result.returncode not in (0, 1) or not result.stdout:
        lines = result.stderr.strip().splitlines()
        raise MergeTreeError(ours, theirs, lines[-1].removeprefix("fatal: ") if lines else "failed")
    tree, *names = result.stdout.split("\0")
    return MergeTree(result.returncode == 0, tree, sorted({n for n in names if n}))


def commit_tree(repo: Path, tree: str, parents: list[str], message: str) -> str:
    """A commit object (no ref) holding ``tree``: the simulated main for predictions."""
    args = [*_SYNTHETIC_IDENTITY, "commit-tree", tree, "-m", message]
    for parent in parents:
        args += ["-p", parent]
    return run_git(args, repo, timeout=60).stdout.strip()


def branch_heads(repo: Path, *, remotes: bool = False) -> dict[str, str]:
    """Every local branch and its commit, in one call (fingerprints what predictions saw);
    ``remotes``: the remote-tracking branches too, by their short names (``origin/x``)."""
    refs = ["refs/heads/", *(["refs/remotes/"] if remotes else [])]
    out = run_git(
        ["for-each-ref", "--format=%(refname:strip=2) %(objectname)", *refs],
        repo,
        timeout=30,
    ).stdout
    heads: dict[str, str] = {}
    for line in out.splitlines():  # local branches first: a local name wins
        if " " in line:
            name, commit = line.rsplit(" ", 1)
            heads.setdefault(name, commit)
    return heads
