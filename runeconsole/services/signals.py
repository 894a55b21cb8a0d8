"""Signal files under ``.claude/attractor/signals/`` (the harness signal protocol).

One JSON file per signal, named ``{timestamp}-{source}-{target}-{TYPE}.json``, written
by ``signal_writer`` (which never reuses a name, so no signal is replaced or lost); read,
listed and consumed here.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runeconsole.core.errors import RuneError, UnreadableFile
from runeconsole.core.files import is_temp_name, read_json_object
from runeconsole.services import signal_writer
from runeconsole.services.project import Project

PROCESSED = "processed"
_MAX_ATTEMPTS = 1000


@dataclass(frozen=True)
class Signal:
    path: Path
    source: str = ""
    target: str = ""
    signal_type: str = ""
    timestamp: str = ""
    payload: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "file": self.path.name,
            "source": self.source,
            "target": self.target,
            "signal_type": self.signal_type,
            "timestamp": self.timestamp,
            "payload": self.payload,
        }
        if self.error:
            data["error"] = self.error
        return data


class Signals:
    def __init__(self, project: Project) -> None:
        self.paths = project.paths
        self.clock = project.clock

    @property
    def directory(self) -> Path:
        return self.paths.signals

    def send(
        self, signal_type: str, source: str, target: str, payload: dict[str, Any] | None = None
    ) -> Signal:
        path, body = signal_writer.write(
            self.paths, self.clock.now(), signal_type, source, target, payload
        )
        return Signal(path, source, target, signal_type, body["timestamp"], body["payload"])

    def read(self, path: Path) -> Signal:
        try:
            body = read_json_object(path)
        except UnreadableFile as exc:
            return Signal(path, error=exc.reason)
        payload = body.get("payload")
        return Signal(
            path,
            source=str(body.get("source", "")),
            target=str(body.get("target", "")),
            signal_type=str(body.get("signal_type", "")),
            timestamp=str(body.get("timestamp", "")),
            payload=payload if isinstance(payload, dict) else {"value": payload},
        )

    def pending(self, *, signal_type: str | None = None, target: str | None = None) -> list[Signal]:
        """Unconsumed signals, oldest first; filtered by type and target if given."""
        return self._listed(self.directory, signal_type, target)

    def processed(
        self, *, signal_type: str | None = None, target: str | None = None
    ) -> list[Signal]:
        """Consumed signals (in ``processed/``), oldest first; filtered like ``pending``."""
        return self._listed(self.directory / PROCESSED, signal_type, target)

    def _listed(self, directory: Path, signal_type: str | None, target: str | None) -> list[Signal]:
        try:
            names = sorted(
                entry.name
                for entry in os.scandir(directory)
                if entry.name.endswith(".json") and not is_temp_name(entry.name) and entry.is_file()
            )
        except FileNotFoundError:
            return []
        if signal_type:  # consume() may have added ".N" before ".json"
            kind = re.compile(rf"-{re.escape(signal_type)}(\.\d+)?\.json$")
            names = [n for n in names if kind.search(n)]
        signals = [self.read(directory / name) for name in names]
        if target:
            signals = [s for s in signals if s.target == target]
        return signals

    def consume(self, signal: Signal) -> Path:
        """Move a signal into ``processed/``; an existing processed file is never replaced."""
        processed = self.directory / PROCESSED
        processed.mkdir(parents=True, exist_ok=True)
        base = signal.path.name
        for attempt in range(_MAX_ATTEMPTS):
            name = base if attempt == 0 else f"{base[:-5]}.{attempt}.json"
            target = processed / name
            try:
                os.link(signal.path, target)
            except FileExistsError:
                continue
            except FileNotFoundError:
                raise RuneError(f"signal {base} was already consumed") from None
            os.unlink(signal.path)
            return target
        raise RuneError(f"could not move {base} into {processed}")
