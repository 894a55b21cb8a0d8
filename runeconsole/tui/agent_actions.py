"""What a console does with an agent's row: the Agents pane asks, a console's ``Agents``
does. The pane confirms what changes an agent (``h``, ``r``, ``x``), runs the action in a
worker and shows what came back; enter opens the detail window on the agent's
``AgentFacts``. The project console's ``LocalAgents`` acts on its root through the
supervisor; the fleet console's (``fleet_console/agents.py``) on the row's source.

``AgentFacts`` is what a detail window reads of one agent beyond its record: its
predecessors, its hook, its screen and last message (``peek``), its permission
decisions; and how a message reaches it (``say``).
"""

from __future__ import annotations

from typing import Any, Protocol

from runeconsole.services.budgets import hold as budget_hold
from runeconsole.services.claude.permissions import PermissionRequest, Permissions
from runeconsole.services.claude.settings import ClaudeSettings
from runeconsole.services.fleet import FleetRecords
from runeconsole.services.hooks import Hook
from runeconsole.services.registry import AgentRecord
from runeconsole.services.reply import Replies
from runeconsole.services.supervisor import Supervisor

CHANGES = ("handoff", "respawn", "kill")  # asked first: they change the agent
PEEK_LINES = 15


class AgentFacts(Protocol):
    peek_every: float  # seconds between two reads of the screen while it is shown

    def chain(self, key: str) -> list[AgentRecord]:
        """The agent and its predecessors, newest first (``RuneError`` with why not)."""
        ...

    def hook(self, key: str) -> Hook | None:
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


class Agents(Protocol):
    def record(self, key: str) -> AgentRecord | None: ...

    def where(self, key: str) -> str:
        """Where the agent runs, for the confirmation (``""``: here)."""
        ...

    def confirm(self, action: str, key: str) -> tuple[str, str]:
        """The question and the detail of the confirmation of a changing action."""
        ...

    def run(self, action: str, key: str) -> str | None:
        """Do ``action`` (blocking: a worker's); what to tell the operator (``RuneError``
        when refused)."""
        ...

    def allow(self, key: str, usd: float | None) -> str:
        """Let an agent held by its budget go on: ``usd`` dollars more, or (``None``) for
        the rest of the day (blocking: a worker's); what to tell the operator."""
        ...

    def facts(self, key: str) -> AgentFacts: ...


class LocalAgents:
    """This root's agents, through the supervisor (the project console's)."""

    def __init__(self, supervisor: Supervisor, fleet: FleetRecords) -> None:
        self.supervisor, self.fleet = supervisor, fleet

    def record(self, key: str) -> AgentRecord | None:
        return self.fleet.get(key)

    def where(self, key: str) -> str:
        return ""

    def confirm(self, action: str, key: str) -> tuple[str, str]:
        timeout = self.supervisor.settings.handoff_timeout
        return {
            "handoff": (
                f"Hand off {key}?",
                f"It is asked to save its work and exit; after {timeout:g}s it is killed. "
                "Then a successor starts with its hook. Its worktree is left as it is.",
            ),
            "respawn": (
                f"Re-spawn {key}?",
                "A successor starts with the same command and worktree, and a wisdom prompt "
                "built from the hook.",
            ),
            "kill": (
                f"Kill {key}?",
                "Its tmux session is killed and it is marked terminated. Uncommitted files "
                "stay in its worktree and are listed in its hook.",
            ),
        }[action]

    def run(self, action: str, key: str) -> str | None:
        supervisor = self.supervisor
        if action == "jump":
            supervisor.switch_to(key)
            return None
        if action == "handoff":
            result = supervisor.handoff(key)
            told = f"{key}: handoff {result.outcome}"
            if result.successor is not None:
                told += f"; successor {result.successor.record.get('agent_id')}"
            return told
        if action == "respawn":
            return f"{key}: re-spawned as {supervisor.respawn(key).record.get('agent_id')}"
        supervisor.kill(key)
        return f"{key}: killed"

    def allow(self, key: str, usd: float | None) -> str:
        project = self.supervisor.project
        limits = project.settings(ClaudeSettings).budgets
        done = budget_hold.allow(project.paths, key, usd, project.clock.now(), limits)
        return f"{key}: {done.after.detail}"

    def facts(self, key: str) -> AgentFacts:
        return LocalFacts(self.supervisor, self.fleet)


class LocalFacts:
    peek_every = 1.0

    def __init__(self, supervisor: Supervisor, fleet: FleetRecords) -> None:
        self.supervisor, self.fleet = supervisor, fleet
        self.replies = Replies(supervisor.project, supervisor=supervisor)

    def chain(self, key: str) -> list[AgentRecord]:
        return self.supervisor.registry.chain(key)

    def hook(self, key: str) -> Hook | None:
        return self.supervisor.hooks.read(key)

    def phase(self, key: str) -> str | None:
        return self.fleet.phases.get(key)

    def peek(self, key: str) -> Any:
        return self.replies.peek(key, PEEK_LINES).to_json()

    def say(self, key: str, text: str) -> Any:
        return self.replies.say(key, text).to_json()

    def permission_history(self, key: str) -> list[PermissionRequest]:
        return Permissions(self.supervisor.project).history(key)
