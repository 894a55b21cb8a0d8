"""The Agents pane: every identity, its liveness dot and heartbeat age, updated by key.

Both consoles show it: it draws a ``FleetRecords`` (the project console's model of its
root, or the fleet console's model of every source, each row with its source first), and
what the operator asks of a row (enter: the detail; ``g``, ``h``, ``r``, ``x``) is done
by the console's ``Agents`` (``agent_actions.py``): here, or on the row's source.
"""

from __future__ import annotations

import gc
from datetime import datetime
from functools import partial
from typing import Any

from rich.text import Text
from textual.binding import Binding

from runeconsole.core.errors import RuneError
from runeconsole.core.timeutil import format_age
from runeconsole.services.fleet import FleetRecords
from runeconsole.services.registry import AgentRecord
from runeconsole.services.supervisor import SupervisorSettings
from runeconsole.tui.agent_actions import CHANGES, Agents
from runeconsole.tui.agent_cells import COLUMNS, cell, row_values
from runeconsole.tui.agent_detail import AgentDetail
from runeconsole.tui.budget_allow import Allowance, allow_window
from runeconsole.tui.confirm import ConfirmScreen
from runeconsole.tui.feed import FleetChanged
from runeconsole.tui.message_modal import MessageModal
from runeconsole.tui.pacing import after_frame
from runeconsole.tui.pane import AGENTS, Pane
from runeconsole.tui.workers import background

SEEN = frozenset({"seen"})


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


def row_order(record: AgentRecord, source: str = "") -> tuple[str, str, str, str]:
    """Rows by source (the fleet console's), role, then name (as their cells show them),
    then key; an unreadable identity by its key (its role cell)."""
    if record.error:
        return (source, record.key, "", record.key)
    return (source, str(record.get("role") or ""), str(record.get("name") or ""), record.key)


def as_shown(cells: Any) -> tuple[str, ...]:
    """The order of rows by the cells of their order columns, as they read."""
    return tuple(str(value) for value in cells)


def settle_memory() -> None:
    """After a fill of the whole fleet: what is alive now (its records, rows and cells) is
    left out of the garbage collector's full passes (``gc.freeze``). Each full pass walks
    every live object, 100-350 ms at 50,000 agents, and one landing on a key is that
    key's delay; the fleet's objects are freed by reference counting, not by those passes."""
    gc.freeze()


FIRST_ROWS = 200  # shown at once; the rest follow in chunks, after a paint
CHUNK_ROWS = 5000  # ~20 ms of adding rows at any fleet size (OneLineRows: no walk of every row)
CHUNK_PAUSE = 0.02  # seconds between chunks: frames and keys get their turn
WHOLE = 500  # a change naming more keys than this and half the fleet refills the table


