"""What the Agents pane does to an agent (its keys ``m``, ``g``, ``h``, ``r``, ``x``,
``$``): a message, switching to its session, a handoff, a re-spawn, a kill, letting it
go on past its budget, each asked first where it changes the fleet, and run off the UI
thread. A mixin of ``AgentsPane``, which
gives it ``supervisor``, ``records`` and ``selected_key``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import work

from runeconsole.core.errors import RuneError
from runeconsole.tui.confirm import ConfirmScreen

if TYPE_CHECKING:
    from runeconsole.services.registry import AgentRecord
    from runeconsole.services.supervisor import Supervisor


class AgentActions:
    supervisor: Supervisor
    records: dict[str, AgentRecord]

    def selected_key(self) -> str | None:
        raise NotImplementedError

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
            ask_and_allow(self, self.supervisor, record)  # type: ignore[arg-type]

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
