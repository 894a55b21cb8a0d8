"""One pipeline as the console shows it: its plan at the last good reading, why the DOT
cannot be read now (if it cannot), who runs it, the human gates that wait, and what is
wrong that the harness does not see. ``to_json`` is what ``pipelines --json`` prints and
the event stream carries; ``from_json`` reads it back on another machine."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from runeconsole.core.timeutil import iso_z, parse_iso
from runeconsole.services.pipelines.graph import FINISHED, STATUSES, Edge, Node, Plan

# Who runs a pipeline: the harness's two runners, or nobody seen (the CLI moves it by hand).
PIPELINE_RUNNER, ENGINE, NO_RUNNER = "pipeline_runner", "engine", "none"


@dataclass(frozen=True)
class Gate:
    """A human gate waiting for the operator."""

    stem: str  # the pipeline's file stem: its key
    prd: str
    node_id: str
    label: str
    acceptance: str
    mode: str  # the gate's kind of review (technical, business), as the DOT says
    runner: str  # PIPELINE_RUNNER: the DOT's status; ENGINE: the run's events
    since: datetime | None
    run_dir: str = ""  # the engine run that waits (ENGINE only)
    upstream: tuple[str, ...] = ()  # the nodes whose work it guards, nearest first

    @property
    def key(self) -> str:
        return f"{self.stem}/{self.node_id}"

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "pipeline": self.stem,
            "prd": self.prd,
            "node_id": self.node_id,
            "label": self.label,
            "acceptance": self.acceptance,
            "mode": self.mode,
            "runner": self.runner,
            "since": iso_z(self.since) if self.since else None,
            "run_dir": self.run_dir,
            "upstream": list(self.upstream),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Gate:
        return cls(
            str(data.get("pipeline") or ""),
            str(data.get("prd") or ""),
            str(data.get("node_id") or ""),
            str(data.get("label") or ""),
            str(data.get("acceptance") or ""),
            str(data.get("mode") or ""),
            str(data.get("runner") or ""),
            parse_iso(data.get("since")),
            str(data.get("run_dir") or ""),
            tuple(str(n) for n in data.get("upstream") or ()),
        )


@dataclass
class Pipeline:
    stem: str
    path: str
    plan: Plan | None = None  # the last good reading (None: never read well)
    error: str | None = None  # the DOT cannot be read now: why
    read_at: datetime | None = None  # when ``plan`` was read
    changed_at: datetime | None = None  # the newest of its files
    runner: str = NO_RUNNER
    runner_pid: int | None = None
    runner_alive: bool | None = None  # None: cannot tell (no /proc)
    states: dict[str, str] = field(default_factory=dict)  # node -> status (engine run)
    gates: list[Gate] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)

    @property
    def prd(self) -> str:
        return self.plan.prd if self.plan else self.stem

    @property
    def label(self) -> str:
        return self.plan.label if self.plan else ""

    def status_of(self, node: Node) -> str:
        """A node's status: the engine run's, where one ran it, else the DOT's."""
        return self.states.get(node.node_id, node.status)

    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(STATUSES, 0)
        for node in self.plan.nodes if self.plan else ():
            status = self.status_of(node)
            counts[status] = counts.get(status, 0) + 1
        return counts

    def is_complete(self) -> bool:
        """Every node finished by a good reading now; an unreadable or empty DOT never is."""
        if self.error or self.plan is None or not self.plan.nodes:
            return False
        return all(self.status_of(node) in FINISHED for node in self.plan.nodes)

    @property
    def state(self) -> str:
        if self.error:
            return "unreadable"
        if self.gates:
            return "gate"
        if self.is_complete():
            return "complete"
        counts = self.counts()
        if counts.get("failed"):
            return "failed"
        if counts.get("active") or counts.get("impl_complete"):
            return "running"
        return "pending"

    def to_json(self) -> dict[str, Any]:
        plan = self.plan
        return {
            "pipeline": self.stem,
            "path": self.path,
            "prd": self.prd,
            "label": self.label,
            "state": self.state,
            "error": self.error,
            "read_at": iso_z(self.read_at) if self.read_at else None,
            "changed_at": iso_z(self.changed_at) if self.changed_at else None,
            "runner": {"kind": self.runner, "pid": self.runner_pid, "alive": self.runner_alive},
            "counts": self.counts(),
            "gates": [gate.to_json() for gate in self.gates],
            "findings": list(self.findings),
            "graph": dict(plan.attrs) if plan else {},
            "nodes": [
                {
                    **node.to_json(),
                    "status": self.status_of(node),
                    "layer": plan.layers[node.node_id],
                }
                for node in plan.nodes
            ]
            if plan
            else [],
            "edges": [edge.to_json() for edge in plan.edges] if plan else [],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Pipeline:
        """A pipeline as another machine's ``to_json`` said it (the fleet's stream)."""
        nodes = [n for n in data.get("nodes") or () if isinstance(n, dict)]
        edges = [e for e in data.get("edges") or () if isinstance(e, dict)]
        plan = None
        if nodes or data.get("graph"):
            attrs = {str(k): str(v) for k, v in (data.get("graph") or {}).items()}
            plan = Plan(
                str(data.get("prd") or ""),
                attrs,
                tuple(Node(str(n["node_id"]), _strings(n.get("attrs"))) for n in nodes),
                tuple(Edge(str(e["from"]), str(e["to"]), _edge_attrs(e)) for e in edges),
                {str(n["node_id"]): int(n.get("layer") or 0) for n in nodes},
            )
        found = data.get("runner")
        runner: dict[str, Any] = found if isinstance(found, dict) else {}
        pid = runner.get("pid")
        alive = runner.get("alive")
        error = data.get("error")
        return cls(
            str(data.get("pipeline") or ""),
            str(data.get("path") or ""),
            plan,
            error if isinstance(error, str) else None,
            parse_iso(data.get("read_at")),
            parse_iso(data.get("changed_at")),
            str(runner.get("kind") or NO_RUNNER),
            pid if isinstance(pid, int) else None,
            alive if isinstance(alive, bool) else None,
            {str(n["node_id"]): str(n.get("status")) for n in nodes if n.get("status")},
            [Gate.from_json(g) for g in data.get("gates") or () if isinstance(g, dict)],
            [str(f) for f in data.get("findings") or ()],
        )


def _strings(value: object) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


def _edge_attrs(edge: dict[str, Any]) -> dict[str, str]:
    attrs = {"condition": str(edge.get("condition") or ""), "label": str(edge.get("label") or "")}
    if edge.get("rework"):
        attrs["style"] = "dashed"
    return attrs
