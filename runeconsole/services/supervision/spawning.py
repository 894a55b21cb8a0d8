"""Starting agents in tmux: ``spawn`` a new one, ``respawn`` a successor of a stopped one."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runeconsole.adapters.tmux import Tmux
from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.core.locks import locked
from runeconsole.core.timeutil import compact_stamp
from runeconsole.core.validate import validate_id, validate_name
from runeconsole.services.hook_files import HookFile
from runeconsole.services.registry import ACTIVE, AgentRecord
from runeconsole.services.supervision.sessions import AgentSessions
from runeconsole.services.supervision.wisdom import WISDOM_ENV, write_wisdom

if TYPE_CHECKING:
    from runeconsole.services.identity_fields import AgentMetadata

ID_WAIT_LIMIT = 1.5
RESPAWN_CAUSES = ("operator", "auto", "handoff")


@dataclass
class SpawnResult:
    record: AgentRecord
    hook: HookFile
    tmux_session: str
    pid: int | None
    wisdom_file: Path | None = None
    wisdom: str | None = None
    previous_hook: Path | None = None  # the hook replaced at this spawn, kept in history

    @property
    def key(self) -> str:
        return self.record.key

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "agent_id": self.record.get("agent_id"),
            "predecessor_id": self.record.get("predecessor_id"),
            "tmux_session": self.tmux_session,
            "pid": self.pid,
            "hook_path": str(self.hook.path),
            "wisdom_file": str(self.wisdom_file) if self.wisdom_file else None,
            "wisdom": self.wisdom,
            "previous_hook": str(self.previous_hook) if self.previous_hook else None,
        }


class Spawner:
    def __init__(self, sessions: AgentSessions) -> None:
        self.sessions = sessions

    def spawn(
        self,
        role: str,
        name: str,
        command: Sequence[str],
        *,
        worktree: Path | None = None,
        node_id: str | None = None,
        bead_id: str | None = None,
        fresh_worktree: bool = False,
    ) -> SpawnResult:
        """Identity, initial hook, then ``command`` (argument list) in session ``rune-{key}``;
        ``fresh_worktree``: made for it just now (nothing in it to list as changed).

        A fresh start: a hook left by an earlier agent of the key is kept in the hook
        history (``SpawnResult.previous_hook``); ``respawn`` is what continues from it.
        """
        key = f"{validate_id(role, 'role')}-{validate_id(name, 'name')}"
        if not command:
            raise InvalidInput("give the agent's command after --, e.g. -- claude")
        registry = self.sessions.registry
        if registry.path_for(key).exists():
            current = registry.read_path(registry.path_for(key))
            if current.status == ACTIVE and self.sessions.running(current):
                raise RuneError(
                    f"{key} is already running in tmux session {current.get('tmux_session')}; "
                    f"kill it first (`runeconsole kill {key}`)"
                )
        return self._launch(
            self.sessions.tmux,
            role,
            name,
            list(command),
            worktree=self._checked_worktree(worktree or self.sessions.root),
            node_id=node_id,
            bead_id=bead_id,
            metadata={"respawns": 0, "auto_respawns": 0},
            fresh=fresh_worktree,
        )

    def respawn(self, key: str, *, cause: str = "operator") -> SpawnResult:
        """A successor for a crashed or finished agent: same command and worktree, new identity
        whose ``predecessor_id`` is the old ``agent_id``, wisdom prompt from the hook.

        ``cause`` is ``operator``, ``auto`` (counts against the auto-respawn limit) or
        ``handoff``.
        """
        validate_name(key, "agent key")
        if cause not in RESPAWN_CAUSES:
            raise InvalidInput(f"respawn cause {cause!r} is not one of {', '.join(RESPAWN_CAUSES)}")
        registry = self.sessions.registry
        with locked(self.sessions.paths.lock_for(f"respawn-{key}"), what=f"respawn of {key}"):
            record = registry.get(key)
            if record.status == ACTIVE:
                if self.sessions.running(record):
                    raise RuneError(
                        f"{key} is still running; hand it off (`runeconsole handoff {key}`) "
                        f"or kill it (`runeconsole kill {key}`) first"
                    )
                record, _ = registry.mark_crashed(key, "found gone when re-spawning")
            metadata = record.metadata
            command = metadata.get("command")
            if not (
                isinstance(command, list) and command and all(isinstance(c, str) for c in command)
            ):
                raise RuneError(
                    f"{key} has no recorded command to re-run; start it with "
                    f"`runeconsole spawn --role R --name N -- COMMAND`"
                )
            worktree = self._checked_worktree(Path(record.worktree or self.sessions.root))
            predecessor_id = validate_name(str(record.get("agent_id") or key), "agent id")
            hook = self.sessions.hook_files.read(key)
            wisdom, wisdom_file = write_wisdom(self.sessions.paths, predecessor_id, hook, worktree)
            auto = int(metadata.get("auto_respawns") or 0)
            if cause == "auto":
                auto += 1
            elif cause == "operator":
                auto = 0  # a person stepped in: the crash-loop count starts again
            return self._launch(
                self.sessions.tmux_for(record),  # the predecessor's server
                str(record.get("role")),
                str(record.get("name")),
                command,
                worktree=worktree,
                node_id=record.get("node_id"),
                bead_id=record.get("bead_id"),
                predecessor=record,
                hook=hook,
                wisdom=wisdom,
                wisdom_file=wisdom_file,
                metadata={
                    "respawns": int(metadata.get("respawns") or 0) + 1,
                    "auto_respawns": auto,
                    "respawn_cause": cause,
                },
            )

    def _launch(
        self,
        tmux: Tmux,
        role: str,
        name: str,
        command: list[str],
        *,
        worktree: Path,
        node_id: str | None,
        bead_id: str | None,
        metadata: AgentMetadata,
        predecessor: AgentRecord | None = None,
        hook: HookFile | None = None,
        wisdom: str | None = None,
        wisdom_file: Path | None = None,
        fresh: bool = False,
    ) -> SpawnResult:
        registry = self.sessions.registry
        key = f"{role}-{name}"
        session = f"rune-{key}"
        if predecessor is not None:
            self._after_second_of(str(predecessor.get("agent_id")))
        stale = tmux.pane(session)
        if stale is not None:
            if not stale.dead:
                raise RuneError(
                    f"tmux session {session} already exists and is running; "
                    f"stop it first (`{' '.join(tmux.attach_command(session))}` to look)"
                )
            tmux.kill_session(session)
        record = registry.register(
            role,
            name,
            worktree=str(worktree),
            tmux_session=session,
            node_id=node_id,
            bead_id=bead_id,
            predecessor_id=str(predecessor.get("agent_id")) if predecessor else None,
            metadata={
                **metadata,
                "command": command,
                "tmux_socket": tmux.socket_name,
            },
        )
        new_hook = self.sessions.hook_files.create(
            role,
            name,
            node=node_id,
            bead=bead_id,
            worktree=worktree,
            predecessor=hook,
            fresh=fresh,
        )
        env = {
            "RUNECONSOLE_ROOT": str(self.sessions.root),
            "RUNECONSOLE_AGENT_KEY": key,
            "RUNECONSOLE_AGENT": key,  # the agent Claude Code's hooks report for
            "RUNECONSOLE_AGENT_ID": str(record.get("agent_id")),
            "RUNECONSOLE_HOOK_FILE": str(new_hook.path),
        }
        if wisdom_file is not None:
            env[WISDOM_ENV] = str(wisdom_file)
        try:
            pane = tmux.new_session(session, command, cwd=worktree, env=env)
        except RuneError as exc:
            registry.mark_crashed(key, f"spawn failed: {exc}")
            raise
        record = registry.update(key, {"pid": pane.pid})
        if wisdom and wisdom_file and self.sessions.settings.type_wisdom:
            # Not typed blind into a pane that has not drawn yet (Claude Code may open on a
            # prompt where Enter accepts): the monitor types it once the screen is safe.
            first = wisdom.splitlines()[0]
            self.sessions.type_or_queue(record, f"{first} (full context: {wisdom_file})", None)
        return SpawnResult(
            record, new_hook, session, pane.pid, wisdom_file, wisdom, new_hook.replaced
        )

    def _after_second_of(self, agent_id: str) -> None:
        """Agent ids end in a one-second stamp (the harness's format): a successor started
        within its predecessor's second would get the same id, so wait for the next one."""
        clock = self.sessions.clock
        deadline = time.monotonic() + ID_WAIT_LIMIT
        while agent_id.endswith(compact_stamp(clock.now())) and time.monotonic() < deadline:
            time.sleep(0.02)

    def _checked_worktree(self, worktree: Path) -> Path:
        path = worktree.expanduser()
        if not path.is_absolute():
            path = self.sessions.root / path
        if not path.is_dir():
            raise InvalidInput(f"worktree {worktree} is not a directory")
        return path.resolve()
