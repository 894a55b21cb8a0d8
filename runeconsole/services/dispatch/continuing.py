"""``resume`` and ``fork``: an agent's Claude Code session continued by a new supervised agent.

- ``resume``: an ended agent (crashed, terminated, or active on paper with its session
  gone) continued as itself: ``claude --resume SESSION`` in its worktree (else the root),
  in tmux through the supervisor's spawn, a new identity of the same key whose
  ``predecessor_id`` is the ended one's (as a respawn writes it). A live agent is refused.
- ``fork``: any agent's session copied under a new session id into a new agent (a new
  name of the same role): ``claude --resume SESSION --fork-session --session-id NEW`` in
  the same worktree, or with ``new_worktree`` in a fresh worktree made by dispatch's own
  creation (branch ``agent/{role}-{name}`` from the commit the agent's worktree has checked
  out, the project's files, hooks and setup command; a start that fails undoes it).

Forking at a chosen turn (``at``: the uuid of an entry of the transcript): Claude Code
2.1.328 honours ``--resume-session-at`` only in print mode (an interactive session given it
resumes the whole conversation, observed). So the fork is first written by a print-mode
run that asks the model nothing: ``claude -p --resume S --fork-session --session-id NEW
--resume-session-at AT /status`` (``/status`` is a local command print mode does not
offer: it writes the cut conversation and a note, and sends no request, observed), with
hooks off; the agent then resumes ``NEW``.

The session ids are Claude Code's own (UUIDs, from the identity the hooks keep); every id is
checked before a path or an argument is built from it; commands are argument lists.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runeconsole.adapters.claude_cli import ClaudeCli
from runeconsole.adapters.git_worktrees import resolve_commit
from runeconsole.adapters.processes import run_streaming
from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.core.locks import locked
from runeconsole.core.validate import validate_id, validate_name
from runeconsole.services.claude.background.sessions import BackgroundSettings
from runeconsole.services.dispatch.creation import _MODEL, PERMISSION_MODES, Creator, NewTask
from runeconsole.services.dispatch.service import Dispatch
from runeconsole.services.dispatch.task_store import FAILED, REMOVED, STARTED, Task
from runeconsole.services.dispatch.undoing import undo
from runeconsole.services.registry import AgentRecord
from runeconsole.services.supervision.service import SpawnResult

if TYPE_CHECKING:
    from runeconsole.services.identity_fields import AgentMetadata, IdentityChanges

SESSION_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
ACTIVE, CRASHED, TERMINATED = "active", "crashed", "terminated"
CUT_COMMAND = "/status"  # a local command print mode refuses: the cut fork written, no request
CUT_TIMEOUT = 120.0
NO_HOOKS = json.dumps({"disableAllHooks": True})
_SINGLE_OPTIONS = ("--model", "--permission-mode")  # carried over from the agent's command
_SCAN_CHUNK = 1 << 20


def session_uuid(value: object, what: str = "session id") -> str:
    """``value`` if it is a UUID as Claude Code writes them (lower-cased), else ``InvalidInput``."""
    if not isinstance(value, str) or not SESSION_ID.fullmatch(value.lower()):
        raise InvalidInput(f"{what} {value!r} is not a UUID (Claude Code's ids are UUIDs)")
    return value.lower()


def session_of(record: AgentRecord) -> str:
    """The Claude Code session the agent ran last, as its hooks recorded it."""
    claude = record.get("claude")
    found = record.get("session_id") or (
        claude.get("session_id") if isinstance(claude, dict) else None
    )
    if not found:
        raise RuneError(
            f"{record.key} has no Claude Code session recorded (its hooks never reported one; "
            "`runeconsole claude install` installs them)"
        )
    return session_uuid(found, f"{record.key}'s session id")


def transcript_of(record: AgentRecord) -> Path | None:
    """The transcript the hooks recorded for the agent's session (absolute), if any."""
    claude = record.get("claude")
    path = claude.get("transcript_path") if isinstance(claude, dict) else None
    return Path(path) if isinstance(path, str) and os.path.isabs(path) else None


def holds_entry(transcript: Path, entry: str) -> bool | None:
    """Whether the transcript has an entry of uuid ``entry`` (None: it cannot be read)."""
    needle = f'"uuid":"{entry}"'.encode()
    tail = b""
    try:
        with open(transcript, "rb") as handle:
            while chunk := handle.read(_SCAN_CHUNK):
                if needle in tail + chunk:
                    return True
                tail = chunk[-len(needle) :]
    except OSError:
        return None
    return False


