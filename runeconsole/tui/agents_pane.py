"""The Agents pane: every identity, its liveness dot and heartbeat age, updated by key."""

from __future__ import annotations

from pathlib import Path

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable

from runeconsole.core.errors import RuneError
from runeconsole.core.files import is_temp_name
from runeconsole.core.timeutil import format_age
from runeconsole.services.hooks import Hook, Hooks
from runeconsole.services.registry import LIVENESS_ORDER, AgentRecord, Registry
from runeconsole.services.supervisor import AgentObservation, Supervisor
from runeconsole.tui.agent_cells import COLUMNS, row_values
from runeconsole.tui.confirm import ConfirmScreen
from runeconsole.tui.keyed_table import KeyedTable
from runeconsole.tui.pane import AGENTS, LivePane

SEEN = frozenset({"seen"})


def matches(record: AgentRecord, text: str) -> bool:
    if not text:
        return True
    haystack = " ".join(
        str(v)
        for v in (
            record.key,
            record.status,
            record.get("activity"),
            record.get("node_id"),
            record.get("tmux_session"),
        )
        if v
    )
    return text.lower() in haystack.lower()


def _drawn(observation: AgentObservation | None) -> object:
    """What of an observation the row shows (its timestamp changes every pass)."""
    if observation is None:
        return None
    return (observation.state, observation.screen, observation.urgency)


def hook_phase(hook: Hook | None) -> str | None:
    if hook is None or hook.error:
        return None
    return hook.work_phase or hook.phase


