"""Predicted conflicts for the pending entries of the merge queue.

Each pending entry is merged, in the object store only, with ``main`` and with the
simulated result of landing every clean entry ahead of it (``merge-tree
--write-tree`` plus ref-less ``commit-tree`` objects), so no worktree or ref is
touched. Git 2.39 has no ``merge-tree --merge-base``: both sides are commits and
git finds the base itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runeconsole.adapters import git_worktrees as gw
from runeconsole.core.errors import RuneError
from runeconsole.services.merge_queue.model import Prediction, QueueState, is_remote_only


@dataclass(frozen=True)
class _Step:
    """One entry's prediction and, when it is clean, the simulated main after it lands."""

    prediction: Prediction
    landed: str | None = None


class _Pass:
    """One pass down the queue: main, the simulated main so far, the clean entries ahead."""

    def __init__(self, root: Path, main: str) -> None:
        self.root = root
        self.main = main
        self.simulated = main
        self.ahead: list[tuple[str, str]] = []  # (entry id, tip) of the clean entries so far
        self._changed: dict[str, set[str]] = {}

    def changed(self, tip: str) -> set[str]:
        if tip not in self._changed:
            self._changed[tip] = gw.changed_on_branch(self.root, self.main, tip)
        return self._changed[tip]

    def predict(self, entry_id: str, tip: str) -> _Step:
        """Against main, against main plus the clean entries ahead, and which of those."""
        versus_main = gw.merge_tree(self.root, self.main, tip)
        versus_queue = versus_main
        if self.simulated != self.main:
            versus_queue = gw.merge_tree(self.root, self.simulated, tip)
        with_entries: dict[str, list[str]] = {}
        if not versus_queue.clean:
            # Naming the entries it collides with: only those that change the same paths
            # can, so most pairs cost a cached diff rather than a merge.
            mine = self.changed(tip) if self.ahead else set()
            for other_id, other_tip in self.ahead:
                if mine & self.changed(other_tip):
                    pair = gw.merge_tree(self.root, other_tip, tip)
                    if not pair.clean:
                        with_entries[other_id] = pair.conflicts
        prediction = Prediction(
            entry_id,
            versus_main.conflicts,
            [] if versus_queue.clean else versus_queue.conflicts,
            with_entries,
        )
        if not versus_queue.clean:
            return _Step(prediction)
        landed = gw.commit_tree(
            self.root, versus_queue.tree, [self.simulated, tip], f"queue: {entry_id}"
        )
        return _Step(prediction, landed)


class ConflictPredictor:
    """Predicts every pending entry (or the first ``limit``), reusing what has not changed.

    The whole answer is kept until ``main``, a queued branch or the order changes; then
    an entry is computed again only if something at or ahead of it changed (it is
    looked up by main, the simulated main it lands on, its id and its tip), so a
    branch joining the tail costs one entry, not the queue.
    """

    def __init__(
        self, root: Path, main_branch: str, limit: int = 0, remote: str | None = None
    ) -> None:
        self.root = root
        self.remote = remote  # main is the remote's (``origin/main``), as last fetched
        self.main_branch = f"{remote}/{main_branch}" if remote else main_branch
        self.limit = limit  # 0: every pending entry
        self._cache: tuple[Any, dict[str, Prediction]] | None = None
        self._steps: dict[tuple[str, str, str, str], _Step] = {}

    def predict(self, state: QueueState) -> dict[str, Prediction]:
        """For each pending entry: conflicts with main, and with the entries ahead of it.

        An entry that cannot be predicted (branch missing, unrelated history, git
        failing) gets an ``error`` of its own; the others are predicted as usual.
        """
        pending = state.pending()
        if self.limit:
            pending = pending[: self.limit]
        if not pending:
            return {}  # an empty queue asks git nothing (a console rescans every few seconds)
        remotes = self.remote is not None or any(is_remote_only(e.fields) for e in pending)
        heads = gw.branch_heads(self.root, remotes=remotes)
        main = heads.get(self.main_branch)
        fingerprint = (main, tuple((e.entry_id, heads.get(e.branch)) for e in pending))
        if self._cache and self._cache[0] == fingerprint:
            return self._cache[1]
        if main is None:
            return {e.entry_id: Prediction(e.entry_id, error="no main branch") for e in pending}
        run = _Pass(self.root, main)
        steps: dict[tuple[str, str, str, str], _Step] = {}
        predictions: dict[str, Prediction] = {}
        for entry in pending:
            tip = heads.get(entry.branch)
            if tip is None:
                predictions[entry.entry_id] = Prediction(entry.entry_id, error="branch missing")
                continue
            # The simulated main stands for every clean entry ahead: the same key means
            # the same entries ahead, so the step from the last pass still holds.
            key = (main, run.simulated, entry.entry_id, tip)
            step = self._steps.get(key)
            if step is None:
                step = self._predict_one(run, entry.entry_id, tip)
            steps[key] = step
            predictions[entry.entry_id] = step.prediction
            if step.landed is not None:
                run.simulated = step.landed
                run.ahead.append((entry.entry_id, tip))
        self._steps = steps
        self._cache = (fingerprint, predictions)
        return predictions

    @staticmethod
    def _predict_one(run: _Pass, entry_id: str, tip: str) -> _Step:
        try:
            return run.predict(entry_id, tip)
        except gw.MergeTreeError as exc:
            return _Step(Prediction(entry_id, error=f"cannot predict: {exc.detail}"))
        except RuneError as exc:
            return _Step(Prediction(entry_id, error=exc.message))