def carried_options(command: object) -> list[str]:
    """``--model`` and ``--permission-mode`` of the agent's recorded command, kept."""
    if not isinstance(command, list):
        return []
    kept: list[str] = []
    words = [w for w in command if isinstance(w, str)]
    for index, word in enumerate(words):
        for option in _SINGLE_OPTIONS:
            if word == option and index + 1 < len(words):
                kept += [option, words[index + 1]]
            elif word.startswith(f"{option}="):
                kept += [option, word.split("=", 1)[1]]
    return kept


def _options(carried: list[str], model: str | None, permission_mode: str | None) -> list[str]:
    given = {"--model": model, "--permission-mode": permission_mode}
    pairs = dict(zip(carried[::2], carried[1::2], strict=True))
    pairs.update({option: value for option, value in given.items() if value})
    mode = pairs.get("--permission-mode")
    if mode is not None and mode not in PERMISSION_MODES:
        raise InvalidInput(f"--permission-mode {mode!r}: one of {', '.join(PERMISSION_MODES)}")
    model_name = pairs.get("--model")
    if model_name is not None and not _MODEL.fullmatch(model_name):
        raise InvalidInput(f"--model {model_name!r} is not a model name")
    return [word for pair in pairs.items() for word in pair]


@dataclass
class Continued:
    """What a resume or a fork started."""

    action: str  # "resume" or "fork"
    source: str  # the agent continued
    source_agent_id: str | None
    key: str
    agent_id: str | None
    from_session: str  # the session resumed or forked
    session_id: str  # the session the new agent runs (the same one for a resume)
    worktree: str
    command: list[str]
    tmux_session: str | None = None
    at: str | None = None
    branch: str | None = None
    task_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "source": self.source,
            "source_agent_id": self.source_agent_id,
            "key": self.key,
            "agent_id": self.agent_id,
            "from_session": self.from_session,
            "session_id": self.session_id,
            "at": self.at,
            "worktree": self.worktree,
            "branch": self.branch,
            "task_id": self.task_id,
            "tmux_session": self.tmux_session,
            "command": self.command,
        }

    def describe(self) -> str:
        what = (
            f"resumed {self.source} (session {self.session_id})"
            if self.action == "resume"
            else f"forked {self.source} (session {self.from_session}"
            + (f" at {self.at}" if self.at else "")
            + f") into {self.key} (session {self.session_id})"
        )
        where = f" on {self.branch}" if self.branch else ""
        return f"{what} in {self.worktree}{where}, tmux session {self.tmux_session}"


