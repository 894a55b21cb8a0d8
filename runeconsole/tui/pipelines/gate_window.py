"""The window a human gate is answered in: its PRD, node, label, mode, acceptance
criteria, how long it has waited, the work it guards (the upstream nodes with their
agents: ``d`` opens the review of the selected one's agent), and **approve** (``y``) or
**reject** (``n``, with a reason typed in: an empty one is refused).

The answer is given by a ``Decide`` callback in a worker: the project console's writes it
the way the runner of the pipeline reads it (``GateAnswers.answer``), the fleet console's
sends it to the pipeline's source. What came back (the answer's note, or that it was
answered already) is a toast; a refusal of another kind is said in the window. What a
rejection does depends on the runner, and the window says it before it is given:
``pipeline_runner`` cannot take a rejection (a scored fail loops), so the work the gate
guards goes back to pending with the reason as its workers' guidance and the gate waits
again."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.events import Key
from textual.message import Message
from textual.widgets import Input, Static

from runeconsole.core.errors import RuneError
from runeconsole.core.timeutil import iso_z
from runeconsole.services.pipelines.agents import NodeWork
from runeconsole.services.pipelines.answers import AlreadyAnswered
from runeconsole.services.pipelines.record import ENGINE, PIPELINE_RUNNER, Gate, Pipeline
from runeconsole.tui.modals.decision_modal import DecisionModal
from runeconsole.tui.pipelines.cells import status_text, waiting_for, work_text
from runeconsole.tui.support.messages import ReviewWanted
from runeconsole.tui.support.workers import background, cancelled
from runeconsole.tui.widgets.reveal import reveal

APPROVE, REJECT = "approve", "reject"
MOVE_KEYS = {"up": -1, "k": -1, "down": 1, "j": 1}

# Answers the gate (APPROVE or REJECT, the reason); what the runner will do with it (the
# answer's note). Raises ``AlreadyAnswered`` or another ``RuneError`` when it cannot.
Decide = Callable[[Gate, str, str], str]


def rejection_said(pipeline: Pipeline | None, gate: Gate) -> str:
    """What a rejection does, for this gate's runner."""
    if gate.runner == ENGINE:
        return "The engine runner reads the answer within its 10-second poll."
    live = (
        pipeline is not None
        and pipeline.runner == PIPELINE_RUNNER
        and pipeline.runner_alive is not False
    )
    if live:
        return (
            "pipeline_runner cannot take a rejection (a scored fail loops on the gate): "
            "rejecting sends the work it guards back to pending, your reason written as "
            "its workers' guidance, and the gate waits again."
        )
    return (
        "No runner is running it: rejecting fails the gate and sends its rework back to "
        "active, as the harness's cli.py transition does."
    )


