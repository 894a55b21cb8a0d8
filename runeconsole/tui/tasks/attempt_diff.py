"""One attempt against another in the review screen: attempt B's worktree (its commits and
what it has not committed yet) against the tip of attempt A's branch, so the diff is what
B does differently from A, not what each changed from the task's base.

A review target (``services/review/targets.py``'s protocol) that only reads: the review
screen's comment, send and approve keys are refused (pick an attempt from the Compare
view instead). ``load`` runs git: the review screen calls it in its loading worker.
"""

from __future__ import annotations

from pathlib import Path

from runeconsole.adapters import git_diff
from runeconsole.core.errors import RuneError
from runeconsole.services.review.compute import EXCLUDED, worktree_changes
from runeconsole.services.review.diff import read_patch
from runeconsole.services.review.settings import ReviewSettings
from runeconsole.services.review.targets import Loaded


class AttemptDiff:
    decides = False

    def __init__(self, worktree: Path, against: str, label: str, settings: ReviewSettings) -> None:
        self.worktree = worktree
        self.against = against  # attempt A's branch
        self.label = label
        self.settings = settings

    def load(self) -> Loaded:
        if not self.worktree.is_dir():
            raise RuneError(f"{self.label}: its worktree {self.worktree} is gone")
        dirs = git_diff.repo_dirs(self.worktree)
        ref = f"refs/heads/{self.against}"
        tip = git_diff.resolve(dirs, ref)
        if tip is None:
            raise RuneError(f"{self.label}: branch {self.against} is gone; nothing to diff against")
        status = git_diff.status(dirs, EXCLUDED)
        changes, text, _ = worktree_changes(
            self.worktree,
            dirs,
            status,
            ref,
            max_commits=self.settings.max_commits,
            base=tip,
            context=self.settings.context_lines,
        )
        if changes.error:
            raise RuneError(changes.error)
        return Loaded(read_patch(changes, text or ""), [], "none")

    def _refused(self) -> str:
        raise RuneError(
            f"{self.label} compares two attempts: pick one in the Compare view (A), or review "
            "an attempt on its own (d in the Agents pane)"
        )

    def comment(self, text: str, file: str | None, line: int | None, side: str) -> str:
        return self._refused()

    def approve(self) -> str:
        return self._refused()

    def send(self) -> str:
        return self._refused()
