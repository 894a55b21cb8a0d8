"""The merge queue's file, ``.claude/state/merge-queue.json``: reading it, and every change
to it as a locked read-modify-write with an atomic replace. The file is the harness's
format: every field it writes (and any we do not know) is kept, and ours are added beside
them. Also who is processing now (the processor's pid file and the entries in progress)."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from runeconsole.adapters import git_worktrees as gw
from runeconsole.core.errors import InvalidInput, RuneError, UnreadableFile
from runeconsole.core.files import atomic_write_bytes, read_json_object
from runeconsole.core.locks import locked
from runeconsole.core.pids import pid_alive, process_start
from runeconsole.core.timeutil import iso_z
from runeconsole.core.validate import validate_id, validate_name
from runeconsole.services.journal import journaled
from runeconsole.services.merge_queue.holders import blocking, holders, waiting_message
from runeconsole.services.merge_queue.model import (
    COMPLETED,
    FAILED,
    IN_PROGRESS,
    PENDING,
    QueueEntry,
    QueueState,
    QueueStatus,
    UnknownEntry,
    command_args,
    node_id_from,
)
from runeconsole.services.merge_queue.settings import MergeQueueSettings
from runeconsole.services.project import Project
from runeconsole.services.signals import Signals

HISTORY_LIMIT = 200
# Signals addressed to others that were turned into entries but left where they are.
SIGNALS_ACTED_ON = "signals_acted_on"
LOCK_TIMEOUT = 120.0


class QueueFile:
    """The queue's file and every change to it; processing and predictions are layered on
    top (``service.MergeQueue``)."""

    def __init__(
        self,
        project: Project,
        settings: MergeQueueSettings | None = None,
        signals: Signals | None = None,
    ) -> None:
        self.project = project
        self.root, self.paths, self.clock = project.root, project.paths, project.clock
        self.settings = settings or project.settings(MergeQueueSettings)
        self.signals = signals or Signals(project)

    @property
    def path(self) -> Path:
        return self.paths.merge_queue

    @property
    def processor_file(self) -> Path:
        return self.paths.state / "merge-queue.processor.json"

    @property
    def processor_lock(self) -> Path:
        return self.paths.lock_for("merge-queue-processor")

    @property
    def main_ref(self) -> str:
        return f"refs/heads/{self.settings.main_branch}"

    def now(self) -> str:
        return iso_z(self.clock.now())

    # -- reading -----------------------------------------------------------------------------

    def read(self) -> QueueState:
        """Never raises for bad content: an unreadable file is an empty queue with ``error``."""
        try:
            data = read_json_object(self.path)
        except UnreadableFile as exc:
            if not self.path.exists():
                return QueueState()
            return QueueState(error=exc.reason)
        return self._state(data)

    @staticmethod
    def _state(data: dict[str, Any]) -> QueueState:
        raw = data.get("entries")
        raw = raw if isinstance(raw, list) else []
        entries = [
            QueueEntry(item, index) for index, item in enumerate(raw) if isinstance(item, dict)
        ]
        position = 0
        for entry in entries:
            if entry.status == PENDING:
                position += 1
                entry.position = position
        return QueueState(entries, bool(data.get("paused")), data)

    def get(self, entry_id: str) -> QueueEntry:
        validate_name(entry_id, "entry id")
        state = self.read()
        entry = state.find(entry_id)
        if entry is None:
            raise UnknownEntry(
                f"no entry {entry_id!r} in {self.path}; `merge-queue list` shows them"
            )
        return entry

    # -- the locked read-modify-write --------------------------------------------------------

    @contextlib.contextmanager
    def _mutate(self) -> Iterator[dict[str, Any]]:
        with locked(self.paths.lock_for("merge-queue"), LOCK_TIMEOUT, "the merge queue"):
            try:
                data = read_json_object(self.path)
            except UnreadableFile as exc:
                if self.path.exists():
                    raise RuneError(
                        f"{self.path} is unreadable ({exc.reason}); fix or move it away first"
                    ) from None
                data = {}
            if not isinstance(data.get("entries"), list):
                data["entries"] = []
            yield data
            data["last_updated"] = self.now()
            atomic_write_bytes(self.paths.inside(self.path), _compact(data))

    def _journal(self, what: str) -> contextlib.AbstractContextManager[None]:
        """An operator's change to the queue, journaled (``services/journal.py``)."""
        return journaled(self.project, "queue", what, [self.path])

    def _record(
        self, data: dict[str, Any], action: str, entry_id: str | None, **detail: Any
    ) -> None:
        history = data.get("history")
        history = history if isinstance(history, list) else []
        item = {"at": self.now(), "action": action, "entry_id": entry_id, "pid": os.getpid()}
        item.update({k: v for k, v in detail.items() if v is not None})
        history.append(item)
        data["history"] = history[-HISTORY_LIMIT:]

    @staticmethod
    def _find(data: dict[str, Any], entry_id: str) -> dict[str, Any]:
        for item in data["entries"]:
            if isinstance(item, dict) and item.get("entry_id") == entry_id:
                return item
        raise UnknownEntry(
            f"no entry {entry_id!r} in the merge queue; `merge-queue list` shows them"
        )

    def update_entry(self, entry_id: str, changes: dict[str, Any]) -> dict[str, Any]:
        with self._mutate() as data:
            item = self._find(data, entry_id)
            item.update(changes)
            return dict(item)

    # -- queue operations --------------------------------------------------------------------

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
    ) -> tuple[QueueEntry, bool]:
        """Enqueue ``branch``; returns (entry, created). A waiting branch is not added twice.

        ``source``: the ``MERGE_READY`` signal file it comes from (for the history);
        ``requested_by``: that signal's sender, who is told the outcome."""
        if not gw.valid_branch_name(branch):
            raise InvalidInput(f"branch {branch!r} is not a valid git branch name")
        if branch == self.settings.main_branch:
            raise InvalidInput(f"cannot queue {branch!r}: it is the branch the queue merges into")
        for value, what in ((identity, "identity"), (node_id, "node id")):
            if value is not None:
                validate_name(value, what)  # the harness's names may hold '.'
        if bead_id is not None:
            validate_id(bead_id, "bead id")
        if pr_number is not None and pr_number < 0:
            raise InvalidInput("--pr must be a positive number")
        if test_command is not None and command_args(test_command) is None:
            raise InvalidInput(
                "--test-command must be a non-empty command line with balanced quotes"
            )
        node = node_id or node_id_from(branch)
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
            data["entries"].append(item)
            self._record(data, "add", entry_id, branch=branch, source=source)
            return QueueEntry(dict(item), len(data["entries"]) - 1), True

    def retry(self, entry_id: str) -> QueueEntry:
        validate_name(entry_id, "entry id")
        with self._journal(f"retrying {entry_id}"), self._mutate() as data:
            item = self._find(data, entry_id)
            if item.get("status") != FAILED:
                raise RuneError(
                    f"{entry_id} is {item.get('status')}; only a failed entry is retried"
                )
            item.update(status=PENDING, started_at=None, completed_at=None, current_step=None)
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

    def remove_finished(self, entry_ids: set[str]) -> list[str]:
        """The completed or failed entries among ``entry_ids`` taken out, under the queue's
        lock (retention archives them first); an entry pending or in progress again by
        now stays. Returns the ids taken out."""
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

    def move(self, entry_id: str, offset: int) -> tuple[QueueEntry, bool]:
        """Swap a pending entry with its pending neighbour above (-1) or below (+1).

        Returns (entry, moved); an entry already at that end stays and nothing is recorded.
        """
        validate_name(entry_id, "entry id")
        where = "up" if offset < 0 else "down"
        with self._journal(f"moving {entry_id} {where}"), self._mutate() as data:
            item = self._find(data, entry_id)
            if item.get("status") != PENDING:
                raise RuneError(f"{entry_id} is {item.get('status')}; only pending entries move")
            entries = data["entries"]
            slots = [
                i
                for i, e in enumerate(entries)
                if isinstance(e, dict) and e.get("status") == PENDING
            ]
            here = slots.index(entries.index(item))
            there = here + offset
            if not 0 <= there < len(slots):
                return QueueEntry(dict(item), 0), False
            a, b = slots[here], slots[there]
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

    def claim_head(self) -> dict[str, Any] | None:
        """Mark the first pending entry in progress for this process; ``None`` if none waits."""
        with self._mutate() as data:
            for item in data["entries"]:
                if isinstance(item, dict) and item.get("status") == PENDING:
                    attempts = item.get("attempts")
                    item.update(
                        status=IN_PROGRESS,
                        started_at=self.now(),
                        completed_at=None,
                        error=None,
                        reason=None,
                        conflict_files=[],
                        attempts=(attempts if isinstance(attempts, int) else 0) + 1,
                        processor_pid=os.getpid(),
                        steps=[],
                        current_step="claimed",
                    )
                    if not isinstance(item.get("entry_id"), str):
                        item["entry_id"] = f"mq-{node_id_from(str(item.get('branch')))}-claimed"
                    self._record(data, "start", item["entry_id"])
                    return dict(item)
        return None

    def requeue(self, entry_id: str, reason: str, **changes: Any) -> None:
        """Put an entry whose processor died back in the queue, at its place (``changes``
        are recorded in it too)."""
        with self._mutate() as data:
            item = self._find(data, entry_id)
            item.update(status=PENDING, current_step=None, processor_pid=None, started_at=None)
            item.update(changes)
            self._record(data, "requeue", entry_id, reason=reason)

    def remember_signals(self, acted_on: list[str], present: set[str]) -> None:
        """Add ``acted_on`` to the signals already turned into entries (``SIGNALS_ACTED_ON``),
        forgetting those no longer in the signals directory (``present``). The file is only
        rewritten when that changes the list (the console asks every few seconds)."""

        def kept(data: dict[str, Any]) -> tuple[list[str], list[str]]:
            known = data.get(SIGNALS_ACTED_ON)
            known = [n for n in known if isinstance(n, str)] if isinstance(known, list) else []
            return known, [n for n in dict.fromkeys([*known, *acted_on]) if n in present]

        before, after = kept(self.read().data)
        if before == after:
            return
        with self._mutate() as data:
            data[SIGNALS_ACTED_ON] = kept(data)[1]

    # -- status ------------------------------------------------------------------------------

    def status(self) -> QueueStatus:
        state = self.read()
        history = state.data.get("history")
        now, limit = self.clock.now(), self.settings.test_timeout
        others = holders(state, now)
        waiting = blocking(state, now, limit)
        return QueueStatus(
            paused=state.paused,
            processing_pid=self.processor_pid(),
            counts=state.counts(),
            current=next((e for e in state.entries if e.status == IN_PROGRESS), None),
            head=state.pending()[0].entry_id if state.pending() else None,
            error=state.error,
            history=(history if isinstance(history, list) else [])[-10:],
            held_by=[holder.to_json() for holder in others],
            held_note=waiting_message(waiting, limit) if waiting else None,
        )

    def processor_pid(self) -> int | None:
        """The pid processing the queue now, or ``None``.

        Read from the pid file the processor writes once it holds the processor lock,
        never by taking the lock: a probe holding it even briefly would turn away a
        processor starting at that moment. A pid file left by a killed processor names
        a process that is gone (or, by pid reuse, one with another start time).
        """
        info = read_optional(self.processor_file)
        pid, started = info.get("pid"), info.get("process_start")
        if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
            return None
        if isinstance(started, int):
            return pid if process_start(pid) == started else None
        return pid if pid_alive(pid) else None


def _compact(data: dict[str, Any]) -> bytes:
    """One line: the file is rewritten on every change and can hold thousands of entries."""
    return (json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def read_optional(path: Path) -> dict[str, Any]:
    try:
        return read_json_object(path)
    except UnreadableFile:
        return {}
