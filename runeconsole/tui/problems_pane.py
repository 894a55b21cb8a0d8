"""Problems: crashed, stale, waiting and low-context agents, most urgent first."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable

from runeconsole.services.supervision.problems import Problem, find_problems
from runeconsole.services.supervisor import Supervisor
from runeconsole.tui.keyed_table import KeyedTable
from runeconsole.tui.pane import PROBLEMS, LivePane

COLUMNS = (
    ("kind", "PROBLEM", 12),
    ("agent", "AGENT", 24),
    ("detail", "DETAIL", None),
)
KIND_STYLE = {
    "crashed": "bold red",
    "unreadable": "bold red",
    "stale": "red",
    "context": "yellow",
    "waiting": "bold yellow",
}


def problem_key(problem: Problem) -> str:
    return f"{problem.key}/{problem.kind}"


def problem_values(problem: Problem) -> tuple[object, ...]:
    return (
        Text(problem.kind, KIND_STYLE.get(problem.kind, "")),
        Text(problem.key),
        Text(problem.detail),
    )


class ProblemsPane(LivePane):
    BINDINGS = [Binding("enter", "goto", "Go to agent", show=False)]
    PANE_ID = PROBLEMS
    TITLE = "Problems"
    HELP_KEYS = (("enter", "show the agent in the Agents pane"),)

    def __init__(self, supervisor: Supervisor, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.supervisor = supervisor
        self.problems: dict[str, Problem] = {}
        self._order: list[str] = []  # problem keys, most urgent first
        self.filter_text = ""

    def compose(self) -> ComposeResult:
        yield KeyedTable(COLUMNS, id="problems-table")

    @property
    def table(self) -> KeyedTable:
        return self.query_one(KeyedTable)

    def watch_dirs(self) -> list[Path]:
        paths = self.supervisor.paths
        return [paths.identities, paths.supervisor]

    def on_mount(self) -> None:
        self.follow_agents()

    def follow_agents(self) -> None:
        """Problems from the Agents pane's records and screen readings, already in memory:
        re-reading every identity file on each event would cost a fleet's worth of reads."""
        agents = self.app.agents_pane  # type: ignore[attr-defined]
        settings = self.supervisor.settings
        self.show(find_problems(agents.records.values(), agents.observations, settings))

    def apply_changes(self, paths: set[Path]) -> None:
        self.follow_agents()

    def rescan(self) -> None:
        self.follow_agents()

    def tick(self) -> None:
        self.follow_agents()  # an agent going stale is a matter of time, not of a file

    def show(self, problems: list[Problem]) -> None:
        """Rows by key; the order (most urgent first) is each problem's ``sort_key``."""
        fresh = {problem_key(p): p for p in problems}
        for key in [k for k in self.problems if k not in fresh]:
            self.table.drop(key)
        self.problems = fresh
        order = {key: p.sort_key for key, p in fresh.items()}
        for key, problem in fresh.items():
            if self.filter_text.lower() in f"{key} {problem.detail}".lower():
                self.table.upsert(key, problem_values(problem))
            else:
                self.table.drop(key)
        last = (99, float("inf"), "")
        ranked = sorted(order, key=order.__getitem__)
        moved = ranked != self._order  # context left changing can move a row among its rank
        self._order = ranked
        self.table.reorder(key=lambda cells: order.get(f"{cells[1]}/{cells[0]}", last), force=moved)
        self.summarise({"problems": len(fresh)})

    def filter(self, text: str) -> None:
        self.filter_text = text
        self.show(list(self.problems.values()))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_goto()

    def action_goto(self) -> None:
        key = self.table.cursor_key()
        problem = self.problems.get(key or "")
        if problem is not None:
            self.app.goto_agent(problem.key)  # type: ignore[attr-defined]
