"""Sequential merge queue: ``.claude/state/merge-queue.json`` (Epic 3).

Branches land on ``main`` one at a time: rebase onto ``main`` in a detached worktree
the queue owns, run the test command there, then move ``main`` with a compare-and-
swap so untested code never lands. The file is the harness's format; we keep every
field it writes (and any we do not know) and add ours beside them. Every change is
a locked read-modify-write; processing holds a second lock for its whole run, so
the CLI and the console can never process at the same time.

This module owns the file and the model; processing is in ``merge_processor`` and
conflict prediction in ``merge_predictions``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runeconsole.adapters import git_worktrees as gw
from runeconsole.core.config import Talisman
from runeconsole.core.errors import InvalidInput, RuneError, UnreadableFile
from runeconsole.core.files import atomic_write_bytes, read_json_object
from runeconsole.core.locks import locked
from runeconsole.core.pids import pid_alive, process_start
from runeconsole.core.timeutil import iso_z, parse_iso
from runeconsole.core.validate import ID_PATTERN, MAX_ID_LENGTH, validate_id
from runeconsole.services.merge_predictions import ConflictPredictor, Prediction
from runeconsole.services.project import Project
from runeconsole.services.signals import Signals

PENDING, IN_PROGRESS, COMPLETED, FAILED = "pending", "in_progress", "completed", "failed"
STATUSES = (IN_PROGRESS, PENDING, FAILED, COMPLETED)
# Machine-readable failure reasons (``reason``); ``error`` keeps the harness's free text.
CONFLICT, TESTS_FAILED, BASE_MOVED = "conflict", "tests_failed", "base_moved"
BRANCH_MISSING, TIMEOUT, INTERRUPTED = "branch_missing", "timeout", "interrupted"
MAIN_DIRTY, GIT_ERROR = "main_dirty", "git_error"
HISTORY_LIMIT = 200
LOCK_TIMEOUT = 120.0


def _node_id_from(branch: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "_", branch).strip("_")[:64] or "branch"


def command_args(value: Any) -> list[str] | None:
    """A test command as an argument list (a string is split like a shell would, no shell)."""
    if isinstance(value, str) and value.strip():
        try:
            return shlex.split(value)
        except ValueError:  # unbalanced quotes
            return None
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return list(value)
    return None


@dataclass(frozen=True)
class MergeQueueSettings:
    """``runeconsole.merge_queue`` in talisman.yml."""

    test_command: list[str] | None = None
    test_timeout: float = 900.0
    git_timeout: float = 300.0
    max_rebase_rounds: int = 3
    keep_branch: bool = False
    on_interrupted: str = "fail"
    max_attempts: int = 3
    main_branch: str = "main"
    predict_limit: int = 0  # 0: every pending entry

    @classmethod
    def from_talisman(cls, talisman: Talisman) -> MergeQueueSettings:
        section = talisman.section("runeconsole", "merge_queue")
        raw = section.get("test_command", None)
        command = command_args(raw) if raw is not None else None
        if raw is not None and command is None:
            talisman.report(
                f"{talisman.path}: runeconsole.merge_queue.test_command is {raw!r}; "
                "allowed: a command line (quotes balanced) or a list of strings"
            )
        main = section.text("main_branch", "main") or "main"
        if not gw.valid_branch_name(main):
            talisman.report(f"{talisman.path}: runeconsole.merge_queue.main_branch {main!r}")
            main = "main"
        settings = cls(
            test_command=command,
            test_timeout=section.number("test_timeout_seconds", 900.0, minimum=1),
            git_timeout=section.number("git_timeout_seconds", 300.0, minimum=1),
            max_rebase_rounds=section.integer("max_rebase_rounds", 3, minimum=1, maximum=20),
            keep_branch=section.boolean("keep_branch", False),
            on_interrupted=section.choice("on_interrupted", "fail", ("fail", "retry")),
            max_attempts=section.integer("max_attempts", 3, minimum=1, maximum=100),
            main_branch=main,
            predict_limit=section.integer("predict_limit", 0, minimum=0, maximum=100000),
        )
        section.warn_unread()
        return settings


@dataclass
class QueueEntry:
    """One entry as read: every field kept, plus its place in the queue."""

    fields: dict[str, Any]
    index: int
    position: int | None = None  # 1-based among pending entries

    def get(self, name: str, default: Any = None) -> Any:
        return self.fields.get(name, default)

    @property
    def entry_id(self) -> str:
        return str(self.fields.get("entry_id") or f"#{self.index}")

    @property
    def status(self) -> str:
        status = self.fields.get("status")
        return status if status in STATUSES else str(status or "?")

    @property
    def branch(self) -> str:
        return str(self.fields.get("branch") or "")

    @property
    def identity(self) -> str | None:
        value = self.fields.get("identity_name")
        return value if isinstance(value, str) and value else None

    @property
    def reason(self) -> str | None:
        return self.fields.get("reason") or (
            "error" if self.status == FAILED and self.fields.get("error") else None
        )

    @property
    def conflict_files(self) -> list[str]:
        files = self.fields.get("conflict_files")
        return [str(f) for f in files] if isinstance(files, list) else []

    def queued_at(self) -> Any:
        return parse_iso(self.fields.get("requested_at")) or parse_iso(
            self.fields.get("enqueued_at")
        )

    def sort_key(self) -> tuple[int, int]:
        group = STATUSES.index(self.status) if self.status in STATUSES else len(STATUSES)
        return group, self.index

    def to_json(self) -> dict[str, Any]:
        return {**self.fields, "position": self.position, "reason": self.reason}


@dataclass
class QueueState:
    entries: list[QueueEntry] = field(default_factory=list)
    paused: bool = False
    data: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    def pending(self) -> list[QueueEntry]:
        return [e for e in self.entries if e.status == PENDING]

    def ordered(self) -> list[QueueEntry]:
        """In progress first, then the pending queue in order, then failed, then done."""
        return sorted(self.entries, key=QueueEntry.sort_key)

    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(STATUSES, 0)
        for entry in self.entries:
            counts[entry.status] = counts.get(entry.status, 0) + 1
        return counts

    def find(self, entry_id: str) -> QueueEntry | None:
        return next((e for e in self.entries if e.get("entry_id") == entry_id), None)


@dataclass(frozen=True)
class Progress:
    """A live report from processing: a step starting or ending, or a line of test output."""

    entry_id: str
    step: str
    message: str
    elapsed: float
    output: bool = False


ProgressCallback = Callable[[Progress], None]
# Progress steps that are one-off notices before processing starts, not processing steps.
RECOVERED, PICKED_UP = "recovered", "picked_up"


@dataclass
class Outcome:
    entry_id: str
    branch: str
    status: str
    reason: str | None = None
    error: str | None = None
    conflict_files: list[str] = field(default_factory=list)
    merged_commit: str | None = None
    output_tail: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def merged(self) -> bool:
        return self.status == COMPLETED

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class ProcessReport:
    outcomes: list[Outcome] = field(default_factory=list)
    recovered: list[str] = field(default_factory=list)
    picked_up: list[str] = field(default_factory=list)
    stopped: str | None = None  # why processing stopped before the queue was empty

    def to_json(self) -> dict[str, Any]:
        return {
            "outcomes": [o.to_json() for o in self.outcomes],
            "recovered": self.recovered,
            "picked_up": self.picked_up,
            "stopped": self.stopped,
        }


class QueueBusy(RuneError):
    """Another process holds the processor lock."""


class UnknownEntry(InvalidInput):
    """No entry has that id: the caller named the wrong thing (a usage error)."""


class MergeQueue:
    def __init__(
        self,
        project: Project,
        settings: MergeQueueSettings | None = None,
        signals: Signals | None = None,
    ) -> None:
        self.project = project
        self.root, self.paths, self.clock = project.root, project.paths, project.clock
        self.settings = settings = settings or project.settings(MergeQueueSettings)
        self.signals = signals or Signals(project)
        self.predictor = ConflictPredictor(self.root, settings.main_branch, settings.predict_limit)

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
        validate_id(entry_id, "entry id")
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
    ) -> tuple[QueueEntry, bool]:
        """Enqueue ``branch``; returns (entry, created). A waiting branch is not added twice."""
        if not gw.valid_branch_name(branch):
            raise InvalidInput(f"branch {branch!r} is not a valid git branch name")
        if branch == self.settings.main_branch:
            raise InvalidInput(f"cannot queue {branch!r}: it is the branch the queue merges into")
        for value, what in ((identity, "identity"), (node_id, "node id"), (bead_id, "bead id")):
            if value is not None:
                validate_id(value, what)
        if pr_number is not None and pr_number < 0:
            raise InvalidInput("--pr must be a positive number")
        if test_command is not None and command_args(test_command) is None:
            raise InvalidInput(
                "--test-command must be a non-empty command line with balanced quotes"
            )
        node = node_id or _node_id_from(branch)
        with self._mutate() as data:
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
            data["entries"].append(item)
            self._record(data, "add", entry_id, branch=branch, source=source)
            return QueueEntry(dict(item), len(data["entries"]) - 1), True

    def retry(self, entry_id: str) -> QueueEntry:
        validate_id(entry_id, "entry id")
        with self._mutate() as data:
            item = self._find(data, entry_id)
            if item.get("status") != FAILED:
                raise RuneError(
                    f"{entry_id} is {item.get('status')}; only a failed entry is retried"
                )
            item.update(status=PENDING, started_at=None, completed_at=None, current_step=None)
            item["last_failure"] = {"reason": item.get("reason"), "error": item.get("error")}
            item.update(reason=None, error=None, conflict_files=[])
            self._record(data, "retry", entry_id)
            return QueueEntry(dict(item), 0)

    def remove(self, entry_id: str) -> QueueEntry:
        validate_id(entry_id, "entry id")
        with self._mutate() as data:
            item = self._find(data, entry_id)
            if item.get("status") == IN_PROGRESS and self.processor_pid() is not None:
                raise RuneError(f"{entry_id} is being processed; wait for it to finish")
            data["entries"].remove(item)
            self._record(
                data, "remove", entry_id, branch=item.get("branch"), status=item.get("status")
            )
            return QueueEntry(dict(item), 0)

    def move(self, entry_id: str, offset: int) -> tuple[QueueEntry, bool]:
        """Swap a pending entry with its pending neighbour above (-1) or below (+1).

        Returns (entry, moved); an entry already at that end stays and nothing is recorded.
        """
        validate_id(entry_id, "entry id")
        with self._mutate() as data:
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
        with self._mutate() as data:
            if bool(data.get("paused")) == paused:
                return False
            data["paused"] = paused
            data["paused_at"] = self.now() if paused else None
            self._record(data, "pause" if paused else "resume", None)
            return True

    def pick_up_signals(self) -> list[str]:
        """Turn pending ``MERGE_READY`` signals into entries, then consume them.

        A branch already waiting is not added twice (``add`` checks under the lock), so
        the console and a CLI picking up the same signal make one entry. Ids that could
        not name a file are dropped rather than refusing the whole request.
        """
        ready = self.signals.pending(signal_type="MERGE_READY")
        added: list[str] = []
        for signal in ready:
            payload = signal.payload
            branch = payload.get("branch")
            if signal.error or not gw.valid_branch_name(branch):
                continue  # not ours to destroy: it stays visible in the signals directory
            if not signal.path.exists():
                continue
            pr = payload.get("pr_number")
            try:
                entry, created = self.add(
                    str(branch),
                    identity=id_or_none(payload.get("identity_name") or payload.get("identity")),
                    node_id=id_or_none(payload.get("node_id")),
                    bead_id=id_or_none(payload.get("bead_id")),
                    pr_number=pr if isinstance(pr, int) else None,
                    worktree=_optional_str(payload.get("worktree_path")),
                    source=signal.path.name,
                )
            except InvalidInput:
                continue
            with contextlib.suppress(RuneError):
                self.signals.consume(signal)
            if created:
                added.append(entry.entry_id)
        return added

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
                        item["entry_id"] = f"mq-{_node_id_from(str(item.get('branch')))}-claimed"
                    self._record(data, "start", item["entry_id"])
                    return dict(item)
        return None

    def requeue(self, entry_id: str, reason: str) -> None:
        """Put an entry whose processor died back in the queue, at its place."""
        with self._mutate() as data:
            item = self._find(data, entry_id)
            item.update(status=PENDING, current_step=None, processor_pid=None, started_at=None)
            self._record(data, "requeue", entry_id, reason=reason)

    # -- status ------------------------------------------------------------------------------

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

    # -- processing (services.merge_processor) and predictions (services.merge_predictions) ---

    def process(
        self, *, run_all: bool = False, progress: ProgressCallback | None = None
    ) -> ProcessReport:
        """Process the head entry (or every pending entry) under the processor lock."""
        from runeconsole.services.merge_processor import Processor  # it imports this module

        return Processor(self).process(run_all=run_all, progress=progress)

    def not_ready(self, head: QueueEntry) -> str | None:
        """Why ``process`` would refuse ``head`` before starting, or ``None``."""
        from runeconsole.services.merge_processor import Processor

        return Processor(self).not_ready(head)

    def predict(self, state: QueueState | None = None) -> dict[str, Prediction]:
        """Predicted conflicts of every pending entry (cached until something changes)."""
        return self.predictor.predict(state or self.read())


def _compact(data: dict[str, Any]) -> bytes:
    """One line: the file is rewritten on every change and can hold thousands of entries."""
    return (json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def _optional_str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def id_or_none(value: Any) -> str | None:
    """``value`` if it can safely name a file or a signal party, else ``None``."""
    ok = isinstance(value, str) and len(value) <= MAX_ID_LENGTH and ID_PATTERN.fullmatch(value)
    return value if ok else None


def read_optional(path: Path) -> dict[str, Any]:
    try:
        return read_json_object(path)
    except UnreadableFile:
        return {}
