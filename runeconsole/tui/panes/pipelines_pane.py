"""The Pipelines pane: the harness's DOT pipelines (``.pipelines/pipelines/<PRD>.dot``),
one row each: its stem and PRD, its state in colour (a gate waiting bold yellow, a DOT
that cannot be read red with why, complete green, failed red, running blue), its nodes
counted by status, the gates that wait, its runner (alive or gone) and its last change.

``PipelinesPane`` is what both consoles share: the rows, enter (the pipeline's screen,
``tui/pipelines/screen.py``), ``g`` (the window of the gate that waits,
``tui/pipelines/gate_window.py``), the gates handed to the Problems pane
(``GatesMoved``, routed by the app) and to ``a`` (``oldest_gate``). ``LocalPipelinesPane`` is
the project console's: fed by the directories the pipelines live in (a change re-reads
the pipelines it names, and the screen open on one), the rescan in a worker, gates
answered here (``GateAnswers``) in the window's worker.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

from textual.binding import Binding
from textual.message import Message

from runeconsole.core.errors import RuneError
from runeconsole.services.pipelines.agents import NodeWork
from runeconsole.services.pipelines.answers import GateAnswers
from runeconsole.services.pipelines.engine import latest_runs, read_run
from runeconsole.services.pipelines.record import Gate, Pipeline
from runeconsole.services.pipelines.store import Pipelines
from runeconsole.services.pipelines.timeline import Moment, timeline
from runeconsole.tui.panes.pane import FilePane, Pane
from runeconsole.tui.pipelines.cells import PIPELINE_COLUMNS, changed_text, pipeline_cells
from runeconsole.tui.pipelines.gate_window import GateWindow
from runeconsole.tui.pipelines.screen import PipelineScreen
from runeconsole.tui.support.workers import background, cancelled

PIPELINES = "pipelines"  # the pane's id
RESCAN_SECONDS = 15.0

HELP_KEYS = (
    ("enter", "the pipeline: its nodes in dependency order, their agents; t its timeline"),
    ("g", "answer the gate that waits (approve, or reject with a reason)"),
    (
        "STATE",
        "gate (a human gate waits: also in Problems and in a's order), unreadable (the DOT "
        "cannot be read now: its last good reading is kept), complete, failed, running, "
        "pending",
    ),
    ("PROGRESS", "nodes ✓ finished, ▶ under way, ✗ failed, · not started"),
    ("RUNNER", "runner (pipeline_runner) or engine, ● running or gone; cli: moved by hand"),
    ("NOTE", "why the DOT cannot be read, or what is wrong that the harness does not see"),
)


def waited_since(gate: Gate) -> tuple[int, float]:
    """A gate's place in the ``a`` order: the longest waiting first (one whose start is
    unknown, after them)."""
    return (0, gate.since.timestamp()) if gate.since is not None else (1, 0.0)


class PipelinesPane(Pane[Pipeline]):
    PANE_ID = PIPELINES
    TITLE = "Pipelines"
    COLUMNS = PIPELINE_COLUMNS
    SORT = ("pipeline",)
    MOVING = frozenset({"changed"})
    EMPTY = "No pipelines: the harness keeps them in .pipelines/pipelines/<PRD>.dot."
    ENTER = "open"
    BINDINGS = [
        Binding("enter", "open", "Open", show=False),
        Binding("g", "gate", "Gate"),
    ]
    HELP_KEYS = HELP_KEYS

    class GatesMoved(Message):
        """The gates of these pipelines now (none: answered, or the pipeline gone): for the
        Problems pane."""

        def __init__(self, gates: dict[str, list[Gate]]) -> None:
            super().__init__()
            self.gates = gates

    def cells(self, key: str, record: Pipeline) -> tuple[object, ...]:
        return pipeline_cells(record, self.now())

    def search_fields(self, key: str, record: Pipeline) -> tuple[object, ...]:
        return (key, record.prd, record.label, record.state, record.error, record.runner)

    def sort_key(self, value: Any) -> Any:
        return getattr(value, "plain", str(value))

    def moving(self, key: str, record: Pipeline) -> dict[str, object] | None:
        return {"changed": changed_text(record, self.now())}

    # -- what the consoles differ in -----------------------------------------------------

    def work_of(self, pipeline: Pipeline) -> Mapping[str, NodeWork]:
        """Who works on each node (``agents.work_by_node``)."""
        return {}

    def read_timeline(self, pipeline: Pipeline) -> list[Moment]:
        return []

    def has_timeline(self) -> bool:
        return False

    def answer_gate(self, key: str, gate: Gate, answer: str, reason: str) -> str:
        """Answer ``gate`` of the pipeline ``key`` (in the window's worker); what the
        runner will do with it (the answer's note)."""
        raise NotImplementedError

    def source_of(self, key: str) -> str | None:
        return self.sources.of(key) if self.sources is not None else None

    # -- the rows, as they move ----------------------------------------------------------

    def keep(self, pipelines: Mapping[str, Pipeline | None]) -> None:
        """New readings (None: gone), drawn, and their gates told."""
        for key, pipeline in pipelines.items():
            if pipeline is None:
                self.drop(key)
            else:
                self.put(key, pipeline)
        self.finish()
        self.post_message(
            self.GatesMoved({key: list(p.gates) if p else [] for key, p in pipelines.items()})
        )
        for screen in self.app.screen_stack:
            if isinstance(screen, PipelineScreen) and screen.key in pipelines:
                fresh = pipelines[screen.key]
                if fresh is not None:
                    screen.show(fresh)

    def all_gates(self) -> list[tuple[str, Gate]]:
        """Every gate that waits, with its pipeline's key."""
        return [(key, gate) for key, p in self.records.items() for gate in p.gates]

    def oldest_gate(self) -> tuple[str, Gate] | None:
        """The gate that has waited longest (for the app's ``a``)."""
        found = self.all_gates()
        return min(found, key=lambda item: waited_since(item[1])) if found else None

    # -- keys ----------------------------------------------------------------------------

    def action_open(self) -> None:
        chosen = self.selected()
        if chosen is None:
            return
        key, pipeline = chosen
        screen = PipelineScreen(
            pipeline,
            work_of=self.work_of,
            open_gate=lambda gate, p: self.open_gate(key, gate),
            read_timeline=self.read_timeline if self.has_timeline() else None,
            source=self.source_of(key),
            key=key,
        )
        self.app.push_screen(screen)

    def action_gate(self) -> None:
        chosen = self.selected()
        if chosen is None:
            return
        key, pipeline = chosen
        if not pipeline.gates:
            self.notify(f"no gate of {pipeline.stem} waits", severity="warning")
            return
        self.open_gate(key, pipeline.gates[0])

    def open_gate(self, key: str, gate: Gate) -> None:
        """The gate's window, over its pipeline's last reading."""
        pipeline = self.records.get(key)
        fresh = (
            next((g for g in pipeline.gates if g.node_id == gate.node_id), None)
            if pipeline
            else None
        )
        if fresh is None:
            self.notify(f"{gate.key} waits no longer", title="Gate", severity="warning")
            return
        window = GateWindow(
            fresh,
            partial(self.answer_gate, key),
            pipeline=pipeline,
            work=self.work_of(pipeline) if pipeline is not None else {},
            now=self.now,
            source=self.source_of(key),
            read_only=getattr(self.app, "read_only", None),
        )
        self.app.push_screen(window, lambda answer: self.answered(key, answer))

    def answered(self, key: str, answer: str | None) -> None:
        """The window closed (``answer``: what was given, or None): read the pipeline again."""


class LocalPipelinesPane(PipelinesPane, FilePane[Pipeline]):
    class Loaded(Message):
        """Every pipeline, as read in the rescan worker."""

        def __init__(self, pipelines: list[Pipeline]) -> None:
            super().__init__()
            self.pipelines = pipelines

    def __init__(self, pipelines: Pipelines, answers: GateAnswers, **kwargs: Any) -> None:
        super().__init__(clock=pipelines.clock, **kwargs)
        self.pipelines, self.answers = pipelines, answers
        self.loads = 0  # readings of every pipeline taken in (tests wait on it)
        self._rescanned = time.monotonic()  # the mount reads them all

    def on_mount(self) -> None:
        self.read_all()

    def work_of(self, pipeline: Pipeline) -> Mapping[str, NodeWork]:
        work = getattr(self.app, "pipeline_work", None)
        return work(pipeline) if work is not None else {}

    def has_timeline(self) -> bool:
        return True

    def read_timeline(self, pipeline: Pipeline) -> list[Moment]:
        """Its history (read on demand, in the screen's worker)."""
        run_dir = latest_runs(self.pipelines.root).get(pipeline.stem)
        run = read_run(pipeline.stem, run_dir) if run_dir is not None else None
        return timeline(Path(pipeline.path), self.pipelines.signal_dir(pipeline.stem), run)

    def answer_gate(self, key: str, gate: Gate, answer: str, reason: str) -> str:
        done = self.answers.answer(gate.stem, gate.node_id, answer, reason=reason, by="operator")
        back = f" (sent back: {', '.join(done.reworked)})" if done.reworked else ""
        return done.note + back

    def answered(self, key: str, answer: str | None) -> None:
        self.reread({key})

    # -- the files -------------------------------------------------------------------------

    def watch_dirs(self) -> list[Path]:
        return self.pipelines.watch_dirs()

    def apply_changes(self, paths: set[Path]) -> None:
        """The pipelines the paths belong to, read again (a new signal directory, a new
        engine run, followed)."""
        for path in paths:
            if path.is_dir() and path.parent in (self.pipelines.signals, self.pipelines.runs):
                self.follow(path)
        stems = self.pipelines.read_paths(paths)
        if stems:
            self.reread(stems)

    def reread(self, stems: set[str]) -> None:
        found: dict[str, Pipeline | None] = {}
        for stem in stems:
            try:
                found[stem] = self.pipelines.get(stem)
            except RuneError:  # gone (or not a pipeline's name)
                found[stem] = None
        found = {k: v for k, v in found.items() if v is not None or k in self.records}
        if found:
            self.keep(found)

    def read_directory(self, directory: Path) -> None:
        stem = self.pipelines.stem_of(directory / "x")
        if stem is not None:
            self.reread({stem})

    def rescan(self) -> None:
        """Every ``RESCAN_SECONDS`` at most (file events keep the pane current; the rescan
        catches what they missed, and a runner that started or went)."""
        now = time.monotonic()
        if now - self._rescanned >= RESCAN_SECONDS or not self.records:
            self._rescanned = now
            self.read_all()

    @background("pipelines-rescan", exclusive=True)
    def read_all(self) -> None:
        pipelines = self.pipelines.list()
        if not cancelled():
            self.post_message(self.Loaded(pipelines))

    def on_local_pipelines_pane_loaded(self, message: Loaded) -> None:
        message.stop()
        fresh: dict[str, Pipeline | None] = {p.stem: p for p in message.pipelines}
        moved = {k: p for k, p in fresh.items() if self.records.get(k) is not p}
        moved.update({k: None for k in self.records if k not in fresh})
        if moved or not self.loads:
            self.keep(moved)
        self.loads += 1