class Continuing:
    def __init__(self, dispatch: Dispatch) -> None:
        self.dispatch = dispatch
        self.supervisor = dispatch.supervisor
        self.registry = dispatch.supervisor.registry
        self.project = dispatch.project
        self.root = dispatch.root

    # -- reading the agent -------------------------------------------------------------------

    def agent(self, key: str) -> AgentRecord:
        validate_name(key, "agent key")
        if not self.registry.path_for(key).exists():
            raise RuneError(f"no agent {key!r} (`runeconsole agents` lists them)")
        record = self.registry.get(key)
        if record.error:
            raise RuneError(f"agent {key} is unreadable: {record.error}")
        return record

    def live(self, record: AgentRecord) -> bool:
        """Whether the agent may still be running: active, and its tmux pane alive (or,
        with no tmux session, a Claude Code background session or a live pid)."""
        if record.status != ACTIVE:
            return False
        if record.get("tmux_session"):
            return self.supervisor.sessions.running(record)
        return self.supervisor.in_background(record.key) or self.supervisor.sessions.pid_alive(
            record
        )

    def ended(self, record: AgentRecord) -> bool:
        return not record.error and not self.live(record)

    def program(self) -> str:
        cli = ClaudeCli(self.project.settings(BackgroundSettings).command)
        try:
            return cli.program
        except RuneError:
            raise RuneError(
                f"Claude Code ({cli.given!r}) is not installed or not on PATH: install it "
                "(npm install -g @anthropic-ai/claude-code) or set $RUNECONSOLE_CLAUDE"
            ) from None

    def _worktree(self, record: AgentRecord) -> Path:
        path = record.worktree_in(self.root) or self.root
        if not path.is_dir():
            raise RuneError(
                f"{record.key}'s worktree {path} is gone; fork it into a new one instead "
                f"(`runeconsole fork {record.key} --new-worktree`)"
            )
        return path

    def _checked_session(self, record: AgentRecord) -> str:
        session = session_of(record)
        transcript = transcript_of(record)
        if transcript is not None and not transcript.exists():
            raise RuneError(
                f"{record.key}'s conversation {transcript} is gone: Claude Code cannot "
                f"resume session {session}"
            )
        return session

    # -- resume ------------------------------------------------------------------------------

    def resume(
        self, key: str, *, model: str | None = None, permission_mode: str | None = None
    ) -> Continued:
        """The ended agent's session resumed by a successor of the same key."""
        record = self.agent(key)
        role = validate_id(record.get("role"), "role")
        name = validate_id(record.get("name"), "name")
        paths = self.project.paths
        with locked(paths.lock_for(f"respawn-{key}"), what=f"resume of {key}"):
            record = self.agent(key)
            if self.live(record):
                raise RuneError(
                    f"{key} is still running (session {record.get('session_id') or '?'}); "
                    f"resume continues an ended agent: kill it first (`runeconsole kill {key}`) "
                    f"or fork it (`runeconsole fork {key}`)"
                )
            session = self._checked_session(record)
            worktree = self._worktree(record)
            options = _options(
                carried_options(record.metadata.get("command")), model, permission_mode
            )
            command = [self.program(), "--resume", session, *options]
            if record.status == ACTIVE:  # on paper only: its session is gone
                record, _ = self.registry.mark_crashed(key, "found gone when resumed")
            predecessor = str(record.get("agent_id") or key)
            validate_name(predecessor, "agent id")
            before = record.metadata
            spawned = self.supervisor.spawn(
                role,
                name,
                command,
                worktree=worktree,
                node_id=record.get("node_id"),
                bead_id=record.get("bead_id"),
            )
            self._note(
                spawned,
                predecessor,
                session,
                {
                    "resumed": {"agent_id": predecessor, "session_id": session},
                    "respawns": int(before.get("respawns") or 0) + 1,
                    **({"task_id": before["task_id"]} if before.get("task_id") else {}),
                },
            )
        return Continued(
            "resume",
            key,
            predecessor,
            spawned.key,
            spawned.record.get("agent_id"),
            session,
            session,
            str(worktree),
            command,
            tmux_session=spawned.tmux_session,
        )

    def _note(
        self,
        spawned: SpawnResult,
        predecessor: str | None,
        session: str,
        metadata: AgentMetadata,
        command: list[str] | None = None,
    ) -> None:
        """What spawn does not write: the predecessor, the session, how it came to be (and
        for a fork the command a respawn re-runs: its own session resumed)."""
        changes: IdentityChanges = {"session_id": session}
        if predecessor is not None:
            changes["predecessor_id"] = predecessor
        self.registry.update(spawned.key, changes)

        def edit(found: AgentMetadata) -> None:
            found.update(metadata)
            if command is not None:
                found["command"] = command

        self.registry.edit_metadata(spawned.key, edit)

    # -- fork --------------------------------------------------------------------------------

    def fork(
        self,
        key: str,
        *,
        name: str | None = None,
        new_worktree: bool = False,
        at: str | None = None,
        model: str | None = None,
        permission_mode: str | None = None,
    ) -> Continued:
        """The agent's session copied (up to ``at``) into a new agent of its role."""
        record = self.agent(key)
        role = validate_id(record.get("role"), "role")
        if name is not None:
            validate_id(name, "name")
        if at is not None:
            at = session_uuid(at, "--at")
        session = self._checked_session(record)
        transcript = transcript_of(record)
        if at is not None and transcript is not None and holds_entry(transcript, at) is False:
            raise InvalidInput(
                f"--at {at}: no entry of that uuid in {key}'s conversation {transcript}"
            )
        source_worktree = self._worktree(record)
        options = _options(carried_options(record.metadata.get("command")), model, permission_mode)
        program = self.program()
        new_session = str(uuid.uuid4())
        plan = _Fork(self, record, session, new_session, at, program, options)
        if new_worktree:
            return self._fork_in_new_worktree(plan, role, name, source_worktree)
        name = name or self._free_name(role, f"{record.get('name')}-fork")
        new_key = f"{role}-{name}"
        if new_key == key:
            raise InvalidInput(f"the fork needs a name of its own, not {key}'s")
        if self.registry.path_for(new_key).exists() and self.live(self.registry.get(new_key)):
            raise RuneError(f"agent {new_key} is already running; give another --name")
        spawned = plan.start(role, name, source_worktree)
        return plan.result(spawned, source_worktree)

    def _free_name(self, role: str, base: str, taken: set[str] | None = None) -> str:
        base = validate_id(base[:56], "name")
        taken = taken if taken is not None else set()
        prefix = f"{role}-"
        taken |= {r.key[len(prefix) :] for r in self.registry.list() if r.key.startswith(prefix)}
        if base not in taken:
            return base
        number = 2
        while f"{base}-{number}" in taken:
            number += 1
        return f"{base}-{number}"

    def _fork_in_new_worktree(
        self, plan: _Fork, role: str, name: str | None, source_worktree: Path
    ) -> Continued:
        commit = resolve_commit(source_worktree, "HEAD")
        if commit is None:
            raise RuneError(f"{source_worktree} has no commit checked out to branch from")
        creator = _ForkCreator(self.dispatch, plan)
        name = name or self._free_name(
            role, f"{plan.record.get('name')}-fork", creator.taken_names(role)
        )
        text = f"fork of {plan.record.key} (Claude Code session {plan.session})"
        task = creator.new(
            NewTask(text=text, base=commit, role=role, name=name, model=None, permission_mode=None)
        )
        attempt = task.attempts[0]
        if attempt.state != STARTED or creator.spawned is None:
            where = attempt.worktree
            if attempt.state == FAILED and where is not None and not where.exists():
                self.dispatch.store.update_attempt(task.task_id, attempt.number, {"state": REMOVED})
            raise RuneError(
                f"fork of {plan.record.key}: {attempt.get('error') or attempt.state}"
                + ("" if where is not None and where.exists() else "; its worktree was undone")
            )
        result = plan.result(creator.spawned, Path(str(attempt.get("worktree"))))
        result.branch, result.task_id = attempt.branch, task.task_id
        return result


