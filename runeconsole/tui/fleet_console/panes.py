"""The fleet console's panes: each a keyed table over one kind of the merged stream's
rows, with the source first. ``RowsPane`` is the template (rows by key, the filter, the
rows that moved); each pane says how its rows look and what its keys do.

The filter takes ``source:NAME`` (or a bare source name) to keep one source's rows; the
rest of the text is matched against the row as everywhere in the console."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message

from runeconsole.core.timeutil import parse_iso
from runeconsole.services.supervisor import SupervisorSettings
from runeconsole.services.suspension import OK, STALE
from runeconsole.tui.fleet_console import rows
from runeconsole.tui.fleet_console.store import (
    AGENT,
    OBSERVATION,
    PERMISSION,
    PROBLEM,
    QUESTION,
    QUEUE,
    SUSPENDED,
    FleetRows,
)
from runeconsole.tui.keyed_table import KeyedTable
from runeconsole.tui.pane import (
    AGENTS,
    MERGE_QUEUE,
    PERMISSIONS,
    PROBLEMS,
    QUESTIONS,
    LivePane,
    matches,
)
from runeconsole.tui.pane import SUSPENDED as SUSPENDED_PANE

SOURCES = "sources"


def split_filter(text: str, sources: list[str]) -> tuple[str | None, str]:
    """``source:web fail`` -> (``web``, ``fail``); a bare source name names the source."""
    source, rest = None, []
    for word in text.split():
        if word.startswith("source:"):
            source = word[len("source:") :]
        elif word in sources and source is None:
            source = word
        else:
            rest.append(word)
    return source, " ".join(rest)


RESUMABLE = (OK, STALE)  # a context file of another verdict is refused by resume


class RowsPane(LivePane):
    """Rows of ``KIND`` from the store, keyed as the stream keys them."""

    KIND: ClassVar[str] = ""
    COLUMNS: ClassVar[tuple[tuple[str, str, int | None], ...]] = ()

    class Act(Message):
        """An action on a row, for the app to route to the row's source."""

        def __init__(self, action: str, source: str, key: str) -> None:
            super().__init__()
            self.action = action
            self.source = source
            self.key = key

    def __init__(self, store: FleetRows, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.store = store
        self.table = KeyedTable(self.COLUMNS, id=f"{self.PANE_ID}-table")

    def compose(self) -> ComposeResult:
        yield self.table

    def watch_dirs(self) -> list[Path]:
        return []  # fed by the stream, not by files

    def apply_changes(self, paths: set[Path]) -> None:
        pass

    def rescan(self) -> None:
        pass

    # -- what each pane says -----------------------------------------------------------

    def cells(self, key: str, row: dict[str, Any]) -> tuple[Any, ...]:
        raise NotImplementedError

    def search_fields(self, key: str, row: dict[str, Any]) -> tuple[Any, ...]:
        return (key,)

    def order(self, key: str) -> Any:
        return key

    def shown(self, key: str, row: dict[str, Any]) -> bool:
        return True

    # -- the template --------------------------------------------------------------------

    def source_of(self, key: str) -> str:
        return self.store.source(self.KIND, key)

    def visible(self, key: str, row: dict[str, Any]) -> bool:
        source, rest = split_filter(self.filter_text, self.store.sources)
        if source is not None and self.source_of(key) != source:
            return False
        return self.shown(key, row) and matches(rest, *self.search_fields(key, row))

    def moved(self, changed: set[str], removed: set[str]) -> None:
        """Redraw the rows the stream changed, drop the ones it removed."""
        table = self.table
        for key in removed:
            table.drop(key)
        added = False
        for key in changed:
            row = self.store.get(self.KIND, key)
            if row is None or not self.visible(key, row):
                table.drop(key)
                continue
            added |= not table.has(key)
            table.upsert(key, self.cells(key, row))
        if added:
            self.refilter()

    def refilter(self) -> None:
        keys = [
            key
            for key in sorted(self.store.keys(self.KIND), key=self.order)
            if (row := self.store.get(self.KIND, key)) is not None and self.visible(key, row)
        ]
        self.table.replace(
            [(key, self.cells(key, self.store.rows[self.KIND][key])) for key in keys]
        )

    def selected(self) -> tuple[str, str] | None:
        key = self.table.cursor_key()
        return None if key is None else (self.source_of(key), key)

    def ask(self, action: str) -> None:
        chosen = self.selected()
        if chosen is not None:
            self.post_message(self.Act(action, *chosen))


class SourcesPane(RowsPane):
    PANE_ID, TITLE = SOURCES, "Sources"
    COLUMNS = rows.SOURCE_COLUMNS
    HELP_KEYS = (
        ("STATE", "● green up, yellow connecting, red down (the reason is on the row)"),
        ("/ NAME", "in any pane, a source's name (or source:NAME) keeps its rows only"),
    )

    def source_of(self, key: str) -> str:
        return key

    def moved(self, changed: set[str], removed: set[str]) -> None:
        for name in self.store.sources:
            if not self.visible(name, {}):
                self.table.drop(name)
            elif name in changed or not self.table.has(name):
                self.table.upsert(name, self.cells(name, {}))

    def refilter(self) -> None:
        self.table.replace(
            [(n, self.cells(n, {})) for n in self.store.sources if self.visible(n, {})]
        )

    def cells(self, key: str, row: dict[str, Any]) -> tuple[Any, ...]:
        return rows.source_row(key, self.store.states.get(key, {}), self.store.counts(key))

    def search_fields(self, key: str, row: dict[str, Any]) -> tuple[Any, ...]:
        state = self.store.states.get(key, {})
        return (key, state.get("host"), state.get("root"), state.get("state"), state.get("reason"))


class FleetAgentsPane(RowsPane):
    PANE_ID, TITLE, KIND = AGENTS, "Agents", AGENT
    COLUMNS = rows.AGENT_COLUMNS
    BINDINGS = [
        Binding("d", "act('review')", "Review"),
        Binding("g", "act('attach')", "Go to"),
        Binding("h", "act('handoff')", "Handoff"),
        Binding("r", "act('respawn')", "Respawn"),
        Binding("x", "act('kill')", "Kill"),
        Binding("m", "act('say')", "Message", show=False),
        Binding("p", "act('peek')", "Peek", show=False),
    ]
    HELP_KEYS = (
        ("d", "review its changes (review AGENT --json on its source); decisions go there"),
        ("g", "attach: your tmux switches to it, or a new window ssh -t HOST tmux attach"),
        ("h / r / x", "hand off, re-spawn, kill: sent to the agent's source (confirmed)"),
        ("enter / p", "peek: its screen and last message, read on its source"),
        ("m", "a message to the agent, pasted into its pane on its source and submitted"),
    )

    def __init__(self, store: FleetRows, now: Callable[[], Any], **kwargs: Any) -> None:
        super().__init__(store, **kwargs)
        self.now = now
        self.settings = SupervisorSettings()

    def cells(self, key: str, row: dict[str, Any]) -> tuple[Any, ...]:
        record = rows.agent_record(key, row)
        observation = rows.observation_of(self.store.get(OBSERVATION, key))
        phase = row.get("phase")
        return rows.agent_row(
            self.source_of(key), record, phase, observation, self.settings, self.now()
        )

    def search_fields(self, key: str, row: dict[str, Any]) -> tuple[Any, ...]:
        return (key, row.get("status"), row.get("activity"), row.get("node_id"), row.get("phase"))

    def action_act(self, action: str) -> None:
        self.ask(action)

    def on_data_table_row_selected(self, event: KeyedTable.RowSelected) -> None:
        event.stop()
        self.ask("peek")


class FleetProblemsPane(RowsPane):
    PANE_ID, TITLE, KIND = PROBLEMS, "Problems", PROBLEM
    COLUMNS = rows.PROBLEM_COLUMNS
    HELP_KEYS = (("PROBLEM", "crashed, stale, waiting, low context: the project console's rules"),)

    def cells(self, key: str, row: dict[str, Any]) -> tuple[Any, ...]:
        return rows.problem_row(self.source_of(key), row)

    def search_fields(self, key: str, row: dict[str, Any]) -> tuple[Any, ...]:
        return (row.get("agent"), row.get("kind"), row.get("detail"))

    def order(self, key: str) -> Any:
        return (self.store.get(PROBLEM, key) or {}).get("order") or (9, 0, key)


class FleetQuestionsPane(RowsPane):
    PANE_ID, TITLE, KIND = QUESTIONS, "Questions", QUESTION
    COLUMNS = rows.QUESTION_COLUMNS
    BINDINGS = [Binding("a", "answer", "Answer"), Binding("enter", "answer", show=False)]
    HELP_KEYS = (("enter / a", "answer the selected question; it is sent to its source"),)

    def cells(self, key: str, row: dict[str, Any]) -> tuple[Any, ...]:
        return rows.question_row(self.source_of(key), row)

    def shown(self, key: str, row: dict[str, Any]) -> bool:
        return rows.question_open(row) or bool(row.get("error"))

    def search_fields(self, key: str, row: dict[str, Any]) -> tuple[Any, ...]:
        return (key, row.get("worker_name"), row.get("question"), row.get("urgency"))

    def order(self, key: str) -> Any:
        row = self.store.get(QUESTION, key) or {}
        return (row.get("urgency") != "blocking", row.get("asked_at") or "", key)

    def on_data_table_row_selected(self, event: KeyedTable.RowSelected) -> None:
        event.stop()
        self.action_answer()

    def action_answer(self) -> None:
        self.ask("answer")


class FleetPermissionsPane(RowsPane):
    PANE_ID, TITLE, KIND = PERMISSIONS, "Permissions", PERMISSION
    COLUMNS = rows.PERMISSION_COLUMNS
    BINDINGS = [Binding("a", "decide", "Decide"), Binding("enter", "decide", show=False)]
    HELP_KEYS = (
        ("enter / a", "decide the selected request; the decision is sent to its source"),
        ("y / n / t", "in the window: allow once, deny, deny with a reason"),
        ("Y / N / s", "in the window: always allow / deny (s: for all agents)"),
    )

    def __init__(self, store: FleetRows, now: Callable[[], Any], **kwargs: Any) -> None:
        super().__init__(store, **kwargs)
        self.now = now

    def cells(self, key: str, row: dict[str, Any]) -> tuple[Any, ...]:
        return rows.permission_row(self.source_of(key), row, self.now())

    def search_fields(self, key: str, row: dict[str, Any]) -> tuple[Any, ...]:
        return (key, row.get("agent"), row.get("tool"), row.get("subject"), row.get("state"))

    def order(self, key: str) -> Any:
        """Open requests first, oldest first; then decisions, newest first."""
        row = self.store.get(PERMISSION, key) or {}
        asked = parse_iso(row.get("asked_at"))
        stamp = asked.timestamp() if asked else 0.0
        return (0, stamp, key) if rows.permission_open(row) else (1, -stamp, key)

    def on_data_table_row_selected(self, event: KeyedTable.RowSelected) -> None:
        event.stop()
        self.action_decide()

    def action_decide(self) -> None:
        self.ask("decide")


class FleetQueuePane(RowsPane):
    PANE_ID, TITLE, KIND = MERGE_QUEUE, "Merge queue", QUEUE
    COLUMNS = rows.QUEUE_COLUMNS
    BINDINGS = [
        Binding("p", "process", "Process"),
        Binding("d", "review", "Review"),
        Binding("enter", "review", show=False),
    ]
    HELP_KEYS = (
        ("p", "process the selected entry's queue on its source (confirmed)"),
        ("enter / d", "review the changes of the selected entry's agent, on its source"),
    )

    def cells(self, key: str, row: dict[str, Any]) -> tuple[Any, ...]:
        return rows.queue_row(self.source_of(key), row)

    def search_fields(self, key: str, row: dict[str, Any]) -> tuple[Any, ...]:
        return (key, row.get("branch"), row.get("status"), row.get("node_id"))

    def order(self, key: str) -> Any:
        row = self.store.get(QUEUE, key) or {}
        position = row.get("position")
        return (self.source_of(key), position if isinstance(position, int) else 1 << 30, key)

    def action_process(self) -> None:
        self.ask("process")

    def on_data_table_row_selected(self, event: KeyedTable.RowSelected) -> None:
        event.stop()
        self.action_review()

    def action_review(self) -> None:
        """The review of the entry's agent (its ``identity_name``), on its source."""
        chosen = self.selected()
        row = self.store.get(QUEUE, chosen[1]) if chosen else None
        agent = row.get("identity_name") if row else None
        if chosen is None or not isinstance(agent, str) or not agent:
            self.notify("this entry names no agent to review", severity="warning")
            return
        self.post_message(self.Act("review", chosen[0], agent))


class FleetSuspendedPane(RowsPane):
    PANE_ID, TITLE, KIND = SUSPENDED_PANE, "Suspended", SUSPENDED
    COLUMNS = rows.SUSPENDED_COLUMNS
    BINDINGS = [Binding("s", "resume", "Resume")]
    HELP_KEYS = (
        ("VERDICT", "each context file's integrity, as its source judged it"),
        (
            "s",
            "resume the selected task on its source (asks first; shows and copies the injection)",
        ),
    )

    def action_resume(self) -> None:
        chosen = self.selected()
        row = self.store.get(SUSPENDED, chosen[1]) if chosen else None
        if row is None:
            self.notify("select a suspended task to resume", severity="warning")
        elif row.get("verdict") not in RESUMABLE:
            detail = row.get("detail") or row.get("verdict")
            self.notify(
                f"task #{row.get('task_id')} cannot resume: {detail}",
                severity="error",
                markup=False,
            )
        else:
            self.ask("resume")

    def cells(self, key: str, row: dict[str, Any]) -> tuple[Any, ...]:
        return rows.suspended_row(self.source_of(key), row)

    def search_fields(self, key: str, row: dict[str, Any]) -> tuple[Any, ...]:
        return (key, row.get("verdict"), row.get("worker"), row.get("task_id"))
