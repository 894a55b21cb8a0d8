"""The agent's last assistant message: from its transcript (``adapters/transcript.py``,
``last_said``), or from what the Stop hook recorded (``claude.last_assistant_message``),
whichever is newer."""

from __future__ import annotations

import os
from typing import Any

from runeconsole.adapters.transcript import last_said
from runeconsole.core.timeutil import parse_iso
from runeconsole.services.claude.hooks.agent_state import LAST_MESSAGE
from runeconsole.services.reply.results import LastMessage

MAX_CHARS = 8000


def from_transcript(path: str) -> LastMessage | None:
    """The last assistant message with text in the transcript at ``path`` (absolute)."""
    if not os.path.isabs(path):
        return None
    found = last_said(path)
    return None if found is None else LastMessage(found[0][-MAX_CHARS:], found[1], "transcript")


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
