"""The Agents pane: every identity, its liveness dot and heartbeat age, updated by key."""

from __future__ import annotations

import gc
import time
from datetime import datetime
from functools import partial
from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding

from runeconsole.core.errors import RuneError
from runeconsole.core.timeutil import format_age
from runeconsole.services.fleet import FleetModel
from runeconsole.services.registry import AgentRecord
from runeconsole.services.supervisor import Supervisor
from runeconsole.tui.agent_cells import COLUMNS, cell, row_values
from runeconsole.tui.confirm import ConfirmScreen
from runeconsole.tui.feed import FleetChanged
from runeconsole.tui.keyed_table import KeyedTable
from runeconsole.tui.pacing import after_frame
from runeconsole.tui.pane import AGENTS, LivePane

SEEN = frozenset({"seen"})
SEEN_AT = [column[0] for column in COLUMNS].index("seen")


def search_text(record: AgentRecord) -> str:
    """What the filter looks in, lower-cased once per read of the record."""
    values = (
        record.key,
        record.status,
        record.get("activity"),
        record.get("node_id"),
        record.get("tmux_session"),
    )
    return " ".join(str(v) for v in values if v).lower()


def age_cell(record: AgentRecord, now: datetime) -> Text:
    return cell(format_age(record.age_at(now)))


def row_order(record: AgentRecord) -> tuple[str, str, str]:
    """Rows by role, then name (as their cells show them), then key."""
    if record.error:
        return (record.key, "", record.key)
    return (str(record.get("role") or ""), str(record.get("name") or ""), record.key)


def by_role_and_name(cells: tuple[object, ...]) -> tuple[str, str]:
    return (str(cells[0]), str(cells[1]))


def settle_memory() -> None:
    """After a fill's chunk built rows: what is alive now (the records, rows and cells) is
    left out of the garbage collector's full passes (``gc.freeze``). Each full pass walks
    every live object, 100-350 ms at 50,000 agents, and one landing on a key is that
    key's delay; the fleet's objects are freed by reference counting, not by those passes."""
    gc.freeze()


FIRST_ROWS = 200  # shown at once; the rest follow in chunks, after a paint
CHUNK_SECONDS = 0.008  # a chunk of the fill stops after this long: a key waits no longer
CHUNK_ROWS = 500  # rows looked for at a time within a chunk (the deadline is checked between)
CHUNK_PAUSE = 0.02  # seconds between chunks: frames and keys get their turn
WHOLE = 500  # a change naming more keys than this and half the fleet refills the table


