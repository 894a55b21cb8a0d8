"""A pipeline's plan as the harness means it: nodes with a status, a handler, a bead and
a worker type, edges with their condition, and the order work flows in.

Where a rejection sends work back (``rework_targets``, ``between``): the ``fail`` edges of
the decision after a gate, and every node on the way from there to the gate.

The order (``layered``) is the harness's dependency map: an edge whose condition is
``fail`` (or that is drawn dashed) goes back for rework and is not a dependency, as
``pipeline_runner`` reads it; what remains is laid out in layers from the start node, a
node one layer below the deepest node it waits on. Whatever cycle is left (a hand-made
loop) is broken where it is met, so every node is shown once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from runeconsole.services.pipelines.dot import Graph

PENDING, ACTIVE, IMPL_COMPLETE = "pending", "active", "impl_complete"
VALIDATED, ACCEPTED, FAILED = "validated", "accepted", "failed"
STATUSES = (PENDING, ACTIVE, IMPL_COMPLETE, VALIDATED, ACCEPTED, FAILED)
FINISHED = frozenset({VALIDATED, ACCEPTED})
HUMAN_GATE = "wait.human"
EXIT = "exit"
CONDITIONAL = "conditional"

# The shapes EngineRunner dispatches on, for a node that names no handler.
_SHAPE_HANDLERS = {
    "mdiamond": "start",
    "msquare": EXIT,
    "box": "codergen",
    "hexagon": HUMAN_GATE,
    "diamond": "conditional",
    "parallelogram": "tool",
    "component": "parallel",
    "tripleoctagon": "fan_in",
    "house": "manager",
    "octagon": "research",
}
_CRITERION = re.compile(r"\b(AC-[\w.-]+)")


@dataclass(frozen=True)
class Node:
    node_id: str
    attrs: dict[str, str]

    @property
    def status(self) -> str:
        return self.attrs.get("status", PENDING).strip() or PENDING

    @property
    def handler(self) -> str:
        handler = self.attrs.get("handler", "").strip()
        return handler or _SHAPE_HANDLERS.get(self.attrs.get("shape", "").lower(), "")

    @property
    def label(self) -> str:
        """The label on one line (``\\n`` in DOT is a line break)."""
        text = self.attrs.get("label", self.node_id)
        return " ".join(re.split(r"\\[nlr]|\n", text)).strip() or self.node_id

    @property
    def bead_id(self) -> str:
        return self.attrs.get("bead_id", "")

    @property
    def worker_type(self) -> str:
        return self.attrs.get("worker_type", "")

    @property
    def acceptance(self) -> str:
        return self.attrs.get("acceptance", "")

    def criteria(self) -> list[str]:
        """The acceptance criteria's ids (``AC-1 [manual]: …`` -> ``AC-1``)."""
        return list(dict.fromkeys(_CRITERION.findall(self.acceptance)))

    @property
    def is_human_gate(self) -> bool:
        return self.handler == HUMAN_GATE

    def to_json(self) -> dict[str, Any]:
        return {
            "node_id": self.node_id,
            "label": self.label,
            "status": self.status,
            "handler": self.handler,
            "bead_id": self.bead_id,
            "worker_type": self.worker_type,
            "acceptance": self.acceptance,
            "attrs": self.attrs,
        }


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    attrs: dict[str, str]

    @property
    def condition(self) -> str:
        return self.attrs.get("condition", "")

    @property
    def label(self) -> str:
        return self.attrs.get("label", "")

    @property
    def goes_back(self) -> bool:
        """Rework, not a dependency: ``condition="fail"`` or drawn dashed (the runner's
        rule)."""
        return self.condition.strip().lower() == "fail" or "dashed" in self.attrs.get("style", "")

    def to_json(self) -> dict[str, Any]:
        return {
            "from": self.source,
            "to": self.target,
            "condition": self.condition,
            "label": self.label,
            "rework": self.goes_back,
        }


