"""Claude Code's background sessions (``claude --bg``) as agents of the project.

Such a session runs in no tmux pane: Claude Code's own daemon holds its terminal. Its
hooks fire like any session's (``session_facts`` marks its identity ``kind:
background`` with its short id), and ``claude agents --json --all`` lists every session
with its short id, name, state and process. ``Background`` brings the two together:

- ``sync`` registers a background session of this project that no hook has told of
  (hooks not installed, or installed after it started), keeps each one's name and state
  and refreshes ``last_seen`` while its process runs, and marks it terminated once
  Claude Code no longer runs it (stopped, finished, removed);
- ``peek`` replays ``claude logs ID`` into the screen it shows (``adapters.terminal_screen``);
- ``attach`` opens ``claude attach ID`` in a new window of the operator's tmux;
- ``stop`` marks the agent terminated, then runs ``claude stop ID`` (its conversation is
  kept: ``claude attach ID`` opens it again);
- ``start`` is ``runeconsole spawn --background``: the identity first, named ``{role}-{name}``
  and passed as the session's ``--name``, so its hooks find it (``locate``), then ``claude --bg``.

A session is this project's when its directory belongs to the project's checkout (a
linked worktree counts, as it does for the hooks).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from runeconsole.adapters.claude_cli import ClaudeCli
from runeconsole.adapters.terminal_screen import Span, plain, replay
from runeconsole.core.config import Talisman
from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.core.pids import pid_alive
from runeconsole.core.timeutil import iso_z, parse_iso
from runeconsole.core.validate import validate_id
from runeconsole.services.claude.bridge import locate
from runeconsole.services.claude.bridge.payload import HookPayload
from runeconsole.services.claude.hooks.lifecycle import STARTED_BY
from runeconsole.services.claude.session import session_view
from runeconsole.services.claude.session.session_facts import BACKGROUND
from runeconsole.services.project import Project
from runeconsole.services.registry import ACTIVE, AgentRecord, Registry

if TYPE_CHECKING:
    from runeconsole.services.identity_fields import IdentityChanges

SPAWNED = "runeconsole"  # metadata.started_by of an agent `spawn --background` started
TOUCH_SECONDS = 30.0  # a running session's last_seen is refreshed at most this often


@dataclass(frozen=True)
class BackgroundSettings:
    """``runeconsole.background`` in talisman.yml."""

    command: str | None = None  # Claude Code's program (default: claude on PATH)
    poll_seconds: float = 15.0  # how often the console asks Claude Code (0: never)

    @classmethod
    def from_talisman(cls, talisman: Talisman) -> BackgroundSettings:
        section = talisman.section("runeconsole", "background")
        settings = cls(
            command=section.text("command", None),
            poll_seconds=section.number("poll_seconds", 15.0, minimum=0),
        )
        section.warn_unread()
        return settings


@dataclass(frozen=True)
class BackgroundSession:
    """One entry of ``claude agents --json --all`` (every field checked)."""

    id: str
    session_id: str | None
    name: str | None
    cwd: str | None
    pid: int | None
    state: str | None
    status: str | None
    started_at: float | None

    @classmethod
    def of(cls, entry: dict[str, Any]) -> BackgroundSession | None:
        short = entry.get("id")
        if entry.get("kind") != BACKGROUND or not isinstance(short, str):
            return None
        pid = entry.get("pid")
        started = entry.get("startedAt")

        def text(name: str) -> str | None:
            value = entry.get(name)
            return value if isinstance(value, str) and value else None

        return cls(
            short,
            text("sessionId"),
            text("name"),
            text("cwd"),
            pid if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0 else None,
            text("state"),
            text("status"),
            started / 1000 if isinstance(started, int | float) else None,
        )

    @property
    def running(self) -> bool:
        """Claude Code runs it now (a stopped or finished session has no process)."""
        return self.pid is not None and self.state not in ("stopped", "done", "failed")

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "session_id": self.session_id,
            "name": self.name,
            "cwd": self.cwd,
            "pid": self.pid,
            "state": self.state,
            "status": self.status,
            "running": self.running,
        }


@dataclass
class SyncReport:
    sessions: list[BackgroundSession]
    keys: dict[str, str]  # short id -> agent key
    registered: list[str]
    ended: list[str]

    def to_json(self) -> dict[str, Any]:
        return {
            "sessions": [{**s.to_json(), "key": self.keys.get(s.id)} for s in self.sessions],
            "registered": self.registered,
            "ended": self.ended,
        }


class Background:
    def __init__(
        self,
        project: Project,
        *,
        cli: ClaudeCli | None = None,
        registry: Registry | None = None,
    ) -> None:
        self.project = project
        self.registry = registry or Registry(project)
        settings = project.settings(BackgroundSettings)
        self.cli = cli or ClaudeCli(settings.command)

    # -- which sessions are ours -------------------------------------------------------------

    def sessions(self) -> list[BackgroundSession]:
        """This project's background sessions, as Claude Code lists them."""
        found = []
        for entry in self.cli.sessions(cwd=self.project.root):
            session = BackgroundSession.of(entry)
            if session is not None and self._ours(session.cwd):
                found.append(session)
        return found

    def _ours(self, cwd: str | None) -> bool:
        root = locate.project_root(cwd, {}) if cwd else None
        return root is not None and os.path.realpath(root) == os.path.realpath(self.project.root)

    def key_for(self, session: BackgroundSession, known: dict[str, str]) -> str:
        """The agent of a session: the identity that names its short id, else the one its
        hooks derive (``claude-{dir}-{id}``)."""
        if session.id in known:
            return known[session.id]
        payload = HookPayload(
            {
                "hook_event_name": "SessionStart",
                "session_id": session.session_id or session.id,
                "cwd": session.cwd,
            }
        )
        role, name = locate.derived_key(payload, {"CLAUDE_PROJECT_DIR": session.cwd or ""})
        return f"{role}-{name}"

    def _known(self, records: list[AgentRecord]) -> dict[str, str]:
        return {
            short: record.key
            for record in records
            if not record.error and (short := session_view.background_id(record.fields))
        }

    # -- keeping identities current ---------------------------------------------------------

    def sync(self) -> SyncReport:
        """Identities brought in line with what Claude Code runs (see the module's doc)."""
        sessions = self.sessions()
        records = self.registry.list()
        known = self._known(records)
        keys = {session.id: self.key_for(session, known) for session in sessions}
        by_key = {record.key: record for record in records}
        registered = []
        for session in sessions:
            key = keys[session.id]
            if session.running and self._keep(session, key, by_key.get(key)):
                registered.append(key)
        running = {keys[s.id] for s in sessions if s.running}
        ended = []
        for record in records:
            if record.error or record.status != ACTIVE or record.key in running:
                continue
            short = session_view.background_id(record.fields)
            if short is None or record.get("kind") != BACKGROUND:
                continue
            state = next((s.state for s in sessions if s.id == short), None) or "gone"
            reason = f"Claude Code background session {short} {state}"
            _, changed = self.registry.mark_terminated(
                record.key, reason, agent_id=record.get("agent_id")
            )
            if changed:
                ended.append(record.key)
        return SyncReport(sessions, keys, registered, ended)

    def _keep(self, session: BackgroundSession, key: str, record: AgentRecord | None) -> bool:
        """Register the session's agent if it has none (True), else keep its facts."""
        facts: IdentityChanges = {
            "kind": BACKGROUND,
            "background_id": session.id,
            "background_state": session.state,
        }
        if session.name:
            facts["session_name"] = session.name
        if record is None or record.error or record.status != ACTIVE:
            role, name = key.split("-", 1)
            self.registry.register(
                role,
                name,
                session_id=session.session_id,
                worktree=session.cwd,
                metadata={"started_by": STARTED_BY, "found_by": "claude agents"},
            )
            self.registry.update(key, facts)
            return True
        now = self.project.clock.now()
        seen = parse_iso(record.get("last_seen"))
        stale = seen is None or (now - seen).total_seconds() >= TOUCH_SECONDS
        changed = cast("IdentityChanges", {k: v for k, v in facts.items() if record.get(k) != v})
        if stale and pid_alive(session.pid or 0):
            changed["last_seen"] = changed["last_heartbeat"] = iso_z(now)
        if changed:
            self.registry.update(key, changed)
        return False

    # -- acting on one ----------------------------------------------------------------------

    def short_id(self, key: str) -> tuple[AgentRecord, str]:
        """The agent's record and its session's short id (``RuneError`` if it has none)."""
        record = self.registry.get(key)
        short = session_view.background_id(record.fields) if not record.error else None
        if short is None:
            raise RuneError(f"{key} is not a Claude Code background session")
        return record, short

    def logs(self, key: str) -> str:
        """``claude logs ID``: the session's recent terminal output, escapes and all."""
        return self.cli.logs(self.short_id(key)[1])

    def peek(self, key: str) -> list[list[Span]]:
        """The screen the session shows, replayed from its logs."""
        return replay(self.logs(key))

    def peek_text(self, key: str) -> str:
        return plain(self.peek(key))

    def stop(self, key: str, reason: str = "stopped by the operator") -> AgentRecord:
        """Terminated first (a sync in between sees an agent stopped on purpose), then
        ``claude stop ID``."""
        record, short = self.short_id(key)
        if record.status == ACTIVE:
            self.registry.mark_terminated(key, f"{reason} (claude stop {short})")
        said = self.cli.stop(short)
        if not said.startswith("stopped"):
            raise RuneError(f"claude stop {short}: {said or 'no answer'}")
        return self.registry.get(key)

    def attach_argv(self, key: str) -> list[str]:
        return self.cli.attach_argv(self.short_id(key)[1])

    def start(
        self, role: str, name: str, arguments: Sequence[str], *, cwd: Path | None = None
    ) -> AgentRecord:
        """``claude --bg --name {role}-{name} ARGUMENTS`` (its options and the task) in
        ``cwd`` (default: the root), its agent registered first."""
        key = f"{validate_id(role, 'role')}-{validate_id(name, 'name')}"
        if not arguments:
            raise InvalidInput('give the task after --, e.g. -- claude "fix the login"')
        where = (cwd or self.project.root).resolve()
        if not where.is_dir():
            raise InvalidInput(f"{where} is not a directory")
        path = self.registry.path_for(key)
        if path.exists():
            current = self.registry.read_path(path)
            if current.status == ACTIVE and not current.error:
                raise RuneError(f"{key} is already an active agent; stop it first")
        self.registry.register(
            role,
            name,
            worktree=str(where),
            metadata={"started_by": SPAWNED, "background": True},
        )
        try:
            short = self.cli.start(arguments, cwd=where, name=key)
        except RuneError as exc:
            self.registry.mark_terminated(key, f"claude --bg failed: {exc.message}")
            raise
        locate.bind(self.project.paths, short, key)  # its hooks find it by the short id
        return self.registry.update(key, {"kind": BACKGROUND, "background_id": short})
