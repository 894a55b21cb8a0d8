"""Handing off an agent that runs out of context: ask it to save and exit,
force it if it hangs, then re-spawn a successor.

The request is never typed into a menu (Enter there could accept a permission prompt's
"Yes"): a menu whose Esc declines is dismissed first, any other waits for a person.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from runeconsole.adapters.tmux import PaneInfo, Tmux
from runeconsole.core.errors import RuneError
from runeconsole.core.timeutil import iso_z
from runeconsole.services.hook_files import SUPERVISOR, agent_wrote
from runeconsole.services.pane_patterns import read_pane
from runeconsole.services.registry import ACTIVE, AgentRecord
from runeconsole.services.supervision.screens import capture_screen, keep_screen
from runeconsole.services.supervision.sessions import KILL_GRACE, AgentSessions, existing_worktree
from runeconsole.services.supervision.spawning import Spawner, SpawnResult

HANDOFF_MESSAGE = "GUARDIAN: Save your work and exit cleanly"
HOOK_EXIT_GRACE = 5.0
POLL_SECONDS = 0.2


@dataclass
class HandoffResult:
    key: str
    predecessor_id: str | None
    outcome: str  # "exited" | "hook_updated" | "forced"
    waited_seconds: float
    uncommitted: list[str]
    successor: SpawnResult | None

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "predecessor_id": self.predecessor_id,
            "outcome": self.outcome,
            "waited_seconds": round(self.waited_seconds, 2),
            "uncommitted": self.uncommitted,
            "successor": self.successor.to_json() if self.successor else None,
        }


class Handoffs:
    def __init__(self, sessions: AgentSessions, spawner: Spawner) -> None:
        self.sessions = sessions
        self.spawner = spawner
        self._threads: dict[str, threading.Thread] = {}
        self._errors: list[str] = []

    def start(self, key: str, **options: Any) -> threading.Thread:
        """``handoff`` in a background thread (at most one per agent), for the monitor loop."""
        running = self._threads.get(key)
        if running is not None and running.is_alive():
            return running

        def work() -> None:
            try:
                self.handoff(key, **options)
            except RuneError as exc:  # reported with the next monitor pass
                self._errors.append(f"{key}: handoff failed: {exc.message}")

        thread = threading.Thread(target=work, name=f"handoff-{key}", daemon=True)
        self._threads[key] = thread
        thread.start()
        return thread

    def take_errors(self) -> list[str]:
        """Failures of background handoffs since the last call, oldest first."""
        taken: list[str] = []
        while self._errors:
            taken.append(self._errors.pop(0))
        return taken

    def handoff(
        self, key: str, *, timeout: float | None = None, respawn: bool = True
    ) -> HandoffResult:
        """Ask the agent to save and exit, wait for its hook update or exit up to ``timeout``
        seconds, force-kill it if it hangs (``ORCHESTRATOR_STUCK``), re-spawn."""
        sessions = self.sessions
        registry, hooks = sessions.registry, sessions.hook_files
        timeout = sessions.settings.handoff_timeout if timeout is None else timeout
        record = registry.get(key)
        tmux = sessions.tmux_for(record)
        pane = sessions.pane_of(record)
        if record.status != ACTIVE or pane is None or not sessions.running(record, pane):
            raise RuneError(
                f"{key} is not running ({record.status}); use `runeconsole respawn {key}`"
            )
        agent_id = record.get("agent_id")
        worktree = existing_worktree(record, sessions.root)
        registry.update_metadata(
            key,
            {
                "handoff": {
                    "state": "requested",
                    "requested_at": iso_z(sessions.clock.now()),
                    "timeout": timeout,
                }
            },
        )
        hook = hooks.update(key, worktree=worktree, writer=SUPERVISOR)
        sessions.signal(
            "HANDOFF_REQUESTED",
            {
                "key": key,
                "agent_id": agent_id,
                "timeout": timeout,
                "uncommitted": hook.files_modified,
            },
        )
        started = time.monotonic()
        deadline = started + timeout
        asked = self._ask_to_save(record, tmux, pane, deadline)
        outcome, waited = self._await_exit(record, hook.fields, started, deadline)
        if outcome == "forced":
            sessions.signal(
                "ORCHESTRATOR_STUCK",
                {
                    "key": key,
                    "agent_id": agent_id,
                    "waited_seconds": round(waited, 1),
                    "asked": asked,
                },
            )
        keep_screen(sessions, record, pane)
        sessions.stop(record, grace=KILL_GRACE if outcome != "forced" else 0.2)
        hook = hooks.update(key, worktree=worktree, writer=SUPERVISOR)
        registry.update_metadata(
            key, {"handoff": {"state": outcome, "finished_at": iso_z(sessions.clock.now())}}
        )
        registry.mark_terminated(key, f"handoff ({outcome})", agent_id=agent_id)
        successor = self.spawner.respawn(key, cause="handoff") if respawn else None
        sessions.signal(
            "HANDOFF_COMPLETE",
            {
                "key": key,
                "predecessor_id": agent_id,
                "successor_id": successor.record.get("agent_id") if successor else None,
                "outcome": outcome,
                "uncommitted": hook.files_modified,
            },
        )
        return HandoffResult(key, agent_id, outcome, waited, hook.files_modified, successor)

    def _ask_to_save(
        self, record: AgentRecord, tmux: Tmux, pane: PaneInfo, deadline: float
    ) -> bool:
        """Type the handoff message, never into a menu where Enter would accept an option.

        A menu that says Esc declines or cancels it (a permission prompt's "No ... (esc)",
        a question's "Esc to cancel") gets one Esc first: declining approves nothing, and
        the agent is about to stop anyway. Any other menu is left for a person to answer;
        the message is typed once it is gone, and an agent still there at the deadline is
        force-killed like a hung one. Returns whether the message was typed.
        """
        escaped: tuple[str | None, str | None] | None = None
        while time.monotonic() < deadline and self.sessions.running(record):
            reading = read_pane(capture_screen(tmux, pane.pane_id))
            if not reading.menu:
                tmux.send_text(pane.pane_id, HANDOFF_MESSAGE)
                return True
            prompt = (reading.waiting_for_input, reading.prompt)
            if reading.esc_declines and prompt != escaped:
                tmux.press(pane.pane_id, "Escape")
                escaped = prompt  # once per prompt: a second Esc means something else
            time.sleep(POLL_SECONDS)
        return False

    def _await_exit(
        self, record: AgentRecord, saved_from: dict[str, Any], started: float, deadline: float
    ) -> tuple[str, float]:
        """Wait for the agent's exit or its own hook update (not the monitor's, which
        rewrites the hook too); one that updated gets ``HOOK_EXIT_GRACE`` more seconds."""
        outcome = "forced"
        while time.monotonic() < deadline:
            if not self.sessions.running(record):
                return "exited", time.monotonic() - started
            hook = self.sessions.hook_files.read(record.key)
            if outcome == "forced" and agent_wrote(saved_from, hook):
                outcome = "hook_updated"
                deadline = min(deadline, time.monotonic() + HOOK_EXIT_GRACE)
            time.sleep(POLL_SECONDS)
        return outcome, time.monotonic() - started
