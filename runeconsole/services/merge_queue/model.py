"""The merge queue's model: entry statuses and failure reasons, an entry and the queue as
read, and what processing reports. A leaf: the file, the processor and the predictions
all build on it, and it imports none of them."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypedDict

from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.core.timeutil import parse_iso
from runeconsole.core.validate import ID_PATTERN, MAX_ID_LENGTH
from runeconsole.services.merge_queue.priority import NORMAL, PRIORITIES, priority_of

PENDING, IN_PROGRESS, COMPLETED, FAILED = "pending", "in_progress", "completed", "failed"
STATUSES = (IN_PROGRESS, PENDING, FAILED, COMPLETED)
# Machine-readable failure reasons (``reason``); ``error`` keeps the harness's free text.
CONFLICT, TESTS_FAILED, BASE_MOVED = "conflict", "tests_failed", "base_moved"
BRANCH_MISSING, TIMEOUT, INTERRUPTED = "branch_missing", "timeout", "interrupted"
MAIN_DIRTY, GIT_ERROR = "main_dirty", "git_error"
NORMAL_LANE = PRIORITIES.index(NORMAL)
# Top-level fields of ours in the queue's file, beside the harness's ``entries``.
BATCHES = "batches"  # the batches at work now, as the processor last wrote them
WINDOW = "window"  # how many batches may test at once now (the speculative window)
BATCH_SEQ = "batch_seq"  # the last batch number given
FLAKY_COUNTS = "flaky_counts"  # {test command: entries that passed only on a retry}
REMOTE_STATE = "remote"  # the remote the queue lands on: last fetch, last error, races


def node_id_from(branch: str) -> str:
    """A node id made from a branch name (what the harness puts in ``entry_id``)."""
    return re.sub(r"[^A-Za-z0-9_-]+", "_", branch).strip("_")[:64] or "branch"


def remote_branch_of(entry: dict[str, Any]) -> str | None:
    """The branch on the remote an entry names (``remote_branch``), if it names one."""
    branch, remote = entry.get("remote_branch"), entry.get("remote")
    ok = isinstance(branch, str) and isinstance(remote, str) and bool(branch and remote)
    return branch if ok else None


def is_remote_only(entry: dict[str, Any]) -> bool:
    """A teammate's branch on the remote, with no local branch (``branch``:
    ``origin/feature-x``): fetched before it is built."""
    branch = remote_branch_of(entry)
    return branch is not None and entry.get("branch") == f"{entry.get('remote')}/{branch}"


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


class EntryChanges(TypedDict, total=False):
    """What processing and the operator change in a queue entry, as it crosses from the
    steps (``work.py``, ``lander.py``, ``outcomes.py``, ``recovery.py``) and the dispatch to
    the queue's file (``queue_file.update_entries``); the entry's other keys are kept."""

    status: str
    current_step: str | None  # what processing does now (None: nothing)
    steps: list[dict[str, Any]]  # each step done: its name, start, seconds and result
    tested_commit: str | None
    base_commit: str
    batch_tip: str
    merged_commit: str | None
    completed_at: str | None
    reason: str | None
    error: str | None
    conflict_files: list[str]
    output_tail: list[str]
    notes: list[str]
    flaky: bool
    attempts: int
    interruptions: int
    signals_pending: list[dict[str, Any]]  # the signals owed, until delivered
    remote_wait: dict[str, Any] | None  # a wait for the remote, while there is one


@dataclass
class QueueEntry:
    """One entry as read: every field kept, plus its place in the queue."""

    fields: dict[str, Any]
    index: int
    position: int | None = None  # 1-based among pending entries, in the order taken
    lane: int = NORMAL_LANE  # its priority now, aging included (0: urgent)

    def get(self, name: str, default: Any = None) -> Any:
        return self.fields.get(name, default)

    @property
    def entry_id(self) -> str:
        found = self.fields.get("entry_id")
        if found:
            return str(found)
        signal = self.fields.get("from_signal")
        return f"(new, from {signal})" if signal else f"#{self.index}"

    @property
    def status(self) -> str:
        status = self.fields.get("status")
        return status if status in STATUSES else str(status or "?")

    @property
    def branch(self) -> str:
        return str(self.fields.get("branch") or "")

    @property
    def priority(self) -> str:
        return priority_of(self.fields)

    @property
    def batch_id(self) -> str | None:
        value = self.fields.get("batch_id")
        return value if isinstance(value, str) and value and self.status == IN_PROGRESS else None

    @property
    def identity(self) -> str | None:
        value = self.fields.get("identity_name")
        return value if isinstance(value, str) and value else None

    @property
    def step(self) -> str:
        """What processing is doing now, in words (harness entries record no step)."""
        step = self.fields.get("current_step")
        return step if isinstance(step, str) and step else "processing"

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

    def sort_key(self) -> tuple[int, int, int]:
        group = STATUSES.index(self.status) if self.status in STATUSES else len(STATUSES)
        return group, self.lane if self.status == PENDING else 0, self.index

    def to_json(self) -> dict[str, Any]:
        taken_as = PRIORITIES[self.lane] if self.status == PENDING else None
        return {
            **self.fields,
            "position": self.position,
            "reason": self.reason,
            "priority": self.priority,
            "taken_as": taken_as,
            "index": self.index,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> QueueEntry:
        """An entry as ``to_json`` wrote it (a row of another source's stream)."""
        index, position, taken_as = data.get("index"), data.get("position"), data.get("taken_as")
        derived = ("position", "index", "taken_as")
        fields = {k: v for k, v in data.items() if k not in derived}
        if fields.get("reason") is None:  # none given: none worked out either
            fields.pop("reason", None)
        return cls(
            fields,
            index if isinstance(index, int) and not isinstance(index, bool) else 0,
            position if isinstance(position, int) and not isinstance(position, bool) else None,
            PRIORITIES.index(taken_as) if taken_as in PRIORITIES else NORMAL_LANE,
        )

    def describe(self) -> str:
        """A failed entry's reason and error (and files) in one line; never ``None``."""
        files = self.conflict_files
        error = self.fields.get("error")
        text = f"{self.reason or 'failed'}: {error}" if error else self.reason or "failed"
        return text + (f" [{', '.join(files)}]" if files else "")


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


@dataclass
class QueueState:
    entries: list[QueueEntry] = field(default_factory=list)
    paused: bool = False
    data: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    def pending(self) -> list[QueueEntry]:
        """The pending entries in the order they are taken (priority lanes, then the
        queue's order)."""
        return sorted((e for e in self.entries if e.status == PENDING), key=QueueEntry.sort_key)

    def ordered(self) -> list[QueueEntry]:
        """In progress first, then the pending queue in the order taken, then failed, then
        done."""
        return sorted(self.entries, key=QueueEntry.sort_key)

    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(STATUSES, 0)
        for entry in self.entries:
            counts[entry.status] = counts.get(entry.status, 0) + 1
        return counts

    def find(self, entry_id: str) -> QueueEntry | None:
        return next((e for e in self.entries if e.get("entry_id") == entry_id), None)

    def to_json(self, predictions: dict[str, Prediction]) -> dict[str, Any]:
        """Every entry in queue order with its predicted conflicts (``merge-queue list``)."""
        entries = []
        for entry in self.ordered():
            prediction = predictions.get(entry.entry_id)
            entries.append({**entry.to_json(), "prediction": prediction and prediction.to_json()})
        return {"paused": self.paused, "entries": entries}


@dataclass(frozen=True)
class QueueStatus:
    """The queue at a glance: paused or not, who processes, counts, what is next."""

    paused: bool
    processing_pid: int | None
    counts: dict[str, int]
    current: QueueEntry | None
    head: str | None
    error: str | None
    history: list[Any]
    held_by: list[dict[str, Any]] = field(default_factory=list)  # other processors' entries
    held_note: str | None = None  # why processing waits for one of them, if it does

    def to_json(self) -> dict[str, Any]:
        return {
            "paused": self.paused,
            "processing_pid": self.processing_pid,
            "counts": self.counts,
            "current": self.current.to_json() if self.current else None,
            "head": self.head,
            "error": self.error,
            "history": self.history,
            "held_by_others": self.held_by,
            "waiting_for": self.held_note,
        }


@dataclass(frozen=True)
class ProcessPlan:
    """What ``process`` would do now, without doing it (``process --dry-run``): the same
    steps in the same order, recovery and the ``MERGE_READY`` signals it would pick up
    included. ``head`` may be an entry a picked-up signal would make (``entry_id``
    ``None``, ``from_signal`` its file)."""

    paused: bool
    busy_pid: int | None
    refused: str | None
    head: QueueEntry | None
    prediction: Prediction | None
    test_command: Any
    recovered: list[str] = field(default_factory=list)
    picked_up: list[dict[str, Any]] = field(default_factory=list)
    batches: list[list[QueueEntry]] = field(default_factory=list)  # as they would form
    window: int = 1  # how many of them would test at once

    def to_json(self) -> dict[str, Any]:
        return {
            "paused": self.paused,
            "busy_pid": self.busy_pid,
            "refused": self.refused,
            "head": self.head.to_json() if self.head else None,
            "prediction": self.prediction.to_json() if self.prediction else None,
            "test_command": self.test_command,
            "recovered": self.recovered,
            "picked_up": self.picked_up,
            "batches": [
                [
                    {"entry_id": e.get("entry_id"), "branch": e.branch, "priority": e.priority}
                    | ({"from_signal": e.get("from_signal")} if e.get("from_signal") else {})
                    for e in batch
                ]
                for batch in self.batches
            ],
            "window": self.window,
        }


@dataclass(frozen=True)
class Progress:
    """A live report from processing: a step starting or ending, or a line of test output.
    ``entry_id`` names the entry, or the batch (``b7``) when it is about several."""

    entry_id: str
    step: str
    message: str
    elapsed: float
    output: bool = False
    batch: str | None = None  # the batch it is part of
    slot: int | None = None  # the test slot (1, 2, …) the batch runs in


def id_or_none(value: Any) -> str | None:
    """``value`` if it can safely name a file or a signal party, else ``None``."""
    ok = isinstance(value, str) and len(value) <= MAX_ID_LENGTH and ID_PATTERN.fullmatch(value)
    return value if ok else None


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
