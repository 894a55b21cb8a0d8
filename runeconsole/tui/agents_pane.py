"""The Agents pane: every identity, its liveness dot and heartbeat age, updated by key."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable

from runeconsole.core.files import is_temp_name
from runeconsole.core.timeutil import format_age
from runeconsole.services.registry import LIVENESS_ORDER, AgentRecord, Registry
from runeconsole.tui.keyed_table import KeyedTable
from runeconsole.tui.pane import LivePane
from runeconsole.tui.theme import LIVENESS_STYLE

COLUMNS = (
    ("dot", " ", 1),
    ("role", "ROLE", 12),
    ("name", "NAME", 14),
    ("status", "STATUS", 10),
    ("seen", "SEEN", 6),
    ("node", "NODE", 12),
    ("tmux", "TMUX", 16),
    ("predecessor", "PREDECESSOR", None),
)
SEEN = frozenset({"seen"})


def row_values(record: AgentRecord) -> tuple[object, ...]:
    dot = Text("●", style=LIVENESS_STYLE[record.liveness])
    if record.error:
        return (
            dot,
            Text(record.key),
            Text(""),
            Text("unreadable", style="bold red"),
            "-",
            "",
            "",
            Text(f"unreadable: {record.error}", style="red"),
        )
    status = record.status
    return (
        dot,
        Text(str(record.get("role") or "")),
        Text(str(record.get("name") or "")),
        Text(status, style=LIVENESS_STYLE[record.liveness] if status != "active" else "default"),
        format_age(record.age_seconds),
        str(record.get("node_id") or ""),
        str(record.get("tmux_session") or ""),
        str(record.get("predecessor_id") or ""),
    )


def matches(record: AgentRecord, text: str) -> bool:
    if not text:
        return True
    haystack = " ".join(
        str(v)
        for v in (record.key, record.status, record.get("node_id"), record.get("tmux_session"))
        if v
    )
    return text.lower() in haystack.lower()


class AgentsPane(LivePane):
    BINDINGS = [Binding("enter", "details", "Details", show=False)]
    TITLE = "Agents"
    HELP_KEYS = (("enter", "the agent's every field and its predecessor chain"),)

    def __init__(self, registry: Registry, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.registry = registry
        self.records: dict[str, AgentRecord] = {}
        self.filter_text = ""

    def compose(self) -> ComposeResult:
        yield KeyedTable(COLUMNS, id="agents-table")

    @property
    def table(self) -> KeyedTable:
        return self.query_one(KeyedTable)

    def on_mount(self) -> None:
        self.sync(self.registry.list())

    def watch_dirs(self) -> list[Path]:
        return [self.registry.paths.identities]

    # -- applying changes --------------------------------------------------------------------

    def upsert(self, record: AgentRecord, *, age: bool = True) -> None:
        """Add or update one row; ``age=False`` leaves an existing row's age to the tick."""
        self.records[record.key] = record
        if not matches(record, self.filter_text):
            self.table.drop(record.key)
            return
        skip = SEEN if not age and self.table.has(record.key) else frozenset()
        self.table.upsert(record.key, row_values(record), skip=skip)

    def remove(self, key: str) -> None:
        self.records.pop(key, None)
        self.table.drop(key)

    def finish_batch(self) -> None:
        self.table.reorder("role", "name", key=lambda cells: (str(cells[0]), str(cells[1])))
        self.post_message(self.Summary("agents", self.counts()))

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
        identities = self.registry.paths.identities
        for path in paths:
            if path.parent != identities or not path.name.endswith(".json"):
                continue
            if is_temp_name(path.name):
                continue
            if path.exists():
                self.upsert(self.registry.read_path(path))
            else:
                self.remove(path.name[: -len(".json")])
        self.finish_batch()

    @work(thread=True, exclusive=True, group="agents-rescan")
    def rescan(self) -> None:
        records = self.registry.list()
        self.app.call_from_thread(self._sync_if_mounted, records)

    def _sync_if_mounted(self, records: list[AgentRecord]) -> None:
        if self.is_mounted:
            self.sync(records)

    # -- time passing ----------------------------------------------------------------------

    def tick(self) -> None:
        now = self.registry.clock.now()
        changed = [r for r in self.records.values() if r.rejudge(now, self.registry.settings)]
        for record in changed:
            self.upsert(record, age=False)
        self.refresh_ages()
        if changed:
            self.post_message(self.Summary("agents", self.counts()))

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
            self.app.push_screen(AgentDetail(self.registry, key, self.records.get(key)))