class GateWindow(DecisionModal[str | None]):
    DEFAULT_CSS = """
    #gate-window {
        border: round $warning;
    }
    #gate-window #gate-guards {
        height: auto;
        padding-bottom: 1;
    }
    """

    class Answered(Message):
        """The worker's outcome: the answer's note, or why it was not given."""

        def __init__(self, answer: str, note: str | None, error: Exception | None) -> None:
            super().__init__()
            self.answer, self.note, self.error = answer, note, error

    def __init__(
        self,
        gate: Gate,
        decide: Decide,
        *,
        pipeline: Pipeline | None = None,
        work: Mapping[str, NodeWork] | None = None,
        now: Callable[[], datetime],
        source: str | None = None,
        read_only: str | None = None,
    ) -> None:
        super().__init__()
        self.gate, self.decide, self.pipeline = gate, decide, pipeline
        self.work = dict(work or {})
        self.now, self.source, self.read_only = now, source, read_only
        self.chosen = 0  # the upstream node ``d`` reviews
        self.sending = False
        self.closing = False

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="gate-window", classes="window"):
            yield Static(self._title(), id="gate-title", classes="part")
            yield Static(self._body(), id="gate-body", classes="part")
            yield Static(id="gate-guards")
            yield Static(self._keys(), id="gate-keys", classes="part")
            yield Input(
                placeholder="why it is rejected (the rework's guidance); enter sends",
                id="gate-reason",
                classes="typed",
            )
            yield Static(id="gate-note", classes="note")

    def on_mount(self) -> None:
        self._draw_guards()

    def tap_keys(self) -> list[tuple[str, str]]:
        taps = [("y", "Approve"), ("n", "Reject"), ("d", "Review")]
        return [*([] if self.read_only else taps[:2]), taps[2], *super().tap_keys()]

    # -- drawing -------------------------------------------------------------------------

    def _title(self) -> Text:
        gate = self.gate
        title = Text.assemble(("◆ human gate", "bold yellow"), "  ")
        if self.source:
            title.append(f"{self.source} · ", "bold cyan")
        title.append(gate.prd, "bold")
        title.append(f"  {gate.node_id}", "bold cyan")
        return title

    def _body(self) -> Table:
        gate = self.gate
        grid = Table.grid(padding=(0, 1))
        grid.add_column(style="bold cyan", no_wrap=True)
        grid.add_column(overflow="fold")
        grid.add_row("label", Text(gate.label))
        if gate.mode:
            grid.add_row("mode", Text(gate.mode))
        grid.add_row("pipeline", Text(f"{gate.stem}, run by {gate.runner}"))
        since = f"{iso_z(gate.since)} ({waiting_for(gate, self.now())} ago)" if gate.since else "?"
        grid.add_row("waiting", Text(since))
        grid.add_row("accept", Text(gate.acceptance or "(no acceptance criteria)"))
        return grid

    def _draw_guards(self) -> None:
        text = Text("guards ", "bold cyan")
        upstream = self.gate.upstream
        if not upstream:
            text.append("nothing upstream", "dim")
        plan = self.pipeline.plan if self.pipeline else None
        for index, node_id in enumerate(upstream):
            text.append("\n")
            mark = "▸ " if index == self.chosen else "  "
            text.append(mark, "bold")
            text.append(node_id, "reverse" if index == self.chosen else "bold")
            node = plan.node(node_id) if plan else None
            if node is not None and self.pipeline is not None:
                text.append(" ")
                text.append_text(status_text(self.pipeline.status_of(node)))
            text.append("  ")
            text.append_text(work_text(self.work.get(node_id)))
        self.query_one("#gate-guards", Static).update(text)

    def _keys(self) -> Table:
        keys = Table.grid(padding=(0, 1))
        if self.read_only:
            keys.add_row(Text(" - ", "dim"), Text(f"read-only: {self.read_only}", "yellow"))
        else:
            keys.add_row(Text(" y ", "bold reverse"), Text("approve"))
            keys.add_row(
                Text(" n ", "bold reverse"),
                Text.assemble(
                    "reject, saying why: ", (rejection_said(self.pipeline, self.gate), "dim")
                ),
            )
        keys.add_row(Text(" d ", "bold reverse"), Text("review the selected work's agent (↑/↓)"))
        keys.add_row("", Text("esc closes without answering (the gate keeps waiting)", "dim"))
        return keys

    def _note(self, text: str, style: str) -> None:
        note = self.query_one("#gate-note", Static)
        note.update(Text(text, style))
        note.display = bool(text)

    # -- keys ----------------------------------------------------------------------------

    def on_key(self, event: Key) -> None:
        if isinstance(self.focused, Input):
            return
        if event.key in MOVE_KEYS:
            event.stop()
            event.prevent_default()
            count = len(self.gate.upstream)
            if count:
                self.chosen = (self.chosen + MOVE_KEYS[event.key]) % count
                self._draw_guards()
            return
        if not event.is_printable or not event.character:
            return
        event.stop()
        event.prevent_default()
        key = event.character
        if key == "q":
            self.dismiss(None)
        elif key == "d":
            self.review()
        elif self.closing or self.sending or key not in ("y", "n"):
            return
        elif self.read_only:
            self._note(f"Read-only: {self.read_only}", "bold yellow")
        elif key == "y":
            self.send(APPROVE, "")
        else:
            reveal(self.query_one("#gate-reason", Input))

    def review(self) -> None:
        upstream = self.gate.upstream
        if not upstream:
            self._note("the gate guards no work to review", "yellow")
            return
        node_id = upstream[self.chosen % len(upstream)]
        work = self.work.get(node_id)
        if not work or not work.agents:
            self._note(f"{node_id}: no agent works on it, nothing to review", "yellow")
            return
        self.app.post_message(ReviewWanted(work.agents[0][0]))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        reason = event.value.strip()
        if not reason:
            self._note("A rejection needs a reason: the rework is guided by it.", "bold red")
            return
        if not self.sending:
            self.send(REJECT, reason)

    # -- answering -----------------------------------------------------------------------

    def send(self, answer: str, reason: str) -> None:
        self.sending = True
        self._note("Sending…", "dim")
        self.give(answer, reason)

    @background("gate")
    def give(self, answer: str, reason: str) -> None:
        try:
            note = self.decide(self.gate, answer, reason)
        except Exception as exc:  # every refusal is the window's to show
            if not cancelled():
                self.post_message(self.Answered(answer, None, exc))
            return
        if not cancelled():
            self.post_message(self.Answered(answer, note, None))

    def on_gate_window_answered(self, message: Answered) -> None:
        message.stop()
        self.sending = False
        error, key = message.error, self.gate.key
        said_error = error.message if isinstance(error, RuneError) else f"{error}"
        if isinstance(error, AlreadyAnswered) or "answered already" in said_error:
            self.app.notify(said_error, title=f"Gate {key}", severity="warning", markup=False)
            self.closing = True
            self.dismiss(None)
        elif error is not None:
            self._note(f"Not answered: {said_error}", "bold red")
        else:
            said = "approved" if message.answer == APPROVE else "rejected"
            note = f"{key} {said}" + (f": {message.note}" if message.note else "")
            self.app.notify(note, title="Gate", timeout=10, markup=False)
            self.closing = True
            self.dismiss(message.answer)