class AgentsPane(Pane[AgentRecord]):
    BINDINGS = [
        Binding("enter", "act('details')", "Details", show=False),
        Binding("p", "act('details')", "Peek", show=False),
        Binding("m", "act('message')", "Message", show=False),
        Binding("g", "act('jump')", "Go to"),
        Binding("h", "act('handoff')", "Handoff"),
        Binding("r", "act('respawn')", "Respawn"),
        Binding("x", "act('kill')", "Kill"),
        Binding("dollar_sign", "act('allow')", "Allow", show=False),
    ]
    PANE_ID = AGENTS
    TITLE = "Agents"
    HELP_KEYS = (
        ("enter / p", "its screen and last message (kept current), every field, chain, hook"),
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
    COLUMNS = COLUMNS
    MOVING = SEEN

    def __init__(
        self, fleet: FleetRecords, settings: SupervisorSettings, agents: Agents, **kwargs: Any
    ) -> None:
        super().__init__(clock=fleet.clock, **kwargs)
        self.fleet = fleet
        self.settings = settings
        self.agents = agents
        self.records = fleet.records  # the model's own: rows are built from it, never copied
        self.order_columns = ("source", "role", "name") if self.sources else ("role", "name")
        self.seen_at = [column[0] for column in self.columns()].index("seen")
        # Every record's row and search text, shown or filtered out: a filter typed or
        # cleared picks rows from here instead of building 10,000 rows again.
        self._rows: dict[str, tuple[object, ...]] = {}
        self._search: dict[str, str] = {}
        # The fleet's keys in row order, kept until a row is added, removed or moves: a
        # filter typed or cleared walks this list instead of sorting the fleet again.
        self._order: list[str] | None = None
        self._filling = False  # chunks of a fill are still to come
        self._spliced = False  # a row was added ahead of them (a change during the fill)
        self._place: dict[str, tuple[str, str, str, str]] = {}
        self._fill = 0  # the show_all whose remaining rows are being added

    @property
    def monitoring(self) -> bool:
        return self.fleet.monitoring

    def on_mount(self) -> None:
        self.show_all()

    # -- rows ------------------------------------------------------------------------------

    def cells(self, key: str, record: AgentRecord) -> tuple[object, ...]:
        fleet = self.fleet
        phase, observation = fleet.phases.get(key), fleet.observations.get(key)
        return row_values(record, phase, observation, self.settings, self.now())

    def figures(self) -> dict[str, int]:
        return self.fleet.counts()

    def _order_of(self, record: AgentRecord) -> tuple[str, str, str, str]:
        return row_order(record, self.fleet.source(record.key) if self.sources else "")

    # -- applying changes --------------------------------------------------------------------

    def _build(self, record: AgentRecord) -> tuple[object, ...]:
        key = record.key
        values = tuple(self.row(key, record))
        self._rows[key] = values
        self._search[key] = self._search_text(record)  # a filter's first key finds it ready
        if self._place.get(key) != self._order_of(record):
            self._order = None
        return values

    def _search_text(self, record: AgentRecord) -> str:
        return search_text(record)

    def upsert(self, record: AgentRecord, *, age: bool = True) -> None:
        """Add or update one row; ``age=False`` leaves an existing row's age to the tick."""
        key = record.key
        values = self._build(record)
        if not self._matches(key, self._search_of(record)):
            self.table.drop(key)
            return
        shown = self.table.has(key)
        if not shown and self._filling:
            self._spliced = True  # ahead of the fill's chunks: sorted again at its end
        skip = SEEN if not age and shown else frozenset()
        self.table.upsert(key, values, skip=skip)

    def forget(self, key: str) -> None:
        self._order = None
        self._rows.pop(key, None)
        self._search.pop(key, None)
        self.table.drop(key)

    def _filter(self) -> tuple[str | None, str]:
        """The filter: the source it names (the fleet console's), and the text, lower-cased."""
        if self.sources is None:
            return None, self.filter_text.lower()
        source, rest = self.sources.split(self.filter_text)
        return source, rest.lower()

    def _matches(self, key: str, seen: str) -> bool:
        source, text = self._filter()
        if source is not None and self.fleet.source(key) != source:
            return False
        return not text or text in seen

    def refilter(self) -> None:
        self.show_all()

    def show_all(self) -> None:
        """The rows matching the filter, in order (on mount, when the model is loaded and
        when the filter changes): the first screenful at once, the rest in chunks after
        the paint. Rows are built only for records not built yet, and the fleet is
        searched only as far as each chunk needs (a key in the filter waits for the first
        screenful's matches, not the whole fleet's)."""
        self._fill += 1
        filtering = bool(self.filter_text)
        keys = self._ordered()
        first, walked = self._matching(keys, 0, FIRST_ROWS)
        now = self.now()
        self.table.replace([(key, self._current_row(key, now)) for key in first])
        self.finish()
        if not filtering:
            settle_memory()  # the records; the rows of the fill after it
        self._filling, self._spliced = walked < len(keys), False
        if self._filling:
            after_frame(self, CHUNK_PAUSE, partial(self._add_rows, keys, walked, self._fill))

    def _matching(self, keys: list[str], start: int, wanted: int) -> tuple[list[str], int]:
        """Up to ``wanted`` keys of ``keys[start:]`` that match the filter, and the index
        the search stopped at."""
        source, text = self._filter()
        if not text and source is None:
            end = min(start + wanted, len(keys))
            return keys[start:end], end
        search, records, of = self._search, self.fleet.records, self.fleet.source
        found: list[str] = []
        index = start
        while index < len(keys) and len(found) < wanted:
            key = keys[index]
            index += 1
            if source is not None and of(key) != source:
                continue
            seen = search.get(key)
            if seen is None and (record := records.get(key)) is not None:
                seen = search[key] = self._search_text(record)
            if seen is not None and text in seen:
                found.append(key)
        return found, index

    def _ordered(self) -> list[str]:
        """Every key of the fleet, in row order (sorted again only after a change of it)."""
        if self._order is None or len(self._order) != len(self.fleet):
            places = {record.key: self._order_of(record) for record in self.fleet.snapshot()}
            self._order = sorted(places, key=places.__getitem__)
            self._place = places
        return self._order

    def _search_of(self, record: AgentRecord) -> str:
        text = self._search.get(record.key)
        if text is None:
            text = self._search[record.key] = self._search_text(record)
        return text

    def _row_of(self, key: str) -> tuple[object, ...]:
        row = self._rows.get(key)
        record = self.fleet.get(key)
        if row is None and record is not None:
            row = self._build(record)
        return row or ()

    def _current_row(self, key: str, now: datetime) -> tuple[object, ...]:
        """The row with its age as of ``now`` (a kept row has the age it was built with):
        drawn right at once, with no cell written again after."""
        row = self._row_of(key)
        record = self.fleet.get(key)
        if not row or record is None or record.error:
            return row
        at = self.seen_at
        return (*row[:at], age_cell(record, now), *row[at + 1 :])

    def _add_rows(self, keys: list[str], start: int, fill: int) -> None:
        if fill != self._fill or not self.is_mounted:
            return  # a newer filter or fill took over
        table, fleet = self.table, self.fleet
        chunk, walked = self._matching(keys, start, CHUNK_ROWS)
        table.extend(
            [
                (key, self._row_of(key))
                for key in chunk
                if not table.has(key) and fleet.get(key) is not None
            ]
        )
        if walked < len(keys):
            after_frame(self, CHUNK_PAUSE, partial(self._add_rows, keys, walked, fill))
        else:
            self._filling = False
            table.reorder(*self.order_columns, key=as_shown, force=self._spliced)
            if not self.filter_text:
                settle_memory()

    def on_fleet_changed(self, message: FleetChanged) -> None:
        """Redraw the rows the change names, and nothing else."""
        change = message.change
        # Most of the table (the first load): one refill. A burst of a mass crash (hundreds
        # of keys of a large fleet) goes row by row: a refill would cost every row each time.
        if len(change.changed) + len(change.removed) > max(WHOLE, len(self.fleet) // 2):
            self._order = None
            for key in change.removed | change.changed:
                self._rows.pop(key, None)
                self._search.pop(key, None)
            self.show_all()
            return
        for key in change.removed:
            self.forget(key)
        for key in change.changed:
            record = self.fleet.get(key)
            if record is not None:
                self.upsert(record)
        self.table.reorder(*self.order_columns, key=as_shown)
        if change.counts:
            self.finish()

    # -- time passing ----------------------------------------------------------------------

    def tick(self) -> None:
        """Colours are the model's (by deadline); here only the ages on screen move."""
        self.refresh_ages()

    def refresh_ages(self) -> None:
        table = self.table
        now = self.now()
        for key in table.visible_keys():
            record = self.fleet.get(key)
            if record is not None and not record.error:
                table.set_cell(key, "seen", age_cell(record, now))

    def counts(self) -> dict[str, int]:
        return self.fleet.counts()

    # -- interaction -------------------------------------------------------------------------

    def selected_key(self) -> str | None:
        return self.table.cursor_key()

    def select(self, key: str) -> None:
        if self.table.has(key):
            self.table.move_cursor(row=self.table.get_row_index(key))
            self.table.focus()

    def open_row(self, key: str) -> None:
        self.action_act("details")

    def action_act(self, action: str) -> None:
        """Enter (``details``), ``g`` (``jump``), ``h``, ``r``, ``x`` on the cursor's agent:
        the changing ones asked first, every one but the detail done in a worker."""
        key = self.selected_key()
        record = self.fleet.get(key or "")
        if key is None or record is None:
            return
        facts, where = self.agents.facts(key), self.agents.where(key)
        if action == "details":
            self.app.push_screen(AgentDetail(key, record, facts, self.now, where))
            return
        if action == "message":
            say = partial(facts.say, key)
            self.app.push_screen(MessageModal(key, say, where=where or None))
            return
        if action == "allow":
            self.ask_allowance(key, record)
            return
        if record.error:
            self.notify(f"{key} is unreadable: {record.error}", severity="warning", markup=False)
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

    def ask_allowance(self, key: str, record: AgentRecord) -> None:
        """``$``: how much more a held agent may spend (``budget_allow.py``), then allowed."""

        def chosen(allowance: Allowance | None) -> None:
            if allowance is not None:
                self.run("allow", key, allowance.usd)

        self.app.push_screen(allow_window(record, self.now()), chosen)

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
