"""A team around a bare remote for the merge queue's remote tests: ``origin`` a bare
repository on disk, the project a clone of it (``main`` checked out, its state kept out
of ``git status``), and a teammate's clone that commits and pushes to ``main`` (or a
branch) on its own, as someone else's machine would."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.support.merge_queue import commit_on, git, ignore_state


@dataclass
class Team:
    origin: Path  # the bare remote
    project: Path  # our clone: the queue's root
    mate: Path  # a teammate's clone

    def mate_pushes(self, files: dict[str, str], message: str = "teammate's work") -> str:
        """The teammate commits ``files`` on top of ``origin/main`` and pushes it; the
        commit pushed."""
        git(self.mate, "fetch", "--quiet", "origin", "main")
        commit = commit_on(self.mate, "main", files, base="origin/main", message=message)
        git(self.mate, "push", "--quiet", "origin", f"{commit}:refs/heads/main")
        return commit

    def mate_branch(self, branch: str, files: dict[str, str]) -> str:
        """A teammate's branch on the remote, from ``origin/main``; its commit."""
        git(self.mate, "fetch", "--quiet", "origin", "main")
        commit = commit_on(self.mate, branch, files, base="origin/main", message=f"{branch}")
        git(self.mate, "push", "--quiet", "origin", f"{branch}:refs/heads/{branch}")
        return commit

    def remote_main(self) -> str:
        return git(self.origin, "rev-parse", "refs/heads/main")

    def remote_subjects(self) -> list[str]:
        return git(self.origin, "log", "--format=%s", "main").splitlines()

    def remote_branches(self) -> list[str]:
        out = git(self.origin, "for-each-ref", "--format=%(refname:short)", "refs/heads")
        return out.splitlines()


def lands_on_origin(project: Path) -> None:
    """The project's talisman: the queue lands on ``origin`` (test command ``true``)."""
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "talisman.yml").write_text(
        "runeconsole:\n  merge_queue:\n    test_command: 'true'\n    remote: origin\n"
    )


def make_team(base: Path) -> Team:
    """Three repositories under ``base``; ``main`` on the remote holds three files."""
    origin, project, mate = base / "origin.git", base / "project", base / "mate"
    subprocess.run(
        ["git", "init", "--quiet", "--bare", "-b", "main", str(origin)], check=True, timeout=30
    )
    seed = base / "seed"
    subprocess.run(["git", "init", "--quiet", "-b", "main", str(seed)], check=True, timeout=30)
    for name in ("a.txt", "b.txt", "c.txt"):
        (seed / name).write_text(f"{name[0]}\n")
    git(seed, "add", ".")
    git(seed, "commit", "--quiet", "-m", "base files")
    git(seed, "push", "--quiet", str(origin), "main")
    for clone in (project, mate):
        subprocess.run(["git", "clone", "--quiet", str(origin), str(clone)], check=True, timeout=60)
        git(clone, "config", "user.name", "someone")
        git(clone, "config", "user.email", "someone@example.com")
    ignore_state(project)
    return Team(origin, project, mate)
