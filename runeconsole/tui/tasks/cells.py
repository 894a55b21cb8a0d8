"""How tasks, their attempts and the worktrees are drawn: the Tasks pane's rows, the
Compare view's and the Worktrees view's, the colours of their states, and the line under
each view that says everything about the selected row."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from rich.text import Text

from runeconsole.core.timeutil import format_age, parse_iso
from runeconsole.services.dispatch.service import AttemptView
from runeconsole.services.dispatch.task_store import (
    CREATING,
    DROPPED,
    FAILED,
    KEPT,
    LANDED,
    PICKED,
    REMOVED,
    SETUP_FAILED,
    STARTED,
    STARTING,
    STOPPED,
    WORKING,
    Task,
)
from runeconsole.services.dispatch.worktree_list import (
    DROPPED_STATE,
    MAIN,
    MISSING,
    ORPHAN,
    QUEUED,
    READY,
    WorktreeRow,
)
from runeconsole.services.dispatch.worktree_list import LANDED as LANDED_STATE
from runeconsole.services.dispatch.worktree_list import WORKING as WORKING_STATE
from runeconsole.tui.cells.agent_cells import ACTIVITY_STYLE, dollars
from runeconsole.tui.cells.review_cells import compact

UNREADABLE = "unreadable"

# -- the Tasks pane ------------------------------------------------------------------------

TASK_COLUMNS = (
    ("task", "TASK", None),  # as wide as the longest id shown (24 at most)
    ("state", "STATE", 10),
    ("attempts", "ATT", 3),
    ("pick", "PICK", 4),
    ("age", "AGE", 6),
    ("text", "TEXT", None),
)
TASK_STYLE = {
    CREATING: "bold yellow",
    WORKING: "green",
    PICKED: "bold cyan",
    LANDED: "dim green",
    DROPPED: "dim",
    UNREADABLE: "bold red",
}


def task_age(task: Task, now: datetime) -> str:
    created = parse_iso(task.get("created_at"))
    return format_age((now - created).total_seconds()) if created is not None else "-"


def task_cells(task: Task, now: datetime) -> tuple[object, ...]:
    """TASK, STATE, ATT, PICK, AGE, and the first line of its text (or why it cannot be
    read, in red)."""
    state = Text(task.state, TASK_STYLE.get(task.state, ""))
    if task.error:
        return (Text(task.task_id), state, "", "", "-", Text(f"unreadable: {task.error}", "red"))
    pick = task.pick
    return (
        Text(task.task_id),
        state,
        str(len(task.attempts)),
        Text(f"#{pick}", "bold cyan") if pick is not None else Text("-", "dim"),
        task_age(task, now),
        Text(task.title(200)),
    )


def created_order(task: Task) -> float:
    """Newest first: the time it was created, negated (an unknown one last)."""
    created = parse_iso(task.get("created_at"))
    return -created.timestamp() if created is not None else float("inf")


# -- the Compare view ----------------------------------------------------------------------

ATTEMPT_COLUMNS = (
    ("n", "#", 2),
    ("state", "STATE", 10),
    ("activity", "DOING", 8),
    ("changes", "±", 13),
    ("test", "TEST", 6),
    ("cost", "COST", 7),
    ("time", "TIME", 6),
    ("agent", "AGENT", None),
)
ATTEMPT_STYLE = {
    STARTING: "yellow",
    STARTED: "green",
    PICKED: "bold cyan",
    STOPPED: "dim",
    REMOVED: "dim",
    KEPT: "yellow",
    FAILED: "bold red",
    SETUP_FAILED: "bold red",
}
ATTEMPT_LABEL = {SETUP_FAILED: "setup fail"}
RUNNING = "running"


def tests_cell(test: dict[str, Any] | None, running: bool = False) -> Text:
    """``✓ pass``, ``✗ fail``, ``… run`` while its test runs here, ``-`` never tested."""
    if running:
        return Text("… run", "yellow")
    if test is None:
        return Text("-", "dim")
    return Text("✓ pass", "green") if test.get("ok") else Text("✗ fail", "bold red")


def changes_text(view: AttemptView) -> Text:
    """``+44 −11 5f`` (``·`` nothing changed; why it cannot be read, in red)."""
    if view.error:
        return Text("gone" if view.error.endswith("is gone") else "unreadable", "red")
    if view.added is None or view.removed is None:
        return Text("-", "dim")
    if not view.files:
        return Text("·" if not view.commits else f"{view.commits}c", "dim")
    return Text.assemble(
        (f"+{compact(view.added)}", "green"),
        (f" −{compact(view.removed)}", "red"),
        (f" {compact(len(view.files))}f", "dim"),
    )


def attempt_cells(view: AttemptView, *, base: bool, running: bool) -> tuple[object, ...]:
    """One attempt's row: ``base`` marks the attempt ``D`` diffs against; ``running``: its
    tests run now."""
    attempt = view.attempt
    state = attempt.state
    activity = view.activity or ""
    return (
        Text(str(attempt.number), "reverse" if base else "bold"),
        Text(ATTEMPT_LABEL.get(state, state), ATTEMPT_STYLE.get(state, "")),
        Text(activity or "-", ACTIVITY_STYLE.get(activity, "dim")),
        changes_text(view),
        tests_cell(view.test, running),
        Text(dollars(view.cost_usd), "") if view.cost_usd is not None else Text("-", "dim"),
        format_age(view.seconds) if view.seconds is not None else Text("-", "dim"),
        Text(attempt.agent),
    )


def listed(items: list[str], limit: int) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def attempt_detail(view: AttemptView, log_tail: list[str], *, base: int | None) -> Text:
    """The selected attempt: where it works, what it changed, its test and the end of the
    test's output (kept in the task's directory)."""
    attempt = view.attempt
    text = Text.assemble(
        (f"#{attempt.number} ", "bold"),
        (attempt.agent, "bold cyan"),
        (f"  {attempt.branch}", "dim"),
    )
    for field in ("error", "kept_because"):
        said = attempt.get(field)
        if said:
            text.append(f"\n{field.replace('_', ' ')}: {said}", "yellow")
    if view.error:
        text.append(f"\nchanges: {view.error}", "red")
    elif view.files:
        commits = f" in {view.commits} commit{'s' * (view.commits != 1)}" if view.commits else ""
        text.append(f"\n{len(view.files)} file{'s' * (len(view.files) != 1)}{commits}: ")
        text.append(listed(view.files, 8), "dim")
    if base is not None and base != attempt.number:
        text.append(f"\nD diffs it against #{base}'s branch (b chooses another)", "dim")
    test = view.test
    if test is None:
        text.append("\ntests: not run (t runs them)", "dim")
        return text
    said = str(test.get("message") or ("passed" if test.get("ok") else "failed"))
    text.append("\ntests: ")
    text.append(said, "green" if test.get("ok") else "red")
    if test.get("at"):
        text.append(f"  at {test.get('at')}", "dim")
    for line in log_tail:
        text.append(f"\n  {line}", "dim")
    return text


# -- the Worktrees view --------------------------------------------------------------------

# Names as wide as the longest shown (a few dozen rows at most); ←/→ scroll a wide table.
WORKTREE_COLUMNS = (
    ("state", "STATE", 7),
    ("worktree", "WORKTREE", None),
    ("dirty", "DIRTY", 5),
    ("size", "SIZE", 5),
    ("agent", "AGENT", None),
    ("task", "TASK", None),
    ("note", "NOTE", None),
)
WORKTREE_STYLE = {
    MAIN: "dim",
    WORKING_STATE: "green",
    READY: "bold yellow",
    QUEUED: "yellow",
    LANDED_STATE: "bold green",
    DROPPED_STATE: "red",
    ORPHAN: "bold red",
    MISSING: "bold red",
}


def size_text(size: int | None) -> str:
    """``512B``, ``40K``, ``3.2M``, ``1.5G`` (``?``: too many files to count)."""
    if size is None:
        return "?"
    if size < 1024:
        return f"{size}B"
    if size < 1024**2:
        return f"{size // 1024}K"
    if size < 1024**3:
        return f"{size / 1024**2:.1f}M"
    return f"{size / 1024**3:.1f}G"


def shown_path(path: Path, root: Path, directory: Path) -> str:
    """A worktree as a person reads it: its name under the worktrees' directory, else its
    place under the root (``.`` the root itself), else the whole path."""
    if path == root:
        return "."
    for base in (directory, root):
        if path.is_relative_to(base):
            return str(path.relative_to(base))
    return str(path)


def worktree_note(row: WorktreeRow) -> str:
    if row.note:
        return row.note
    if row.locked is not None:
        return f"locked: {row.locked or 'no reason given'}" + (" (ended)" if row.stale_lock else "")
    if row.entry is not None:
        return f"{row.entry.entry_id} {row.entry.get('status') or ''}".strip()
    return ""


def worktree_cells(row: WorktreeRow, shown: str) -> tuple[object, ...]:
    dirty = len(row.dirty)
    task = f"{row.task} #{row.attempt}" if row.task and row.attempt else row.task or ""
    return (
        Text(row.state, WORKTREE_STYLE.get(row.state, "")),
        Text(shown),
        Text(str(dirty), "bold yellow" if dirty else "dim"),
        size_text(row.size) if row.state != MAIN else Text("-", "dim"),
        Text(row.agent or "-", "" if row.agent_active else "dim"),
        Text(task or "-", "" if task else "dim"),
        Text(worktree_note(row), "yellow" if row.note else "dim"),
    )


def worktree_detail(row: WorktreeRow, root: Path) -> Text:
    """The selected worktree: where (under the root, when it is), its branch and head, its
    agent and task, why it stays, its uncommitted files."""
    where = row.path.relative_to(root) if row.path.is_relative_to(root) else row.path
    text = Text.assemble((str(where), "bold"), (f"  {row.branch or '(detached HEAD)'}", "cyan"))
    if row.head:
        text.append(f" {row.head[:8]}", "dim")
    if row.agent:
        text.append(f"\nagent {row.agent} ({'running' if row.agent_active else 'not running'})")
    if row.task:
        text.append(f"  task {row.task}" + (f" #{row.attempt}" if row.attempt else ""))
    note = worktree_note(row)
    if note:
        text.append(f"\n{note}", "yellow")
    if row.dirty:
        text.append(f"\n{len(row.dirty)} uncommitted: ", "bold yellow")
        text.append(listed(row.dirty, 12), "yellow")
    return text
