"""What a console does with an agent's row: the Agents pane asks (its keys), a console's
``Agents`` does. The pane confirms what changes an agent (``h``, ``r``, ``x``, ``R``:
``CHANGES``), runs the action in a worker and shows what came back; enter opens the detail
window on the agent's ``AgentFacts`` (``tui/cells/agent_facts.py``; here ``LocalFacts``).
The project console's ``LocalAgents`` acts on its root through the supervisor; the fleet
console's (``fleet_console/agents.py``) on the row's source.
"""

from __future__ import annotations

from typing import Any, Protocol

from runeconsole.services.budgets import hold as budget_hold
from runeconsole.services.claude.bridge.settings import ClaudeSettings
from runeconsole.services.claude.permissions.service import PermissionRequest, Permissions
from runeconsole.services.claude.session.session_view import is_background
from runeconsole.services.conversations.turns import Turn
from runeconsole.services.dispatch.continuing import Continuing
from runeconsole.services.dispatch.service import Dispatch
from runeconsole.services.fleet import FleetRecords
from runeconsole.services.hook_files import HookFile
from runeconsole.services.registry import AgentRecord
from runeconsole.services.reply import Replies
from runeconsole.services.review.records import ReviewRecord, ReviewRecords
from runeconsole.services.supervision.service import Supervisor
from runeconsole.tui.cells.agent_facts import AgentFacts
from runeconsole.tui.conversations.transcripts import LocalTranscript, Transcript, last_turns
from runeconsole.tui.support.new_task_start import Starter

CHANGES = ("handoff", "respawn", "kill", "resume")  # asked first: they change the agent
FORKS = ("fork", "fork_worktree")  # F: asked where first (``modals/fork_choice.py``)
PEEK_LINES = 15
STOP_BACKGROUND = (
    "Stop {key}?",
    "Its Claude Code background session{on} is stopped (claude stop) and it is marked "
    "terminated. Its conversation is kept: claude attach opens it again.",
)


def stopping(record: AgentRecord | None) -> bool:
    """Whether ``x`` on this agent stops a Claude Code background session."""
    return record is not None and not record.error and is_background(record.fields)


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

    def fork(self, key: str, *, new_worktree: bool, at: str | None = None) -> str:
        """The agent's session forked into a new agent (up to the entry ``at``), in its
        worktree or a new one (blocking: a worker's); what to tell the operator."""
        ...

    def facts(self, key: str) -> AgentFacts: ...

    def conversation(self, key: str) -> Transcript:
        """Where ``t`` reads the agent's conversation from (nothing read yet)."""
        ...

    def task_places(self, key: str | None) -> list[str]:
        """Where ``n`` may start a task, the row ``key`` chosen (or none): ``[""]`` for this
        project; in a fleet, the row's source, else every source."""
        ...

    def starter(self, where: str) -> Starter:
        """What ``n``'s form needs of ``where``, and how a task starts there (``RuneError``:
        it cannot)."""
        ...


class LocalAgents:
    """This root's agents, through the supervisor (the project console's)."""

    def __init__(self, supervisor: Supervisor, fleet: FleetRecords) -> None:
        self.supervisor, self.fleet = supervisor, fleet
        self.dispatch: Dispatch | None = None  # made on the first ``n``, ``R`` or ``F``

    def record(self, key: str) -> AgentRecord | None:
        return self.fleet.get(key)

    def where(self, key: str) -> str:
        return ""

    def confirm(self, action: str, key: str) -> tuple[str, str]:
        if action == "kill" and stopping(self.fleet.get(key)):
            question, detail = STOP_BACKGROUND
            return question.format(key=key), detail.format(on="")
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
            "resume": (
                f"Resume {key}?",
                "Its Claude Code session is continued (claude --resume) in its worktree by a "
                "supervised successor, the ended agent its predecessor.",
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
        if action == "resume":
            return self.continuing().resume(key).describe()
        if action in FORKS:
            return self.fork(key, new_worktree=action != "fork")
        supervisor.kill(key)
        return f"{key}: killed"

    def fork(self, key: str, *, new_worktree: bool, at: str | None = None) -> str:
        return self.continuing().fork(key, new_worktree=new_worktree, at=at).describe()

    def dispatching(self) -> Dispatch:
        """The root's tasks and worktrees (``n``, ``R``, ``F``), made when first needed."""
        if self.dispatch is None:
            self.dispatch = Dispatch(self.supervisor.project, supervisor=self.supervisor)
        return self.dispatch

    def continuing(self) -> Continuing:
        return Continuing(self.dispatching())

    def allow(self, key: str, usd: float | None) -> str:
        project = self.supervisor.project
        limits = project.settings(ClaudeSettings).budgets
        done = budget_hold.allow(project.paths, key, usd, project.clock.now(), limits)
        return f"{key}: {done.after.detail}"

    def facts(self, key: str) -> AgentFacts:
        return LocalFacts(self.supervisor, self.fleet)

    def conversation(self, key: str) -> Transcript:
        return LocalTranscript(self.supervisor.project, key)

    def task_places(self, key: str | None) -> list[str]:
        return [""]

    def starter(self, where: str) -> Starter:
        dispatch = self.dispatching()
        return Starter(
            "",
            dispatch.queue.settings.main_branch,
            dispatch.creator.taken_names,
            lambda request: dispatch.new(request).to_json(),
        )


class LocalFacts:
    peek_every = 1.0

    def __init__(self, supervisor: Supervisor, fleet: FleetRecords) -> None:
        self.supervisor, self.fleet = supervisor, fleet
        self.replies = Replies(supervisor.project, supervisor=supervisor)

    def chain(self, key: str) -> list[AgentRecord]:
        return self.supervisor.registry.chain(key)

    def hook_file(self, key: str) -> HookFile | None:
        return self.supervisor.hook_files.read(key)

    def phase(self, key: str) -> str | None:
        return self.fleet.phases.get(key)

    def peek(self, key: str) -> Any:
        return self.replies.peek(key, PEEK_LINES).to_json()

    def say(self, key: str, text: str) -> Any:
        return self.replies.say(key, text).to_json()

    def permission_history(self, key: str) -> list[PermissionRequest]:
        return Permissions(self.supervisor.project).history(key)

    def reviews(self, key: str) -> list[ReviewRecord]:
        return ReviewRecords(self.supervisor.project).history(key)

    def last_turns(self, key: str) -> list[Turn]:
        return last_turns(LocalTranscript(self.supervisor.project, key))
