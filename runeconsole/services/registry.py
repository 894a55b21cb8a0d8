"""Agent identity registry: ``.claude/state/identities/{role}-{name}.json``.

Reads the harness's files unchanged (``last_heartbeat``, ``worktree``) and writes the
union of the harness's fields and ours (``pid``, ``tmux_session``, ``node_id``,
``bead_id``, ``worktree_path``, ``hook_path``, ``last_seen``), so both kinds of reader
keep working. Every change is a locked read-modify-write with an atomic replace;
lifecycle changes also emit a signal. A replaced identity is archived under
``history/`` so a re-spawned agent's predecessor chain stays readable. How alive an
agent is, and the record of one file, are in ``liveness`` (re-exported here).
"""

from __future__ import annotations

import builtins
import contextlib
import os
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack, cast

from runeconsole.core.errors import RuneError, UnreadableFile
from runeconsole.core.files import (
    atomic_write_json,
    is_temp_name,
    parse_json_object,
    read_bytes_and_stat,
    read_json_object,
    remove_orphan_temp,
)
from runeconsole.core.locks import locked
from runeconsole.core.timeutil import iso_z
from runeconsole.core.validate import validate_name
from runeconsole.services import identity_fields
from runeconsole.services.liveness import (
    ACTIVE,
    CRASHED,
    GREEN,
    GREY,
    LIVENESS_ORDER,
    RED,
    TERMINATED,
    YELLOW,
    AgentRecord,
    LivenessSettings,
    judge,
    last_seen,
)
from runeconsole.services.project import Project
from runeconsole.services.signal_parties import GUARDIAN, RUNNER
from runeconsole.services.signals import Signals

if TYPE_CHECKING:
    from runeconsole.services.identity_fields import AgentMetadata, IdentityChanges

SIGNAL_SOURCE = RUNNER  # what the supervisor sends: the harness's runner watches agents
SIGNAL_TARGET = GUARDIAN

__all__ = [
    "ACTIVE",
    "CRASHED",
    "GREEN",
    "GREY",
    "LIVENESS_ORDER",
    "RED",
    "SIGNAL_SOURCE",
    "SIGNAL_TARGET",
    "TERMINATED",
    "YELLOW",
    "AgentRecord",
    "LivenessSettings",
    "Registry",
    "judge",
    "last_seen",
]


