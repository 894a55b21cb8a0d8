"""Sequential merge queue: ``.claude/state/merge-queue.json`` (Epic 3).

Branches land on ``main`` one at a time: rebase onto ``main`` in a detached worktree
the queue owns, run the test command there, then move ``main`` with a compare-and-
swap so untested code never lands. The file is the harness's format; we keep every
field it writes (and any we do not know) and add ours beside them. Every change is
a locked read-modify-write; processing holds a second lock for its whole run, so
the CLI and the console can never process at the same time.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from runeconsole.adapters import git_worktrees as gw
from runeconsole.adapters.clock import Clock, SystemClock
from runeconsole.adapters.processes import run_streaming, stop_processes_in
from runeconsole.core.config import Talisman
from runeconsole.core.errors import InvalidInput, RuneError, UnreadableFile
from runeconsole.core.files import atomic_write_bytes, atomic_write_json, read_json_object
from runeconsole.core.locks import locked
from runeconsole.core.paths import ProjectPaths
from runeconsole.core.timeutil import iso_z, parse_iso
from runeconsole.core.validate import validate_id
from runeconsole.services.signals import Signals

PENDING, IN_PROGRESS, COMPLETED, FAILED = "pending", "in_progress", "completed", "failed"
STATUSES = (IN_PROGRESS, PENDING, FAILED, COMPLETED)
# Machine-readable failure reasons (``reason``); ``error`` keeps the harness's free text.
CONFLICT, TESTS_FAILED, BASE_MOVED = "conflict", "tests_failed", "base_moved"
BRANCH_MISSING, TIMEOUT, INTERRUPTED = "branch_missing", "timeout", "interrupted"
MAIN_DIRTY, GIT_ERROR = "main_dirty", "git_error"
SIGNAL_SOURCE = "runeconsole"
FALLBACK_TARGET = "guardian"
HISTORY_LIMIT = 200
LOCK_TIMEOUT = 120.0
WORKTREE_DIR = "runeconsole-merge-queue"


def _node_id_from(branch: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "_", branch).strip("_")[:64] or "branch"


def _command(value: Any) -> list[str] | None:
    if isinstance(value, str) and value.strip():
        return shlex.split(value)
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

    @classmethod
    def from_talisman(cls, talisman: Talisman) -> MergeQueueSettings:
        section = talisman.section("runeconsole", "merge_queue")
        raw = section.data.get("test_command")
        command = _command(raw) if raw is not None else None
        if raw is not None and command is None:
            talisman.report(
                f"{talisman.path}: runeconsole.merge_queue.test_command is {raw!r}; "
                "allowed: a command line string or a list of strings"
            )
        main = section.text("main_branch", "main") or "main"
        if not gw.valid_branch_name(main):
            talisman.report(f"{talisman.path}: runeconsole.merge_queue.main_branch {main!r}")
            main = "main"
        return cls(
            test_command=command,
            test_timeout=section.number("test_timeout_seconds", 900.0, minimum=1),
            git_timeout=section.number("git_timeout_seconds", 300.0, minimum=1),
            max_rebase_rounds=section.integer("max_rebase_rounds", 3, minimum=1, maximum=20),
            keep_branch=section.boolean("keep_branch", False),
            on_interrupted=section.choice("on_interrupted", "fail", ("fail", "retry")),
            max_attempts=section.integer("max_attempts", 3, minimum=1, maximum=100),
            main_branch=main,
        )


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

    def to_json(self) -> dict[str, Any]:
        return {
            "outcomes": [o.to_json() for o in self.outcomes],
            "recovered": self.recovered,
            "picked_up": self.picked_up,
        }


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


class QueueBusy(RuneError):
    """Another process holds the processor lock."""


@dataclass
class _Run:
    """What one processing attempt knows, for recording and reporting."""

    entry: dict[str, Any]
    started: float = field(default_factory=time.monotonic)
    steps: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    progress: ProgressCallback | None = None

    @property
    def entry_id(self) -> str:
        return str(self.entry["entry_id"])

    def report(self, step: str, message: str, output: bool = False) -> None:
        if self.progress is not None:
            elapsed = time.monotonic() - self.started
            self.progress(Progress(self.entry_id, step, message, elapsed, output))


class MergeQueue:
    def __init__(
        self,
        root: Path,
        clock: Clock | None = None,
        settings: MergeQueueSettings | None = None,
        signals: Signals | None = None,
    ) -> None:
        self.root = root
        self.paths = ProjectPaths(root)
        self.clock = clock or SystemClock()
        self.settings = settings or MergeQueueSettings.from_talisman(Talisman.load(root))
        self.signals = signals or Signals(root, self.clock)
        self._prediction_cache: tuple[Any, dict[str, Prediction]] | None = None

    @property
    def path(self) -> Path:
        return self.paths.merge_queue

    @property
    def processor_file(self) -> Path:
        return self.paths.state / "merge-queue.processor.json"

    @property
    def main_ref(self) -> str:
        return f"refs/heads/{self.settings.main_branch}"

    def _now(self) -> str:
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
            raise RuneError(f"no entry {entry_id!r} in {self.path}; `merge-queue list` shows them")
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
            data["last_updated"] = self._now()
            atomic_write_bytes(self.path, _compact(data))

    def _record(
        self, data: dict[str, Any], action: str, entry_id: str | None, **detail: Any
    ) -> None:
        history = data.get("history")
        history = history if isinstance(history, list) else []
        item = {"at": self._now(), "action": action, "entry_id": entry_id, "pid": os.getpid()}
        item.update({k: v for k, v in detail.items() if v is not None})
        history.append(item)
        data["history"] = history[-HISTORY_LIMIT:]

    @staticmethod
    def _find(data: dict[str, Any], entry_id: str) -> dict[str, Any]:
        for item in data["entries"]:
            if isinstance(item, dict) and item.get("entry_id") == entry_id:
                return item
        raise RuneError(f"no entry {entry_id!r} in the merge queue; `merge-queue list` shows them")

    def _update(self, entry_id: str, changes: dict[str, Any]) -> dict[str, Any]:
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
        if test_command is not None and _command(test_command) is None:
            raise InvalidInput("--test-command must not be empty")
        node = node_id or _node_id_from(branch)
        with self._mutate() as data:
            for index, item in enumerate(data["entries"]):
                if (
                    isinstance(item, dict)
                    and item.get("branch") == branch
                    and item.get("status") in (PENDING, IN_PROGRESS)
                ):
                    return QueueEntry(dict(item), index), False
            now = self._now()
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

    def move(self, entry_id: str, offset: int) -> QueueEntry:
        """Swap a pending entry with its pending neighbour above (-1) or below (+1)."""
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
            if 0 <= there < len(slots):
                a, b = slots[here], slots[there]
                entries[a], entries[b] = entries[b], entries[a]
                self._record(data, "move", entry_id, direction="up" if offset < 0 else "down")
            return QueueEntry(dict(item), 0)

    def set_paused(self, paused: bool) -> bool:
        """Pause or resume; returns whether anything changed."""
        with self._mutate() as data:
            if bool(data.get("paused")) == paused:
                return False
            data["paused"] = paused
            data["paused_at"] = self._now() if paused else None
            self._record(data, "pause" if paused else "resume", None)
            return True

    def pick_up_signals(self) -> list[str]:
        """Turn pending ``MERGE_READY`` signals into entries (under the queue lock, no doubles)."""
        ready = self.signals.pending(signal_type="MERGE_READY")
        added: list[str] = []
        for signal in ready:
            payload = signal.payload
            branch = payload.get("branch")
            if signal.error or not gw.valid_branch_name(branch):
                continue  # not ours to destroy: it stays visible in the signals directory
            if not signal.path.exists():
                continue
            identity = payload.get("identity_name") or payload.get("identity")
            pr = payload.get("pr_number")
            try:
                entry, created = self.add(
                    str(branch),
                    identity=identity if isinstance(identity, str) else None,
                    node_id=_optional_str(payload.get("node_id")),
                    bead_id=_optional_str(payload.get("bead_id")),
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

    # -- status ------------------------------------------------------------------------------

    def processor_pid(self) -> int | None:
        """The pid processing the queue now, or ``None`` (checked with the lock, not the file)."""
        lock = FileLock(str(self.paths.lock_for("merge-queue-processor")), timeout=0)
        try:
            lock.acquire()
        except Timeout:
            info = _read_optional(self.processor_file)
            pid = info.get("pid")
            return pid if isinstance(pid, int) else -1
        lock.release()
        return None

    # -- processing --------------------------------------------------------------------------

    @contextlib.contextmanager
    def _processor(self) -> Iterator[dict[str, Any]]:
        """Hold the processor lock; yields what a dead predecessor left in the pid file."""
        self.paths.locks.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(self.paths.lock_for("merge-queue-processor")), timeout=0)
        try:
            lock.acquire()
        except Timeout:
            pid = _read_optional(self.processor_file).get("pid")
            who = f"pid {pid}" if isinstance(pid, int) else "another process"
            raise QueueBusy(
                f"queue is being processed by {who}; try again when it finishes"
            ) from None
        try:
            leftover = _read_optional(self.processor_file)
            atomic_write_json(self.processor_file, {"pid": os.getpid(), "started_at": self._now()})
            yield leftover
        finally:
            with contextlib.suppress(FileNotFoundError):
                self.processor_file.unlink()
            lock.release()

    def worktree_path(self) -> Path:
        return gw.common_dir(self.root) / WORKTREE_DIR

    def process(
        self, *, run_all: bool = False, progress: ProgressCallback | None = None
    ) -> ProcessReport:
        """Process the head entry (or every pending entry) under the processor lock."""
        with self._processor() as leftover:
            report = ProcessReport()
            report.recovered = self.recover(leftover)
            report.picked_up = self.pick_up_signals()
            while True:
                state = self.read()
                if state.paused:
                    if not report.outcomes and state.pending():
                        raise RuneError("the merge queue is paused; `merge-queue resume` first")
                    break
                if not state.pending():
                    break
                self._check_ready(state.pending()[0])
                entry = self._claim_head()
                if entry is None:
                    break
                report.outcomes.append(self._process_entry(entry, progress))
                if not run_all:
                    break
            return report

    def _check_ready(self, head: QueueEntry) -> None:
        """Refuse before claiming anything: nothing changes when the setup is wrong."""
        if _command(head.get("test_command")) is None and self.settings.test_command is None:
            raise RuneError(
                "no test command: set runeconsole.merge_queue.test_command in "
                ".claude/talisman.yml (or give the entry --test-command)"
            )
        if gw.resolve_commit(self.root, self.main_ref) is None:
            raise RuneError(f"branch {self.settings.main_branch!r} does not exist in {self.root}")
        holder = gw.checked_out_at(self.root, self.settings.main_branch)
        if holder is not None and gw.is_dirty(holder):
            raise RuneError(
                f"{self.settings.main_branch} is checked out in {holder} with uncommitted changes; "
                "commit or stash them so it can be fast-forwarded, then process again"
            )

    def _claim_head(self) -> dict[str, Any] | None:
        with self._mutate() as data:
            for item in data["entries"]:
                if isinstance(item, dict) and item.get("status") == PENDING:
                    attempts = item.get("attempts")
                    item.update(
                        status=IN_PROGRESS,
                        started_at=self._now(),
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

    def _process_entry(self, entry: dict[str, Any], progress: ProgressCallback | None) -> Outcome:
        run = _Run(entry, progress=progress)
        worktree = self.worktree_path()
        try:
            outcome = self._attempt(run, worktree)
        except RuneError as exc:
            outcome = self._fail(run, GIT_ERROR, exc.message)
        finally:
            with contextlib.suppress(RuneError):
                gw.remove_worktree(self.root, worktree)
        return outcome

    def _step(self, run: _Run, name: str) -> Callable[[str, dict[str, Any] | None], None]:
        """Record the start of a step now; the returned function records its end."""
        began = time.monotonic()
        at = self._now()
        self._update(run.entry_id, {"current_step": name})
        run.report(name, f"{name}…")

        def finish(result: str, extra: dict[str, Any] | None = None) -> None:
            step = {"step": name, "started_at": at, "seconds": round(time.monotonic() - began, 3)}
            step["result"] = result
            run.steps.append(step)
            self._update(run.entry_id, {"steps": list(run.steps), **(extra or {})})
            run.report(name, f"{name}: {result} ({step['seconds']:.1f}s)")

        return finish

    def _attempt(self, run: _Run, worktree: Path) -> Outcome:
        entry = run.entry
        branch = str(entry.get("branch") or "")
        done = self._step(run, "verify")
        original = (
            gw.resolve_commit(self.root, f"refs/heads/{branch}")
            if gw.valid_branch_name(branch)
            else None
        )
        if original is None:
            done("branch missing", None)
            return self._fail(run, BRANCH_MISSING, f"branch {branch!r} does not exist")
        command = _command(entry.get("test_command")) or self.settings.test_command or []
        done("ok", {"original_commit": original})
        gw.remove_worktree(self.root, worktree)
        gw.add_detached(self.root, worktree, original, timeout=self.settings.git_timeout)
        for _round in range(self.settings.max_rebase_rounds):
            base = gw.resolve_commit(self.root, self.main_ref)
            if base is None:
                raise RuneError(f"branch {self.settings.main_branch!r} disappeared")
            done = self._step(run, "rebase")
            rebased = gw.rebase(worktree, base, timeout=self.settings.git_timeout)
            if not rebased.ok:
                if rebased.conflicts:
                    done("conflict", None)
                    return self._fail(
                        run,
                        CONFLICT,
                        f"rebase onto {self.settings.main_branch} conflicts",
                        rebased.conflicts,
                    )
                done("failed", None)
                return self._fail(run, GIT_ERROR, f"rebase failed: {rebased.detail}")
            tested = rebased.head or ""
            done("ok", {"base_commit": base, "tested_commit": None})
            if tested == base:
                run.notes.append("nothing to merge: the branch is already in main")
                return self._finish(run, base, base, original)
            failure = self._test(run, worktree, command, tested)
            if failure is not None:
                return failure
            done = self._step(run, "merge")
            holder = gw.checked_out_at(self.root, self.settings.main_branch)
            if holder is not None and gw.is_dirty(holder):
                done("refused", None)
                return self._fail(
                    run, MAIN_DIRTY, f"{holder} has uncommitted changes on main; not merged"
                )
            # Written before the ref moves: recovery can tell a landed merge from a lost one.
            self._update(run.entry_id, {"tested_commit": tested, "base_commit": base})
            if gw.compare_and_swap(self.root, self.main_ref, tested, base):
                done("ok", None)
                return self._finish(run, tested, base, original)
            done("main moved", None)
            run.notes.append(f"main moved during the run (was {base[:12]}); rebasing again")
        return self._fail(
            run,
            BASE_MOVED,
            f"main kept moving: gave up after {self.settings.max_rebase_rounds} rebases",
        )

    def _test(self, run: _Run, worktree: Path, command: list[str], tested: str) -> Outcome | None:
        done = self._step(run, "test")

        env = {
            **os.environ,
            "RUNECONSOLE_MERGE_ENTRY": run.entry_id,
            "RUNECONSOLE_MERGE_COMMIT": tested,
        }
        result = run_streaming(
            command,
            worktree,
            self.settings.test_timeout,
            on_line=lambda line: run.report("test", line, output=True),
            env=env,
        )
        extra = {"output_tail": result.tail}
        if result.timed_out:
            done("timeout", extra)
            limit = f"{self.settings.test_timeout:g}s"
            return self._fail(run, TIMEOUT, f"tests still running after {limit}; stopped")
        if result.returncode != 0:
            done(f"exit {result.returncode}", extra)
            return self._fail(run, TESTS_FAILED, f"tests failed (exit {result.returncode})")
        done("passed", extra)
        return None

    def _fail(self, run: _Run, reason: str, error: str, files: list[str] | None = None) -> Outcome:
        files = files or []
        entry = self._update(
            run.entry_id,
            {
                "status": FAILED,
                "reason": reason,
                "error": error,
                "conflict_files": files,
                "completed_at": self._now(),
                "current_step": None,
                "notes": run.notes,
            },
        )
        payload = self._payload(entry, reason=reason, error=error, conflict_files=files)
        target = self._target(entry)
        if reason == CONFLICT:
            self._signal("MERGE_CONFLICT", target, payload)
        self._signal("MERGE_FAILED", target, payload)
        run.report(
            "failed", f"failed: {reason}: {error}" + (f" ({', '.join(files)})" if files else "")
        )
        return Outcome(
            run.entry_id,
            str(entry.get("branch")),
            FAILED,
            reason,
            error,
            files,
            output_tail=list(entry.get("output_tail") or []),
            notes=run.notes,
        )

    def _finish(self, run: _Run, tested: str, base: str, original: str) -> Outcome:
        """After ``main`` points at ``tested``: tidy refs and checkouts, tell everyone."""
        entry = run.entry
        main = self.settings.main_branch
        if tested != base and (holder := gw.checked_out_at(self.root, main)):
            complaint = gw.fast_forward_checkout(holder, base, tested)
            if complaint:
                run.notes.append(f"{holder} not fast-forwarded: {complaint}")
        run.notes.extend(self._settle_branch(str(entry.get("branch")), tested, original))
        hook_note = self._mark_hook_merged(entry.get("identity_name"))
        if hook_note:
            run.notes.append(hook_note)
        final = self._update(
            run.entry_id,
            {
                "status": COMPLETED,
                "completed_at": self._now(),
                "merged_commit": tested,
                "tested_commit": tested,
                "current_step": None,
                "notes": run.notes,
            },
        )
        self._signal(
            "MERGE_COMPLETE", self._target(final), self._payload(final, merged_commit=tested)
        )
        run.report("merged", f"merged {final.get('branch')} as {tested[:12]}")
        return Outcome(
            run.entry_id, str(final.get("branch")), COMPLETED, merged_commit=tested, notes=run.notes
        )

    def _settle_branch(self, branch: str, tested: str, original: str) -> list[str]:
        """Delete the merged branch (or point it at what was tested) unless it is in use."""
        ref = f"refs/heads/{branch}"
        current = gw.resolve_commit(self.root, ref)
        if current is None:
            return []
        if current not in (original, tested):
            return [f"{branch} moved while queued; left as it is"]
        holder = gw.checked_out_at(self.root, branch)
        if holder is not None:
            return [f"{branch} is checked out in {holder}; left as it is"]
        if self.settings.keep_branch:
            done = gw.compare_and_swap(self.root, ref, tested, current)
        else:
            done = gw.delete_ref(self.root, ref, current)
        return [] if done else [f"{branch} changed meanwhile; left as it is"]

    def _mark_hook_merged(self, identity: Any) -> str | None:
        """Set the identity's hook file (if any) to ``merged``, keeping every other field."""
        if not isinstance(identity, str) or not identity:
            return None
        path = self.paths.hooks / f"{validate_id(identity, 'identity')}.json"
        if not path.exists():
            return None
        with locked(self.paths.lock_for(f"hook-{identity}"), what=f"hook {identity}"):
            try:
                fields = read_json_object(path)
            except UnreadableFile as exc:
                return f"hook {path.name} not updated: {exc.reason}"
            now = self._now()
            fields.update(phase="merged", merged_at=now, updated_at=now)
            atomic_write_json(path, fields)
        return None

    def _target(self, entry: dict[str, Any]) -> str:
        identity = entry.get("identity_name")
        return identity if isinstance(identity, str) and identity else FALLBACK_TARGET

    @staticmethod
    def _payload(entry: dict[str, Any], **extra: Any) -> dict[str, Any]:
        keys = ("entry_id", "node_id", "branch", "identity_name", "bead_id", "pr_number")
        return {**{k: entry.get(k) for k in keys}, **extra}

    def _signal(self, signal_type: str, target: str, payload: dict[str, Any]) -> None:
        with contextlib.suppress(InvalidInput):
            self.signals.send(signal_type, SIGNAL_SOURCE, target, payload)

    # -- crash recovery ----------------------------------------------------------------------

    def recover(self, leftover: dict[str, Any]) -> list[str]:
        """Clean up after a processor that died (kill -9 at any step). Holds the processor lock."""
        notes: list[str] = []
        worktree = self.worktree_path()
        stopped = stop_processes_in(worktree)
        if stopped:
            who = leftover.get("pid", "a processor")
            notes.append(f"stopped {len(stopped)} process(es) left running by {who}")
        registered = any(wt.path == worktree for wt in gw.worktrees(self.root))
        if worktree.exists() or registered:
            if worktree.exists():
                with contextlib.suppress(RuneError):
                    if gw.rebase_in_progress(worktree):
                        notes.append("aborted a rebase left in the queue's worktree")
            gw.remove_worktree(self.root, worktree)
            notes.append(f"removed the leftover worktree {worktree}")
        for entry in self.read().entries:
            if entry.status == IN_PROGRESS and entry.get("processor_pid"):
                notes.append(self._recover_entry(entry.fields))
        return notes

    def _recover_entry(self, entry: dict[str, Any]) -> str:
        run = _Run(dict(entry), notes=["interrupted; recovered"])
        entry_id = run.entry_id
        tested, base = entry.get("tested_commit"), entry.get("base_commit")
        main = gw.resolve_commit(self.root, self.main_ref)
        landed = isinstance(tested, str) and isinstance(base, str) and main is not None
        if (
            landed
            and gw.resolve_commit(self.root, tested)
            and gw.is_ancestor(self.root, tested, main)
        ):
            original = entry.get("original_commit") or tested
            self._finish(run, tested, base, str(original))
            return f"{entry_id}: had merged before the interruption; finished it"
        attempts = entry.get("attempts") if isinstance(entry.get("attempts"), int) else 1
        if self.settings.on_interrupted == "retry" and attempts < self.settings.max_attempts:
            with self._mutate() as data:
                item = self._find(data, entry_id)
                item.update(status=PENDING, current_step=None, processor_pid=None, started_at=None)
                self._record(data, "requeue", entry_id, reason=INTERRUPTED)
            return f"{entry_id}: interrupted; queued again (attempt {attempts + 1})"
        step = entry.get("current_step") or "?"
        self._fail(run, INTERRUPTED, f"processing stopped during {step} (the processor died)")
        return f"{entry_id}: interrupted during {step}; marked failed"

    # -- predictions -------------------------------------------------------------------------

    def predict(self, state: QueueState | None = None) -> dict[str, Prediction]:
        """For each pending entry: conflicts with main now, and with the entries ahead of it.

        Works in the object store only (``merge-tree --write-tree`` and synthetic commits
        with no ref), so no worktree is touched. Cached until main or the queue changes.
        """
        state = state or self.read()
        pending = state.pending()
        heads = gw.branch_heads(self.root)
        main = heads.get(self.settings.main_branch)
        fingerprint = (main, tuple((e.entry_id, heads.get(e.branch)) for e in pending))
        if self._prediction_cache and self._prediction_cache[0] == fingerprint:
            return self._prediction_cache[1]
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
        self._prediction_cache = (fingerprint, predictions)
        return predictions


def _compact(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def _optional_str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _read_optional(path: Path) -> dict[str, Any]:
    try:
        return read_json_object(path)
    except UnreadableFile:
        return {}
