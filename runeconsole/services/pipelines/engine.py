"""The engine runner's runs (``cobuilder pipeline run``): a directory per run under
``.claude/attractor/pipelines/<stem>-run-<YYYYmmddTHHMMSSZ>/`` with ``manifest.json``,
``checkpoint.json`` and ``pipeline-events.jsonl``. The engine never writes the DOT, so a
node's state in a run comes from its events, read in ``sequence`` order (lines are not
written in order).

A human gate waits while its last event is ``node.completed`` with ``outcome_status:
"waiting"`` (or it started and has not completed) and the run has not ended; it is
answered by ``nodes/<gate>/signals/INPUT_RESPONSE.signal``. A gate reported ``waiting``
after which the run went on to other nodes was run past (the harness's engine does so
without ``PIPELINE_HUMAN_GATE_TIMEOUT``): a finding, since nobody approved it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from runeconsole.core.errors import UnreadableFile
from runeconsole.core.files import read_bytes
from runeconsole.core.timeutil import parse_iso

RUN_NAME = re.compile(r"^(?P<stem>.+)-run-(?P<stamp>\d{8}T\d{6}Z)$")
EVENTS, RESPONSE = "pipeline-events.jsonl", "INPUT_RESPONSE.signal"
ENDED = frozenset({"pipeline.completed", "pipeline.failed"})
# An event's outcome, as a DOT status would say it.
OUTCOME_STATUS = {
    "success": "accepted",
    "skipped": "accepted",
    "partial_success": "validated",
    "failure": "failed",
    "fail": "failed",
    "waiting": "active",
}


@dataclass(frozen=True)
class EngineEvent:
    sequence: int
    kind: str
    at: datetime | None
    node_id: str | None
    data: dict[str, Any]


@dataclass
class EngineRun:
    stem: str
    run_dir: Path
    started: str  # the run's stamp, as its directory names it
    events: list[EngineEvent] = field(default_factory=list)
    error: str | None = None  # its events could not be read (why)

    @property
    def ended(self) -> EngineEvent | None:
        for event in reversed(self.events):
            if event.kind in ENDED:
                return event
        return None

    def node_states(self) -> dict[str, str]:
        """Each node's state in this run, as a DOT status (``active`` while it runs)."""
        states: dict[str, str] = {}
        for event in self.events:
            if event.node_id is None:
                continue
            if event.kind == "node.started":
                states[event.node_id] = "active"
            elif event.kind == "node.completed":
                outcome = str(event.data.get("outcome_status") or "")
                states[event.node_id] = OUTCOME_STATUS.get(outcome, "validated")
            elif event.kind == "node.failed":
                states[event.node_id] = "failed"
        return states

    def response_path(self, node_id: str) -> Path:
        return self.run_dir / "nodes" / node_id / "signals" / RESPONSE

    def waiting_gates(self, gates: set[str]) -> dict[str, datetime | None]:
        """The human gates of ``gates`` this run waits on now (with since when): their
        last event says waiting (or they started and nothing followed), the run has not
        ended, and no answer is on disk."""
        if self.ended is not None or not self.events:
            return {}
        last = self.events[-1]
        waiting: dict[str, datetime | None] = {}
        for gate in gates:
            mine = [e for e in self.events if e.node_id == gate and e.kind.startswith("node.")]
            if not mine:
                continue
            started = next((e.at for e in mine if e.kind == "node.started"), None)
            final = mine[-1]
            still = final.kind == "node.started" or (
                final.kind == "node.completed" and final.data.get("outcome_status") == "waiting"
            )
            current = last.node_id in (gate, None) or last.kind == "checkpoint.saved"
            if still and current and not self.response_path(gate).exists():
                waiting[gate] = started or final.at
        return waiting

    def run_past(self, gates: set[str]) -> list[str]:
        """Gates this run reported ``waiting`` and then went past, with no answer."""
        passed = []
        for gate in sorted(gates):
            waited = [
                e.sequence
                for e in self.events
                if e.node_id == gate
                and e.kind == "node.completed"
                and e.data.get("outcome_status") == "waiting"
            ]
            if not waited:
                continue
            later = [
                e for e in self.events if e.sequence > waited[-1] and e.node_id not in (gate, None)
            ]
            if later and not self.response_path(gate).exists():
                passed.append(gate)
        return passed


def runs_dir(root: Path) -> Path:
    return root / ".claude" / "attractor" / "pipelines"


def latest_runs(root: Path) -> dict[str, Path]:
    """Each pipeline's newest run directory (by the stamp in its name)."""
    newest: dict[str, tuple[str, Path]] = {}
    try:
        entries = list(runs_dir(root).iterdir())
    except OSError:
        return {}
    for entry in entries:
        match = RUN_NAME.match(entry.name)
        if match is None or not entry.is_dir():
            continue
        stem, stamp = match["stem"], match["stamp"]
        if stem not in newest or newest[stem][0] < stamp:
            newest[stem] = (stamp, entry)
    return {stem: path for stem, (_, path) in newest.items()}


def read_events(path: Path) -> list[EngineEvent]:
    """The events of one run, in ``sequence`` order; a line that is not an event (cut
    short at the end, or garbage) is skipped."""
    events: list[EngineEvent] = []
    for line in read_bytes(path).splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if not isinstance(item, dict) or not isinstance(item.get("type"), str):
            continue
        sequence = item.get("sequence")
        data = item.get("data")
        node = item.get("node_id")
        events.append(
            EngineEvent(
                sequence if isinstance(sequence, int) else len(events),
                item["type"],
                parse_iso(item.get("timestamp")),
                node if isinstance(node, str) else None,
                data if isinstance(data, dict) else {},
            )
        )
    events.sort(key=lambda e: e.sequence)
    return events


def read_run(stem: str, run_dir: Path) -> EngineRun:
    match = RUN_NAME.match(run_dir.name)
    run = EngineRun(stem, run_dir, match["stamp"] if match else "")
    try:
        run.events = read_events(run_dir / EVENTS)
    except UnreadableFile as exc:
        run.error = exc.reason
    return run