class _Fork:
    """One fork as planned: how its agent starts, and what it records."""

    def __init__(
        self,
        owner: Continuing,
        record: AgentRecord,
        session: str,
        new_session: str,
        at: str | None,
        program: str,
        options: list[str],
    ) -> None:
        self.owner, self.record, self.session, self.new_session = (
            owner,
            record,
            session,
            new_session,
        )
        self.at, self.program, self.options = at, program, options
        self.command: list[str] = []

    def start(self, role: str, name: str, worktree: Path) -> SpawnResult:
        if self.at is None:
            self.command = [
                self.program, "--resume", self.session, "--fork-session",
                "--session-id", self.new_session, *self.options,
            ]  # fmt: skip
        else:
            self._cut(worktree)
            self.command = [self.program, "--resume", self.new_session, *self.options]
        spawned = self.owner.supervisor.spawn(
            role,
            name,
            self.command,
            worktree=worktree,
            node_id=self.record.get("node_id"),
            bead_id=self.record.get("bead_id"),
        )
        forked = {
            "agent": self.record.key,
            "agent_id": self.record.get("agent_id"),
            "session_id": self.session,
            "at": self.at,
        }
        self.owner._note(
            spawned,
            None,
            self.new_session,
            {"forked_from": forked},
            [self.program, "--resume", self.new_session, *self.options],
        )
        return spawned

    def _cut(self, worktree: Path) -> None:
        """The fork up to ``at`` written by Claude Code in print mode, no request sent."""
        assert self.at is not None
        argv = [
            self.program, "-p", "--resume", self.session, "--fork-session",
            "--session-id", self.new_session, "--resume-session-at", self.at,
            "--settings", NO_HOOKS, CUT_COMMAND,
        ]  # fmt: skip
        env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        run = run_streaming(argv, worktree, CUT_TIMEOUT, env=env)
        said = " ".join(line.strip() for line in run.tail if line.strip())[-400:]
        if run.timed_out or run.returncode != 0 or not self._written():
            why = "timed out" if run.timed_out else f"exited {run.returncode}"
            raise RuneError(
                f"Claude Code did not write the fork of session {self.session} at {self.at} "
                f"({why}{': ' + said if said else ''})"
            )

    def _written(self) -> bool:
        config = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.expanduser("~/.claude")
        projects = Path(config) / "projects"
        try:
            return any(projects.glob(f"*/{self.new_session}.jsonl"))
        except OSError:
            return False

    def result(self, spawned: SpawnResult, worktree: Path) -> Continued:
        return Continued(
            "fork",
            self.record.key,
            self.record.get("agent_id"),
            spawned.key,
            spawned.record.get("agent_id"),
            self.session,
            self.new_session,
            str(worktree),
            self.command,
            tmux_session=spawned.tmux_session,
            at=self.at,
        )


class _ForkCreator(Creator):
    """Dispatch's creation (worktree, files, hooks, setup, journal, undo) with the fork's
    start in place of a first prompt; a start that fails undoes the worktree."""

    def __init__(self, dispatch: Dispatch, plan: _Fork) -> None:
        super().__init__(dispatch.supervisor, dispatch.store)
        self.plan = plan
        self.spawned: SpawnResult | None = None

    def _start(self, task: Task, name: str, path: Path, request: NewTask) -> None:
        try:
            self.spawned = self.plan.start(str(task.get("role")), name, path)
        except RuneError:
            made = self.store.read(task.task_id).attempt(1)  # with the files it placed
            undo(self.root, self.store, task.task_id, made.fields)
            raise
        self.supervisor.registry.edit_metadata(
            f"{task.get('role')}-{name}", lambda m: m.update({"task_id": task.task_id})
        )