class AgentsPane(LivePane):
    BINDINGS = [
        Binding("enter", "details", "Details", show=False),
        Binding("g", "jump", "Go to"),
        Binding("h", "handoff", "Handoff"),
        Binding("r", "respawn", "Respawn"),
        Binding("x", "kill", "Kill"),
        Binding("dollar_sign", "allow", "Allow", show=False),
        Binding("m", "message", "Message", show=False),
    ]
    PANE_ID = AGENTS
    TITLE = "Agents"
    HELP_KEYS = (
        ("enter", "its screen and last message (kept current), every field, chain, hook"),
        ("m", "a message to the agent: pasted into its pane and submitted (no attaching)"),
        ("g", "switch your tmux client to the agent's session"),
        ("h", "hand off: ask it to save and exit, then re-spawn it (confirmed)"),
        ("r", "re-spawn a crashed agent with its predecessor's hook (confirmed)"),
        ("x", "kill the agent's session; its worktree is left as it is (confirmed)"),
        ("$", "let an agent held by its budget go on: for the day, or for N dollars more"),
        ("! / ?", "waiting for a permission / an answer;  ⟳ compacting"),
        ("STATUS", "an active agent's: busy, idle, waiting, compacting (hooks, else its pane)"),
        ("COST", "so far (~ estimated); yellow past 80 % of a budget, red when held"),
    )

    def __init__(self, supervisor: Supervisor, fleet: FleetModel, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.supervisor = supervisor
        self.fleet = fleet
        self.filter_text = ""
        self.table = KeyedTable(COLUMNS, id="agents-table")
        # Every record's row and search text, shown or filtered out: a filter typed or
        # cleared picks rows from here instead of building 10,000 rows again.
        self._rows: dict[str, tuple[object, ...]] = {}
        self._search: dict[str, str] = {}
        # The fleet's keys in row order, kept until a row is added, removed or moves: a
        # filter typed or cleared walks this list instead of sorting the fleet again.
        self._order: list[str] | None = None
        self._filling = False  # chunks of a fill are still to come
        self._spliced = False  # a row was added ahead of them (a change during the fill)
        self._place: dict[str, tuple[str, str, str]] = {}
        self._fill = 0  # the show_all whose remaining rows are being added

    @property
    def records(self) -> dict[str, AgentRecord]:
        return self.fleet.records

    @property
    def monitoring(self) -> bool:
        return self.fleet.monitoring

    def compose(self) -> ComposeResult:
        yield self.table

    def on_mount(self) -> None:
        self.show_all()

    def watch_dirs(self) -> list[Path]:
        return []  # the app feeds the fleet model, which this pane draws

    def apply_changes(self, paths: set[Path]) -> None:
        pass

    def rescan(self) -> None:
        pass

    # -- applying changes --------------------------------------------------------------------

    def _build(self, record: AgentRecord) -> tuple[object, ...]:
        key, fleet = record.key, self.fleet
        values = row_values(
            record,
            fleet.phases.get(key),
            fleet.observations.get(key),
            self.supervisor.settings,
            self.supervisor.clock.now(),
        )
        self._rows[key] = values
        self._search[key] = search_text(record)  # a filter's first key finds it ready
        if self._place.get(key) != row_order(record):
            self._order = None
        return values

    def upsert(self, record: AgentRecord, *, age: bool = True) -> None:
        """Add or update one row; ``age=False`` leaves an existing row's age to the tick."""
        key = record.key
        values = self._build(record)
        if self.filter_text and self.filter_text.lower() not in self._search_of(record):
            self.table.drop(key)
            return
        shown = self.table.has(key)
        if not shown and self._filling:
            self._spliced = True  # ahead of the fill's chunks: sorted again at its end
        skip = SEEN if not age and shown else frozenset()
        self.table.upsert(key, values, skip=skip)

    def remove(self, key: str) -> None:
        self._order = None
        self._rows.pop(key, None)
        self._search.pop(key, None)
        self.table.drop(key)

    def show_all(self) -> None:
        """The rows matching the filter, in order (on mount, when the model is loaded and
        when the filter changes): the first screenful at once, the rest in chunks after
        the paint. Rows are built only for records not built yet, and the fleet is
        searched only as far as each chunk needs (a key in the filter waits for the first
        screenful's matches, not the whole fleet's)."""
        self._fill += 1
        text = self.filter_text.lower()
        keys = self._ordered()
        first, walked = self._matching(keys, 0, text, FIRST_ROWS)
        now = self.supervisor.clock.now()
        self.table.replace([(key, self._current_row(key, now)) for key in first])
        self.summarise(self.counts())
        if not text:
            settle_memory()  # the records; the rows of the fill after it
        self._filling, self._spliced = walked < len(keys), False
        if self._filling:
            after_frame(self, CHUNK_PAUSE, partial(self._add_rows, keys, walked, text, self._fill))

    def _matching(
        self, keys: list[str], start: int, text: str, wanted: int, walk: int | None = None
    ) -> tuple[list[str], int]:
        """Up to ``wanted`` keys of ``keys[start:]`` that match ``text`` (looking at no more
        than ``walk`` keys), and the index the search stopped at."""
        if not text:
            end = min(start + wanted, len(keys))
            return keys[start:end], end
        search, records = self._search, self.fleet.records
        found: list[str] = []
        index = start
        stop = len(keys) if walk is None else min(len(keys), start + walk)
        while index < stop and len(found) < wanted:
            key = keys[index]
            index += 1
            seen = search.get(key)
            if seen is None and (record := records.get(key)) is not None:
                seen = search[key] = search_text(record)
            if seen is not None and text in seen:
                found.append(key)
        return found, index

    def _ordered(self) -> list[str]:
        """Every key of the fleet, in row order (sorted again only after a change of it)."""
        if self._order is None or len(self._order) != len(self.fleet):
            places = {record.key: row_order(record) for record in self.fleet.snapshot()}
            self._order = sorted(places, key=places.__getitem__)
            self._place = places
        return self._order

    def _search_of(self, record: AgentRecord) -> str:
        text = self._search.get(record.key)
        if text is None:
            text = self._search[record.key] = search_text(record)
        return text

    def _row_of(self, key: str) -> tuple[object, ...]:
        row = self._rows.get(key)
        if row is None and (record := self.fleet.get(key)) is not None:
            row = self._build(record)
        return row or ()

    def _current_row(self, key: str, now: datetime) -> tuple[object, ...]:
        """The row with its age as of ``now`` (a kept row has the age it was built with):
        drawn right at once, with no cell written again after."""
        row = self._row_of(key)
        record = self.fleet.get(key)
        if not row or record is None or record.error:
            return row
        return (*row[:SEEN_AT], age_cell(record, now), *row[SEEN_AT + 1 :])

    def _add_rows(self, keys: list[str], start: int, text: str, fill: int) -> None:
        """A chunk of the fill: rows (built if need be) added until ``CHUNK_SECONDS`` pass."""
        if fill != self._fill or not self.is_mounted:
            return  # a newer filter or fill took over
        table, records = self.table, self.fleet.records
        deadline = time.perf_counter() + CHUNK_SECONDS
        walked, built = start, len(self._rows)
        has, row_of = table.has, self._row_of
        while walked < len(keys) and time.perf_counter() < deadline:
            chunk, walked = self._matching(keys, walked, text, CHUNK_ROWS, 10 * CHUNK_ROWS)
            table.extend([(key, row_of(key)) for key in chunk if key in records and not has(key)])
        if len(self._rows) > built:
            settle_memory()  # the rows just built: no full pass walks them again
        if walked < len(keys):
            after_frame(self, CHUNK_PAUSE, partial(self._add_rows, keys, walked, text, fill))
        else:
            self._filling = False
            table.reorder("role", "name", key=by_role_and_name, force=self._spliced)

    def on_fleet_changed(self, message: FleetChanged) -> None:
        """Redraw the rows the change names, and nothing else."""
        change = message.change
        # Most of the table (the first load): one refill. A burst of a mass crash (hundreds
        # of keys of a large fleet) goes row by row: a refill would cost every row each time.
        if len(change.changed) + len(change.removed) > max(WHOLE, len(self.fleet) // 2):
            self._order = None
            for key in change.removed:
                self._rows.pop(key, None)
                self._search.pop(key, None)
            for key in change.changed:
                self._rows.pop(key, None)
                self._search.pop(key, None)
            self.show_all()
            return
        for key in change.removed:
            self.remove(key)
        for key in change.changed:
            record = self.fleet.get(key)
            if record is not None:
                self.upsert(record)
        self.table.reorder("role", "name", key=by_role_and_name)
        if change.counts:
            self.summarise(self.counts())

    # -- time passing ----------------------------------------------------------------------

    def tick(self) -> None:
        """Colours are the model's (by deadline); here only the ages on screen move."""
        self.refresh_ages()

    def refresh_ages(self) -> None:
        table = self.table
        now = self.supervisor.clock.now()
        for key in table.visible_keys():
            record = self.fleet.get(key)
            if record is not None and not record.error:
                table.set_cell(key, "seen", age_cell(record, now))

    def counts(self) -> dict[str, int]:
        return self.fleet.counts()

    # -- interaction -------------------------------------------------------------------------

    def filter(self, text: str) -> None:
        self.filter_text = text
        self.show_all()

    def selected_key(self) -> str | None:
        return self.table.cursor_key()

    def select(self, key: str) -> None:
        if self.table.has(key):
            self.table.move_cursor(row=self.table.get_row_index(key))
            self.table.focus()

    def on_data_table_row_selected(self, event: KeyedTable.RowSelected) -> None:
        event.stop()
        self.action_details()

    def action_details(self) -> None:
        from runeconsole.tui.agent_detail import AgentDetail

        key = self.selected_key()
        if key is not None:
            self.app.push_screen(AgentDetail(self.supervisor, key, self.records.get(key)))

    # -- acting on an agent ------------------------------------------------------------------

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
