"""``new``: a task becomes one agent, or N attempts of it, each on a branch
``agent/{role}-{name}`` from the base, in a worktree ``{runeconsole.worktrees.dir}/{name}``,
given the project's untracked files and Claude Code's hooks, set up, registered and started
with the task as its first prompt (in tmux through the supervisor's spawn, or as a Claude
Code background session).

Everything that can be refused is checked before anything is made (the base, every name,
branch and path, Claude Code and tmux). Then, attempt by attempt, the task file says what is
about to be made before it is made, under the journal: a creation a kill cut short is
finished or undone on the next start (``recover``), never left half-made. Git makes the
worktrees itself (``git worktree add -b``), in the layout Claude Code's ``claude --worktree``
and the harness use: ``claude --worktree`` names its branch ``worktree-NAME``, locks the
worktree with its own pid and starts the session itself, leaving no room for the setup
command or our supervision.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runeconsole.adapters import agent_worktrees as aw
from runeconsole.adapters.claude_cli import ClaudeCli
from runeconsole.adapters.git_worktrees import branch_heads, resolve_commit
from runeconsole.core.crash_points import pause_point
from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.core.pids import process_start
from runeconsole.core.timeutil import iso_z
from runeconsole.core.validate import validate_id
from runeconsole.services.claude.background.sessions import Background, BackgroundSettings
from runeconsole.services.dispatch import worktree_prep as prep
from runeconsole.services.dispatch.settings import WorktreeSettings
from runeconsole.services.dispatch.task_store import (
    CREATING,
    FAILED,
    REMOVED,
    SETUP_FAILED,
    STARTED,
    STARTING,
    Task,
    TaskStore,
)
from runeconsole.services.dispatch.undoing import MAKING, settled, undo
from runeconsole.services.journal import journaled
from runeconsole.services.merge_queue import MergeQueue
from runeconsole.services.supervision.problems import SETUP_FAILED as SETUP_FAILED_KEY
from runeconsole.services.supervision.service import Supervisor

MAX_COUNT = 16
MAX_TASK_CHARS = 100_000
PERMISSION_MODES = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto")
_WORD = re.compile(r"[a-z0-9]+")
# An alias, a model id, a Bedrock ARN or a Vertex name (``sonnet[1m]``, ``…@20240620``):
# never a space nor a ';' (tmux would take an argument ending in one as a command's end).
_MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@\[\]-]*")
_STOP = {
    "a",
    "an",
    "the",
    "to",
    "of",
    "in",
    "on",
    "for",
    "and",
    "or",
    "with",
    "it",
    "is",
    "be",
    "make",
    "please",
    "that",
    "this",
    "so",
    "we",
    "our",
    "my",
    "from",
    "into",
    "by",
    "at",
}


@dataclass(frozen=True)
class NewTask:
    """What the operator asked for (the form, or ``runeconsole new``'s arguments)."""

    text: str
    count: int = 1
    base: str | None = None
    role: str = "worker"
    name: str | None = None
    model: str | None = None
    permission_mode: str | None = None
    background: bool = False
    node_id: str | None = None
    bead_id: str | None = None


def suggest_name(text: str, taken: set[str] | None = None, count: int = 1) -> str:
    """A short id from the first words of the task's first line (``fix-login-timeout``),
    made unique against ``taken`` by a number; with ``count`` attempts, their names
    (``NAME-1`` …) too."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    words = [w for w in _WORD.findall(first.lower()) if w not in _STOP][:4]
    base = "-".join(words)[:24].strip("-") or "task"
    taken = taken or set()

    def free(name: str) -> bool:
        attempts = [f"{name}-{n}" for n in range(1, count + 1)] if count > 1 else []
        return name not in taken and not taken.intersection(attempts)

    if free(base):
        return base
    number = 2
    while not free(f"{base}-{number}"):
        number += 1
    return f"{base}-{number}"


class Creator:
    def __init__(self, supervisor: Supervisor, store: TaskStore) -> None:
        self.supervisor = supervisor
        self.project = supervisor.project
        self.root = self.project.root
        self.store = store
        self.settings = self.project.settings(WorktreeSettings)

    def worktree_path(self, name: str) -> Path:
        return self.root / self.settings.directory / validate_id(name, "name")

    def main_branch(self) -> str:
        return MergeQueue(self.project).settings.main_branch

    # -- names ---------------------------------------------------------------------------------

    def taken_names(self, role: str) -> set[str]:
        """Names a new task may not take: tasks, agents of the role, branches, worktrees."""
        tasks = self.store.list()
        taken = {t.task_id for t in tasks} | {str(a.get("name")) for t in tasks for a in t.attempts}
        prefix = f"{role}-"
        taken |= {
            r.key[len(prefix) :]
            for r in self.supervisor.registry.list()
            if r.key.startswith(prefix)
        }
        directory = self.root / self.settings.directory
        with contextlib.suppress(OSError):
            taken |= {p.name for p in directory.iterdir()}
        taken |= {
            b.removeprefix(f"agent/{prefix}")
            for b in _branches(self.root)
            if b.startswith(f"agent/{prefix}")
        }
        return taken

    def suggest(self, text: str, role: str = "worker", count: int = 1) -> str:
        return suggest_name(text, self.taken_names(role), count)

    # -- new -----------------------------------------------------------------------------------

    def new(self, request: NewTask) -> Task:
        plan = self._checked(request)
        task_id = plan["task_id"]
        task = self.store.create(task_id, plan)
        MAKING.add(task_id)
        try:
            # The worktrees and the local settings put in them kept out of git status.
            aw.exclude(self.root, f"/{self.settings.directory}/", ".claude/settings.local.json")
            for attempt in task.attempts:
                self._make(task_id, attempt.fields, request)
        except RuneError:
            with contextlib.suppress(RuneError):  # else the next recover does it
                self._not_made(task_id)
            raise
        finally:
            MAKING.discard(task_id)
        return self.store.update(task_id, lambda fields: settled(fields, _now(self)))

    def _not_made(self, task_id: str) -> None:
        """After an attempt was refused mid-way: the attempts not yet made marked so, and
        the task settled (a long-lived process, the console, would leave it ``creating``)."""
        for attempt in self.store.read(task_id).attempts:
            if attempt.state == STARTING:
                gone = undo(self.root, self.store, task_id, attempt.fields)
                why = "not made: an earlier attempt was refused"
                self.store.update_attempt(
                    task_id,
                    attempt.number,
                    {"state": REMOVED, "error": why}
                    if gone
                    else {"state": FAILED, "error": f"{why}; its worktree has files, kept"},
                )
        self.store.update(task_id, lambda fields: settled(fields, _now(self)))

    def _checked(self, request: NewTask) -> dict[str, Any]:
        """The task's file as it will be written, every refusal raised first."""
        text = request.text.strip()
        if not text:
            raise InvalidInput("the task is empty: give --task TEXT or --task-file FILE")
        if len(text) > MAX_TASK_CHARS:
            raise InvalidInput(f"the task is longer than {MAX_TASK_CHARS} characters")
        if "\0" in text:
            raise InvalidInput("the task holds a NUL character")
        if not 1 <= request.count <= MAX_COUNT:
            raise InvalidInput(f"--count must be from 1 to {MAX_COUNT}")
        role = validate_id(request.role, "role")
        name = (
            validate_id(request.name, "name")
            if request.name
            else self.suggest(text, role, request.count)
        )
        if request.permission_mode and request.permission_mode not in PERMISSION_MODES:
            raise InvalidInput(
                f"--permission-mode {request.permission_mode!r}: one of "
                + ", ".join(PERMISSION_MODES)
            )
        if request.model is not None and not _MODEL.fullmatch(request.model):
            raise InvalidInput(f"--model {request.model!r} is not a model name")
        for given, what in ((request.node_id, "node id"), (request.bead_id, "bead id")):
            if given is not None:
                validate_id(given, what)
        base = request.base or self.main_branch()
        if base.startswith("-") or "\0" in base:
            raise InvalidInput(f"--base {base!r} is not a ref")
        commit = resolve_commit(self.root, base)
        if commit is None:
            raise RuneError(
                f"base {base!r} names no commit in {self.root}; give --base a branch, tag or "
                "commit that exists (`git branch` lists them)"
            )
        program = self._program(request)
        names = (
            [name] if request.count == 1 else [f"{name}-{n}" for n in range(1, request.count + 1)]
        )
        attempts = []
        existing = set(_branches(self.root))
        for number, attempt_name in enumerate(names, 1):
            validate_id(attempt_name, "name")
            key = f"{role}-{attempt_name}"
            branch = f"agent/{key}"
            path = self.worktree_path(attempt_name)
            if branch in existing:
                raise RuneError(f"branch {branch} already exists; give another --name")
            if path.exists() or path.is_symlink():
                raise RuneError(f"{path} already exists; give another --name")
            if self.supervisor.registry.path_for(key).exists():
                current = self.supervisor.registry.get(key)
                if current.status == "active" and not current.error:
                    raise RuneError(f"agent {key} is already active; give another --name")
            attempts.append(
                {
                    "n": number,
                    "name": attempt_name,
                    "agent": key,
                    "branch": branch,
                    "worktree": str(path),
                    "state": STARTING,
                }
            )
        if self.store.exists(name):
            raise RuneError(f"task {name} already exists; give another --name")
        return {
            "task_id": name,
            "text": text,
            "base": base,
            "base_commit": commit,
            "role": role,
            "model": request.model,
            "permission_mode": request.permission_mode,
            "mode": "background" if request.background else "tmux",
            "node_id": request.node_id,
            "bead_id": request.bead_id,
            "program": program,
            "created_at": iso_z(self.project.clock.now()),
            "created_by": self.project.via,
            "creator_pid": os.getpid(),
            "creator_start": process_start(os.getpid()),
            "state": CREATING,
            "pick": None,
            "attempts": attempts,
        }

    def _program(self, request: NewTask) -> str:
        cli = ClaudeCli(self.project.settings(BackgroundSettings).command)
        try:
            program = cli.program
        except RuneError:
            raise RuneError(
                f"Claude Code ({cli.given!r}) is not installed or not on PATH: install it "
                "(npm install -g @anthropic-ai/claude-code) or set $RUNECONSOLE_CLAUDE"
            ) from None
        if not request.background and shutil.which("tmux") is None:
            raise RuneError(
                "tmux is not installed: install it (apt install tmux), or start the agents "
                "as background sessions (--background)"
            )
        return program

    def _make(self, task_id: str, attempt: dict[str, Any], request: NewTask) -> None:
        number, key, name = attempt["n"], attempt["agent"], attempt["name"]
        path, branch = Path(attempt["worktree"]), attempt["branch"]
        task = self.store.read(task_id)
        what = f"new agent {key} (task {task_id})"
        with journaled(self.project, "new", what, [task.path]):
            try:
                aw.add_worktree(self.root, path, branch, str(task.get("base_commit")))
                pause_point("new-worktree-made")
                placed = prep.copy_files(self.root, path, self.settings.copy)
                placed |= prep.install_hooks(self.root, path)
                self.store.update_attempt(task_id, number, {"placed": placed})
            except RuneError as exc:
                undo(self.root, self.store, task_id, attempt)
                self.store.update_attempt(task_id, number, {"state": FAILED, "error": exc.message})
                raise RuneError(f"{what}: {exc.message}; nothing of it was kept") from None
            if self.settings.setup_command:
                run = prep.run_in(
                    self.settings.setup_command,
                    path,
                    self.settings.setup_timeout,
                    "runeconsole.worktrees.setup_timeout_seconds",
                )
                log = self.store.keep_output(task_id, number, "setup", run.output)
                setup = run.to_json(log)
                if not run.ok:
                    self._setup_failed(
                        task,
                        name,
                        path,
                        f"setup {run.describe()}; the agent was not started (output: {log})",
                    )
                    self.store.update_attempt(
                        task_id,
                        number,
                        {
                            "state": SETUP_FAILED,
                            "setup": setup,
                            "error": f"setup {run.describe()}; the agent was not started "
                            f"(output: {log})",
                        },
                    )
                    return
                self.store.update_attempt(task_id, number, {"setup": setup})
            pause_point("new-before-start")
            try:
                self._start(task, name, path, request)
            except RuneError as exc:
                self.store.update_attempt(task_id, number, {"state": FAILED, "error": exc.message})
                return
            self.store.update_attempt(task_id, number, {"state": STARTED, "started_at": _now(self)})

    def _setup_failed(self, task: Task, name: str, path: Path, reason: str) -> None:
        """The attempt's agent registered and ended at once, so the failure is a problem
        row (``setup``) with the output's place, and its worktree is listed as its."""
        role = str(task.get("role"))
        registry = self.supervisor.registry
        registry.register(
            role,
            name,
            worktree=str(path),
            metadata={"task_id": task.task_id, SETUP_FAILED_KEY: True},
        )
        registry.mark_crashed(f"{role}-{name}", reason)

    def _start(self, task: Task, name: str, path: Path, request: NewTask) -> None:
        options: list[str] = []
        if request.model:
            options += ["--model", request.model]
        if request.permission_mode:
            options += ["--permission-mode", request.permission_mode]
        role = str(task.get("role"))
        if request.background:
            Background(self.project, registry=self.supervisor.registry).start(
                role, name, [*options, task.text], cwd=path
            )
        else:
            self.supervisor.spawn(
                role,
                name,
                [str(task.get("program")), *options, task.text],
                worktree=path,
                node_id=request.node_id,
                bead_id=request.bead_id,
                fresh_worktree=True,
            )
        self.supervisor.registry.edit_metadata(
            f"{role}-{name}", lambda m: m.update({"task_id": task.task_id})
        )


def _now(creator: Creator) -> str:
    return iso_z(creator.project.clock.now())


def _branches(root: Path) -> list[str]:
    return list(branch_heads(root))
