"""What the Agents pane's keys do to the agent under the cursor: ``m`` a message, ``g`` its
session, ``h`` a handoff, ``r`` a re-spawn, ``x`` a kill (a background session's: claude
stop), ``$`` a held agent let go on. Handoffs, re-spawns and kills are confirmed first and
run off the UI thread."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import work
from textual.widget import Widget

from runeconsole.core.errors import RuneError
from runeconsole.services.claude.session_view import is_background
from runeconsole.services.registry import AgentRecord
from runeconsole.services.supervisor import Supervisor
from runeconsole.tui.confirm import ConfirmScreen


class AgentActions(Widget):
    """The keys of a pane of agents, on its selected one (the pane says which)."""

    supervisor: Supervisor

    if TYPE_CHECKING:

        @property
        def records(self) -> dict[str, AgentRecord]: ...

        def selected_key(self) -> str | None: ...

    def action_message(self) -> None:
        from runeconsole.tui.message_modal import message_window

        if (key := self.selected_key()) is not None:
            self.app.push_screen(message_window(self.supervisor, key))

    def action_jump(self) -> None:
        key = self.selected_key()
        if key is None:
            return
        try:
            self.supervisor.switch_to(key)
        except RuneError as exc:
            self.notify(exc.message, title=f"Cannot switch to {key}", severity="warning")

    def action_handoff(self) -> None:
        self._confirmed(
            "handoff",
            "Hand off {key}?",
            "It is asked to save its work and exit; after "
            f"{self.supervisor.settings.handoff_timeout:g}s it is killed. Then a successor "
            "starts with its hook. Its worktree is left as it is.",
        )

    def action_respawn(self) -> None:
        self._confirmed(
            "respawn",
            "Re-spawn {key}?",
            "A successor starts with the same command and worktree, and a wisdom prompt "
            "built from the hook.",
        )

    def action_kill(self) -> None:
        record = self.records.get(self.selected_key() or "")
        if record is not None and not record.error and is_background(record.fields):
            self._confirmed(
                "kill",
                "Stop {key}?",
                "Its Claude Code background session is stopped (claude stop) and it is "
                "marked terminated. Its conversation is kept: claude attach opens it again.",
            )
            return
        self._confirmed(
            "kill",
            "Kill {key}?",
            "Its tmux session is killed and it is marked terminated. Uncommitted files stay "
            "in its worktree and are listed in its hook.",
        )

    def _confirmed(self, action: str, question: str, detail: str) -> None:
        key = self.selected_key()
        record = self.records.get(key or "")
        if key is None or record is None or record.error:
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.notify(f"{action}: {key} …", timeout=3)
                self.act(action, key)

        verb = action.capitalize()
        self.app.push_screen(ConfirmScreen(question.format(key=key), detail, verb), answered)

    def action_allow(self) -> None:
        from runeconsole.tui.budget_allow import ask_and_allow

        key = self.selected_key()
        record = self.records.get(key or "")
        if key is not None and record is not None and not record.error:
            ask_and_allow(self, self.supervisor, record)

    @work(thread=True, group="agent-actions")
    def act(self, action: str, key: str) -> None:
        """Handoffs wait up to a minute, so every action runs off the UI thread."""
        supervisor = self.supervisor
        try:
            if action == "handoff":
                result = supervisor.handoff(key)
                message = f"{key}: handoff {result.outcome}"
                if result.successor is not None:
                    message += f"; successor {result.successor.record.get('agent_id')}"
            elif action == "respawn":
                spawned = supervisor.respawn(key)
                message = f"{key}: re-spawned as {spawned.record.get('agent_id')}"
            else:
                supervisor.kill(key)
                message = f"{key}: killed"
        except RuneError as exc:
            self.app.call_from_thread(
                self.notify, exc.message, title=f"{action} {key}", severity="error"
            )
            return
        self.app.call_from_thread(self.notify, message, title=action.capitalize())
