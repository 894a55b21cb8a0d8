"""The work phase's suspended tasks, resumed with the checkpoint: each task's context file
is verified and counted by ``Suspension.resume`` (the injection goes into the next wave),
its Claude Code task file updated, and the list cleared."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from runeconsole.adapters.tasks import TaskWrite
from runeconsole.core.errors import RuneError
from runeconsole.core.validate import contained, validate_id
from runeconsole.services.checkpoints.plan import ResumePlan
from runeconsole.services.checkpoints.schema import FAILED, PENDING
from runeconsole.services.suspension import GitView, ResumeRefused, Suspension


def resume_suspended_tasks(
    suspension: Suspension,
    cp: dict[str, Any],
    plan: ResumePlan,
    *,
    dry_run: bool,
    view: GitView | None,
    team: str | None,
    work_team: str | None,
) -> None:
    """Resume what a failed or pending work phase left suspended; task files are those of
    ``team``, else the one each context records, else ``work_team``."""
    work = cp["phases"]["work"]
    tasks = work.get("suspended_tasks")
    if work.get("status") not in (PENDING, FAILED) or not tasks:
        return
    if not isinstance(tasks, list):
        plan.warnings.append("phases.work.suspended_tasks is not a list; ignored")
        return
    view = view or suspension.git_view()
    for entry in tasks:
        task_id, context_path, reason = _suspended_entry(entry)
        try:
            validate_id(task_id, "suspended task id")
            if not context_path.startswith("tmp/work/") or ".." in context_path:
                raise RuneError(f'invalid context path "{context_path}" — skipping')
            path = contained(suspension.root, context_path)
            if not path.is_file():
                raise RuneError(f"context file missing at {context_path} — cold restart")
            result = suspension.resume(
                path, dry_run=dry_run, reason=reason, view=view, team=team,
                recorded_team=work_team,
            )  # fmt: skip
        except RuneError as exc:
            message = exc.message.removeprefix(f"task #{task_id}: ")
            plan.warnings.append(f"Suspended task #{task_id}: {message}")
            if isinstance(exc, ResumeRefused) and exc.task is not None:
                plan.task_writes.append(_after_cleanup(exc.task, plan))
            continue
        if result.task is not None:
            plan.task_writes.append(_after_cleanup(result.task, plan))
        plan.warnings += result.warnings
        plan.injections[task_id] = result.injection
        plan.changes.append(
            f"task #{task_id}: resume_count -> {result.resume_count} ({context_path})"
        )
    work["suspended_tasks"] = []
    plan.changes.append("phases.work.suspended_tasks cleared")


def _after_cleanup(task: TaskWrite, plan: ResumePlan) -> TaskWrite:
    """A task list that orphan cleanup removes holds no task to update: say so (a dry
    run would otherwise find the files it has not removed yet)."""
    if task.written or task.team not in plan.removed_teams:
        return task
    return replace(
        task,
        dry_run=False,
        reason=f"task list {task.team} is removed by orphan cleanup (ORCH-1); "
        "pass --team for the resuming session's list",
    )


def _suspended_entry(entry: Any) -> tuple[str, str, str]:
    if not isinstance(entry, dict):
        return "?", "", "unknown"
    task = entry.get("task_id")
    path = entry.get("context_path")
    reason = entry.get("reason")
    return (
        str(task) if isinstance(task, str | int) and not isinstance(task, bool) else "?",
        path if isinstance(path, str) else "",
        reason if isinstance(reason, str) else "unknown",
    )
