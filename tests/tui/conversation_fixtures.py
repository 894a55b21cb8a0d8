"""An agent whose conversation is the transcript the real Claude Code wrote (the fixture of
``tests/fixtures/claude_transcripts``: a prompt, Bash, Write, a background subagent, its
notification), copied into this test's ``CLAUDE_CONFIG_DIR`` and named by the agent's
identity, as Claude Code's hooks leave it."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from runeconsole.services.conversations.locate import projects_dir
from tests.support.index_transcripts import Session
from tests.support.paths import REPO

FIXTURE = REPO / "tests" / "fixtures" / "claude_transcripts" / "-tmp-tx-project"
SESSION = "8e69a3ba-2b65-4373-a7bd-7b43123216b2"
KEY = "worker-tx"


def conversation_agent(root: Path, key: str = KEY) -> Path:
    """The fixture's transcript copied under Claude Code's projects directory, and agent
    ``key``'s identity naming it; the transcript's path."""
    folder = projects_dir() / FIXTURE.name
    if not folder.exists():
        shutil.copytree(FIXTURE, folder)
    transcript = folder / f"{SESSION}.jsonl"
    identities = root / ".claude" / "state" / "identities"
    identities.mkdir(parents=True, exist_ok=True)
    body = {
        "agent_id": f"{key}-20261129T052549Z",
        "role": key.partition("-")[0],
        "name": key.partition("-")[2],
        "status": "active",
        "session_id": SESSION,
        "worktree_path": os.fspath(root),
        "claude": {"session_id": SESSION, "transcript_path": os.fspath(transcript)},
    }
    (identities / f"{key}.json").write_text(json.dumps(body))
    return transcript


def session_of(transcript: Path) -> Session:
    """A writer appending records to the transcript (as Claude Code goes on writing)."""
    return Session(transcript.parent, transcript.stem)


def append_prompt(transcript: Path, text: str, minute: float) -> None:
    session = session_of(transcript)
    session.write(session.prompt(text, minute))


def append_text(transcript: Path, text: str, minute: float) -> None:
    session = session_of(transcript)
    session.write(session.text(text, minute))


def sent(root: Path, key: str, text: str) -> None:
    """``text`` said to agent ``key`` from the console (its prompt is then the operator's)."""
    from runeconsole.services.conversations.locate import record_sent
    from runeconsole.services.project import Project

    record_sent(Project(root), key, text, "say")