class Registry:
    def __init__(
        self,
        project: Project,
        settings: LivenessSettings | None = None,
        signals: Signals | None = None,
    ) -> None:
        self.project = project
        self.root, self.paths, self.clock = project.root, project.paths, project.clock
        self.settings = settings or project.settings(LivenessSettings)
        self.signals = signals or Signals(project)

    # -- reading ---------------------------------------------------------------------------

    def path_for(self, key: str) -> Path:
        return identity_fields.identity_path(self.paths, key)

    def read_path(self, path: Path | str, now: datetime | None = None) -> AgentRecord:
        """Never raises for bad content: an unreadable file becomes a red record with a reason."""
        return self.read_with_stat(path, now)[0]

    def read_with_stat(
        self, path: Path | str, now: datetime | None = None
    ) -> tuple[AgentRecord, os.stat_result | None]:
        """``read_path``, and the file's ``stat`` as it was opened: None when it was not
        (gone, or not a file that opens: then ask ``lstat`` what is there)."""
        location = os.fspath(path)
        key = os.path.basename(location)[: -len(".json")]
        info = None
        try:
            data, info = read_bytes_and_stat(location, follow_symlinks=False)
            fields = parse_json_object(location, data)
        except UnreadableFile as exc:
            return AgentRecord(key, location, error=exc.reason), info
        record = AgentRecord(key, location, fields)
        record.rejudge(now or self.clock.now(), self.settings)
        return record, info

    def identity_files(self) -> Iterator[str]:
        """Paths of identity files (strings: this runs for every file on every rescan).

        Anything named ``*.json`` is listed, links and FIFOs included: reading it says
        why it is unusable, rather than it silently not being there."""
        try:
            entries = list(os.scandir(self.paths.identities))
        except FileNotFoundError:
            return
        except OSError as exc:
            raise RuneError(
                f"cannot list {self.paths.identities}: {exc.strerror}; it should be a directory"
            ) from None
        for entry in entries:
            name = entry.name
            if is_temp_name(name):
                remove_orphan_temp(self.paths.identities, name)
            elif name.endswith(".json"):
                yield entry.path

    def list(self) -> list[AgentRecord]:
        now = self.clock.now()
        records = [self.read_path(path, now) for path in self.identity_files()]
        return sorted(records, key=lambda r: r.key)

    def stale(self) -> builtins.list[AgentRecord]:
        """Agents still marked active whose heartbeat is older than the stale threshold."""
        return [r for r in self.list() if not r.error and r.status == ACTIVE and r.liveness == RED]

    def get(self, key: str) -> AgentRecord:
        path = self.path_for(key)
        if not path.exists():
            raise RuneError(
                f"no agent {key!r} in {self.paths.identities}; `runeconsole agents` lists them"
            )
        record = self.read_path(path)
        if record.error:
            raise RuneError(f"agent {key!r}: {path} is unreadable: {record.error}")
        return record

    def find_by_agent_id(self, agent_id: str) -> AgentRecord | None:
        """A current or archived identity by its ``agent_id``."""
        validate_name(agent_id, "agent id")
        archived = self.paths.identity_history / f"{agent_id}.json"
        if archived.exists():
            return self.read_path(archived)
        for record in self.list():
            if record.get("agent_id") == agent_id:
                return record
        return None

    def chain(self, key: str) -> builtins.list[AgentRecord]:
        """The identity and its predecessors, newest first (cycles and gaps end the chain)."""
        chain = [self.get(key)]
        seen = {chain[0].get("agent_id")}
        while True:
            previous = chain[-1].get("predecessor_id")
            if not previous or previous in seen or not isinstance(previous, str):
                return chain
            seen.add(previous)
            try:
                record = self.find_by_agent_id(previous)
            except RuneError:
                return chain
            if record is None:
                return chain
            chain.append(record)

    # -- writing ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self, key: str) -> Iterator[Path]:
        path = self.paths.inside(self.path_for(key))
        with locked(self.paths.lock_for(f"identity-{key}"), what=f"agent {key}"):
            yield path

    def register(
        self, role: str, name: str, **details: Unpack[identity_fields.Details]
    ) -> AgentRecord:
        """A new identity for ``role``-``name`` (``details``: its session, worktree, tmux
        session, pid, node, bead, predecessor and metadata), replacing any there."""
        now = self.clock.now()
        fields = identity_fields.new_identity(self.paths, role, name, now, **details)
        key = f"{role}-{name}"
        with self._locked(key) as path:
            identity_fields.replacing(self.paths, key, fields, identity_fields.current(path), now)
            atomic_write_json(path, fields)
        self._signal(identity_fields.REGISTERED_SIGNAL, key, fields)
        return self.read_path(path)

    def update(self, key: str, changes: IdentityChanges) -> AgentRecord:
        """Merge ``changes`` into an identity under its lock (unknown fields are kept)."""
        with self._locked(key) as path:
            fields = self._read_for_update(key, path)
            fields.update(changes)
            atomic_write_json(path, fields)
        return self.read_path(path)

    def _read_for_update(self, key: str, path: Path) -> dict[str, Any]:
        try:
            return read_json_object(path)
        except UnreadableFile as exc:
            if not path.exists():
                raise RuneError(
                    f"no agent {key!r}; register it first (`runeconsole agent register`)"
                ) from None
            raise RuneError(f"agent {key!r} cannot be updated: {exc.reason}") from None

    def update_metadata(self, key: str, changes: AgentMetadata) -> AgentRecord:
        """Merge ``changes`` into the identity's ``metadata`` under its lock (other keys kept)."""
        return self.edit_metadata(key, lambda metadata: metadata.update(changes))

    def edit_metadata(self, key: str, edit: Callable[[AgentMetadata], None]) -> AgentRecord:
        """Let ``edit`` change the identity's ``metadata`` in place, under its lock (for a
        change that depends on what is there, such as appending to a list)."""
        with self._locked(key) as path:
            fields = self._read_for_update(key, path)
            found = fields.get("metadata")
            metadata = cast("AgentMetadata", dict(found) if isinstance(found, dict) else {})
            edit(metadata)
            fields["metadata"] = metadata
            atomic_write_json(path, fields)
        return self.read_path(path)

    def heartbeat(self, key: str) -> AgentRecord:
        with self._locked(key) as path:
            fields = self._read_for_update(key, path)
            if fields.get("status") in (CRASHED, TERMINATED):
                raise RuneError(
                    f"agent {key!r} is {fields['status']}; "
                    "register (or respawn) it to bring it back"
                )
            stamp = iso_z(self.clock.now())
            fields["last_heartbeat"] = fields["last_seen"] = stamp
            atomic_write_json(path, fields)
        return self.read_path(path)

    def mark_crashed(
        self, key: str, reason: str | None = None, *, agent_id: str | None = None
    ) -> tuple[AgentRecord, bool]:
        """Mark crashed once: returns (record, changed); a repeat changes nothing.

        With ``agent_id`` only that identity, while still active, is marked (checked under
        the lock): a monitor that saw it vanish must not mark an agent stopped on purpose,
        or a successor registered meanwhile, as crashed.
        """
        return self._end(key, CRASHED, reason, agent_id)

    def mark_terminated(
        self, key: str, reason: str | None = None, *, agent_id: str | None = None
    ) -> tuple[AgentRecord, bool]:
        """Mark terminated once; ``agent_id`` as for ``mark_crashed``."""
        return self._end(key, TERMINATED, reason, agent_id)

    def _end(
        self, key: str, status: str, reason: str | None, agent_id: str | None = None
    ) -> tuple[AgentRecord, bool]:
        with self._locked(key) as path:
            fields = self._read_for_update(key, path)
            if fields.get("status") == status:
                return self.read_path(path), False
            if agent_id is not None and (
                fields.get("agent_id") != agent_id or fields.get("status") != ACTIVE
            ):
                return self.read_path(path), False
            identity_fields.end(key, fields, status, reason, self.clock.now())
            atomic_write_json(path, fields)
        self._signal(identity_fields.ENDED_SIGNAL[status], key, fields, reason)
        return self.read_path(path), True

    def _signal(
        self, signal_type: str, key: str, fields: dict[str, Any], reason: str | None = None
    ) -> None:
        try:
            self.signals.send(*identity_fields.announcement(signal_type, key, fields, reason))
        except (RuneError, OSError) as exc:
            why = exc.message if isinstance(exc, RuneError) else exc.strerror or str(exc)
            raise RuneError(
                f"{key} is {fields.get('status')}, but its {signal_type} signal could not be "
                f"written: {why}"
            ) from None
