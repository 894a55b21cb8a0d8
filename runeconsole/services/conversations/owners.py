"""Whose conversation a transcript is: the agent (key and role) whose identity recorded it.

Claude Code's hook writes into the agent's identity (``.claude/state/identities/KEY.json``)
the session it runs (``claude.session_id``, also ``session_id``) and its transcript
(``claude.transcript_path``). An identity replaced (a respawn, a handoff) is kept under
``identities/history/``, so an ended session still has its agent. A subagent's file
(``<session>/subagents/agent-*.jsonl``) is its session's agent's. A transcript no
identity names (a session from before the hooks, another tool's) has no agent: "".
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runeconsole.core.errors import UnreadableFile
from runeconsole.core.files import read_json_object
from runeconsole.core.paths import ProjectPaths


@dataclass(frozen=True)
class Owner:
    key: str
    role: str


@dataclass
class Owners:
    by_path: dict[str, Owner] = field(default_factory=dict)
    by_session: dict[str, Owner] = field(default_factory=dict)

    def of(self, path: str, session_id: str = "") -> Owner | None:
        """The agent of the transcript at ``path`` (a subagent's: its session's)."""
        found = self.by_path.get(path)
        if found is not None:
            return found
        session = session_id or session_of(path)
        main = main_transcript(path)
        if main is not None:
            found = self.by_path.get(main)
            if found is not None:
                return found
        return self.by_session.get(session) if session else None

    def add(self, fields: dict[str, Any], key: str, *, replace: bool) -> None:
        role = fields.get("role")
        owner = Owner(key, role if isinstance(role, str) else "")
        claude = fields.get("claude")
        claude = claude if isinstance(claude, dict) else {}
        transcript = claude.get("transcript_path")
        sessions = {claude.get("session_id"), fields.get("session_id")}
        if isinstance(transcript, str) and transcript:
            if replace or transcript not in self.by_path:
                self.by_path[transcript] = owner
            sessions.add(session_of(transcript))
        for session in sessions:
            if isinstance(session, str) and session and (replace or session not in self.by_session):
                self.by_session[session] = owner


def read_owners(paths: ProjectPaths) -> Owners:
    """Every transcript and session the project's identities name (the current identity
    wins over a replaced one for the same session)."""
    owners = Owners()
    for path in _json_files(paths.identity_history):
        fields = _read(path)
        if fields is not None:
            key = _history_key(fields, path)
            if key:
                owners.add(fields, key, replace=False)
    for path in _json_files(paths.identities):
        fields = _read(path)
        if fields is not None:
            owners.add(fields, os.path.basename(path)[: -len(".json")], replace=True)
    return owners


def identity_of(paths: ProjectPaths, key: str) -> dict[str, Any] | None:
    return _read(os.fspath(paths.identities / f"{key}.json"))


def transcript_of(fields: dict[str, Any]) -> str | None:
    """The transcript the identity's hook recorded (absolute), if any."""
    claude = fields.get("claude")
    path = claude.get("transcript_path") if isinstance(claude, dict) else None
    return path if isinstance(path, str) and os.path.isabs(path) else None


def session_of(path: str) -> str:
    """The session a transcript's name says: ``…/<session>.jsonl``, or for a subagent's
    file ``…/<session>/subagents/agent-*.jsonl``."""
    main = main_transcript(path)
    name = os.path.basename(main or path)
    return name[: -len(".jsonl")] if name.endswith(".jsonl") else ""


def main_transcript(path: str) -> str | None:
    """For a subagent's file, its session's own transcript; else ``None``."""
    parent = os.path.dirname(path)
    if os.path.basename(parent) != "subagents":
        return None
    session_dir = os.path.dirname(parent)
    return session_dir + ".jsonl"


def _history_key(fields: dict[str, Any], path: str) -> str:
    role, name = fields.get("role"), fields.get("name")
    if isinstance(role, str) and isinstance(name, str) and role and name:
        return f"{role}-{name}"
    agent_id = fields.get("agent_id")
    stem = agent_id if isinstance(agent_id, str) else Path(path).stem
    key, _, stamp = stem.rpartition("-")  # KEY-20260226T120000Z
    return key if stamp.endswith("Z") and key else ""


def _json_files(directory: Path) -> list[str]:
    try:
        return [e.path for e in os.scandir(directory) if e.name.endswith(".json")]
    except OSError:
        return []


def _read(path: str) -> dict[str, Any] | None:
    try:
        return read_json_object(path)
    except UnreadableFile:
        return None
