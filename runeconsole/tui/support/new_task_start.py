"""Where ``n`` starts a task (``Starter``) and what a toast says of the task made
(``started_said``): what the consoles' panes need at import, apart from the form itself,
whose widgets are loaded on the first ``n``."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from runeconsole.services.dispatch.creation import NewTask
from runeconsole.services.dispatch.task_store import STARTED


@dataclass(frozen=True)
class Starter:
    """Where ``n`` starts a task and what its form needs of that place.

    ``where``: ``""`` for this project, else the fleet source's name; ``main_branch``: the
    base offered (``None``: the source's own, unknown here); ``taken``: the names a new
    task of a role may not take (blocking: called in a worker); ``start``: makes the task
    (blocking: a worker's), returning it as ``runeconsole new --json`` prints it, or
    raising ``RuneError``; ``names_known``: ``taken`` holds every name ``start`` would
    refuse, so a suggested name may go as shown."""

    where: str
    main_branch: str | None
    taken: Callable[[str], Collection[str]]
    start: Callable[[NewTask], Any]
    names_known: bool = True  # ``taken`` is every name the place refuses (not a host's)


def started_said(report: Any) -> tuple[str, bool]:
    """What a toast says of a task made (``new --json``'s report), and whether every
    attempt started."""
    if not isinstance(report, dict):
        return "the task was sent; nothing came back", False
    task = str(report.get("task_id") or "?")
    attempts = [a for a in report.get("attempts") or [] if isinstance(a, dict)]
    started = [str(a.get("agent")) for a in attempts if a.get("state") == STARTED]
    failed = [a for a in attempts if a.get("state") != STARTED]
    if not started:
        why = next((str(a["error"]) for a in failed if a.get("error")), "no attempt started")
        return f"task {task}: no agent started: {why}", False
    agents = ", ".join(started) if len(started) <= 3 else f"{started[0]} … {started[-1]}"
    if len(attempts) == 1:
        said = f"task {task}: {agents} started"
    elif not failed:
        said = f"task {task}: {len(started)} attempts started: {agents}"
    else:
        said = f"task {task}: {len(started)} of {len(attempts)} attempts started: {agents}"
    for attempt in failed:
        said += f"; attempt {attempt.get('n')}: {attempt.get('error') or attempt.get('state')}"
    return said, not failed
