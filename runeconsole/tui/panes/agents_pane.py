"""The Agents pane: every identity, its liveness dot and heartbeat age, updated by key.

Both consoles show it: it draws a ``FleetRecords`` (the project console's model of its
root, or the fleet console's model of every source, each row with its source first), and
what the operator asks of a row (enter: the detail; ``d``, ``g``, ``h``, ``r``, ``x``, ``m``,
``$``; ``n``, a new task) is done by the console's ``Agents`` (``agent_actions.py``): here,
or on the row's source. In the project console each agent's CHANGES and review state are
kept beside it (``review_column.py``, looked at by ``changes_watch.py``), and the optional
columns the talisman asks for follow the rest.
"""

from __future__ import annotations

import time
from datetime import datetime
from functools import partial
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding

from runeconsole.core.gc_passes import freeze_alive
from runeconsole.services.fleet import FleetRecords
from runeconsole.services.registry import AgentRecord
from runeconsole.services.review.tracker import ChangeTracker
from runeconsole.services.supervision.service import SupervisorSettings
from runeconsole.tui.cells.agent_cells import COLUMNS as AGENT_COLUMNS
from runeconsole.tui.cells.agent_cells import OPTIONAL_COLUMNS, row_values
from runeconsole.tui.cells.review_cells import CHANGES_COLUMN
from runeconsole.tui.panes.agent_actions import AgentActions, Agents
from runeconsole.tui.panes.agent_rows import (
    age_cell,
    as_shown,
    row_order,
    search_text,
)
from runeconsole.tui.panes.changes_watch import ChangesWatch
from runeconsole.tui.panes.pane import AGENTS, Columns, Pane
from runeconsole.tui.panes.review_column import ReviewColumn
from runeconsole.tui.support.messages import FleetChanged
from runeconsole.tui.support.pacing import after_frame

SEEN = frozenset({"seen"})
CHANGES_AFTER = "context"  # the CHANGES column follows the context meter
REVIEW_SUMMARY = "review"  # the top line's ready count


FIRST_ROWS = 200  # shown at once; the rest follow in chunks, after a paint
CHUNK_SECONDS = 0.008  # a chunk of the fill stops after this long: a key waits no longer
CHUNK_ROWS = 500  # rows looked for at a time within a chunk (the deadline is checked between)
CHUNK_PAUSE = 0.02  # seconds between chunks: frames and keys get their turn
WHOLE = 500  # a change naming more keys than this and half the fleet refills the table


