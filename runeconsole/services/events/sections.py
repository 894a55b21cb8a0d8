"""What the event stream follows, one section per protocol: each names the directories it
watches and reads its rows, ``(kind, key) -> JSON object``.

The agents section is the console's fleet model (``services/fleet``) turned into rows:
one file read per event, a rescan by ``stat``, and a tick that rejudges only the agents
whose colour is due; the others are small and are read again whole when a file of
theirs changes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from runeconsole.services.claude.permissions.service import Permissions
from runeconsole.services.fleet import FleetModel
from runeconsole.services.hook_files import HookFiles
from runeconsole.services.liveness import AgentRecord
from runeconsole.services.merge_queue import MergeQueue
from runeconsole.services.pipelines.store import Pipelines
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.services.supervision.observations import ObservationFile
from runeconsole.services.suspension import Suspension
from runeconsole.services.worker_questions import Questions

AGENT, OBSERVATION, QUESTION = "agent", "observation", "question"
SUSPENDED, QUEUE, QUEUE_STATE = "suspended", "queue", "queue-state"
PERMISSION, PIPELINE = "permission", "pipeline"
KINDS = (AGENT, OBSERVATION, QUESTION, PERMISSION, SUSPENDED, QUEUE, QUEUE_STATE, PIPELINE)

RowKey = tuple[str, str]
Rows = dict[RowKey, dict[str, Any]]


class Section(Protocol):
    def watch_dirs(self) -> list[Path]: ...

    def read(self) -> Rows:
        """Every row, read now."""
        ...

    def read_paths(self, paths: set[Path]) -> tuple[Rows, set[RowKey]] | None:
        """Rows that ``paths`` changed and keys they removed; None: read the whole section."""
        ...

    def tick(self) -> Rows:
        """Rows whose look changes with time alone (a colour turning); no file reads."""
        ...


def agent_row(record: AgentRecord, phase: str | None) -> dict[str, Any]:
    """An identity as ``agents --json`` shows it, with its work phase."""
    row = record.to_json()
    row["phase"] = phase
    return row


class AgentSection:
    """Identities, their hooks' phases and the monitor's saved readings, as the fleet
    model (``services/fleet``) keeps them: it reads only what events name or what a
    ``stat`` shows has moved, and the tick rejudges only the agents that are due."""

    def __init__(self, project: Project) -> None:
        self.paths = project.paths
        self.observation_file = ObservationFile.of(project.paths)
        self.model = FleetModel(
            Registry(project),
            HookFiles(project),
            saved_observations=self.observation_file.load,
            observations_path=self.observation_file.path,
        )
        self._loaded = False

    def watch_dirs(self) -> list[Path]:
        return [self.paths.identities, self.paths.hook_files, self.paths.supervisor]

    def read(self) -> Rows:
        if self._loaded:  # a rescan: only files whose stamp moved are read
            self.model.rescan()
            self.model.apply_observations(self.observation_file.load())
        else:
            self.model.load()
            self._loaded = True
        rows = {(AGENT, record.key): self._row(record.key) for record in self.model.snapshot()}
        rows.update(self._observations())
        return rows

    def read_paths(self, paths: set[Path]) -> tuple[Rows, set[RowKey]]:
        observed = set(self.model.observations)
        change = self.model.apply_paths(paths)
        rows: Rows = {(AGENT, key): self._row(key) for key in change.changed}
        removed: set[RowKey] = {(AGENT, key) for key in change.removed}
        if self.observation_file.path in paths:
            rows.update(self._observations())
            removed |= {(OBSERVATION, key) for key in observed - set(self.model.observations)}
        return rows, removed

    def tick(self) -> Rows:
        change = self.model.tick(self.model.registry.clock.now())
        return {(AGENT, key): self._row(key) for key in change.changed}

    def _row(self, key: str) -> dict[str, Any]:
        record = self.model.records[key]
        return agent_row(record, self.model.phases.get(key))

    def _observations(self) -> Rows:
        return {(OBSERVATION, key): obs.to_json() for key, obs in self.model.observations.items()}


class WholeSection:
    """A small section: read again whole when any of its files changes; time alone
    changes none of its rows."""

    def read_paths(self, paths: set[Path]) -> None:
        return None

    def tick(self) -> Rows:
        return {}


class QuestionSection(WholeSection):
    """Worker questions, open and answered (the last answers stay visible)."""

    def __init__(self, project: Project) -> None:
        self.questions = Questions(project)

    def watch_dirs(self) -> list[Path]:
        return self.questions.locations.watch_dirs()

    def read(self) -> Rows:
        now = self.questions.clock.now()
        return {(QUESTION, q.id): q.to_json(now) for q in self.questions.list()}


class PermissionSection(WholeSection):
    """Claude Code's permission requests: the open ones and the latest decisions."""

    def __init__(self, project: Project) -> None:
        self.permissions = Permissions(project)

    def watch_dirs(self) -> list[Path]:
        return [self.permissions.directory]

    def read(self) -> Rows:
        return {(PERMISSION, r.id): r.to_json() for r in self.permissions.shown()}


class SuspendedSection(WholeSection):
    """Suspended tasks' context files with their integrity verdicts."""

    def __init__(self, project: Project) -> None:
        self.suspension = Suspension(project)

    def watch_dirs(self) -> list[Path]:
        contexts = self.suspension.context_dirs()
        return [self.suspension.paths.work, *{d.parent for d in contexts}, *contexts]

    def read(self) -> Rows:
        return {(SUSPENDED, r.key): r.to_json() for r in self.suspension.list()}


class QueueSection(WholeSection):
    """The merge queue's entries, and whether it is paused or unreadable."""

    def __init__(self, project: Project) -> None:
        self.queue = MergeQueue(project)

    def watch_dirs(self) -> list[Path]:
        return [self.queue.paths.state]

    def read(self) -> Rows:
        state = self.queue.read()
        rows: Rows = {(QUEUE_STATE, "queue"): {"paused": state.paused, "error": state.error}}
        for entry in state.ordered():
            rows[(QUEUE, entry.entry_id)] = entry.to_json()
        return rows


class PipelineSection:
    """The harness's DOT pipelines, each a row with its nodes, gates and findings; a
    change re-reads only the pipelines it names (``Pipelines.read_paths``), and a DOT
    read once is not read again until its stamp moves."""

    def __init__(self, project: Project) -> None:
        self.pipelines = Pipelines(project)

    def watch_dirs(self) -> list[Path]:
        return self.pipelines.watch_dirs()

    def read(self) -> Rows:
        return {(PIPELINE, p.stem): p.to_json() for p in self.pipelines.list()}

    def read_paths(self, paths: set[Path]) -> tuple[Rows, set[RowKey]]:
        rows: Rows = {}
        removed: set[RowKey] = set()
        for stem in self.pipelines.read_paths(paths):
            if stem in self.pipelines.stems():
                rows[(PIPELINE, stem)] = self.pipelines.get(stem).to_json()
            else:
                removed.add((PIPELINE, stem))
        return rows, removed

    def tick(self) -> Rows:
        return {}


def sections_of(project: Project) -> list[Section]:
    return [
        AgentSection(project),
        QuestionSection(project),
        PermissionSection(project),
        SuspendedSection(project),
        QueueSection(project),
        PipelineSection(project),
    ]
