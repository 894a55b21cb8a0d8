"""A pipeline's history, oldest first, with who moved what: the harness CLI's
transitions (``<stem>.dot.transitions.jsonl``), the signals its runner consumed
(``signals/<stem>/processed/``: a worker's or tool's result, a validation or a gate's
answer, an escalation) and those still waiting to be consumed, and the engine's events
in ``sequence`` order. Read on demand (``runeconsole pipeline PRD``, the pane's detail),
never on every pass."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from runeconsole.core.errors import UnreadableFile
from runeconsole.core.files import read_bytes, read_json_object
from runeconsole.core.timeutil import iso_z, parse_iso
from runeconsole.services.pipelines.engine import EngineRun

PROCESSED = re.compile(r"^(?P<stamp>\d{8}T\d{6}Z)-(?P<name>.+)\.json$")
MAX_ENTRIES = 2000  # the newest kept: a runner that loops writes one a second


@dataclass(frozen=True)
class Moment:
    at: datetime | None
    who: str  # "cli", "runner", "validator", "operator", "engine"
    node_id: str | None
    what: str

    def to_json(self) -> dict[str, Any]:
        return {
            "at": iso_z(self.at) if self.at else None,
            "who": self.who,
            "node_id": self.node_id,
            "what": self.what,
        }


def transitions(path: Path) -> list[Moment]:
    """The harness CLI's own log: one JSON object per applied change."""
    try:
        data = read_bytes(path)
    except UnreadableFile:
        return []
    found = []
    for line in data.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if not isinstance(item, dict):
            continue
        command = str(item.get("command") or "transition")
        node = item.get("node_id")
        if "new_status" in item:
            log = str(item.get("log") or "")
            what = log.split("] ", 1)[-1] if log else f"{node}: -> {item['new_status']}"
        elif isinstance(item.get("activated"), list):
            what = f"{command}: activated {', '.join(map(str, item['activated']))}"
        elif "result" in item:  # route-decision: which way, and the nodes it moved
            affected = item.get("affected")
            moved = ", ".join(map(str, affected)) if isinstance(affected, list) else ""
            what = f"{command} {item['result']}" + (f": {moved}" if moved else "")
        else:
            what = command
        found.append(
            Moment(
                parse_iso(item.get("timestamp")),
                "cli",
                node if isinstance(node, str) else None,
                what,
            )
        )
    return found


def _signal_said(name: str, data: dict[str, Any]) -> tuple[str, str, str]:
    """(node, who, what) of one signal file's name and content."""
    if name.endswith("-validation"):
        node = name[: -len("-validation")]
        result = str(data.get("result") or "?")
        reason = str(data.get("reason") or "")
        who = "operator" if "human" in reason.lower() or data.get("by") else "validator"
        score = data.get("overall_score")
        scored = f" (score {score})" if isinstance(score, int | float) else ""
        return node, who, f"{result}{scored}: {reason}".rstrip(": ")
    status = str(data.get("status") or data.get("result") or "?")
    said = str(data.get("reason") or data.get("message") or "").strip()
    who = "runner" if status == "escalation" else "worker"
    return name, who, f"{status}: {said}".rstrip(": ")


def signals(directory: Path) -> list[Moment]:
    found: list[Moment] = []
    try:
        names = sorted(os.listdir(directory / "processed"))[-MAX_ENTRIES:]
    except OSError:
        names = []
    for name in names:
        match = PROCESSED.match(name)
        if match is None:
            continue
        try:
            data = read_json_object(directory / "processed" / name)
        except UnreadableFile as exc:
            data = {"status": "unreadable", "reason": exc.reason}
        node, who, what = _signal_said(match["name"], data)
        at = datetime.strptime(match["stamp"], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
        found.append(Moment(parse_iso(data.get("_ts")) or at, who, node, what))
    try:
        pending = sorted(
            n
            for n in os.listdir(directory)
            if n.endswith((".json", ".gate-wait")) and not n.startswith(("_", "."))
        )
    except OSError:
        pending = []
    for name in pending:
        try:
            data = read_json_object(directory / name)
        except UnreadableFile as exc:
            data = {"status": "unreadable", "reason": exc.reason}
        if name.endswith(".gate-wait"):
            node = name[: -len(".gate-wait")]
            found.append(
                Moment(
                    parse_iso(data.get("timestamp")),
                    "runner",
                    node,
                    "waits for a human (gate marker)",
                )
            )
            continue
        node, who, what = _signal_said(name[: -len(".json")], data)
        found.append(Moment(parse_iso(data.get("_ts")), who, node, f"{what} (not consumed yet)"))
    return found


def engine_events(run: EngineRun) -> list[Moment]:
    found = []
    for event in run.events[-MAX_ENTRIES:]:
        if event.kind in ("checkpoint.saved", "context.updated"):
            continue
        data = event.data
        if event.kind == "node.completed":
            what = f"completed: {data.get('outcome_status')}"
        elif event.kind == "edge.selected":
            condition = data.get("condition")
            what = (
                f"edge {data.get('from_node_id', event.node_id)} -> {data.get('to_node_id', '?')}"
            )
            what += f" [{condition}]" if condition else ""
        else:
            what = event.kind.split(".", 1)[-1]
        found.append(Moment(event.at, "engine", event.node_id, what))
    return found + answers(run)


def answers(run: EngineRun) -> list[Moment]:
    """The answers written for the run's gates (``INPUT_RESPONSE.signal``; the engine
    never consumes them)."""
    found: list[Moment] = []
    try:
        nodes = sorted(os.listdir(run.run_dir / "nodes"))
    except OSError:
        return found
    for node in nodes:
        path = run.response_path(node)
        try:
            data = read_json_object(path)
            at = datetime.fromtimestamp(path.stat().st_mtime, UTC)
        except (UnreadableFile, OSError):
            continue
        comment = str(data.get("comment") or "").strip()
        said = f"answered {data.get('response')}" + (f": {comment}" if comment else "")
        found.append(Moment(at, str(data.get("by") or "operator"), node, said))
    return found


def timeline(stem_dot: Path, signal_dir: Path, run: EngineRun | None) -> list[Moment]:
    moments = transitions(stem_dot.with_name(stem_dot.name + ".transitions.jsonl"))
    moments += signals(signal_dir)
    if run is not None:
        moments += engine_events(run)
    floor = datetime.min.replace(tzinfo=UTC)
    moments.sort(key=lambda m: m.at or floor)
    return moments[-MAX_ENTRIES:]
