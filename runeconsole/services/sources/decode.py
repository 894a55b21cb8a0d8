"""The merged stream's rows as typed records, decoded at the edge.

``runeconsole events --fleet`` speaks JSON (each record's ``to_json``); the fleet console
reads it back into the records the project console holds (``AgentRecord``, ``Question``,
``PermissionRequest``, ``ContextRecord``, ``QueueEntry``, ``AgentObservation``,
``Pipeline``), each
through its own ``from_json``, so one row function per kind draws both consoles. A row
of a kind this version does not know is left out; a row that cannot be read as its kind
becomes that kind's unreadable record, with the reason: shown, never dropped silently.
Runs where the stream is read (the feed's thread), not on the UI thread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runeconsole.services.claude.permissions.service import PermissionRequest
from runeconsole.services.events import Event
from runeconsole.services.events.sections import (
    AGENT,
    OBSERVATION,
    PERMISSION,
    PIPELINE,
    QUESTION,
    QUEUE,
    QUEUE_STATE,
    SUSPENDED,
)
from runeconsole.services.liveness import AgentRecord
from runeconsole.services.merge_queue import QueueEntry, QueueState
from runeconsole.services.pane_observation import AgentObservation
from runeconsole.services.pipelines.record import Pipeline
from runeconsole.services.sources.fleet import SOURCE
from runeconsole.services.sources.remote import CONNECTING
from runeconsole.services.suspension import ContextRecord
from runeconsole.services.worker_questions import Question


@dataclass(frozen=True)
class SourceState:
    """A source as the stream says it is: ``connecting``, ``up`` or ``down`` (and why)."""

    name: str
    state: str = CONNECTING
    reason: str | None = None
    host: str | None = None
    root: str = ""

    @classmethod
    def from_json(cls, name: str, data: dict[str, Any]) -> SourceState:
        def text(field: str) -> str | None:
            value = data.get(field)
            return value if isinstance(value, str) and value else None

        return cls(
            name, text("state") or CONNECTING, text("reason"), text("host"), text("root") or ""
        )


@dataclass(frozen=True)
class Row:
    """One upsert (``record``) or remove (``record`` None) of the stream, decoded; an
    agent's row also says its work ``phase``."""

    kind: str
    key: str
    source: str
    record: object | None
    phase: str | None = None


def _agent(key: str, data: dict[str, Any]) -> AgentRecord:
    return AgentRecord.from_json(data, key)


def _queue_state(key: str, data: dict[str, Any]) -> QueueState:
    error = data.get("error")
    return QueueState(
        paused=data.get("paused") is True, error=error if isinstance(error, str) else None
    )


# kind -> (decoder, the unreadable record of that kind, given the key and the reason)
DECODERS: dict[
    str, tuple[Callable[[str, dict[str, Any]], object], Callable[[str, str], object]]
] = {
    AGENT: (_agent, lambda key, why: AgentRecord(key, "", error=why)),
    OBSERVATION: (lambda key, data: AgentObservation.from_json(data), lambda key, why: None),
    QUESTION: (
        lambda key, data: Question.from_json(data),
        lambda key, why: _bad_question(key, why),
    ),
    PERMISSION: (
        lambda key, data: PermissionRequest.from_json(data),
        lambda key, why: PermissionRequest.from_json({"id": key, "error": why}),
    ),
    SUSPENDED: (
        lambda key, data: ContextRecord.from_json(data),
        lambda key, why: ContextRecord(key, Path(key), reason=why),
    ),
    QUEUE: (
        lambda key, data: QueueEntry.from_json(data),
        lambda key, why: QueueEntry({"error": why}, 0),
    ),
    QUEUE_STATE: (_queue_state, lambda key, why: QueueState(error=why)),
    PIPELINE: (
        lambda key, data: Pipeline.from_json(data),
        lambda key, why: Pipeline(key, "", error=why),
    ),
    SOURCE: (SourceState.from_json, lambda key, why: SourceState(key, reason=why)),
}


def _bad_question(key: str, why: str) -> Question:
    return Question.from_json({"error": why, "task_id": key.rsplit("/", 1)[-1], "path": key})


def decode_row(kind: str, key: str, data: object) -> object | None:
    """The record of one upserted row (``None``: a kind this version does not know)."""
    found = DECODERS.get(kind)
    if found is None:
        return None
    decoder, unreadable = found
    if not isinstance(data, dict):
        return unreadable(key, f"the stream sent {type(data).__name__}, not an object")
    try:
        return decoder(key, data)
    except (TypeError, ValueError, AttributeError, KeyError) as exc:
        return unreadable(key, f"unreadable row: {type(exc).__name__}: {exc}")


def decode(events: Iterable[Event]) -> list[Row]:
    """The stream's upserts and removes, decoded (snapshots, heartbeats left out)."""
    rows: list[Row] = []
    for event in events:
        what, kind, key = event.get("event"), event.get("kind"), event.get("key")
        if not isinstance(kind, str) or not isinstance(key, str) or kind not in DECODERS:
            continue
        source = str(event.get("source") or "")
        if what == "remove":
            rows.append(Row(kind, key, source, None))
        elif what == "upsert":
            data = event.get("data")
            record = decode_row(kind, key, data)
            if record is None:
                continue
            phase = data.get("phase") if kind == AGENT and isinstance(data, dict) else None
            rows.append(Row(kind, key, source, record, phase if isinstance(phase, str) else None))
    return rows
