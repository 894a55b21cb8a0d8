"""The operator's changes to the merge queue: add, retry, remove, move, pause and resume,
and priority; each one locked read-modify-write of the queue's file, recorded in its
``history``."""

from __future__ import annotations

import contextlib

from runeconsole.adapters import git_remote as gr
from runeconsole.adapters import git_worktrees as gw
from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.core.validate import validate_id, validate_name
from runeconsole.services.journal import journaled
from runeconsole.services.merge_queue.model import (
    COMPLETED,
    FAILED,
    IN_PROGRESS,
    PENDING,
    QueueEntry,
    command_args,
    node_id_from,
)
from runeconsole.services.merge_queue.priority import PRIORITIES, priority_of
from runeconsole.services.merge_queue.queue_file import QueueFile


class QueueEdits(QueueFile):
    """What the operator (CLI, console, another tool's enqueue) changes in the queue."""

    def add(
        self,
        branch: str,
        *,
        identity: str | None = None,
        node_id: str | None = None,
        bead_id: str | None = None,
        pr_number: int | None = None,
        worktree: str | None = None,
        test_command: str | None = None,
        source: str | None = None,
        requested_by: str | None = None,
        priority: str | None = None,
        push: bool = False,
    ) -> tuple[QueueEntry, bool]:
        """Enqueue ``branch``; returns (entry, created). A waiting branch is not added twice.

        ``source``: the ``MERGE_READY`` signal file it comes from (for the history);
        ``requested_by``: that signal's sender, who is told the outcome; ``priority``:
        its lane (``urgent``, ``high``, ``normal``: the default, ``low``). ``branch``
        may name a teammate's branch on the queue's remote (``origin/feature-x``, no
        local branch of that name); ``push``: the local branch is pushed to the queue's
        remote first, and deleted there once landed."""
        if not gw.valid_branch_name(branch):
            raise InvalidInput(f"branch {branch!r} is not a valid git branch name")
        if branch in (self.settings.main_branch, self.settings.target):
            raise InvalidInput(f"cannot queue {branch!r}: it is the branch the queue merges into")
        on_remote = self._on_remote(branch)
        if on_remote and on_remote["remote_branch"] == self.settings.main_branch:
            raise InvalidInput(f"cannot queue {branch!r}: it is the branch the queue merges into")
        if push and on_remote:
            raise InvalidInput(f"--push: {branch} is on the remote already")
        for value, what in ((identity, "identity"), (node_id, "node id")):
            if value is not None:
                validate_name(value, what)  # the harness's names may hold '.'
        if bead_id is not None:
            validate_id(bead_id, "bead id")
        if pr_number is not None and pr_number <= 0:
            raise InvalidInput("--pr must be a positive number")
        if test_command is not None and command_args(test_command) is None:
            raise InvalidInput(
                "--test-command must be a non-empty command line with balanced quotes"
            )
        _check_priority(priority)
        node = node_id or node_id_from(on_remote["remote_branch"] if on_remote else branch)
        pushed = self._push(branch) if push else {}
        with self._journal(f"queueing {branch}"), self._mutate() as data:
            for index, item in enumerate(data["entries"]):
                if (
                    isinstance(item, dict)
                    and item.get("branch") == branch
                    and item.get("status") in (PENDING, IN_PROGRESS)
                ):
                    return QueueEntry(dict(item), index), False
            now = self.now()
            taken = {i.get("entry_id") for i in data["entries"] if isinstance(i, dict)}
            base = f"mq-{node}-{int(self.clock.now().timestamp())}"
            entry_id, suffix = base, 1
            while entry_id in taken:
                suffix += 1
                entry_id = f"{base}-{suffix}"
            item = {
                "entry_id": entry_id,
                "node_id": node,
                "branch": branch,
                "repo_root": str(self.root),
                "enqueued_at": now,
                "status": PENDING,
                "started_at": None,
                "completed_at": None,
                "error": None,
                "identity_name": identity,
                "worktree_path": worktree,
                "pr_number": pr_number,
                "bead_id": bead_id,
                "requested_at": now,
                "attempts": 0,
            }
            if test_command is not None:
                item["test_command"] = test_command
            if requested_by is not None:
                item["requested_by"] = requested_by
            if priority is not None:
                item["priority"] = priority
            item.update(on_remote or pushed)
            data["entries"].append(item)
            self._record(data, "add", entry_id, branch=branch, source=source, priority=priority)
            return QueueEntry(dict(item), len(data["entries"]) - 1), True

    def _on_remote(self, branch: str) -> dict[str, str] | None:
        """``origin/feature-x`` as a teammate's branch on the queue's remote (``remote``,
        ``remote_branch``) when no local branch has that name. ``None``: a local branch."""
        remote, _, rest = branch.partition("/")
        if not rest or remote != self.settings.remote:
            return None
        if gw.resolve_commit(self.root, f"refs/heads/{branch}") is not None:
            return None
        return {"remote": remote, "remote_branch": rest}

    def _push(self, branch: str) -> dict[str, object]:
        """The local ``branch`` pushed to the queue's remote (a fast-forward), to be
        deleted there once it lands (``pushed_by_us``)."""
        remote = self.settings.remote
        if remote is None:
            raise InvalidInput("--push needs runeconsole.merge_queue.remote (e.g. origin)")
        commit = gw.resolve_commit(self.root, f"refs/heads/{branch}")
        if commit is None:
            raise InvalidInput(f"--push: no local branch {branch!r}")
        result = gr.push(self.root, remote, commit, branch, timeout=self.settings.remote_timeout)
        if result.kind != gr.PUSHED:
            raise RuneError(f"{remote} refused {branch}: {result.detail}; fetch and rebase it")
        return {"remote": remote, "remote_branch": branch, "pushed_by_us": True}

    def retry(self, entry_id: str) -> QueueEntry:
        validate_name(entry_id, "entry id")
        with self._journal(f"retrying {entry_id}"), self._mutate() as data:
            item = self._find(data, entry_id)
            if item.get("status") != FAILED:
                raise RuneError(
                    f"{entry_id} is {item.get('status')}; only a failed entry is retried"
                )
            item.update(status=PENDING, started_at=None, completed_at=None, current_step=None)
            item.update(waiting_since=self.now())
            item.pop("flaky", None)
            item["last_failure"] = {"reason": item.get("reason"), "error": item.get("error")}
            item.update(reason=None, error=None, conflict_files=[])
            item.pop("interruptions", None)  # a person stepped in: one automatic re-run again
            self._record(data, "retry", entry_id)
            return QueueEntry(dict(item), 0)

    def remove(self, entry_id: str) -> QueueEntry:
        validate_name(entry_id, "entry id")
        with self._journal(f"removing {entry_id}"), self._mutate() as data:
            item = self._find(data, entry_id)
            if item.get("status") == IN_PROGRESS and self.processor_pid() is not None:
                raise RuneError(f"{entry_id} is being processed; wait for it to finish")
            data["entries"].remove(item)
            self._record(
                data, "remove", entry_id, branch=item.get("branch"), status=item.get("status")
            )
            return QueueEntry(dict(item), 0)

    def move(self, entry_id: str, offset: int) -> tuple[QueueEntry, bool]:
        """Swap a pending entry with its pending neighbour above (-1) or below (+1) in the
        order entries are taken, within its priority lane.

        Returns (entry, moved); an entry already at that end of its lane stays and nothing
        is recorded (``set_priority`` moves it to another lane).
        """
        validate_name(entry_id, "entry id")
        where = "up" if offset < 0 else "down"
        with self._journal(f"moving {entry_id} {where}"), self._mutate() as data:
            item = self._find(data, entry_id)
            if item.get("status") != PENDING:
                raise RuneError(f"{entry_id} is {item.get('status')}; only pending entries move")
            pending = self.state_of(data).pending()
            here = next(n for n, e in enumerate(pending) if e.fields is item)
            there = here + offset
            if not 0 <= there < len(pending) or pending[there].lane != pending[here].lane:
                return QueueEntry(dict(item), 0), False
            entries = data["entries"]
            a, b = pending[here].index, pending[there].index
            entries[a], entries[b] = entries[b], entries[a]
            self._record(data, "move", entry_id, direction="up" if offset < 0 else "down")
            return QueueEntry(dict(item), 0), True

    def set_paused(self, paused: bool) -> bool:
        """Pause or resume; returns whether anything changed."""
        what = "pausing the merge queue" if paused else "resuming the merge queue"
        with self._journal(what), self._mutate() as data:
            if bool(data.get("paused")) == paused:
                return False
            data["paused"] = paused
            data["paused_at"] = self.now() if paused else None
            self._record(data, "pause" if paused else "resume", None)
            return True

    def set_priority(self, entry_id: str, priority: str) -> tuple[QueueEntry, bool]:
        """Give a pending entry another priority lane; returns (entry, changed)."""
        validate_name(entry_id, "entry id")
        _check_priority(priority)
        with self._journal(f"giving {entry_id} priority {priority}"), self._mutate() as data:
            item = self._find(data, entry_id)
            if item.get("status") != PENDING:
                raise RuneError(
                    f"{entry_id} is {item.get('status')}; only a pending entry's priority changes"
                )
            if priority_of(item) == priority:
                return QueueEntry(dict(item), 0), False
            before = priority_of(item)
            item["priority"] = priority
            self._record(data, "priority", entry_id, priority=priority, was=before)
            return QueueEntry(dict(item), 0), True

    def remove_finished(self, entry_ids: set[str]) -> list[str]:
        """The completed or failed entries among ``entry_ids`` taken out (retention
        archives them first); an entry pending or in progress again by now stays. Returns
        the ids taken out."""
        with self._mutate() as data:
            taken = [
                item
                for item in data["entries"]
                if isinstance(item, dict)
                and item.get("entry_id") in entry_ids
                and item.get("status") in (COMPLETED, FAILED)
            ]
            for item in taken:
                data["entries"].remove(item)
            if taken:
                self._record(data, "prune", None, count=len(taken))
            return [str(item.get("entry_id")) for item in taken]

    def _journal(self, what: str) -> contextlib.AbstractContextManager[None]:
        """An operator's change to the queue, journaled (``services/journal.py``)."""
        return journaled(self.project, "queue", what, [self.path])


def _check_priority(priority: str | None) -> None:
    if priority is not None and priority not in PRIORITIES:
        raise InvalidInput(f"priority {priority!r}: one of {', '.join(PRIORITIES)}")
