"""Transcripts as Claude Code writes them (compact JSON, one record a line, the records the
console does not show between), for the conversation index's tests: a session of prompts,
texts and tool calls with results at chosen moments, and an agent's identity naming it."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

BASE = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def line(record: dict[str, Any]) -> bytes:
    return (json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n").encode()


class Session:
    """One session's transcript, written a record at a time (``at`` in minutes after BASE)."""

    def __init__(self, directory: Path, session_id: str | None = None) -> None:
        self.id = session_id or str(uuid.uuid4())
        self.path = directory / f"{self.id}.jsonl"
        directory.mkdir(parents=True, exist_ok=True)
        self.path.touch()
        self.calls = 0

    def _base(self, kind: str, minute: float) -> dict[str, Any]:
        return {
            "parentUuid": None,
            "isSidechain": False,
            "type": kind,
            "uuid": str(uuid.uuid4()),
            "timestamp": (BASE + timedelta(minutes=minute)).isoformat().replace("+00:00", "Z"),
            "sessionId": self.id,
            "cwd": "/tmp/project",
        }

    def write(self, *records: dict[str, Any]) -> int:
        """The records appended; how many bytes."""
        data = b"".join(line(r) for r in records)
        with open(self.path, "ab") as stream:
            stream.write(data)
        return len(data)

    def noise(self, minute: float) -> dict[str, Any]:
        return {
            "type": "attachment",
            "sessionId": self.id,
            "attachment": {"type": "hook", "content": "ignored words zebra"},
            "timestamp": (BASE + timedelta(minutes=minute)).isoformat(),
        }

    def prompt(self, text: str, minute: float) -> dict[str, Any]:
        record = self._base("user", minute)
        record["message"] = {"role": "user", "content": text}
        return record

    def text(self, text: str, minute: float) -> dict[str, Any]:
        record = self._base("assistant", minute)
        record["message"] = {
            "id": f"msg_{uuid.uuid4().hex[:12]}",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": text}],
        }
        return record

    def call(
        self, tool: str, tool_input: dict[str, Any], minute: float
    ) -> tuple[dict[str, Any], str]:
        self.calls += 1
        call_id = f"toolu_{self.calls:04d}{uuid.uuid4().hex[:8]}"
        record = self._base("assistant", minute)
        record["message"] = {
            "id": f"msg_{uuid.uuid4().hex[:12]}",
            "type": "message",
            "role": "assistant",
            "content": [{"type": "tool_use", "id": call_id, "name": tool, "input": tool_input}],
        }
        return record, call_id

    def result(self, call_id: str, output: str, minute: float) -> dict[str, Any]:
        record = self._base("user", minute)
        record["message"] = {
            "role": "user",
            "content": [{"tool_use_id": call_id, "type": "tool_result", "content": output}],
        }
        return record

    def tool(self, tool: str, tool_input: dict[str, Any], output: str, minute: float) -> int:
        """A call and its result appended; the bytes written."""
        call, call_id = self.call(tool, tool_input, minute)
        return self.write(call, self.noise(minute), self.result(call_id, output, minute + 0.01))


def identity(root: Path, key: str, role: str, session: Session) -> Path:
    """An agent's identity as Claude Code's hook leaves it: its session and transcript."""
    directory = root / ".claude" / "state" / "identities"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{key}.json"
    body = {
        "agent_id": f"{key}-20260301T120000Z",
        "role": role,
        "name": key.partition("-")[2],
        "status": "active",
        "session_id": session.id,
        "claude": {"session_id": session.id, "transcript_path": str(session.path)},
    }
    path.write_text(json.dumps(body))
    return path
