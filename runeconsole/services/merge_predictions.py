"""Predicted conflicts for the pending entries of the merge queue.

Each pending entry is merged, in the object store only, with ``main`` and with the
simulated result of landing every clean entry ahead of it (``merge-tree
--write-tree`` plus ref-less ``commit-tree`` objects), so no worktree or ref is
touched. Git 2.39 has no ``merge-tree --merge-base``: both sides are commits and
git finds the base itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runeconsole.adapters import git_worktrees as gw

if TYPE_CHECKING:
    from runeconsole.services.merge_queue import QueueState


@dataclass(frozen=True)
class Prediction:
    """Whether a pending entry would conflict, computed in the object store only."""

    entry_id: str
    against_main: list[str] = field(default_factory=list)
    against_queue: list[str] = field(default_factory=list)  # main + the clean entries ahead
    with_entries: dict[str, list[str]] = field(default_factory=dict)  # entry ahead -> files
    error: str | None = None

    @property
    def conflicts(self) -> bool:
        return bool(self.error or self.against_main or self.against_queue)

    @property
    def files(self) -> list[str]:
        return sorted(set(self.against_main) | set(self.against_queue))

    def summary(self) -> str:
        if self.error:
            return self.error
        if not self.conflicts:
            return "clean"
        parts = []
        if self.against_main:
            parts.append(f"main: {', '.join(self.against_main)}")
        for entry_id, files in self.with_entries.items():
            parts.append(f"{entry_id}: {', '.join(files)}")
        if not parts:
            parts.append(f"queue: {', '.join(self.against_queue)}")
        return "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "entry_id": self.entry_id,
            "conflicts": self.conflicts,
            "against_main": self.against_main,
            "against_queue": self.against_queue,
            "with_entries": self.with_entries,
            "error": self.error,
        }


class ConflictPredictor:
    """Remembers the last answer until ``main``, a queued branch or the order changes."""

    def __init__(self, root: Path, main_branch: str, limit: int = 50) -> None:
        self.root = root
        self.main_branch = main_branch
        self.limit = limit  # the head of the queue is what an operator acts on
        self._cache: tuple[Any, dict[str, Prediction]] | None = None

    def predict(self, state: QueueState) -> dict[str, Prediction]:
        """For the first ``limit`` pending entries: conflicts with main, and with those ahead.

        Works in the object store only (``merge-tree --write-tree`` and synthetic commits
        with no ref), so no worktree is touched. Cached until main or the queue changes.
        """
        pending = state.pending()[: self.limit]
        heads = gw.branch_heads(self.root)
        main = heads.get(self.main_branch)
        fingerprint = (main, tuple((e.entry_id, heads.get(e.branch)) for e in pending))
        if self._cache and self._cache[0] == fingerprint:
            return self._cache[1]
        predictions: dict[str, Prediction] = {}
        if main is None:
            return {e.entry_id: Prediction(e.entry_id, error="no main branch") for e in pending}
        simulated = main
        ahead: list[tuple[str, str]] = []
        for entry in pending:
            tip = heads.get(entry.branch)
            if tip is None:
                predictions[entry.entry_id] = Prediction(entry.entry_id, error="branch missing")
                continue
            versus_main = gw.merge_tree(self.root, main, tip)
            versus_queue = versus_main
            if simulated != main:
                versus_queue = gw.merge_tree(self.root, simulated, tip)
            with_entries: dict[str, list[str]] = {}
            if not versus_queue.clean and versus_main.clean:
                for other_id, other_tip in ahead:
                    pair = gw.merge_tree(self.root, other_tip, tip)
                    if not pair.clean:
                        with_entries[other_id] = pair.conflicts
            predictions[entry.entry_id] = Prediction(
                entry.entry_id,
                versus_main.conflicts,
                [] if versus_queue.clean else versus_queue.conflicts,
                with_entries,
            )
            if versus_queue.clean:
                simulated = gw.commit_tree(
                    self.root, versus_queue.tree, [simulated, tip], f"queue: {entry.entry_id}"
                )
                ahead.append((entry.entry_id, tip))
        self._cache = (fingerprint, predictions)
        return predictions
