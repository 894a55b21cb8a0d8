"""How a pipeline and its nodes are drawn: the board's row (stem, PRD, state in colour,
progress counts, gates waiting, its runner, last change), a node's row (indented by its
layer, status in colour, agent, incoming edges, then handler, bead and worker: what an
80-column pane shows first is who works on it and what it waits on), a gate's detail in
the Problems pane."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text

from runeconsole.core.timeutil import format_age
from runeconsole.services.pipelines.agents import NodeWork
from runeconsole.services.pipelines.graph import (
    ACCEPTED,
    ACTIVE,
    FAILED,
    IMPL_COMPLETE,
    PENDING,
    VALIDATED,
    Node,
    Plan,
)
from runeconsole.services.pipelines.record import ENGINE, NO_RUNNER, Gate, Pipeline

PIPELINE_COLUMNS: tuple[tuple[str, str, int | None], ...] = (
    ("pipeline", "PIPELINE", None),
    ("prd", "PRD", None),
    ("state", "STATE", 10),
    ("progress", "PROGRESS", None),
    ("gates", "GATES", 5),
    ("runner", "RUNNER", None),
    ("changed", "CHANGED", 7),
    ("note", "NOTE", None),
)
NODE_COLUMNS: tuple[tuple[str, str, int | None], ...] = (
    ("node", "NODE", None),
    ("status", "STATUS", 13),
    ("agent", "AGENT", None),
    ("from", "FROM", None),
    ("handler", "HANDLER", None),
    ("bead", "BEAD", None),
    ("worker", "WORKER", None),
)
STATE_STYLE = {
    "gate": "bold yellow",
    "unreadable": "bold red",
    "complete": "green",
    "failed": "red",
    "running": "blue",
    "pending": "dim",
}
STATUS_STYLE = {
    PENDING: "dim",
    ACTIVE: "bold blue",
    IMPL_COMPLETE: "cyan",
    VALIDATED: "green",
    ACCEPTED: "bold green",
    FAILED: "bold red",
}
# The progress cell: finished, under way, failed, not started.
PROGRESS = (
    ((VALIDATED, ACCEPTED), "✓", "green"),
    ((ACTIVE, IMPL_COMPLETE), "▶", "blue"),
    ((FAILED,), "✗", "red"),
    ((PENDING,), "·", "dim"),
)
MAX_NAME = 24  # a stem longer than this is cut
MAX_PRD = 20  # a PRD longer than this is cut (the board's first five columns fit 80)
MAX_INDENT = 6  # layers deeper than this are indented no further
NO_AGENT = Text("no agent", "dim")


def cut(text: str, width: int = MAX_NAME) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def state_text(pipeline: Pipeline) -> Text:
    state = pipeline.state
    return Text(state, STATE_STYLE.get(state, ""))


def progress_text(pipeline: Pipeline) -> Text:
    """``3✓ 1▶ 1✗ 2·``: nodes finished, under way, failed, not started (none: -)."""
    counts = pipeline.counts()
    text = Text()
    for statuses, glyph, style in PROGRESS:
        count = sum(counts.get(status, 0) for status in statuses)
        if count:
            if text:
                text.append(" ")
            text.append(f"{count}{glyph}", style)
    return text or Text("-", "dim")


def runner_text(pipeline: Pipeline) -> Text:
    """``runner ●`` (``pipeline_runner``, running), ``engine gone``, ``cli`` (moved by hand):
    short, so the NOTE after it stays in an 80-column pane."""
    if pipeline.runner == NO_RUNNER:
        return Text("cli", "dim")
    name = "engine" if pipeline.runner == ENGINE else "runner"
    if pipeline.runner_alive is True:
        return Text.assemble(name + " ", ("●", "green"))
    if pipeline.runner_alive is False:
        return Text(f"{name} gone", "red")
    return Text(f"{name} ?", "dim")


def changed_text(pipeline: Pipeline, now: datetime) -> str:
    changed = pipeline.changed_at
    return format_age((now - changed).total_seconds()) if changed else "-"


def gates_text(pipeline: Pipeline) -> Text:
    return Text(str(len(pipeline.gates)), "bold yellow") if pipeline.gates else Text("")


def note_text(pipeline: Pipeline) -> Text:
    """Why it cannot be read (red), else its first finding (yellow), else its label."""
    if pipeline.error:
        return Text(f"unreadable: {pipeline.error}", "red")
    if pipeline.findings:
        more = len(pipeline.findings) - 1
        return Text(pipeline.findings[0] + (f" (+{more})" if more else ""), "yellow")
    return Text(pipeline.label, "dim")


def pipeline_cells(pipeline: Pipeline, now: datetime) -> tuple[object, ...]:
    return (
        Text(cut(pipeline.stem), "bold"),
        cut(pipeline.prd, MAX_PRD),
        state_text(pipeline),
        progress_text(pipeline),
        gates_text(pipeline),
        runner_text(pipeline),
        changed_text(pipeline, now),
        note_text(pipeline),
    )


# -- nodes -------------------------------------------------------------------------------


def node_name(plan: Plan, node: Node) -> Text:
    layer = plan.layers.get(node.node_id, 0)
    if not layer:
        return Text(node.node_id)
    return Text.assemble((" " * min(layer - 1, MAX_INDENT) + "└ ", "dim"), node.node_id)


def status_text(status: str) -> Text:
    return Text(status, STATUS_STYLE.get(status, ""))


def edge_from(plan: Plan, node: Node) -> Text:
    """The node's incoming edges: ``decide [fail]`` (a condition in brackets, rework dim)."""
    text = Text()
    for edge in plan.incoming(node.node_id):
        if text:
            text.append(", ")
        text.append(edge.source, "dim" if edge.goes_back else "")
        if edge.condition:
            text.append(f" [{edge.condition}]", "yellow" if edge.goes_back else "cyan")
    return text


def work_text(work: NodeWork | None) -> Text:
    """The agents on a node (and its queue entries), or ``no agent`` dim."""
    if not work:
        return NO_AGENT.copy()
    text = Text()
    for key, _liveness, status in work.agents:
        if text:
            text.append(", ")
        text.append(key, "bold")
        if status:
            text.append(f" {status}", "dim")
    for entry, status in work.entries:
        if text:
            text.append(", ")
        text.append(f"queue {entry}", "magenta")
        text.append(f" {status}", "dim")
    return text


def node_cells(pipeline: Pipeline, node: Node, work: NodeWork | None) -> tuple[object, ...]:
    plan = pipeline.plan
    assert plan is not None
    return (
        node_name(plan, node),
        status_text(pipeline.status_of(node)),
        work_text(work),
        edge_from(plan, node),
        node.handler,
        node.bead_id,
        node.worker_type,
    )


# -- gates ---------------------------------------------------------------------------------


def waiting_for(gate: Gate, now: datetime) -> str:
    return format_age((now - gate.since).total_seconds()) if gate.since else "?"


def gate_detail(gate: Gate, now: datetime) -> str:
    """The Problems pane's detail of a gate: ``PRD node: label, waiting 5m``."""
    return f"{gate.prd} {gate.node_id}: {gate.label}, waiting {waiting_for(gate, now)}"
