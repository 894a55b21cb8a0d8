"""The agent's last assistant message: from its transcript, or from what the Stop hook
recorded (``claude.last_assistant_message``), whichever is newer.

Claude Code writes its transcript (``transcript_path``: one JSON object a line) a block a
line, each line of one message repeating its ``message.id``; only the end of the file is
read (a transcript grows to megabytes), backwards, to the last main-conversation
assistant message that says something in text (tool calls alone are skipped).
"""

from __future__ import annotations

import json
import os
import stat
from typing import Any

from runeconsole.core.timeutil import parse_iso
from runeconsole.services.claude.agent_state import LAST_MESSAGE
from runeconsole.services.reply.results import LastMessage

TAIL_BYTES = 512 * 1024
MAX_CHARS = 8000


def _tail(path: str, size: int = TAIL_BYTES) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return b""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return b""
        start = max(0, info.st_size - size)
        os.lseek(fd, start, os.SEEK_SET)
        data = os.read(fd, info.st_size - start)
    except OSError:
        return b""
    finally:
        os.close(fd)
    return data if start == 0 else data[data.find(b"\n") + 1 :]  # a whole first line


def _said(line: bytes) -> tuple[str | None, str, str | None] | None:
    """(message id, its text, timestamp) of a main-conversation assistant line with text."""
    try:
        entry = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(entry, dict) or entry.get("type") != "assistant":
        return None
    if entry.get("isSidechain") is True:
        return None
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        texts = [content]
    elif isinstance(content, list):
        texts = [
            block["text"]
            for block in content
            if isinstance(block, dict) and block.get("type") == "text"
            if isinstance(block.get("text"), str)
        ]
    else:
        return None
    text = "\n".join(t for t in texts if t.strip())
    if not text:
        return None
    assert isinstance(message, dict)
    message_id = message.get("id")
    stamp = entry.get("timestamp")
    return (
        message_id if isinstance(message_id, str) else None,
        text,
        stamp if isinstance(stamp, str) else None,
    )


def from_transcript(path: str) -> LastMessage | None:
    """The last assistant message with text in the transcript at ``path``."""
    if not os.path.isabs(path):
        return None
    parts: list[str] = []
    found_id: str | None = None
    at: str | None = None
    for line in reversed(_tail(path).split(b"\n")):
        if b'"assistant"' not in line:
            continue
        said = _said(line)
        if said is None:
            continue
        message_id, text, stamp = said
        if parts and (message_id is None or message_id != found_id):
            break  # an earlier message: the last one is whole
        parts.insert(0, text)
        found_id, at = message_id, at or stamp
        if message_id is None:
            break
    if not parts:
        return None
    return LastMessage("\n".join(parts)[-MAX_CHARS:], at, "transcript")


def from_hook(fields: dict[str, Any]) -> LastMessage | None:
    claude = fields.get("claude")
    if not isinstance(claude, dict):
        return None
    text, at = claude.get(LAST_MESSAGE), claude.get(LAST_MESSAGE + "_at")
    if not isinstance(text, str) or not text.strip():
        return None
    return LastMessage(text, at if isinstance(at, str) else None, "hook")


def last_message(fields: dict[str, Any]) -> LastMessage | None:
    """The newer of the transcript's last message and the Stop hook's (the transcript's
    when they are as new: it is never cut short)."""
    claude = fields.get("claude")
    path = claude.get("transcript_path") if isinstance(claude, dict) else None
    read = from_transcript(path) if isinstance(path, str) else None
    hooked = from_hook(fields)
    if read is None or hooked is None:
        return read or hooked
    read_at, hooked_at = parse_iso(read.at), parse_iso(hooked.at)
    if read_at is not None and hooked_at is not None and hooked_at > read_at.replace(microsecond=0):
        return hooked
    return read
