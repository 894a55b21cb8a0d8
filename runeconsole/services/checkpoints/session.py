"""Which process is the resuming Claude Code session: the owner a claim records.

The Rune plugin records ``owner_pid`` as the Claude Code session's pid (``$PPID`` of its
Bash tool's commands). Run from that Bash tool, our own parent is the short-lived shell
the tool started, gone a moment later, so a claim naming it would let any other session
take the checkpoint. Without ``--session-pid`` we walk up from our parent to the nearest
Claude Code process; with none above us (a terminal, a script) the parent it is, and the
resume says so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from runeconsole.adapters.claude_process import nearest_claude_code

GIVEN, CLAUDE, PARENT = "given", "claude", "parent"


@dataclass(frozen=True)
class SessionPid:
    """The pid a claim records and how it was found: ``given`` (``--session-pid``),
    ``claude`` (the nearest Claude Code process above us) or ``parent`` (none found)."""

    pid: int
    found_by: str

    @property
    def note(self) -> str | None:
        if self.found_by != PARENT:
            return None
        return (
            f"no Claude Code process above this command: owner_pid is its parent (pid "
            f"{self.pid}); pass --session-pid to name the resuming session"
        )


def session_pid(given: int | None = None) -> SessionPid:
    """``given`` if set, else the nearest Claude Code process above us, else our parent."""
    if given is not None:
        return SessionPid(given, GIVEN)
    parent = os.getppid()
    found = nearest_claude_code(parent)
    return SessionPid(parent, PARENT) if found is None else SessionPid(found, CLAUDE)
