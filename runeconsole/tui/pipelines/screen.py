"""One pipeline's screen: its nodes in dependency order (indented by layer, ``└`` under
the node they wait on), each with its status in colour, handler, bead, worker type, the
agent working on it (``no agent`` when none) and the edges it comes from (a condition in
brackets, rework dim); under the table, everything about the selected node. ``t``
switches to the pipeline's findings (red) and its timeline: who moved what, oldest first.

A DOT that cannot be read now is said in red over its last good reading. ``enter`` or
``g`` on a waiting gate opens its window (``gate_window.py``), ``d`` the review of the
node's agent. The screen is the same in both consoles: it is handed what it needs as
callbacks (the agents per node, the timeline's reading, the gate's window); the fleet
console's has no timeline (the stream carries the pipeline, not its history).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static

from runeconsole.core.timeutil import iso_z
from runeconsole.services.pipelines.agents import NodeWork
from runeconsole.services.pipelines.record import Gate, Pipeline
from runeconsole.services.pipelines.timeline import Moment
from runeconsole.tui.modals.help_screen import HelpScreen
from runeconsole.tui.pipelines.cells import (
    NODE_COLUMNS,
    edge_from,
    node_cells,
    progress_text,
    runner_text,
    state_text,
    status_text,
    work_text,
)
from runeconsole.tui.support.messages import ReviewWanted
from runeconsole.tui.support.workers import background, cancelled
from runeconsole.tui.widgets.footer import ConsoleFooter
from runeconsole.tui.widgets.keyed_table import KeyedTable
from runeconsole.tui.widgets.table_view import TableView

HELP = (
    ("j / k, ↑ / ↓", "move between nodes (in dependency order: └ under what it waits on)"),
    ("enter / g", "the gate window of the selected gate (g: else the first that waits)"),
    ("d", "review the changes of the selected node's agent"),
    ("t", "findings and the timeline (who moved what), or back to the nodes"),
    (
        "STATUS",
        "pending, active, impl_complete, validated, accepted, failed (an engine run's "
        "status where one ran it)",
    ),
    ("AGENT", "who works on the node: its identity, tmux session, worktree or queue entry"),
    ("FROM", "the edges it comes from: [condition]; a rework edge dim"),
    ("esc / q", "close"),
)
WorkOf = Callable[[Pipeline], Mapping[str, NodeWork]]
ReadTimeline = Callable[[Pipeline], list[Moment]]
OpenGate = Callable[[Gate, Pipeline], None]


class PipelineScreen(Screen[None]):
    DEFAULT_CSS = """
    PipelineScreen {
        layout: vertical;
    }
    PipelineScreen #pipeline-title {
        height: auto;
        padding: 0 1;
        background: $panel;
    }
    PipelineScreen #pipeline-nodes {
        height: 1fr;
        scrollbar-size-vertical: 1;
        scrollbar-size-horizontal: 0;
    }
    PipelineScreen #pipeline-detail {
        height: auto;
        max-height: 6;
        padding: 0 1;
        border-top: solid $panel;
    }
    PipelineScreen #pipeline-history {
        height: 1fr;
        padding: 0 1;
        display: none;
    }
    PipelineScreen.-history #pipeline-history {
        display: block;
    }
    PipelineScreen.-history #pipeline-nodes, PipelineScreen.-history #pipeline-detail {
        display: none;
    }
    """
    BINDINGS = [
        Binding("g", "gate", "Gate"),
        Binding("d", "review", "Review"),
        Binding("t", "history", "Timeline"),
        Binding("question_mark", "help", "Help"),
        Binding("escape,q", "close", "Close"),
    ]

    class TimelineRead(Message):
        def __init__(self, moments: list[Moment]) -> None:
            super().__init__()
            self.moments = moments

    def __init__(
        self,
        pipeline: Pipeline,
        *,
        work_of: WorkOf,
        open_gate: OpenGate,
        read_timeline: ReadTimeline | None = None,
        source: str | None = None,
        key: str | None = None,
    ) -> None:
        super().__init__()
        self.pipeline = pipeline
        self.key = key or pipeline.stem  # its row's key in the pane
        self.work_of, self.open_gate, self.read_timeline = work_of, open_gate, read_timeline
        self.source = source
        self.work: Mapping[str, NodeWork] = {}
        self.moments: list[Moment] | None = None
        self.shows = 0  # readings drawn (tests wait on it)

    @property
    def stem(self) -> str:
        return self.pipeline.stem

    def compose(self) -> ComposeResult:
        yield Static(id="pipeline-title")
        yield KeyedTable(NODE_COLUMNS, id="pipeline-nodes")
        with VerticalScroll(id="pipeline-detail"):
            yield Static(id="pipeline-detail-text")
        with VerticalScroll(id="pipeline-history"):
            yield Static(id="pipeline-history-text")
        yield ConsoleFooter()

    @property
    def table(self) -> KeyedTable:
        return self.query_one("#pipeline-nodes", KeyedTable)

    def on_mount(self) -> None:
        self.show(self.pipeline)
        self.table.focus()

    # -- drawing -------------------------------------------------------------------------

    def show(self, pipeline: Pipeline) -> None:
        """Draw ``pipeline`` (a new reading of it): its nodes change by key."""
        self.pipeline = pipeline
        plan = pipeline.plan
        self.work = self.work_of(pipeline) if plan else {}
        rows = [
            (node.node_id, node_cells(pipeline, node, self.work.get(node.node_id)))
            for node in (plan.nodes if plan else ())
        ]
        table = self.table
        if [key for key, _ in rows] != table.keys():
            table.replace(rows)
        else:
            for key, cells in rows:
                table.upsert(key, cells)
        self.query_one("#pipeline-title", Static).update(self._title())
        self._show_detail()
        if self.has_class("-history"):
            self.load_history()
        self.shows += 1

    def _title(self) -> Text:
        pipeline = self.pipeline
        title = Text()
        if self.source:
            title.append(f"{self.source} · ", "bold cyan")
        title.append(pipeline.prd, "bold")
        if pipeline.label:
            title.append(f"  {pipeline.label}", "dim")
        title.append("\n")
        title.append_text(state_text(pipeline))
        title.append("  ")
        title.append_text(progress_text(pipeline))
        title.append("  ")
        title.append_text(runner_text(pipeline))
        if pipeline.gates:
            names = ", ".join(gate.node_id for gate in pipeline.gates)
            title.append(f"  gate waits: {names} (g)", "bold yellow")
        if pipeline.findings:
            count = len(pipeline.findings)
            title.append(f"  {count} finding{'s' * (count != 1)} (t)", "red")
        if pipeline.error:
            title.append(f"\nunreadable: {pipeline.error}", "bold red")
            if pipeline.plan is None:
                title.append(" (never read well: no nodes to show)", "red")
            elif pipeline.read_at:
                title.append(f" (its last good reading, {iso_z(pipeline.read_at)})", "red")
        return title

    def selected_node(self) -> str | None:
        return self.table.cursor_key()

    def _show_detail(self) -> None:
        plan = self.pipeline.plan
        key = self.selected_node()
        node = plan.node(key) if plan and key else None
        detail = self.query_one("#pipeline-detail-text", Static)
        if plan is None or node is None:
            detail.update(Text("no nodes", "dim"))
            return
        text = Text.assemble((node.node_id, "bold"), "  ", node.label, "  ")
        text.append_text(status_text(self.pipeline.status_of(node)))
        if self._gate(node.node_id) is not None:
            text.append("  waits for you: enter", "bold yellow")
        text.append("\nagent ", "bold cyan")
        text.append_text(work_text(self.work.get(node.node_id)))
        incoming = edge_from(plan, node)
        if incoming:
            text.append("\nfrom ", "bold cyan")
            text.append_text(incoming)
            labels = [e.label for e in plan.incoming(node.node_id) if e.label]
            if labels:
                text.append(f" ({'; '.join(labels)})", "dim")
        if node.acceptance:
            text.append("\naccept ", "bold cyan")
            text.append(node.acceptance)
        detail.update(text)

    def on_table_view_row_highlighted(self, event: TableView.RowHighlighted) -> None:
        event.stop()
        self._show_detail()

    def on_table_view_row_selected(self, event: TableView.RowSelected) -> None:
        event.stop()
        gate = self._gate(event.key)
        if gate is not None:
            self.open_gate(gate, self.pipeline)
        else:
            self.notify(f"{event.key} is not a gate that waits", severity="warning")

    # -- the timeline --------------------------------------------------------------------

    def action_history(self) -> None:
        self.toggle_class("-history")
        if self.has_class("-history"):
            self.load_history()
        else:
            self.table.focus()

    def load_history(self) -> None:
        self._draw_history()
        if self.read_timeline is not None:
            self.read_history()

    @background("pipeline-timeline", exclusive=True)
    def read_history(self) -> None:
        assert self.read_timeline is not None
        moments = self.read_timeline(self.pipeline)
        if not cancelled():
            self.post_message(self.TimelineRead(moments))

    def on_pipeline_screen_timeline_read(self, message: TimelineRead) -> None:
        message.stop()
        self.moments = message.moments
        self._draw_history()

    def _draw_history(self) -> None:
        pipeline = self.pipeline
        text = Text()
        if pipeline.error:
            text.append(f"unreadable: {pipeline.error}\n", "bold red")
        for finding in pipeline.findings:
            text.append(f"⚠ {finding}\n", "red")
        if pipeline.findings or pipeline.error:
            text.append("\n")
        if self.read_timeline is None:
            text.append("The timeline is read on the pipeline's own machine.", "dim")
        elif self.moments is None:
            text.append("reading the timeline…", "dim")
        elif not self.moments:
            text.append("Nothing moved yet.", "dim")
        for moment in self.moments or ():
            at = iso_z(moment.at)[5:16].replace("T", " ") if moment.at else "?" * 11
            text.append(at, "dim")
            text.append(f" {moment.who:<9}", "cyan")
            if moment.node_id:
                text.append(f"{moment.node_id} ", "bold")
            text.append(moment.what + "\n")
        self.query_one("#pipeline-history-text", Static).update(text)
        self.query_one("#pipeline-history", VerticalScroll).scroll_end(animate=False)

    # -- keys ----------------------------------------------------------------------------

    def _gate(self, node_id: str | None) -> Gate | None:
        return next((g for g in self.pipeline.gates if g.node_id == node_id), None)

    def action_gate(self) -> None:
        gate = self._gate(self.selected_node())
        if gate is None and self.pipeline.gates:
            gate = self.pipeline.gates[0]
        if gate is None:
            self.notify(f"no gate of {self.pipeline.stem} waits", severity="warning")
            return
        self.open_gate(gate, self.pipeline)

    def action_review(self) -> None:
        node = self.selected_node()
        work = self.work.get(node) if node else None
        if not work or not work.agents:
            self.notify(f"{node}: no agent works on it", severity="warning")
            return
        self.app.post_message(ReviewWanted(work.agents[0][0]))

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen("Pipeline", HELP))

    def action_close(self) -> None:
        self.dismiss(None)