class AgentsPane(Pane[AgentRecord], AgentActions):
    WRITES = frozenset({"handoff", "respawn", "kill", "new_task", "resume", "fork"})
    ENTER = "details"
    BINDINGS = [
        Binding("enter", "details", "Details", show=False),
        Binding("p", "details", "Peek", show=False),
        Binding("n", "new_task", "New"),
        Binding("d", "review", "Review"),
        Binding("t", "conversation", "Conversation", show=False),
        Binding("g", "jump", "Go to"),
        Binding("h", "handoff", "Handoff"),
        Binding("r", "respawn", "Respawn"),
        Binding("x", "kill", "Kill"),
        Binding("R", "resume", "Resume", show=False),
        Binding("F", "fork", "Fork", show=False),
        Binding("dollar_sign", "allow", "Allow", show=False),
        Binding("m", "message", "Message", show=False),
    ]
    PANE_ID = AGENTS
    TITLE = "Agents"
    HELP_KEYS = (
        ("n", "a new task: agents in fresh worktrees, one per attempt (a form; ctrl+s starts)"),
        ("enter / p", "its screen and last message (kept current), every field, chain, hook"),
        ("d", "review its changes: the diff, comments, approve, send back"),
        ("t", "its conversation: prompts, replies, each tool call (enter opens it), / search"),
        ("S", "search every agent's conversation (from any pane)"),
        ("m", "a message to the agent: pasted into its pane and submitted (no attaching)"),
        ("g", "switch your tmux client to the agent's session (background: a new window)"),
        ("h", "hand off: ask it to save and exit, then re-spawn it (confirmed)"),
        ("r", "re-spawn a crashed agent with its predecessor's hook (confirmed)"),
        ("x", "kill the agent's session (background: claude stop); worktree kept (confirmed)"),
        ("R", "resume an ended agent's Claude Code session (claude --resume), its successor"),
        ("F", "fork its session into a new agent: same worktree (s) or a new one (w)"),
        ("$", "let an agent held by its budget go on: for the day, or for N dollars more"),
        ("! / ? / ⟳", "waiting for a permission / an answer / compacting"),
        ("✗", "stopped: its turn ended on an API error (the Problems pane says which)"),
        ("STATUS", "busy, idle, waiting, compacting, stopped (hooks, else its pane)"),
        ("COST", "so far (~ estimated); yellow past 80 % of a budget, red when held"),
        ("±", "its changes: +added −removed files; ● ready (/ ready), ✓ approved, ⛙ merged"),
    )
    COLUMNS = AGENT_COLUMNS
    MOVING = SEEN

    def __init__(
        self,
        fleet: FleetRecords,
        settings: SupervisorSettings,
        agents: Agents,
        *,
        tracker: ChangeTracker | None = None,
        extra: tuple[str, ...] = (),
        **kwargs: Any,
    ) -> None:
        # Before the table is made (its columns): the CHANGES column is shown where the
        # console looks at the agents' changes; the optional columns the talisman asks for
        # (runeconsole.agents.columns), last.
        self.changes_watch = ChangesWatch(tracker) if tracker is not None else None
        self.review = (
            ReviewColumn(fleet, self.changes_watch) if self.changes_watch is not None else None
        )
        self.extra = extra
        super().__init__(clock=fleet.clock, **kwargs)
        self.fleet = fleet
        self.settings = settings
        self.agents = agents
        self.records = fleet.records  # the model's own: rows are built from it, never copied
        self.order_columns = ("source", "role", "name") if self.sources else ("role", "name")
        names = [column[0] for column in self.columns()]
        self.seen_at = names.index("seen")
        self._ready_shown: int | None = None
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

    def compose(self) -> ComposeResult:
        yield from super().compose()
        if self.changes_watch is not None:
            yield self.changes_watch

    def on_mount(self) -> None:
        self.show_all()
        if self.changes_watch is not None:
            self.changes_watch.note(self.fleet.snapshot())
        self._count_ready()

    # -- rows ------------------------------------------------------------------------------

    def columns(self) -> Columns:
        columns = super().columns()
        if self.review is not None:
            at = [column[0] for column in columns].index(CHANGES_AFTER) + 1
            columns = (*columns[:at], CHANGES_COLUMN, *columns[at:])
        return (*columns, *(OPTIONAL_COLUMNS[name] for name in self.extra))

    def cells(self, key: str, record: AgentRecord) -> tuple[object, ...]:
        fleet = self.fleet
        phase, observation = fleet.phases.get(key), fleet.observations.get(key)
        values = row_values(record, phase, observation, self.settings, self.now(), self.extra)
        if self.review is None:
            return values
        at = [column[0] for column in AGENT_COLUMNS].index(CHANGES_AFTER) + 1
        return (*values[:at], self.review.cell(key), *values[at:])

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
        """What the filter looks in: the record's words and its review state (``ready``)."""
        state = self.review.states.get(record.key) if self.review is not None else None
        return search_text(record) + (f" {state}" if state else "")

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
            freeze_alive()  # the records; the rows of the fill after it
        self._filling, self._spliced = walked < len(keys), False
        if self._filling:
            after_frame(self, CHUNK_PAUSE, partial(self._add_rows, keys, walked, self._fill))

    def _matching(
        self, keys: list[str], start: int, wanted: int, walk: int | None = None
    ) -> tuple[list[str], int]:
        """Up to ``wanted`` keys of ``keys[start:]`` that match the filter (looking at no
        more than ``walk`` keys), and the index the search stopped at."""
        source, text = self._filter()
        if not text and source is None:
            end = min(start + wanted, len(keys))
            return keys[start:end], end
        search, records, of = self._search, self.fleet.records, self.fleet.source
        found: list[str] = []
        index = start
        stop = len(keys) if walk is None else min(len(keys), start + walk)
        while index < stop and len(found) < wanted:
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
        """A chunk of the fill: rows (built if need be) added until ``CHUNK_SECONDS`` pass."""
        if fill != self._fill or not self.is_mounted:
            return  # a newer filter or fill took over
        table, records = self.table, self.fleet.records
        deadline = time.perf_counter() + CHUNK_SECONDS
        walked, built = start, len(self._rows)
        has, row_of = table.has, self._row_of
        while walked < len(keys) and time.perf_counter() < deadline:
            chunk, walked = self._matching(keys, walked, CHUNK_ROWS, 10 * CHUNK_ROWS)
            table.extend([(key, row_of(key)) for key in chunk if key in records and not has(key)])
        if len(self._rows) > built:
            freeze_alive()  # the rows just built: no full pass walks them again
        if walked < len(keys):
            after_frame(self, CHUNK_PAUSE, partial(self._add_rows, keys, walked, fill))
        else:
            self._filling = False
            table.reorder(*self.order_columns, key=as_shown, force=self._spliced)

    def on_fleet_changed(self, message: FleetChanged) -> None:
        """Redraw the rows the change names, and nothing else."""
        change = message.change
        self._follow_changes(change.changed, change.removed)
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

    # -- changes and review states (review_column.py) -------------------------------------

    def _follow_changes(self, changed: frozenset[str], removed: frozenset[str]) -> None:
        """Agents read again or gone: the rows rebuilt after this show their new state."""
        if self.review is not None:
            self.review.follow(changed, removed)
            self._count_ready()

    def on_changes_watch_looked(self, message: ChangesWatch.Looked) -> None:
        """Agents' changes looked at: their CHANGES redrawn, and their rows placed again
        by the filter when their state moved (``/ ready``)."""
        message.stop()
        review = self.review
        if review is None:
            return
        at = [column[0] for column in self.columns()].index("changes")
        for key in message.found:
            moved = review.restate(key)
            row = self._rows.get(key)
            if row is not None:
                changes = review.cell(key)
                self._rows[key] = (*row[:at], changes, *row[at + 1 :])
                if self.table.has(key):
                    self.table.set_cell(key, "changes", changes)
            if moved:
                self._search.pop(key, None)
                record = self.fleet.get(key)
                if record is not None and self.filter_text:
                    self.upsert(record, age=False)
        self._count_ready()

    def _count_ready(self) -> None:
        count = len(self.review.ready) if self.review is not None else 0
        if self.review is not None and count != self._ready_shown:
            self._ready_shown = count
            self.post_message(self.Summary(REVIEW_SUMMARY, {"ready": count}))

    def review_state(self, key: str) -> str:
        """The agent's review state as shown (``none`` without a worktree)."""
        return self.review.state(key) if self.review is not None else "none"

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
