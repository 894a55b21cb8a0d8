"""``Checkpoints``: finds the checkpoints under ``.claude/arc/`` and resumes one, running
the steps of the other modules of this package in their order, under the checkpoint's
lock; the checkpoint is written once, at the end, and only when not a dry run."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from runeconsole.adapters.tasks import TaskStore
from runeconsole.core.errors import InvalidInput, RuneError, UnreadableFile
from runeconsole.core.files import atomic_write_json, parse_json_object, read_bytes
from runeconsole.core.locks import locked
from runeconsole.core.paths import claude_config_dir
from runeconsole.core.validate import contained, validate_id
from runeconsole.services.checkpoints import ownership, steps
from runeconsole.services.checkpoints.migrations import migrate
from runeconsole.services.checkpoints.orphans import OrphanCleanup
from runeconsole.services.checkpoints.plan import ResumePlan
from runeconsole.services.checkpoints.schema import (
    CHECKPOINT_FILE,
    CHECKPOINT_ID,
    PHASE_ORDER,
    RESUMABLE,
    CorruptCheckpoint,
    NewerCheckpoint,
    check_shape,
    phase_status,
)
from runeconsole.services.checkpoints.session import session_pid as find_session_pid
from runeconsole.services.checkpoints.suspended_tasks import resume_suspended_tasks
from runeconsole.services.project import Project
from runeconsole.services.suspension import GitView, Suspension


class Checkpoints:
    def __init__(
        self,
        project: Project,
        *,
        config_dir: Path | None = None,
        session_pid: int | None = None,
        suspension: Suspension | None = None,
    ) -> None:
        """``session_pid``: the resuming Claude Code session (default: the nearest Claude
        Code process above this one, else our parent)."""
        self.project = project
        self.root, self.paths, self.clock = project.root, project.paths, project.clock
        self.config_dir = config_dir or claude_config_dir()
        self.session = find_session_pid(session_pid)
        self.session_pid = self.session.pid
        self.suspension = suspension or Suspension(
            project, tasks=TaskStore(self.config_dir / "tasks")
        )
        self.orphans = OrphanCleanup(self.root, self.config_dir, self.clock)

    # -- discovery -------------------------------------------------------------------------

    def checkpoint_files(self) -> list[Path]:
        """``.claude/arc/*/checkpoint.json``, newest first by mtime."""
        found = []
        with contextlib.suppress(OSError):
            for entry in os.scandir(self.paths.arc):
                path = Path(entry.path) / CHECKPOINT_FILE
                with contextlib.suppress(OSError):
                    if (
                        entry.is_dir(follow_symlinks=False)
                        and path.is_file()
                        and not path.is_symlink()
                    ):
                        found.append((path.stat().st_mtime, path))
        return [path for _, path in sorted(found, key=lambda item: (-item[0], str(item[1])))]

    def path_for(self, checkpoint_id: str | None) -> Path:
        if checkpoint_id is None:
            files = self.checkpoint_files()
            if not files:
                raise RuneError(f"no checkpoint under {self.paths.arc}: nothing to resume")
            return self._inside_root(files[0])
        validate_id(checkpoint_id, "checkpoint id")
        if not CHECKPOINT_ID.fullmatch(checkpoint_id):
            raise RuneError(f"checkpoint id {checkpoint_id!r} must look like arc-…")
        path = self.paths.arc / checkpoint_id / CHECKPOINT_FILE
        if not path.is_file():
            raise RuneError(f"no checkpoint {checkpoint_id} ({path} does not exist)")
        return self._inside_root(path)

    def _inside_root(self, path: Path) -> Path:
        """``path`` if its real path is under the real root: resuming rewrites it, and a
        symlinked ``.claude/arc`` or ``arc-…`` dir must not carry that write outside."""
        try:
            contained(self.root, path)
        except InvalidInput as exc:
            raise InvalidInput(f"checkpoint refused: {exc.message}") from None
        return path

    def list(self, view: GitView | None = None) -> list[ResumePlan]:
        """Every checkpoint as a dry-run resume would see it (never raises for content)."""
        view = view or self.suspension.git_view()
        plans = []
        for path in self.checkpoint_files():
            try:
                self._inside_root(path)
            except InvalidInput as exc:  # shown, with the reason resume would refuse it
                plans.append(ResumePlan(path, blocked=exc.message))
                continue
            plans.append(self.plan(path, dry_run=True, view=view))
        return plans

    # -- resuming --------------------------------------------------------------------------

    def resume(
        self, checkpoint_id: str | None = None, *, dry_run: bool = False, team: str | None = None
    ) -> ResumePlan:
        """Resume the named (or newest) checkpoint; refusals raise, corruption starts fresh.

        ``team`` names the task list whose files the suspended tasks' resume updates
        (default: the team the context or the work phase records)."""
        if team is not None:
            validate_id(team, "team")
        path = self.path_for(checkpoint_id)
        if dry_run:
            plan = self.plan(path, dry_run=True, team=team)
        else:
            lock = self.paths.lock_for(f"checkpoint-{path.parent.name}")
            with locked(lock, what=str(path)):
                plan = self.plan(path, dry_run=False, team=team)
        if plan.blocked:
            raise RuneError(plan.blocked)
        plan.session = self.session
        if self.session.note and not plan.fresh_start:
            plan.warnings.append(self.session.note)
        return plan

    def plan(
        self,
        path: Path,
        *,
        dry_run: bool,
        view: GitView | None = None,
        data: bytes | None = None,
        team: str | None = None,
    ) -> ResumePlan:
        """Run the resume steps on ``path`` (or on ``data`` as its content), in order:
        shape, nonce and ownership, migration, freshness, phase order, artifacts, orphan
        cleanup, the next phase, the suspended tasks."""
        plan = ResumePlan(path)
        cp: Any = None
        try:
            raw = read_bytes(path) if data is None else data
            cp = parse_json_object(path, raw)
            ident, version = cp.get("id"), cp.get("schema_version")
            plan.checkpoint_id = ident if isinstance(ident, str) else ""
            plan.from_version = version if type(version) is int else None
            check_shape(cp)
            ownership.check_nonce(cp)
            claim = ownership.claim(cp, self.config_dir, self.session_pid)
            migrated = migrate(cp)
            plan.warnings += claim.warnings  # only once the claim will really happen
            plan.changes += claim.changes + migrated
        except UnreadableFile as exc:
            plan.fresh_start = exc.reason
            return plan
        except CorruptCheckpoint as exc:
            plan.fresh_start = exc.message
            plan.checkpoint = cp if isinstance(cp, dict) else {}
            return plan
        except RuneError as exc:
            plan.blocked = exc.message
            plan.newer = isinstance(exc, NewerCheckpoint)
            plan.active_pid = exc.pid if isinstance(exc, ownership.OwnedByLiveSession) else None
            plan.checkpoint = json.loads(raw)
            with contextlib.suppress(RuneError):
                migrate(plan.checkpoint)  # shown as it would be, for the console
            return plan
        plan.checkpoint = cp
        if path.parent.name != plan.checkpoint_id:
            plan.warnings.append(f"checkpoint id {plan.checkpoint_id} differs from its directory")
        try:
            steps.check_freshness(self.root, cp, plan)
            steps.validate_order(cp, plan)
            steps.verify_artifacts(self.root, cp, plan)
        except RuneError as exc:
            plan.blocked = exc.message
            return plan
        work_team = cp["phases"]["work"].get("team_name")  # before cleanup clears it
        self.orphans.run(cp, plan, dry_run)
        plan.resume_from = next(
            (n for n in PHASE_ORDER if phase_status(cp["phases"].get(n)) in RESUMABLE), None
        )
        resume_suspended_tasks(
            self.suspension, cp, plan, dry_run=dry_run, view=view, team=team,
            work_team=work_team if isinstance(work_team, str) else None,
        )  # fmt: skip
        if not dry_run:
            atomic_write_json(self._inside_root(path), cp)
            plan.written = True
        return plan
