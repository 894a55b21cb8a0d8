"""What the event stream follows, one section per protocol: each names the directories it
watches and reads its rows, ``(kind, key) -> JSON object``.

The agents section reads one file per event (an identity, a hook, the saved monitor
pass) and rejudges liveness on the tick; the others are small and are read again
whole when a file of theirs changes. ``AgentSection`` is the one adapter between the
stream and whatever holds the agents: swapping it for the console's fleet model
(``load`` / ``apply_paths`` / ``rescan`` / ``tick`` over the same rows) changes
nothing else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from runeconsole.core.files import is_temp_name
from runeconsole.services.hooks import Hook, Hooks
from runeconsole.services.liveness import AgentRecord
from runeconsole.services.merge_queue import MergeQueue
from runeconsole.services.project import Project
from runeconsole.services.questions import Questions
from runeconsole.services.registry import Registry
from runeconsole.services.supervision.observations import ObservationFile
from runeconsole.services.suspension import Suspension

AGENT, OBSERVATION, QUESTION = "agent", "observation", "question"
SUSPENDED, QUEUE, QUEUE_STATE = "suspended", "queue", "queue-state"
KINDS = (AGENT, OBSERVATION, QUESTION, SUSPENDED, QUEUE, QUEUE_STATE)

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


def hook_phase(hook: Hook | None) -> str | None:
    if hook is None or hook.error:
        return None
    return hook.work_phase or hook.phase


def agent_row(record: AgentRecord, phase: str | None) -> dict[str, Any]:
    """An identity as ``agents --json`` shows it, with its work phase."""
    row = record.to_json()
    row["phase"] = phase
    return row


class AgentSection:
    """Identities, their hooks' phases and the monitor's saved readings."""

    def __init__(self, project: Project) -> None:
        self.registry = Registry(project)
        self.hooks = Hooks(project)
        self.paths = project.paths
        self.observation_file = ObservationFile.of(project.paths)
        self.records: dict[str, AgentRecord] = {}
        self.phases: dict[str, str | None] = {}
        self.observed: set[str] = set()

    def watch_dirs(self) -> list[Path]:
        return [self.paths.identities, self.paths.hooks, self.paths.supervisor]

    def read(self) -> Rows:
        self.records = {record.key: record for record in self.registry.list()}
        self.phases = {hook.key: hook_phase(hook) for hook in self.hooks.list()}
        rows = {(AGENT, key): self._row(key) for key in self.records}
        rows.update(self._observations())
        return rows

    def read_paths(self, paths: set[Path]) -> tuple[Rows, set[RowKey]]:
        rows: Rows = {}
        removed: set[RowKey] = set()
        for path in paths:
            name = path.name
            if path == self.observation_file.path:
                before = self.observed
                rows.update(self._observations())
                removed |= {(OBSERVATION, key) for key in before - self.observed}
                continue
            if not name.endswith(".json") or is_temp_name(name):
                continue
            key = name[: -len(".json")]
            if path.parent == self.paths.identities:
                if path.exists() or path.is_symlink():
                    self.records[key] = self.registry.read_path(path)
                    rows[(AGENT, key)] = self._row(key)
                    removed.discard((AGENT, key))
                elif self.records.pop(key, None) is not None:
                    removed.add((AGENT, key))
                    rows.pop((AGENT, key), None)
            elif path.parent == self.paths.hooks:
                self.phases[key] = hook_phase(self.hooks.read_path(path)) if path.exists() else None
                if key in self.records:
                    rows[(AGENT, key)] = self._row(key)
        return rows, removed

    def tick(self) -> Rows:
        now = self.registry.clock.now()
        changed: Rows = {}
        for key, record in self.records.items():
            before = record.liveness
            record.rejudge(now, self.registry.settings)
            if record.liveness != before:
                changed[(AGENT, key)] = self._row(key)
        return changed

    def _row(self, key: str) -> dict[str, Any]:
        return agent_row(self.records[key], self.phases.get(key))

    def _observations(self) -> Rows:
        loaded = self.observation_file.load()
        self.observed = set(loaded)
        return {(OBSERVATION, key): obs.to_json() for key, obs in loaded.items()}


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


def sections_of(project: Project) -> list[Section]:
    return [
        AgentSection(project),
        QuestionSection(project),
        SuspendedSection(project),
        QueueSection(project),
    ]
