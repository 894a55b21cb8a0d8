"""``Suspension``: finds the context files under ``tmp/work/``, judges each (integrity,
the resume gate, git), resumes one (counting the resume, sealing the file again) and
writes a worker's context file when it suspends. ``files_modified`` always comes from
git, never from the worker's own account.

The Claude Code task file of each task is updated as Rune's ``TaskUpdate`` does:
``status: pending, owner: "", suspended: false`` after a resume (with or without a
reason), ``permanently_failed: true`` when the resume gate trips, the cold-start reset
(the ``context_path`` removed too) when a corrupt context is resumed without a reason,
and ``suspended: true`` with the ``context_path`` when a task is suspended.
"""

from __future__ import annotations

import builtins
import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from runeconsole.adapters import git
from runeconsole.adapters.tasks import TaskStore, TaskWrite
from runeconsole.core import frontmatter
from runeconsole.core.crash_points import pause_point
from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.core.files import atomic_write_bytes, is_temp_name, read_bytes
from runeconsole.core.locks import locked
from runeconsole.core.timeutil import iso_z
from runeconsole.core.validate import contained, validate_id
from runeconsole.services.journal import journaled
from runeconsole.services.project import Project
from runeconsole.services.suspension.context_file import (
    LAST_ACTION_MAX,
    render,
    seal,
    sha256_hex,
    with_resume_count,
)
from runeconsole.services.suspension.git_view import STASH_PREFIX, GitView
from runeconsole.services.suspension.injection import resume_prompt
from runeconsole.services.suspension.reading import ContextReader
from runeconsole.services.suspension.records import (
    CORRUPT,
    EXHAUSTED,
    REASONS,
    STALE,
    UNREADABLE,
    ContextRecord,
    ResumeRefused,
    ResumeResult,
    SuspendResult,
)
from runeconsole.services.suspension.settings import SuspensionSettings

# The task file's fields after a resume, when the resume gate trips, and at the cold
# start of a corrupt context (as the module docstring says).
RESUMED = {"status": "pending", "owner": "", "metadata.suspended": False}
FAILED_FOR_GOOD = {"metadata.suspended": False, "metadata.permanently_failed": True}
COLD_START = {**RESUMED, "metadata.context_path": None}


