"""Every pipeline of a project root, read beside the harness that runs them.

The DOTs are ``.pipelines/pipelines/<stem>.dot``; each is read only when its stamp (size,
mtime) moved, and a DOT that cannot be read (empty, cut in the middle of the CLI's
in-place rewrite, not DOT at all) keeps its last good reading with the reason beside it,
and is read again on every pass until it reads well: it is never taken for a finished
pipeline. No lock is taken to read (the CLI's writer holds ``<dot>.lock`` only while it
writes; a reader never makes it wait).

Beside each DOT: who runs it (a ``pipeline_runner`` or engine process found by its
command line; else the traces they leave: ``signals/<stem>/`` or an engine run
directory), the human gates that wait (``gates.py``), and the findings the harness
itself does not see (``findings.py``).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from runeconsole.adapters import pipeline_runners
from runeconsole.adapters.pipeline_runners import RunnerProcess
from runeconsole.core.errors import InvalidInput, RuneError, UnreadableFile
from runeconsole.core.files import read_bytes
from runeconsole.core.validate import validate_name
from runeconsole.services.pipelines.dot import DotError, parse
from runeconsole.services.pipelines.engine import EngineRun, latest_runs, read_run, runs_dir
from runeconsole.services.pipelines.findings import findings_of
from runeconsole.services.pipelines.gates import waiting_gates
from runeconsole.services.pipelines.graph import Plan
from runeconsole.services.pipelines.record import ENGINE, NO_RUNNER, PIPELINE_RUNNER, Pipeline
from runeconsole.services.project import Project

RUNNER_SCAN_SECONDS = 5.0  # a runner process found is believed this long
Stamp = tuple[int, int] | None


def stamp_of(path: Path) -> Stamp:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_mtime_ns, stat.st_size)


@dataclass
class _Known:
    stamps: tuple[Stamp, ...]
    pipeline: Pipeline


class Pipelines:
    def __init__(
        self,
        project: Project,
        *,
        runners: Callable[[], list[RunnerProcess]] = pipeline_runners.runners,
    ) -> None:
        self.project = project
        self.root = project.root
        self.clock = project.clock
        self.directory = self.root / ".pipelines" / "pipelines"
        self.signals = self.directory / "signals"
        self.runs = runs_dir(self.root)
        self._runners = runners
        self._runner_scan: tuple[float, dict[Path, RunnerProcess]] | None = None
        self._known: dict[str, _Known] = {}
        self._lock = threading.Lock()  # the pane's worker and the UI thread both read

    # -- where ---------------------------------------------------------------------------

    def dot_path(self, stem: str) -> Path:
        validate_name(stem, "pipeline")
        return self.directory / f"{stem}.dot"

    def signal_dir(self, stem: str) -> Path:
        validate_name(stem, "pipeline")
        return self.signals / stem

    def watch_dirs(self) -> list[Path]:
        """The directories whose changes move a pipeline (those that exist)."""
        dirs = [d for d in (self.directory, self.signals, self.runs) if d.is_dir()]
        for parent in (self.signals, self.runs):  # by the entries' types: no stat each
            with contextlib.suppress(OSError), os.scandir(parent) as entries:
                dirs += [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)]
        return dirs

    def stems(self) -> list[str]:
        try:
            names = sorted(entry.name for entry in os.scandir(self.directory))
        except OSError:
            return []
        return [n[:-4] for n in names if n.endswith(".dot") and not n.startswith(".")]

    def stem_of(self, path: Path) -> str | None:
        """The pipeline a changed path belongs to (None: not one of theirs)."""
        if path.parent == self.directory:
            name = path.name
            for suffix in (".dot", ".dot.transitions.jsonl"):
                if name.endswith(suffix):
                    return name[: -len(suffix)]
            return None
        if path.parent == self.signals:  # a pipeline's signal directory (not the CLI's
            return None if path.suffix == ".signal" else path.name  # exit-node signals)
        if path.parent.parent == self.signals:
            return path.parent.name
        if path.is_relative_to(self.runs):
            part = path.relative_to(self.runs).parts[0]
            return part.split("-run-")[0] if "-run-" in part else None
        return None

    # -- reading -------------------------------------------------------------------------

    def list(self) -> list[Pipeline]:
        """Every pipeline, read where something moved since the last call."""
        stems = self.stems()
        runs = latest_runs(self.root)
        with self._lock:
            for gone in set(self._known) - set(stems):
                del self._known[gone]
        return [self._read(stem, runs.get(stem)) for stem in stems]

    def get(self, stem: str) -> Pipeline:
        """One pipeline by its stem (or its PRD id); ``RuneError`` if there is none."""
        path = self.dot_path(stem) if _plain(stem) else None
        if path is not None and path.exists():
            return self._read(stem, latest_runs(self.root).get(stem))
        for pipeline in self.list():
            if pipeline.prd == stem:
                return pipeline
        raise InvalidInput(f"no pipeline {stem!r} under {self.directory}")

    def read_paths(self, paths: set[Path]) -> set[str]:
        """The pipelines ``paths`` belong to (the caller reads them again with ``get``)."""
        return {stem for path in paths if (stem := self.stem_of(path)) is not None}

    def _read(self, stem: str, run_dir: Path | None) -> Pipeline:
        dot = self.directory / f"{stem}.dot"
        signal_dir = self.signals / stem
        # What moves a pipeline moves one of these: the CLI writes the DOT (its log after),
        # the runner adds, consumes or removes a file of its signal directory (a marker,
        # a result, a consumed signal), the engine appends an event (and one for every
        # answer it reads). Three stats a pipeline, on every rescan.
        stamps = (
            stamp_of(dot),
            stamp_of(signal_dir),
            stamp_of(run_dir / "pipeline-events.jsonl") if run_dir else None,
        )
        runner = self._runner_for(dot)
        with self._lock:
            known = self._known.get(stem)
        if (
            known is not None
            and known.stamps == stamps
            and known.pipeline.error is None
            and known.pipeline.runner_pid == (runner.pid if runner else None)
        ):
            return known.pipeline
        pipeline = Pipeline(stem, str(dot))
        if known is not None:  # the last good reading, kept while the DOT cannot be read
            pipeline.plan, pipeline.read_at = known.pipeline.plan, known.pipeline.read_at
        try:
            plan = read_plan(dot)
        except (UnreadableFile, DotError) as exc:
            pipeline.error = exc.reason if isinstance(exc, UnreadableFile) else str(exc)
        else:
            pipeline.plan, pipeline.read_at = plan, self.clock.now()
        pipeline.changed_at = _newest(stamps)
        run = read_run(stem, run_dir) if run_dir is not None else None
        self._judge_runner(pipeline, runner, run, signal_dir)
        if pipeline.plan is not None:
            pipeline.gates = waiting_gates(pipeline, signal_dir, run)
            pipeline.findings = findings_of(pipeline, signal_dir, run)
        with self._lock:
            self._known[stem] = _Known(stamps, pipeline)
        return pipeline

    def _judge_runner(
        self, pipeline: Pipeline, runner: RunnerProcess | None, run: EngineRun | None, signals: Path
    ) -> None:
        if runner is not None:
            pipeline.runner, pipeline.runner_pid, pipeline.runner_alive = (
                runner.kind,
                runner.pid,
                True,
            )
        elif run is not None and (not signals.is_dir() or _newer(run.run_dir, signals)):
            pipeline.runner = ENGINE
        elif signals.is_dir():
            pipeline.runner = PIPELINE_RUNNER
        else:
            pipeline.runner = NO_RUNNER
        if runner is None and pipeline.runner != NO_RUNNER:
            pipeline.runner_alive = False if pipeline_runners.available() else None
        if pipeline.runner == ENGINE and run is not None:
            pipeline.states = run.node_states()

    def _runner_for(self, dot: Path) -> RunnerProcess | None:
        now = time.monotonic()
        with self._lock:
            scan = self._runner_scan
        if scan is None or now - scan[0] > RUNNER_SCAN_SECONDS:
            found = {p.dot: p for p in self._runners()}
            scan = (now, found)
            with self._lock:
                self._runner_scan = scan
        return scan[1].get(Path(os.path.normpath(dot)))

    def forget_runners(self) -> None:
        """Look for runner processes again at the next read (after starting or stopping one)."""
        with self._lock:
            self._runner_scan = None


def read_plan(dot: Path) -> Plan:
    """A DOT as a plan; ``UnreadableFile`` or ``DotError`` for anything that is not a
    whole pipeline (an empty file, a cut one, a graph with no node)."""
    data = read_bytes(dot)
    if not data.strip():
        raise UnreadableFile(dot, "the file is empty (being rewritten?)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnreadableFile(dot, f"not UTF-8 text (byte {exc.start})") from None
    graph = parse(text)
    if not graph.nodes:
        raise DotError("the graph has no nodes (being rewritten?)")
    return Plan.of(graph)


def _plain(stem: str) -> bool:
    try:
        validate_name(stem, "pipeline")
    except RuneError:
        return False
    return True


def _newest(stamps: tuple[Stamp, ...]) -> datetime | None:
    times = [s[0] for s in stamps if s is not None]
    return datetime.fromtimestamp(max(times) / 1e9, UTC) if times else None


def _newer(one: Path, other: Path) -> bool:
    first, second = stamp_of(one), stamp_of(other)
    return first is not None and (second is None or first[0] >= second[0])
