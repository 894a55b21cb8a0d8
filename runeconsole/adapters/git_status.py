"""``git status``, read only: what a worktree changed (staged, unstaged, untracked), in one
git process, parsed from ``--porcelain=v2 -z``.

``--no-optional-locks`` keeps git from refreshing the agent's index behind its back (an
``index.lock`` of ours could fail the agent's own ``git add``). The review reads it
(``git_diff``), and so does Claude Code's hook before a compaction, so this module stays
cheap to import: the records are named tuples, not dataclasses.
"""

from __future__ import annotations

from collections import namedtuple

from runeconsole.adapters.git import run_git

TYPE_CHECKING = False  # typing itself is not imported: the hook starts faster
if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

READ_ONLY = ["--no-optional-locks", "-c", "core.quotepath=off"]
TIMEOUT = 120.0


class StatusEntry(
    namedtuple(
        "StatusEntry",
        ("path", "staged", "unstaged", "untracked", "conflicted", "orig_path"),
        defaults=(".", ".", False, False, None),
    )
):
    """One path of ``git status``: ``staged`` and ``unstaged`` are its X and Y letters
    (``.`` when that side is clean); ``orig_path`` for a rename in the index."""

    __slots__ = ()


class Status(namedtuple("Status", ("head", "branch", "entries", "text"))):
    """``git status --porcelain=v2``: HEAD (``None`` before the first commit), its branch
    (``None`` when detached) and every changed path. ``text`` is the whole output, what
    a cache compares to know nothing moved."""

    __slots__ = ()

    @property
    def untracked(self) -> list[str]:
        return [e.path for e in self.entries if e.untracked]


def pathspec(excluded: Sequence[str] = ()) -> list[str]:
    """The whole repository (whatever the directory git runs in) but ``excluded``."""
    return ["--", ":(top)", *(f":(top,exclude){prefix}" for prefix in excluded)]


def status(directory: Path, excluded: Sequence[str] = (), timeout: float = TIMEOUT) -> Status:
    """The status of the whole repository ``directory`` is in (paths from its top)."""
    args = [
        *READ_ONLY,
        "status",
        "--porcelain=v2",
        "-z",
        "--branch",
        "--untracked-files=all",
        *pathspec(excluded),
    ]
    text = run_git(args, directory, timeout=timeout, errors="replace").stdout
    return parse_status(text)


def parse_status(text: str) -> Status:
    head: str | None = None
    branch: str | None = None
    entries: list[StatusEntry] = []
    fields = iter(text.split("\0"))
    for item in fields:
        if item.startswith("# branch.oid "):
            oid = item[len("# branch.oid ") :]
            head = None if oid == "(initial)" else oid
        elif item.startswith("# branch.head "):
            name = item[len("# branch.head ") :]
            branch = None if name == "(detached)" else name
        elif item.startswith("1 "):
            parts = item.split(" ", 8)
            entries.append(StatusEntry(parts[8], parts[1][0], parts[1][1]))
        elif item.startswith("2 "):
            parts = item.split(" ", 9)
            entries.append(StatusEntry(parts[9], parts[1][0], parts[1][1], orig_path=next(fields)))
        elif item.startswith("u "):
            parts = item.split(" ", 10)
            entries.append(StatusEntry(parts[10], "U", "U", conflicted=True))
        elif item.startswith("? "):
            entries.append(StatusEntry(item[2:], untracked=True))
    return Status(head, branch, tuple(entries), text)
