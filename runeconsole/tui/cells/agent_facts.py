"""What a detail window reads of one agent beyond its record (``AgentFacts``): its
predecessors, its hook, its screen and last message (``peek``), its permission decisions,
its reviews, its conversation's last turns; and how a message reaches it (``say``). The
project console's are ``LocalFacts`` (``tui/panes/agent_actions.py``), the fleet
console's ``FleetFacts`` (``tui/fleet_console/agents.py``). ``out_of_reach`` says why
nothing can reach an agent's session."""

from __future__ import annotations

from typing import Any, Protocol

from runeconsole.services.claude.permissions.service import PermissionRequest
from runeconsole.services.conversations.turns import Turn
from runeconsole.services.hook_files import HookFile
from runeconsole.services.registry import AgentRecord
from runeconsole.services.reply.readiness import ended
from runeconsole.services.review.records import ReviewRecord


def out_of_reach(record: AgentRecord | None, key: str = "") -> str | None:
    """Why nothing can reach the agent's session (a message, ``g``), ``None``: it may."""
    if record is None:
        return f"{key}: this identity no longer exists"
    if record.error:
        return f"{record.key} is unreadable: {record.error}"
    return ended(record)


class AgentFacts(Protocol):
    peek_every: float  # seconds between two reads of the screen while it is shown

    def chain(self, key: str) -> list[AgentRecord]:
        """The agent and its predecessors, newest first (``RuneError`` with why not)."""
        ...

    def hook_file(self, key: str) -> HookFile | None:
        """Its hook file as read (``None``: none, or not readable from here)."""
        ...

    def phase(self, key: str) -> str | None: ...

    def peek(self, key: str) -> Any:
        """Its screen and last assistant message, as ``peek --json`` prints them (blocking:
        a worker's; ``RuneError`` with why not)."""
        ...

    def say(self, key: str, text: str) -> Any:
        """``text`` pasted into its pane and submitted (blocking: a worker's; ``RuneError``
        with why it is refused)."""
        ...

    def permission_history(self, key: str) -> list[PermissionRequest]:
        """Its decided permission requests, oldest first (blocking: a worker's)."""
        ...

    def reviews(self, key: str) -> list[ReviewRecord]:
        """Its reviews, newest first (blocking: a worker's)."""
        ...

    def last_turns(self, key: str) -> list[Turn]:
        """The last turns of its conversation: its transcript's end, read in milliseconds
        whatever its size (blocking: a worker's; ``RuneError`` with why not)."""
        ...
