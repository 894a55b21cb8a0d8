"""The Agents pane: every identity, its liveness dot and heartbeat age, and what the
operator asks of one.

Both consoles show it: it draws a ``FleetRecords`` (the project console's model of its
root, or the fleet console's model of every source, each row with its source first) as
any pane draws its records: the cells (``tui/cells/agent_cells.py``), the words the filter
looks in, the order (role, then name) and the age that moves each second; the template
(``pane.py``) keeps the rows, fills them in chunks and follows the model's changes by
key. What the operator asks of a row (enter: the detail; ``d``, ``t``, ``m``, ``g``, ``h``,
``r``, ``x``, ``R``, ``F``, ``$``; ``n``, a new task) is confirmed here, when it changes
the agent, and done in a worker by the console's ``Agents`` (``agent_actions.py``): here,
or on the row's source. In the project console each agent's CHANGES and review state are
kept beside it (``review_column.py``, looked at by ``changes_watch.py``), and the optional
columns the talisman asks for follow the rest.
"""

from __future__ import annotations

from collections.abc import Collection
from functools import partial
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding

from runeconsole.core.errors import RuneError
from runeconsole.services.claude.session.session_view import is_background
from runeconsole.services.dispatch.creation import NewTask
from runeconsole.services.fleet import FleetRecords
from runeconsole.services.registry import AgentRecord
from runeconsole.services.review.tracker import ChangeTracker
from runeconsole.services.supervision.service import SupervisorSettings
from runeconsole.tui.cells.agent_cells import COLUMNS as AGENT_COLUMNS
from runeconsole.tui.cells.agent_cells import (
    OPTIONAL_COLUMNS,
    age_cell,
    row_order,
    row_values,
    search_fields,
)
from runeconsole.tui.cells.agent_facts import out_of_reach
from runeconsole.tui.cells.review_cells import CHANGES_COLUMN
from runeconsole.tui.conversations.screen import ConversationScreen
from runeconsole.tui.modals.agent_detail import AgentDetail
from runeconsole.tui.modals.budget_allow import Allowance, allow_window
from runeconsole.tui.modals.confirm import ConfirmScreen
from runeconsole.tui.modals.fork_choice import ForkChoice
from runeconsole.tui.modals.message_modal import MessageModal
from runeconsole.tui.panes.agent_actions import CHANGES, FORKS, Agents
from runeconsole.tui.panes.changes_watch import ChangesWatch
from runeconsole.tui.panes.pane import AGENTS, CHUNK_PAUSE, WHOLE, Columns, Pane
from runeconsole.tui.panes.review_column import ReviewColumn
from runeconsole.tui.support.messages import FleetChanged, ReviewWanted
from runeconsole.tui.support.new_task_start import Starter, started_said
from runeconsole.tui.support.pacing import after_frame
from runeconsole.tui.support.workers import background

SEEN = frozenset({"seen"})
CHANGES_AFTER = "context"  # the CHANGES column follows the context meter
REVIEW_SUMMARY = "review"  # the top line's ready count


class AgentsPane(Pane[AgentRecord]):
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
        self._ready_shown: int | None = None

    def compose(self) -> ComposeResult:
        yield from super().compose()
        if self.changes_watch is not None:
            yield self.changes_watch

    def on_mount(self) -> None:
        self.fill()
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

    def search_fields(self, key: str, record: AgentRecord) -> tuple[object, ...]:
        """The record's words and its review state (``/ ready``)."""
        state = self.review.states.get(key) if self.review is not None else None
        return (*search_fields(record), state)

    def order(self, key: str, record: AgentRecord) -> tuple[str, str, str, str]:
        return row_order(record, self.fleet.source(key) if self.sources else "")

    def moving(self, key: str, record: AgentRecord) -> dict[str, object] | None:
        """Colours are the model's (by deadline); here only the age moves."""
        return None if record.error else {"seen": age_cell(record, self.now())}

    def figures(self) -> dict[str, int]:
        return self.fleet.counts()

    def on_fleet_changed(self, message: FleetChanged) -> None:
        """Redraw the rows the change names, and nothing else. The review states of a
        change of many agents (a fleet loaded) are worked out after its first rows are
        painted, and the rows whose state moved drawn again then: the states are only
        searched by the filter (``/ ready``) and counted, and their CHANGES are blank
        until looked at, which waits for them (``_follow_review``)."""
        change = message.change
        review = self.review
        if review is None:
            self.rows_changed(change.changed, change.removed)
            return
        if len(change.changed) <= WHOLE:  # the rows drawn after this show their new state
            review.follow(change.changed, change.removed, change.beats)
            self._count_ready()
            self.rows_changed(change.changed, change.removed)
            return
        review.follow((), change.removed)
        self.rows_changed(change.changed, change.removed)
        after_frame(self, CHUNK_PAUSE, partial(self._follow_review, change.changed))

    def _follow_review(self, keys: Collection[str]) -> None:
        review = self.review
        if review is None or not self.is_mounted:
            return
        for key in review.follow(keys, ()):
            self.redraw(key)
        self.finish()
        self._count_ready()

    # -- changes and review states (review_column.py) -------------------------------------

    def on_changes_watch_looked(self, message: ChangesWatch.Looked) -> None:
        """Agents' changes looked at: their rows drawn again (CHANGES, and their place by
        the filter when their state moved: ``/ ready``)."""
        message.stop()
        review = self.review
        if review is None:
            return
        for key in message.found:
            review.restate(key)
            self.redraw(key)
        self.finish()
        self._count_ready()

    def _count_ready(self) -> None:
        count = len(self.review.ready) if self.review is not None else 0
        if self.review is not None and count != self._ready_shown:
            self._ready_shown = count
            self.post_message(self.Summary(REVIEW_SUMMARY, {"ready": count}))

    def review_state(self, key: str) -> str:
        """The agent's review state as shown (``none`` without a worktree)."""
        return self.review.state(key) if self.review is not None else "none"

    # -- what the operator asks of a row, done by the console's Agents --------------------

    def _chosen(self) -> tuple[str, AgentRecord] | None:
        key = self.table.cursor_key()
        record = self.agents.record(key) if key is not None else None
        return None if key is None or record is None else (key, record)

    def _readable(self) -> tuple[str, AgentRecord] | None:
        """The cursor's agent, unless its identity cannot be read (then said why)."""
        chosen = self._chosen()
        if chosen is not None and chosen[1].error:
            key, error = chosen[0], chosen[1].error
            self.notify(f"{key} is unreadable: {error}", severity="warning", markup=False)
            return None
        return chosen

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
        if (chosen := self._readable()) is None:
            return
        key = chosen[0]

        def chose(action: str | None) -> None:
            if action in FORKS:
                self.notify(f"fork: {key} …", timeout=3)
                self.run(action, key)

        self.app.push_screen(ForkChoice(key, self.agents.where(key)), chose)

    def _act(self, action: str) -> None:
        """``g``, ``h``, ``r``, ``x`` on the cursor's agent: the changing ones asked first,
        each done in a worker."""
        if (chosen := self._readable()) is None:
            return
        key, record = chosen
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

        places = self.agents.task_places(self.table.cursor_key())
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
