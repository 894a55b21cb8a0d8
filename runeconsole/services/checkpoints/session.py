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

from runeconsole.core.pids import ancestors, command_of

GIVEN, CLAUDE, PARENT = "given", "claude", "parent"
CLAUDE_NAMES = frozenset({"claude"})
NODE_NAMES = frozenset({"node", "nodejs", "bun"})


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


def is_claude_code(pid: int) -> bool:
    """Whether ``pid`` is Claude Code: named ``claude`` (it names its own process), or a
    JavaScript runtime running the ``claude`` script or the npm package's ``cli.js``."""
    name, argv = command_of(pid)
    if name in CLAUDE_NAMES:
        return True
    words = [os.path.basename(arg) for arg in argv[:2]]
    if words[:1] and words[0] in CLAUDE_NAMES:
        return True
    if len(words) == 2 and words[0] in NODE_NAMES:
        script = argv[1]
        return words[1] in CLAUDE_NAMES or (
            "claude-code" in script and script.endswith(("cli.js", "cli.mjs"))
        )
    return False


def session_pid(given: int | None = None) -> SessionPid:
    """``given`` if set, else the nearest Claude Code process above us, else our parent."""
    if given is not None:
        return SessionPid(given, GIVEN)
    parent = os.getppid()
    for pid in (parent, *ancestors(parent)):
        if is_claude_code(pid):
            return SessionPid(pid, CLAUDE)
    return SessionPid(parent, PARENT)
