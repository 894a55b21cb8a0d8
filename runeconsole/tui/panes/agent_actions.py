"""What a console does with an agent's row: the Agents pane asks (``AgentActions``, its
keys), a console's ``Agents`` does. The pane confirms what changes an agent (``h``, ``r``,
``x``), runs the action in a worker and shows what came back; enter opens the detail
window on the agent's ``AgentFacts`` (``tui/cells/agent_facts.py``; here ``LocalFacts``);
``d`` asks the app for the agent's review. The project console's ``LocalAgents`` acts on
its root through the supervisor; the fleet console's (``fleet_console/agents.py``) on the
row's source.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from textual.widget import Widget

from runeconsole.core.errors import RuneError
from runeconsole.services.budgets import hold as budget_hold
from runeconsole.services.claude.bridge.settings import ClaudeSettings
from runeconsole.services.claude.permissions.service import PermissionRequest, Permissions
from runeconsole.services.claude.session.session_view import is_background
from runeconsole.services.conversations.turns import Turn
from runeconsole.services.dispatch.continuing import Continuing
from runeconsole.services.dispatch.creation import NewTask
from runeconsole.services.dispatch.service import Dispatch
from runeconsole.services.fleet import FleetRecords
from runeconsole.services.hook_files import HookFile
from runeconsole.services.registry import AgentRecord
from runeconsole.services.reply import Replies
from runeconsole.services.review.records import ReviewRecord, ReviewRecords
from runeconsole.services.supervision.service import Supervisor
from runeconsole.tui.cells.agent_facts import AgentFacts, out_of_reach
from runeconsole.tui.conversations.screen import ConversationScreen
from runeconsole.tui.conversations.transcripts import LocalTranscript, Transcript, last_turns
from runeconsole.tui.modals.agent_detail import AgentDetail
from runeconsole.tui.modals.budget_allow import Allowance, allow_window
from runeconsole.tui.modals.confirm import ConfirmScreen
from runeconsole.tui.modals.fork_choice import ForkChoice
from runeconsole.tui.modals.message_modal import MessageModal
from runeconsole.tui.support.messages import ReviewWanted
from runeconsole.tui.support.new_task_start import Starter, started_said
from runeconsole.tui.support.workers import background

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


class AgentActions(Widget):
    """The keys of a pane of agents, on the agent under its cursor (the pane says which),
    done by its console's ``Agents``."""

    agents: Agents
    if TYPE_CHECKING:
        now: Callable[[], datetime]

        def selected_key(self) -> str | None: ...

    def _chosen(self) -> tuple[str, AgentRecord] | None:
        key = self.selected_key()
        record = self.agents.record(key) if key is not None else None
        return None if key is None or record is None else (key, record)

    def action_details(self) -> None:
        if (chosen := self._chosen()) is not None:
            key, record = chosen
            facts, where = self.agents.facts(key), self.agents.where(key)
            self.app.push_screen(AgentDetail(key, record, facts, self.now, where))

    def action_message(self) -> None:
        if (chosen := self._chosen()) is not None:
            key = chosen[0]
            if (why := out_of_reach(chosen[1])) is not None:
                self.notify(f"{why}: a message cannot reach it", severity="warning", markup=False)
                return
            say = partial(self.agents.facts(key).say, key)
            self.app.push_screen(MessageModal(key, say, where=self.agents.where(key) or None))

    def action_conversation(self) -> None:
        """``t``: the agent's conversation (``tui/conversations``)."""
        if (chosen := self._chosen()) is not None:
            self.open_conversation(chosen[0])

    def open_conversation(self, key: str) -> None:
        """The conversation screen of agent ``key`` (``t``, the palette)."""

        try:
            transcript = self.agents.conversation(key)
        except RuneError as exc:  # a source not up
            self.notify(exc.message, title="Conversation", severity="warning", markup=False)
            return
        self.app.push_screen(ConversationScreen(transcript))

    def action_review(self) -> None:
        if (chosen := self._chosen()) is not None:
            self.post_message(ReviewWanted(chosen[0]))

    def action_allow(self) -> None:
        """``$``: how much more a held agent may spend (``budget_allow.py``), then allowed."""
        if (chosen := self._chosen()) is None:
            return
        key, record = chosen

        def given(allowance: Allowance | None) -> None:
            if allowance is not None:
                self.run("allow", key, allowance.usd)

        self.app.push_screen(allow_window(record, self.now()), given)

    def action_jump(self) -> None:
        self._act("jump")

    def action_handoff(self) -> None:
        self._act("handoff")

    def action_respawn(self) -> None:
        self._act("respawn")

    def action_kill(self) -> None:
        self._act("kill")

    def action_resume(self) -> None:
        """``R``: an ended agent's Claude Code session continued by a successor."""
        chosen = self._chosen()
        if chosen is not None and not chosen[1].error and out_of_reach(chosen[1]) is None:
            self.notify(f"{chosen[0]} is still running: F forks its session", severity="warning")
            return
        self._act("resume")

    def fork_at(self, key: str, at: str) -> None:
        """``F`` on a turn of a conversation: its session forked up to that turn, asked
        where first."""

        def chose(action: str | None) -> None:
            if action in FORKS:
                self.notify(f"fork: {key} at {at[:8]} …", timeout=3)
                self.fork_in_worker(key, action != "fork", at)

        self.app.push_screen(ForkChoice(key, self.agents.where(key)), chose)

    @background("agent fork")
    def fork_in_worker(self, key: str, new_worktree: bool, at: str) -> None:
        told = self.agents.fork(key, new_worktree=new_worktree, at=at)
        self.app.call_from_thread(self.notify, told, title=f"fork {key}", markup=False)

    def action_fork(self) -> None:
        """``F``: the agent's session forked into a new agent, in its worktree or a new one."""

        if (chosen := self._chosen()) is None:
            return
        key, record = chosen
        if record.error:
            self.notify(f"{key} is unreadable: {record.error}", severity="warning", markup=False)
            return

        def chose(action: str | None) -> None:
            if action in FORKS:
                self.notify(f"fork: {key} …", timeout=3)
                self.run(action, key)

        self.app.push_screen(ForkChoice(key, self.agents.where(key)), chose)

    def _act(self, action: str) -> None:
        """``g``, ``h``, ``r``, ``x`` on the cursor's agent: the changing ones asked first,
        each done in a worker."""
        if (chosen := self._chosen()) is None:
            return
        key, record = chosen
        if record.error:
            self.notify(f"{key} is unreadable: {record.error}", severity="warning", markup=False)
            return
        # An ended session is gone (a background one is opened again by claude attach).
        why = out_of_reach(record) if action == "jump" else None
        if why is not None and not is_background(record.fields):
            self.notify(f"{why}: no session to go to", severity="warning", markup=False)
            return
        if action not in CHANGES:
            self.run(action, key)
            return
        question, detail = self.agents.confirm(action, key)

        def answered(yes: bool | None) -> None:
            if yes:
                self.notify(f"{action}: {key} …", timeout=3)
                self.run(action, key)

        self.app.push_screen(ConfirmScreen(question, detail, action.capitalize()), answered)

    def action_new_task(self) -> None:
        """``n``: the new-task form (``modals/new_task.py``) for the chosen row's place (in
        a fleet with no row chosen, the source is asked first), then the task made there in
        a worker; its agents' rows come as any agent's do, from their identity files."""
        from runeconsole.tui.modals.new_task import SourcePicker  # its widgets: on first n

        places = self.agents.task_places(self.selected_key())
        if len(places) == 1:
            self.new_task_on(places[0])
        elif places:
            self.app.push_screen(SourcePicker(places), self.new_task_on)

    def new_task_on(self, where: str | None) -> None:
        from runeconsole.tui.modals.new_task import NewTaskForm

        if where is None:
            return
        try:
            starter = self.agents.starter(where)
        except RuneError as exc:
            self.notify(exc.message, title="New task", severity="error", markup=False)
            return

        def given(request: NewTask | None) -> None:
            if request is not None:
                self.start_task(starter, request)

        form = NewTaskForm(
            starter.taken,
            main_branch=starter.main_branch,
            where=where,
            names_known=starter.names_known,
        )
        self.app.push_screen(form, given)

    @background("new-task")
    def start_task(self, starter: Starter, request: NewTask) -> None:
        """Worktrees checked out, hooks, setup, spawn: git and tmux, off the UI thread."""
        title = f"New task on {starter.where}" if starter.where else "New task"
        try:
            report = starter.start(request)
        except RuneError as exc:
            self.app.call_from_thread(
                self.notify, exc.message, title=title, severity="error", markup=False
            )
            return
        said, whole = started_said(report)
        severity = "information" if whole else "warning"
        self.app.call_from_thread(
            self.notify, said, title=title, severity=severity, timeout=10, markup=False
        )

    @background("agent-actions")
    def run(self, action: str, key: str, usd: float | None = None) -> None:
        """A handoff waits up to a minute, a source over SSH longer: off the UI thread."""
        title = f"{action} {key}"
        try:
            told = (
                self.agents.allow(key, usd) if action == "allow" else self.agents.run(action, key)
            )
        except RuneError as exc:
            self.app.call_from_thread(
                self.notify, exc.message, title=title, severity="error", markup=False
            )
            return
        if told:
            self.app.call_from_thread(self.notify, told, title=title, markup=False)
