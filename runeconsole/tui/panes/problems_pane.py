"""Problems: crashed, stale, stopped, waiting and low-context agents, budgets, and the
pipelines' human gates that wait, most urgent first.

The problems are the fleet model's (``FleetRecords``: judged once, there, when an agent
changes); this pane draws them, in both consoles. Time alone changes one thing: a stale
agent's silence grows, so the stale rows on screen are judged again each second, and a
gate's wait grows (its rows are the Pipelines pane's gates, routed here by the app:
``show_gates``; enter on one opens its window)."""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.message import Message

from runeconsole.services.fleet import FleetRecords, Problem
from runeconsole.services.pipelines.record import Gate
from runeconsole.tui.panes.pane import PROBLEMS, Pane
from runeconsole.tui.pipelines.cells import gate_detail
from runeconsole.tui.support.messages import FleetChanged

COLUMNS = (
    ("kind", "PROBLEM", 12),
    ("agent", "AGENT", 24),
    ("detail", "DETAIL", None),
)
KIND_STYLE = {
    "crashed": "bold red",
    "setup": "bold red",
    "unreadable": "bold red",
    "stale": "red",
    "stopped": "bold red",
    "context": "yellow",
    "waiting": "bold yellow",
    "budget": "bold red",
    "gate": "bold yellow",
}
GATE, GATE_RANK = "gate", 2  # a gate waits on a person as a blocking question does


def problem_key(problem: Problem) -> str:
    return f"{problem.key}/{problem.kind}"


def problem_values(problem: Problem) -> tuple[object, ...]:
    return (
        Text(problem.kind, KIND_STYLE.get(problem.kind, "")),
        Text(problem.key),
        Text(problem.detail),
    )


class ProblemsPane(Pane[Problem]):
    class GotoAgent(Message):
        """The operator asked to see this agent in the Agents pane."""

        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    class GateWanted(Message):
        """Enter on a gate's row: its window (the app asks the Pipelines pane)."""

        def __init__(self, pipeline: str, gate: Gate) -> None:
            super().__init__()
            self.pipeline = pipeline
            self.gate = gate

    BINDINGS = [Binding("enter", "goto", "Go to agent", show=False)]
    ENTER = "goto"
    PANE_ID = PROBLEMS
    TITLE = "Problems"
    HELP_KEYS = (
        ("enter", "show the agent in the Agents pane; on a gate, answer it"),
        ("PROBLEM", "crashed, stale, stopped, waiting, low context, budget: the monitor's rules"),
        ("gate", "a pipeline's human gate waits for you: PRD node: label, how long"),
    )
    COLUMNS = COLUMNS

    def __init__(self, fleet: FleetRecords, **kwargs: Any) -> None:
        super().__init__(clock=fleet.clock, **kwargs)
        self.fleet = fleet
        self._of_agent: dict[str, list[str]] = {}  # agent key -> its problems' keys
        self.gates: dict[str, tuple[str, Gate]] = {}  # gate row key -> (pipeline, gate)
        self._of_pipeline: dict[str, list[str]] = {}  # pipeline key -> its gate rows

    def on_mount(self) -> None:
        self.show_agents(set(self.fleet.problems) | set(self._of_agent))

    def on_fleet_changed(self, message: FleetChanged) -> None:
        self.show_agents(message.change.problems)

    def cells(self, key: str, record: Problem) -> tuple[object, ...]:
        return problem_values(record)

    def search_fields(self, key: str, record: Problem) -> tuple[str, ...]:
        return (key, record.detail)

    def order(self, key: str, record: Problem) -> tuple[int, float, str]:
        """Most urgent first: a row whose rank moved (context left falling) moves too."""
        return record.sort_key

    def figures(self) -> dict[str, int]:
        return {"problems": len(self.records)}

    def show_agents(self, agents: AbstractSet[str]) -> None:
        """Draw again the problems of ``agents`` as the model holds them now."""
        problems = self.fleet.problems
        for agent in agents:
            found = problems.get(agent, [])
            keys = [problem_key(p) for p in found]
            for key in self._of_agent.get(agent, []):
                if key not in keys:
                    self.drop(key)
            for key, problem in zip(keys, found, strict=True):
                if self.records.get(key) != problem:
                    if key not in self.records and problem.kind == "stopped" and self.is_mounted:
                        said = f"{agent} stopped"
                        self.app.notify(problem.detail, title=said, severity="error", markup=False)
                    self.put(key, problem)
            if keys:
                self._of_agent[agent] = keys
            else:
                self._of_agent.pop(agent, None)
        self.finish()

    def show_gates(self, gates: dict[str, list[Gate]]) -> None:
        """The gates that wait now of these pipelines (by their keys in the Pipelines
        pane): a row each, the others of those pipelines dropped."""
        now = self.now()
        for pipeline, waiting in gates.items():
            keys = []
            for gate in waiting:
                key = problem_key(self._gate_problem(pipeline, gate, now))
                keys.append(key)
                self.gates[key] = (pipeline, gate)
                self.put(key, self._gate_problem(pipeline, gate, now))
            for key in self._of_pipeline.get(pipeline, []):
                if key not in keys:
                    self.gates.pop(key, None)
                    self.drop(key)
            if keys:
                self._of_pipeline[pipeline] = keys
            else:
                self._of_pipeline.pop(pipeline, None)
        self.finish()

    def _gate_problem(self, pipeline: str, gate: Gate, now: Any) -> Problem:
        """A gate as a problem: its row's key is ``<pipeline>/<node>/gate``."""
        return Problem(f"{pipeline}/{gate.node_id}", GATE, GATE_RANK, gate_detail(gate, now))

    def tick(self) -> None:
        """A stale agent's "no heartbeat for …" grows: the ones on screen are judged
        again as of now."""
        stale = {
            problem.key
            for key in self.table.visible_keys()
            if (problem := self.records.get(key)) is not None and problem.kind == "stale"
        }
        if stale:
            self.show_agents(set(self.fleet.restate(stale, self.now()).problems))
        now = self.now()
        for key in self.table.visible_keys():
            found = self.gates.get(key)
            if found is not None:
                self.table.set_cell(key, "detail", Text(gate_detail(found[1], now)))

    def action_goto(self) -> None:
        chosen = self.selected()
        if chosen is None:
            return
        gate = self.gates.get(chosen[0])
        if gate is not None:
            self.post_message(self.GateWanted(*gate))
        else:
            self.post_message(self.GotoAgent(chosen[1].key))
