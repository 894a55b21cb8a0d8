"""Whether a question's task is still in progress, from its Claude Code task file: a
question of a task that has ended is not surfaced (nobody waits for its answer)."""

from __future__ import annotations

from pathlib import Path

from runeconsole.adapters.tasks import TaskFile, TaskStore
from runeconsole.services.worker_questions.records import TaskCheck


def task_team(tasks: TaskStore, team: str | None, directory: Path) -> str | None:
    """The team whose task file speaks for this question: the one given, else the team
    named like the signal directory, else the only team there is. Claude Code numbers
    tasks 1, 2, 3… in every team, so another team's ``3.json`` says nothing."""
    if team:
        return team
    teams = tasks.teams()
    if directory.name in teams:
        return directory.name
    return teams[0] if len(teams) == 1 else None


def task_check(tasks: TaskStore, task_id: str, team: str | None, directory: Path) -> TaskCheck:
    chosen = task_team(tasks, team, directory)
    if chosen is None:
        others = tasks.find(task_id)
        if not others:
            return TaskCheck(True)
        teams = ", ".join(sorted(t.team for t in others))
        return TaskCheck(
            True,
            warning=f"task {task_id} is in several Claude Code teams ({teams}); "
            "pass --team to check its status; surfacing it",
        )
    found: list[TaskFile] = tasks.find(task_id, chosen)
    if not found:
        return TaskCheck(True)
    readable = [t for t in found if t.error is None]
    if any(t.in_progress for t in readable):
        return TaskCheck(True)
    if not readable:
        problems = "; ".join(f"{t.path}: {t.error}" for t in found)
        return TaskCheck(True, warning=f"task status unknown ({problems}); surfacing anyway")
    statuses = ", ".join(sorted({str(t.status) for t in readable}))
    where = ", ".join(str(t.path) for t in readable)
    return TaskCheck(
        False, reason=f"task {task_id} is no longer in_progress (status: {statuses}; {where})"
    )