class Suspension:
    def __init__(
        self,
        project: Project,
        settings: SuspensionSettings | None = None,
        tasks: TaskStore | None = None,
    ) -> None:
        self.project = project
        self.root, self.paths, self.clock = project.root, project.paths, project.clock
        self.settings = settings or project.settings(SuspensionSettings)
        self.tasks = tasks or TaskStore()
        self.reader = ContextReader(self.root, self.clock, self.settings)

    # -- discovery -------------------------------------------------------------------------

    def context_files(self) -> Iterator[Path]:
        """``tmp/work/*/context/*/*.md``, skipping writers' temp files.

        Anything but a directory is yielded, symlinks and FIFOs included: ``read``
        refuses those with the reason, so they are listed, never silently missing.
        """
        for stamp in _subdirs(self.paths.work):
            for arc in _subdirs(stamp / "context"):
                try:
                    entries = list(os.scandir(arc))
                except OSError:
                    continue
                for entry in entries:
                    if entry.name.endswith(".md") and not is_temp_name(entry.name):
                        with contextlib.suppress(OSError):
                            if not entry.is_dir(follow_symlinks=False):
                                yield Path(entry.path)

    def context_dirs(self) -> list[Path]:
        return sorted({path.parent for path in self.context_files()})

    def key_for(self, path: Path) -> str:
        """The path relative to the root (string arithmetic: this runs per file per scan)."""
        return self.reader.key_for(path)

    # -- reading ---------------------------------------------------------------------------

    def read(self, path: Path, view: GitView | None = None) -> ContextRecord:
        """One context file with its verdict; never raises for what the file holds."""
        return self.reader.read(path, view)

    def parse(self, path: Path, data: bytes, view: GitView | None = None) -> ContextRecord:
        """Judge a context file's bytes (no file access beyond ``view``'s git state)."""
        return self.reader.parse(path, data, view)

    def git_view(self) -> GitView:
        return GitView.read(self.root)

    def list(self, view: GitView | None = None) -> list[ContextRecord]:
        """Every context file with its verdict; those that resolve outside the root are
        listed as unreadable (resuming them would write there)."""
        view = view or self.git_view()
        refused = self.work_dir_problem()
        if refused:
            records = [
                ContextRecord(self.key_for(p), p, reason=refused) for p in self.context_files()
            ]
        else:
            records = [self.read(p, view) for p in self.context_files()]
        return sorted(records, key=lambda r: r.key)

    def work_dir_problem(self) -> str | None:
        """Why ``tmp/work`` may not be written (a symlink out of the root), or ``None``."""
        try:
            contained(self.root, self.paths.work)
        except InvalidInput as exc:
            return f"refused: {exc.message}"
        return None

    def find(self, task_or_path: str) -> Path:
        """A context file by path (under ``tmp/work/``) or by task id (must be unique)."""
        if "/" in task_or_path or task_or_path.endswith(".md"):
            path = contained(self.root, task_or_path)
            if not path.is_relative_to(contained(self.root, self.paths.work)):
                raise InvalidInput(f"{task_or_path} is not a context file under tmp/work/")
            if not path.is_file():
                raise RuneError(f"no context file at {task_or_path}")
            return path
        task = validate_id(task_or_path, "task id")
        matches = [p for p in self.context_files() if p.stem == task]
        for match in matches:  # as by path: nothing that resolves out of the root
            contained(self.root, match)
        if not matches:
            raise RuneError(
                f"no context file for task {task} under {self.paths.work}; "
                "`runeconsole suspended list` shows them"
            )
        if len(matches) > 1:
            listed = ", ".join(sorted(self.key_for(p) for p in matches))
            raise InvalidInput(f"task {task} has several context files; name one: {listed}")
        return matches[0]

    # -- resuming --------------------------------------------------------------------------

    def injection(self, record: ContextRecord, resume_count: int, reason: str | None = None) -> str:
        """The prompt resuming ``record`` hands the next worker (see ``resume_prompt``)."""
        return resume_prompt(record, resume_count, self.settings, reason)

    def mark_task(
        self, task_id: str, team: str | None, fields: dict[str, Any], *, dry_run: bool
    ) -> TaskWrite:
        """Rune's ``TaskUpdate`` on the Claude Code task file; never raises, since the
        context file is the record that matters and was already handled."""
        try:
            return self.tasks.update(
                task_id, team, fields, locks=self.paths.locks, locks_within=self.root,
                dry_run=dry_run,
            )  # fmt: skip
        except RuneError as exc:
            return TaskWrite(task_id, team, fields, dry_run=dry_run, reason=exc.message)

    def resume(
        self,
        path: Path,
        *,
        dry_run: bool = False,
        reason: str | None = None,
        view: GitView | None = None,
        team: str | None = None,
        recorded_team: str | None = None,
    ) -> ResumeResult:
        """Verify, apply the resume gate, count the resume and build the injection.

        Corrupt, unreadable and exhausted files are refused (``ResumeRefused``); stale
        ones resume with an advisory warning. The task file is updated as the module
        docstring says (the cold-start reset of a corrupt one only without a ``reason``,
        that is, outside a checkpoint's resume). Its team is ``team``, else
        the one the context records, else ``recorded_team`` (the caller's records).
        ``dry_run`` writes nothing.
        """
        contained(self.root, path)  # whoever found the path, never write out of the root
        key = self.key_for(path)
        lock = self.paths.lock_for(f"context-{sha256_hex(key)[:16]}")
        with contextlib.nullcontext() if dry_run else locked(lock, what=key):
            record = self.read(path, view or self.git_view())
            if record.verdict == UNREADABLE:
                raise ResumeRefused(f"{key}: unreadable: {record.reason} — cold start")
            recorded = record.meta.get("team")
            team = team or (recorded if isinstance(recorded, str) else None) or recorded_team
            if record.verdict == CORRUPT:
                task = None
                if reason is None:  # a checkpoint's resume only warns; a worker's resets
                    # the file name, not the failed content, says which task it is
                    task = self.mark_task(path.stem, team, COLD_START, dry_run=dry_run)
                raise ResumeRefused(
                    f"task #{record.task_id}: context integrity check FAILED "
                    f"(expected {record.expected_sha}, got {record.actual_sha}) — cold start",
                    task,
                )
            if record.verdict == EXHAUSTED:
                task = self.mark_task(record.task_id, team, FAILED_FOR_GOOD, dry_run=dry_run)
                raise ResumeRefused(
                    f"task #{record.task_id}: max resume_count "
                    f"({self.settings.max_resume_count}) reached — permanently failed",
                    task,
                )
            warnings = []
            if record.verdict == STALE:
                warnings.append(
                    f"task #{record.task_id}: git state diverged from context "
                    f"({len(record.diverged)} files: {', '.join(record.diverged)}). "
                    f"Context injected as advisory only.{record.stash_hint}"
                )
            count = record.resume_count + 1
            if dry_run:
                task = self.mark_task(record.task_id, team, RESUMED, dry_run=True)
            else:
                task = self._count_resume(path, record, count, team)
            injection = self.injection(record, count, reason)
            return ResumeResult(record, count, injection, warnings, not dry_run, task)

    def _count_resume(
        self, path: Path, record: ContextRecord, count: int, team: str | None
    ) -> TaskWrite:
        """The context file's ``resume_count``, then the task file, as one journaled action
        (a kill between the two is said at the console's next start)."""
        task_file = None
        if team:
            with contextlib.suppress(RuneError):  # a bad team: mark_task says why
                task_file = self.tasks.file_for(record.task_id, team)
        files = [path, *([task_file] if task_file else [])]
        what = f"resuming task #{record.task_id} ({self.key_for(path)}, resume {count})"
        with journaled(self.project, "resume", what, files):
            text = read_bytes(path).decode("utf-8")
            atomic_write_bytes(path, with_resume_count(text, count).encode("utf-8"))
            pause_point("resume-before-task")
            return self.mark_task(record.task_id, team, RESUMED, dry_run=False)

    # -- suspending ------------------------------------------------------------------------

    def suspend(
        self,
        *,
        task_id: str,
        worker: str,
        arc_id: str,
        reason: str,
        last_action: str,
        file_targets: builtins.list[str] | None = None,
        body: str = "",
        stamp: str | None = None,
        stash: bool | None = None,
        team: str | None = None,
    ) -> SuspendResult:
        """Write a worker's context file and, with a ``team``, mark the task suspended with
        its ``context_path``; the team is recorded in
        the context so a resume finds the task file again."""
        if not self.settings.enabled:
            raise RuneError("context preservation is disabled (context_preservation.enabled)")
        validate_id(task_id, "task id")
        validate_id(worker, "worker")
        validate_id(arc_id, "arc checkpoint id")
        if team is not None:
            validate_id(team, "team")
        if reason not in REASONS:
            raise InvalidInput(f"reason {reason!r}: use one of {', '.join(REASONS)}")
        stamp = validate_id(stamp, "work stamp") if stamp else self._stamp_for(arc_id)
        path = self.paths.work / stamp / "context" / arc_id / f"{task_id}.md"
        contained(self.root, path)  # the real root: a symlinked tmp/work must not lead out
        files_modified = git.changed_files(self.root)
        pending = [f for f in dict.fromkeys(file_targets or []) if f not in files_modified]
        resume_count = self._previous_count(path)
        now = self.clock.now()
        stash_message, warnings = None, []
        if self.settings.stash_on_suspend if stash is None else stash:
            message = f"{STASH_PREFIX}{task_id}-{int(now.timestamp())}"
            try:
                if git.stash_push(self.root, message):
                    stash_message = message
            except RuneError as exc:  # the context matters more than the stash: keep going
                warnings.append(f"partial work not stashed: {exc}")
        text = seal(
            render(
                task_id=task_id,
                worker=worker,
                timestamp=iso_z(now),
                reason=reason,
                files_modified=files_modified,
                files_pending=pending,
                last_action=last_action[:LAST_ACTION_MAX],
                resume_count=resume_count,
                body=body[: self.settings.context_truncate_chars],
                team=team,
            )
        )
        atomic_write_bytes(path, text.encode("utf-8"))
        digest = frontmatter.load_mapping(frontmatter.split(text).header)["content_sha256"]
        marked = {"metadata.suspended": True, "metadata.context_path": self.key_for(path)}
        task = self.mark_task(task_id, team, marked, dry_run=False)
        return SuspendResult(
            path, files_modified, pending, resume_count, stash_message, digest, warnings, task
        )

    def _stamp_for(self, arc_id: str) -> str:
        """The work dir already holding this arc's contexts, else a new stamp."""
        existing = [s for s in _subdirs(self.paths.work) if (s / "context" / arc_id).is_dir()]
        if existing:
            return max(existing, key=lambda s: s.stat().st_mtime).name
        return self.clock.now().strftime("%Y%m%d-%H%M%S")

    def _previous_count(self, path: Path) -> int:
        """A re-suspended task keeps its resume_count, so the resume gate still trips."""
        if not path.exists():
            return 0
        return self.read(path).resume_count


def _subdirs(directory: Path) -> builtins.list[Path]:
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return []
    return [
        Path(e.path)
        for e in entries
        if not is_temp_name(e.name) and e.is_dir(follow_symlinks=False)
    ]
