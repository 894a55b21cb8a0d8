"""Problems: crashed, stale, stopped, waiting and low-context agents, most urgent first."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message

from runeconsole.services.fleet import FleetModel
from runeconsole.services.supervision.problems import Problem, find_problems
from runeconsole.services.supervisor import Supervisor
from runeconsole.tui.feed import FleetChanged
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
    "stopped": "bold red",
    "context": "yellow",
    "waiting": "bold yellow",
    "budget": "bold red",
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
    class GotoAgent(Message):
        """The operator asked to see this agent in the Agents pane."""

        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    BINDINGS = [Binding("enter", "goto", "Go to agent", show=False)]
    PANE_ID = PROBLEMS
    TITLE = "Problems"
    HELP_KEYS = (("enter", "show the agent in the Agents pane"),)

    def __init__(self, supervisor: Supervisor, fleet: FleetModel, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.supervisor = supervisor
        self.fleet = fleet
        self.problems: dict[str, Problem] = {}
        self._of_agent: dict[str, list[str]] = {}  # agent key -> its problems' keys
        self._order: list[str] = []  # problem keys, most urgent first
        self.filter_text = ""
        self.table = KeyedTable(COLUMNS, id="problems-table")

    def compose(self) -> ComposeResult:
        yield self.table

    def watch_dirs(self) -> list[Path]:
        return []  # the app feeds the fleet model; problems are derived from it

    def on_mount(self) -> None:
        self.follow(self.fleet.records.keys())
        self._sort()

    def apply_changes(self, paths: set[Path]) -> None:
        pass

    def rescan(self) -> None:
        pass

    def on_fleet_changed(self, message: FleetChanged) -> None:
        self.follow(message.change.changed | message.change.removed)

    def tick(self) -> None:
        """A stale agent's "no heartbeat for …" grows: the rows on screen are redrawn."""
        agents = {
            self.problems[key].key for key in self.table.visible_keys() if key in self.problems
        }
        stale = [key for key in agents if any(k.endswith("/stale") for k in self._of_agent[key])]
        if stale:
            self.follow(stale)

    def follow(self, agents: Iterable[str]) -> None:
        """Work out again the problems of ``agents`` (from the fleet model, no file read)."""
        fleet, settings = self.fleet, self.supervisor.settings
        now = self.supervisor.clock.now()
        found: dict[str, list[Problem]] = {}
        for agent in agents:
            record = fleet.get(agent)
            problems: list[Problem] = []
            if record is not None:
                observation = fleet.observations.get(agent)
                seen = {agent: observation} if observation is not None else {}
                problems = find_problems([record], seen, settings, now=now)
            found[agent] = problems
        self._apply(found)

    def show(self, problems: list[Problem]) -> None:
        """Exactly these problems (those of agents not among them are dropped)."""
        found: dict[str, list[Problem]] = {key: [] for key in self._of_agent}
        for problem in problems:
            found[problem.key] = [*found.get(problem.key, []), problem]
        self._apply(found)

    def _apply(self, found: dict[str, list[Problem]]) -> None:
        """Each agent's problems now; rows change only where they differ."""
        touched = False
        for agent, problems in found.items():
            keys = [problem_key(p) for p in problems]
            for key in self._of_agent.get(agent, []):
                if key not in keys:
                    self.problems.pop(key, None)
                    self.table.drop(key)
                    touched = True
            for key, problem in zip(keys, problems, strict=True):
                if self.problems.get(key) != problem:
                    touched = True
                    if key not in self.problems and problem.kind == "stopped" and self.is_mounted:
                        said = f"{agent} stopped"
                        self.app.notify(problem.detail, title=said, severity="error", markup=False)
                    self.problems[key] = problem
                    self._draw(key, problem)
            if keys:
                self._of_agent[agent] = keys
            else:
                self._of_agent.pop(agent, None)
        if touched:
            self._sort()

    def _draw(self, key: str, problem: Problem) -> None:
        if self.filter_text.lower() in f"{key} {problem.detail}".lower():
            self.table.upsert(key, problem_values(problem))
        else:
            self.table.drop(key)

    def _sort(self) -> None:
        """Most urgent first (each problem's ``sort_key``)."""
        order = {key: p.sort_key for key, p in self.problems.items()}
        last = (99, float("inf"), "")
        ranked = sorted(order, key=order.__getitem__)
        moved = ranked != self._order  # context left changing can move a row among its rank
        self._order = ranked
        self.table.reorder(key=lambda cells: order.get(f"{cells[1]}/{cells[0]}", last), force=moved)
        self.summarise({"problems": len(self.problems)})

    def filter(self, text: str) -> None:
        self.filter_text = text
        for key, problem in self.problems.items():
            self._draw(key, problem)
        self._sort()

    def on_data_table_row_selected(self, event: KeyedTable.RowSelected) -> None:
        event.stop()
        self.action_goto()

    def action_goto(self) -> None:
        key = self.table.cursor_key()
        problem = self.problems.get(key or "")
        if problem is not None:
            self.post_message(self.GotoAgent(problem.key))