@dataclass(frozen=True)
class Plan:
    """One DOT pipeline as read: its graph attributes, nodes in dependency order with
    their layer, and edges."""

    name: str
    attrs: dict[str, str]
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    layers: dict[str, int]

    @classmethod
    def of(cls, graph: Graph) -> Plan:
        nodes = {node_id: Node(node_id, attrs) for node_id, attrs in graph.nodes.items()}
        edges = tuple(Edge(s, t, a) for s, t, a in graph.edges)
        layers = layered(list(nodes), edges)
        ordered = sorted(nodes.values(), key=lambda n: layers[n.node_id])
        return cls(graph.name, dict(graph.attrs), tuple(ordered), edges, layers)

    @property
    def prd(self) -> str:
        return self.attrs.get("prd_ref") or self.name

    @property
    def label(self) -> str:
        return self.attrs.get("label", "")

    def node(self, node_id: str) -> Node | None:
        for node in self.nodes:
            if node.node_id == node_id:
                return node
        return None

    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(STATUSES, 0)
        for node in self.nodes:
            counts[node.status] = counts.get(node.status, 0) + 1
        return counts

    def incoming(self, node_id: str) -> list[Edge]:
        return [edge for edge in self.edges if edge.target == node_id]

    def upstream(self, node_id: str) -> list[str]:
        """Every node the work of ``node_id`` comes from (forward edges, transitively),
        nearest first."""
        seen: list[str] = []
        frontier = [node_id]
        while frontier:
            following = []
            for current in frontier:
                for edge in self.incoming(current):
                    if not edge.goes_back and edge.source not in seen and edge.source != node_id:
                        seen.append(edge.source)
                        following.append(edge.source)
            frontier = following
        return seen

    def is_complete(self) -> bool:
        """Every node finished, and there is at least one (an empty node list is never
        complete: the harness's own defect)."""
        return bool(self.nodes) and all(node.status in FINISHED for node in self.nodes)


def layered(node_ids: list[str], edges: tuple[Edge, ...]) -> dict[str, int]:
    """Each node's layer: 0 for a node waiting on none, else one below the deepest node
    it waits on (forward edges only; a leftover cycle broken where it is met)."""
    waits: dict[str, list[str]] = {node: [] for node in node_ids}
    for edge in edges:
        if not edge.goes_back and edge.target in waits and edge.source in waits:
            waits[edge.target].append(edge.source)
    layers: dict[str, int] = {}
    for start in node_ids:
        if start in layers:
            continue
        # Depth-first without recursion (a 10,000-node chain must not blow the stack).
        stack: list[tuple[str, int]] = [(start, 0)]
        visiting: set[str] = set()
        while stack:
            node, index = stack.pop()
            if index == 0:
                visiting.add(node)
            sources = waits[node]
            if index < len(sources):
                stack.append((node, index + 1))
                source = sources[index]
                if source not in layers and source not in visiting:
                    stack.append((source, 0))
                continue
            visiting.discard(node)
            layers[node] = max((layers[s] + 1 for s in sources if s in layers), default=0)
    return layers


def rework_targets(plan: Plan, gate: str) -> list[str]:
    """Where a rejection of ``gate`` sends the work back: the ``fail`` edges' targets of
    the conditional node after it (``decide -> impl [condition=fail]``, or an engine
    expression that says ``rejected``), else the gate's own upstream work nodes."""
    targets: list[str] = []
    after = [e.target for e in plan.edges if e.source == gate and not e.goes_back]
    for node_id in after:
        node = plan.node(node_id)
        if node is None or node.handler != CONDITIONAL:
            continue
        for edge in plan.edges:
            said = edge.condition.strip().lower()
            if edge.source == node_id and (said == "fail" or "reject" in said):
                targets.append(edge.target)
    if targets:
        return list(dict.fromkeys(targets))
    return [
        n for n in plan.upstream(gate)[:1] if (node := plan.node(n)) and node.handler != "start"
    ]


def between(plan: Plan, start: str, gate: str) -> list[str]:
    """``start`` and every node on a forward path from it to ``gate`` (the work a
    rejection sends back), in plan order."""
    before_gate = set(plan.upstream(gate))
    reached, frontier = {start}, [start]
    while frontier:
        following = []
        for node in frontier:
            for edge in plan.edges:
                if edge.source == node and not edge.goes_back and edge.target not in reached:
                    reached.add(edge.target)
                    following.append(edge.target)
        frontier = following
    keep = (reached & before_gate) | {start}
    return [n.node_id for n in plan.nodes if n.node_id in keep and n.node_id != gate]
