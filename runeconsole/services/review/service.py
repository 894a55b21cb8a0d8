"""``Reviews``: the one entry point for reviewing an agent's work (the CLI, the console and
the fleet's actions all come here).

- ``changes(key)`` / ``diff(key)``: the agent's worktree against its base, from the cache
  (``cache.py``), computed with git (``compute.py``) when something moved;
- ``comment``, ``approve``, ``send``: the reviewer's decisions, kept as review records
  (``records.py``); an approval enqueues the branch through the merge queue's own ``add``
  and predicts its conflicts at once; ``send`` gives the comments to the agent as one
  prompt (``prompt.py``) through the reply service's ``Replies.say``, which refuses when
  the agent cannot take it;
- ``state(...)``: where the agent's work stands (``states.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runeconsole.adapters import git_diff
from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.core.files import read_bytes
from runeconsole.core.validate import ID_PATTERN, contained, name_or_none, validate_name
from runeconsole.services.claude.session.view import AgentView, agent_view
from runeconsole.services.fleet import hook_phase
from runeconsole.services.hook_files import HookFiles
from runeconsole.services.liveness import ACTIVE, AgentRecord
from runeconsole.services.merge_queue import MergeQueue, Prediction, QueueEntry, QueueState
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.services.review.cache import ChangesCache
from runeconsole.services.review.changes import Changes
from runeconsole.services.review.compute import branch_changes, branch_patch, main_ref
from runeconsole.services.review.diff import ReviewDiff, read_patch
from runeconsole.services.review.locate import worktree_of
from runeconsole.services.review.prompt import compose
from runeconsole.services.review.records import (
    APPROVED,
    CHANGES_REQUESTED,
    MAX_QUOTE,
    NEW,
    OLD,
    Comment,
    ReviewRecord,
    ReviewRecords,
)
from runeconsole.services.review.settings import ReviewSettings
from runeconsole.services.review.states import NONE, Standing, settled, settled_states


class NoWorktree(RuneError):
    """The agent has no worktree to review (exit 1)."""


@dataclass(frozen=True)
class Approval:
    """What ``approve`` did: the review that ended, the queue entry, its prediction."""

    record: ReviewRecord
    entry: QueueEntry
    created: bool
    prediction: Prediction | None
    warnings: list[str] = field(default_factory=list)

    def conflicts(self) -> str:
        """The predicted conflicts in words."""
        found = self.prediction
        if found is None:
            return "not predicted"
        if found.error:
            return f"cannot predict: {found.error}"
        files = sorted({*found.against_main, *found.against_queue})
        if not files:
            return "none predicted"
        return "with " + ", ".join(files)

    def to_json(self) -> dict[str, Any]:
        found = self.prediction
        return {
            "review": self.record.to_json(),
            "entry": self.entry.to_json(),
            "created": self.created,
            "predicted_conflicts": None
            if found is None
            else {
                "against_main": found.against_main,
                "against_queue": found.against_queue,
                "with_entries": found.with_entries,
                "error": found.error,
            },
            "warnings": self.warnings,
        }


@dataclass(frozen=True)
class Sent:
    record: ReviewRecord
    prompt: str
    comments: int

    def to_json(self) -> dict[str, Any]:
        return {"review": self.record.to_json(), "prompt": self.prompt, "comments": self.comments}


class Reviews:
    def __init__(
        self,
        project: Project,
        *,
        registry: Registry | None = None,
        hook_files: HookFiles | None = None,
        queue: MergeQueue | None = None,
        cache: ChangesCache | None = None,
    ) -> None:
        self.project = project
        self.root = project.root
        self.settings = project.settings(ReviewSettings)
        self.registry = registry or Registry(project)
        self.hook_files = hook_files or HookFiles(project)
        self.queue = queue or MergeQueue(project)
        self.cache = cache or ChangesCache(max_commits=self.settings.max_commits)
        self.records = ReviewRecords(project)

    @property
    def main_branch(self) -> str:
        return self.queue.settings.main_branch

    def base_ref(self, base: str | None = None) -> str:
        if base is not None and (not base or base.startswith("-") or "\0" in base):
            raise InvalidInput(f"--base {base!r} is not a ref")
        return base or main_ref(self.main_branch)

    # -- where the agent works ---------------------------------------------------------------

    def worktree(self, record: AgentRecord) -> Path | None:
        return worktree_of(record, self.hook_files.read(record.key), self.root)

    def target(self, key: str) -> tuple[AgentRecord, Path]:
        """The agent's identity and worktree; ``NoWorktree`` when it has none."""
        validate_name(key, "agent key")
        record = self.registry.get(key)
        worktree = self.worktree(record)
        if worktree is None:
            raise NoWorktree(
                f"{key} has no worktree to review (none in its identity or hook, and no "
                "Claude Code session directory)"
            )
        return record, worktree

    # -- what it changed ---------------------------------------------------------------------

    def changes(self, key: str, base: str | None = None, *, probe: bool = True) -> Changes:
        _, worktree = self.target(key)
        return self.changes_at(worktree, base, probe=probe)

    def changes_at(self, worktree: Path, base: str | None = None, *, probe: bool = True) -> Changes:
        return self.cache.changes(worktree, self.base_ref(base), probe=probe)

    def diff(self, key: str, base: str | None = None) -> ReviewDiff:
        _, worktree = self.target(key)
        return self.cache.diff(worktree, self.base_ref(base), self.settings.context_lines)

    def branch_diff(self, branch: str, base: str | None = None) -> ReviewDiff:
        """A branch with no worktree to look in (a queue entry whose agent is gone): its
        commits only."""
        changes = branch_changes(
            self.root, branch, self.base_ref(base), max_commits=self.settings.max_commits
        )
        return read_patch(changes, branch_patch(self.root, changes, self.settings.context_lines))

    # -- deciding ----------------------------------------------------------------------------

    def comment(
        self,
        key: str,
        text: str,
        *,
        file: str | None = None,
        line: int | None = None,
        side: str = NEW,
    ) -> ReviewRecord:
        """A comment on a line (``file`` and ``line`` of the ``side`` it was read on), a
        file or the whole change; the line is quoted as it stands in that side now."""
        if side not in (NEW, OLD):
            raise InvalidInput(f"--side {side!r}: new or old")
        _, worktree = self.target(key)
        changes = self._readable(self.changes_at(worktree))
        quoted = self._quote(worktree, changes, file, line, side) if line is not None else None
        comment = Comment(text, file, line, side, quoted)
        return self.records.add_comment(key, changes, comment)

    def approve(self, key: str) -> Approval:
        """The agent's branch joins the merge queue (with its identity, worktree and
        node/bead ids), its conflicts are predicted, and the review ends approved."""
        record, worktree = self.target(key)
        changes = self._readable(self.changes_at(worktree))
        if changes.branch is None:
            raise RuneError(f"{key}: its worktree is on a detached HEAD; nothing to queue")
        if changes.branch == self.main_branch:
            raise RuneError(f"{key} works on {changes.branch} itself: there is no branch to merge")
        if not changes.ahead:
            raise RuneError(f"{key}: {changes.branch} has no commits ahead of {self.main_branch}")
        entry, created = self.queue.add(
            changes.branch,
            identity=key,
            node_id=name_or_none(record.get("node_id")),
            bead_id=_bead(record.get("bead_id")),
            worktree=str(worktree),
        )
        try:
            prediction = self.queue.predict().get(entry.entry_id)
        except RuneError as exc:
            prediction = Prediction(entry.entry_id, error=exc.message)
        review = self.records.decide(key, changes, APPROVED, queue_entry=entry.entry_id)
        warnings = []
        uncommitted = changes.uncommitted
        if uncommitted:
            warnings.append(
                f"{len(uncommitted)} uncommitted file(s) in {worktree} are not part of "
                f"{changes.branch} and will not be merged"
            )
        return Approval(review, entry, created, prediction, warnings)

    def send(self, key: str) -> Sent:
        """The open review's comments, as one prompt, to the agent (``Replies.say``); the
        review ends with ``changes_requested``. Nothing is recorded if it is refused."""
        _, worktree = self.target(key)
        review = self.records.open_review(key)
        comments = review.comments if review is not None else []
        if not comments:
            raise RuneError(
                f"{key}: no comments to send (comment first: review comment {key} TEXT)"
            )
        changes = self._readable(self.changes_at(worktree))
        prompt = compose(comments, changes)
        try:
            from runeconsole.services.reply import Replies
        except ImportError:  # pragma: no cover - the reply service ships with this package
            raise RuneError(
                "sending needs the reply service (runeconsole.services.reply)"
            ) from None
        Replies(self.project).say(key, prompt)
        record = self.records.decide(key, changes, CHANGES_REQUESTED, prompt=prompt)
        return Sent(record, prompt, len(comments))

    # -- where the work stands ---------------------------------------------------------------

    def state(
        self,
        record: AgentRecord,
        view: AgentView | None = None,
        *,
        queue: QueueState | None = None,
        changes: Changes | None = None,
        probe: bool = True,
    ) -> str:
        """``review_state`` of one agent; git is asked only when its activity does not
        settle it (idle or ended, with a worktree)."""
        if record.error:
            return NONE
        view = view or agent_view(record.fields, None)
        active = record.get("status") == ACTIVE
        early = settled(view, active)
        if early is not None:
            return early
        if changes is None:
            worktree = self.worktree(record)
            if worktree is None:
                return NONE
            changes = self.changes_at(worktree, probe=probe)
        latest = self.records.latest(record.key)
        standing = Standing(changes, latest, queue_status(queue or self.queue.read(), latest))
        return standing.state(record, view, hook_phase(self.hook_files.read(record.key)))

    def states(
        self,
        records: list[AgentRecord],
        views: list[AgentView],
        early: dict[str, str | None] | None = None,
    ) -> dict[str, str]:
        """``review_state`` of every agent listed (``early``: ``settled_states`` already
        worked out); the queue is read once, git asked only for idle or ended agents."""
        early = early if early is not None else settled_states(records, views)
        queue = self.queue.read() if not all(early.values()) else None
        return {
            record.key: early[record.key] or self.state(record, view, queue=queue)
            for record, view in zip(records, views, strict=True)
        }

    # -- inside ------------------------------------------------------------------------------

    @staticmethod
    def _readable(changes: Changes) -> Changes:
        if changes.error:
            raise RuneError(changes.error)
        return changes

    def _quote(
        self, worktree: Path, changes: Changes, file: str | None, line: int, side: str
    ) -> str | None:
        if file is None:
            return None
        dirs = git_diff.repo_dirs(worktree)
        if side == OLD:
            changed = changes.file(file)
            before = (changed.old_path if changed else None) or file
            source = git_diff.show_file(dirs, changes.base, before) if changes.base else None
            if source is None:
                return None
            lines = source.splitlines()
        else:
            try:
                path = contained(dirs.toplevel, dirs.toplevel / file, "the worktree")
                lines = read_bytes(path).decode("utf-8", "replace").splitlines()
            except (RuneError, OSError):  # outside the worktree, gone, unreadable
                return None
        if not 0 < line <= len(lines):
            raise InvalidInput(f"{file} has {len(lines)} lines; there is no line {line}")
        return lines[line - 1][:MAX_QUOTE]


def _bead(value: object) -> str | None:
    return value if isinstance(value, str) and ID_PATTERN.fullmatch(value) else None


def queue_status(queue: QueueState, latest: ReviewRecord | None) -> str | None:
    """The status of the queue entry ``latest`` (an approval) made, if it is there."""
    if latest is None or latest.queue_entry is None:
        return None
    entry = queue.find(latest.queue_entry)
    return entry.status if entry is not None else None