class AgentsPane(LivePane):
    BINDINGS = [
        Binding("enter", "details", "Details", show=False),
        Binding("g", "jump", "Go to"),
        Binding("h", "handoff", "Handoff"),
        Binding("r", "respawn", "Respawn"),
        Binding("x", "kill", "Kill"),
    ]
    PANE_ID = AGENTS
    TITLE = "Agents"
    HELP_KEYS = (
        ("enter", "every field, the predecessor chain, the hook and the pane's last lines"),
        ("g", "switch your tmux client to the agent's session"),
        ("h", "hand off: ask it to save and exit, then re-spawn it (confirmed)"),
        ("r", "re-spawn a crashed agent with its predecessor's hook (confirmed)"),
        ("x", "kill the agent's session; its worktree is left as it is (confirmed)"),
        ("! / ?", "waiting for a permission / an answer;  ⟳ compacting"),
        ("STATUS", "an active agent's: busy, idle, waiting, compacting (hooks, else its pane)"),
    )

    def __init__(self, supervisor: Supervisor, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.supervisor = supervisor
        self.registry: Registry = supervisor.registry
        self.hooks: Hooks = supervisor.hooks
        self.records: dict[str, AgentRecord] = {}
        self.phases: dict[str, str | None] = {}
        self.observations: dict[str, AgentObservation] = {}
        self.filter_text = ""
        self.monitoring = False

    def compose(self) -> ComposeResult:
        yield KeyedTable(COLUMNS, id="agents-table")

    @property
    def table(self) -> KeyedTable:
        return self.query_one(KeyedTable)

    def on_mount(self) -> None:
        self.phases = {hook.key: hook_phase(hook) for hook in self.hooks.list()}
        self.observations = self.supervisor.observations()
        self.sync(self.registry.list())

    def watch_dirs(self) -> list[Path]:
        paths = self.registry.paths
        return [paths.identities, paths.hooks, paths.supervisor]

    # -- applying changes --------------------------------------------------------------------

    def upsert(self, record: AgentRecord, *, age: bool = True) -> None:
        """Add or update one row; ``age=False`` leaves an existing row's age to the tick."""
        self.records[record.key] = record
        if not matches(record, self.filter_text):
            self.table.drop(record.key)
            return
        skip = SEEN if not age and self.table.has(record.key) else frozenset()
        key = record.key
        values = row_values(
            record, self.phases.get(key), self.observations.get(key), self.supervisor.settings
        )
        self.table.upsert(key, values, skip=skip)

    def remove(self, key: str) -> None:
        self.records.pop(key, None)
        self.table.drop(key)

    def finish_batch(self) -> None:
        self.table.reorder("role", "name", key=lambda cells: (str(cells[0]), str(cells[1])))
        self.summarise(self.counts())

    def sync(self, records: list[AgentRecord]) -> None:
        """Make the table match a full listing: upsert every record, drop vanished keys.

        Ages are left to the tick, which refreshes only the rows on screen: a rescan
        must not rewrite a thousand age cells.
        """
        fresh = {record.key for record in records}
        for key in [k for k in self.records if k not in fresh]:
            self.remove(key)
        for record in records:
            self.upsert(record, age=False)
        self.finish_batch()
        self.refresh_ages()

    def apply_changes(self, paths: set[Path]) -> None:
        layout = self.registry.paths
        for path in paths:
            if not path.name.endswith(".json") or is_temp_name(path.name):
                continue
            key = path.name[: -len(".json")]
            if path.parent == layout.identities:
                if path.exists():
                    self.upsert(self.registry.read_path(path))
                else:
                    self.remove(key)
            elif path.parent == layout.hooks:
                self.phases[key] = hook_phase(self.hooks.read_path(path)) if path.exists() else None
                self._redraw(key)
            elif path == self.supervisor.observations_path and not self.monitoring:
                self.apply_observations(self.supervisor.observations())
        self.finish_batch()

    def apply_observations(self, observations: dict[str, AgentObservation]) -> None:
        """A monitor pass: redraw the rows whose screen reading changed."""
        changed = [
            key
            for key in observations.keys() | self.observations.keys()
            if _drawn(observations.get(key)) != _drawn(self.observations.get(key))
        ]
        self.observations = dict(observations)
        for key in changed:
            self._redraw(key)

    def _redraw(self, key: str) -> None:
        record = self.records.get(key)
        if record is not None:
            self.upsert(record, age=False)

    @work(thread=True, exclusive=True, group="agents-rescan")
    def rescan(self) -> None:
        phases = {hook.key: hook_phase(hook) for hook in self.hooks.list()}
        observations = None if self.monitoring else self.supervisor.observations()
        records = self.registry.list()
        self.app.call_from_thread(self._sync_if_mounted, records, phases, observations)

    def _sync_if_mounted(
        self,
        records: list[AgentRecord],
        phases: dict[str, str | None],
        observations: dict[str, AgentObservation] | None,
    ) -> None:
        if self.is_mounted:
            self.phases = phases
            if observations is not None:
                self.observations = observations
            self.sync(records)

    # -- time passing ----------------------------------------------------------------------

    def tick(self) -> None:
        now = self.registry.clock.now()
        changed = [r for r in self.records.values() if r.rejudge(now, self.registry.settings)]
        for record in changed:
            self.upsert(record, age=False)
        self.refresh_ages()
        if changed:
            self.summarise(self.counts())

    def refresh_ages(self) -> None:
        table = self.table
        for key in table.visible_keys():
            record = self.records.get(key)
            if record is not None and not record.error:
                table.set_cell(key, "seen", format_age(record.age_seconds))

    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(LIVENESS_ORDER, 0)
        for record in self.records.values():
            counts[record.liveness] += 1
        return counts

    # -- interaction -------------------------------------------------------------------------

    def filter(self, text: str) -> None:
        self.filter_text = text
        for record in list(self.records.values()):
            self.upsert(record, age=False)
        self.finish_batch()
        self.refresh_ages()

    def selected_key(self) -> str | None:
        return self.table.cursor_key()

    def select(self, key: str) -> None:
        if self.table.has(key):
            self.table.move_cursor(row=self.table.get_row_index(key))
            self.table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_details()

    def action_details(self) -> None:
        from runeconsole.tui.agent_detail import AgentDetail

        key = self.selected_key()
        if key is not None:
            self.app.push_screen(AgentDetail(self.supervisor, key, self.records.get(key)))

    # -- acting on an agent ------------------------------------------------------------------

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
