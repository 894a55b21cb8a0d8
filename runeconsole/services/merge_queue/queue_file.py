"""The merge queue's file, ``.claude/state/merge-queue.json``: reading it, and the locked
read-modify-write with an atomic replace that every change to it goes through (the
operator's in ``edits``, the processor's in ``claims``). The file is the harness's format:
every field it writes (and any we do not know) is kept, and ours are added beside them.
Also who is processing now (the processor's pid file and the entries in progress)."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from runeconsole.core.errors import RuneError, UnreadableFile
from runeconsole.core.files import atomic_write_bytes, read_json_object
from runeconsole.core.locks import locked
from runeconsole.core.pids import pid_alive, process_start
from runeconsole.core.timeutil import iso_z
from runeconsole.core.validate import validate_name
from runeconsole.services.merge_queue.holders import blocking, holders, waiting_message
from runeconsole.services.merge_queue.model import (
    IN_PROGRESS,
    PENDING,
    REMOTE_STATE,
    EntryChanges,
    QueueEntry,
    QueueState,
    QueueStatus,
    UnknownEntry,
)
from runeconsole.services.merge_queue.priority import ranked
from runeconsole.services.merge_queue.settings import MergeQueueSettings
from runeconsole.services.merge_queue.timeouts import limit_for
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
        self._later: dict[str, Any] = {}  # top-level fields to write with the next write
        self._later_entries: dict[str, EntryChanges] = {}  # and entries' changes

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
        """The ref batches are built on and land in: the local ``main``, or with a
        ``remote`` its remote-tracking ref (``refs/remotes/origin/main``), fetched before
        each batch and moved only by a push."""
        main = self.settings.main_branch
        remote = self.settings.remote
        return f"refs/remotes/{remote}/{main}" if remote else f"refs/heads/{main}"

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
        return self.state_of(data)

    def state_of(self, data: dict[str, Any]) -> QueueState:
        """The queue in ``data``: each pending entry with its priority lane now (aging
        included) and its position in the order entries are taken."""
        raw = data.get("entries")
        raw = raw if isinstance(raw, list) else []
        entries = [
            QueueEntry(item, index) for index, item in enumerate(raw) if isinstance(item, dict)
        ]
        pending = {e.index: e for e in entries if e.status == PENDING}
        taken = ranked(
            ((i, e.fields) for i, e in pending.items()),
            self.clock.now(),
            self.settings.aging_minutes,
        )
        for position, (lane, index) in enumerate(taken, start=1):
            pending[index].position, pending[index].lane = position, lane
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
            held = self._apply_later(data)
            try:
                yield data
                data["last_updated"] = self.now()
                atomic_write_bytes(self.paths.inside(self.path), _compact(data))
            except BaseException:
                self._hold_again(*held)  # not written: kept for the next write
                raise

    def write_later(
        self, fields: dict[str, Any], changes: dict[str, EntryChanges] | None = None
    ) -> None:
        """Top-level ``fields`` and entries' ``changes`` that only show what is going on
        (a step, the batches at work), written with this object's next write, before what
        that writes (``flush``: now). A processor killed first loses only those."""
        self._later.update(fields)
        for entry_id, fields_of in (changes or {}).items():
            self._later_entries.setdefault(entry_id, {}).update(fields_of)

    def flush(self) -> None:
        """Write what ``write_later`` holds, if anything."""
        if self._later or self._later_entries:
            with self._mutate():
                pass

    def _apply_later(self, data: dict[str, Any]) -> tuple[dict[str, Any], dict[str, EntryChanges]]:
        """What ``write_later`` held, put into ``data`` and handed back (no longer held)."""
        data.update(self._later)
        for item in data["entries"]:
            if isinstance(item, dict) and item.get("entry_id") in self._later_entries:
                item.update(self._later_entries[item["entry_id"]])
        held = self._later, self._later_entries
        self._later, self._later_entries = {}, {}
        return held

    def _hold_again(self, fields: dict[str, Any], changes: dict[str, EntryChanges]) -> None:
        """Put back what a failed write took, under anything held since."""
        self._later = fields | self._later
        for entry_id, fields_of in changes.items():
            self._later_entries[entry_id] = fields_of | self._later_entries.get(entry_id, {})

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

    def note_remote(self, fields: dict[str, Any], bump: str | None = None) -> None:
        """Fields of the top-level ``remote`` changed one by one, under the lock; ``bump``:
        a count in it to add one to."""
        with self._mutate() as data:
            kept = data.get(REMOTE_STATE)
            kept = kept if isinstance(kept, dict) else {}
            kept.update(fields)
            if bump is not None:
                count = kept.get(bump)
                kept[bump] = (count if isinstance(count, int) and count > 0 else 0) + 1
            data[REMOTE_STATE] = kept

    def update_entry(self, entry_id: str, changes: EntryChanges) -> dict[str, Any]:
        with self._mutate() as data:
            item = self._find(data, entry_id)
            item.update(changes)
            return dict(item)

    def update_entries(self, changes: dict[str, EntryChanges]) -> None:
        """Several entries' changes in one locked write (a batch's step); an entry no
        longer in the file is skipped."""
        with self._mutate() as data:
            for item in data["entries"]:
                if isinstance(item, dict) and item.get("entry_id") in changes:
                    item.update(changes[item["entry_id"]])

    def test_limit(self, state: QueueState, command: list[str] | None = None) -> float:
        """Seconds a test run may take (``test_timeout_seconds``, or from recent green runs
        with ``auto``); also how long an entry another processor holds is waited for."""
        return limit_for(self.settings, state.data, command or self.settings.test_command or [])

    # -- status ------------------------------------------------------------------------------

    def status(self) -> QueueStatus:
        state = self.read()
        history = state.data.get("history")
        now, limit = self.clock.now(), self.test_limit(state)
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
