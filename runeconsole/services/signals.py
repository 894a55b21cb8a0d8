"""Signal files under ``.claude/attractor/signals/`` (the harness signal protocol).

One JSON file per signal, named ``{timestamp}-{source}-{target}-{TYPE}.json``.
The harness's one-second timestamp lets two equal signals overwrite each other; we
stamp to the microsecond, never reuse a stamp within a process, and create files
with an exclusive link, so no signal is ever replaced or lost.
"""

from __future__ import annotations

import os
import random
import re
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from runeconsole.core.errors import InvalidInput, RuneError, UnreadableFile
from runeconsole.core.files import create_exclusive, dump_json, is_temp_name, read_json_object
from runeconsole.core.timeutil import compact_stamp
from runeconsole.core.validate import validate_id
from runeconsole.services.project import Project

SIGNAL_TYPE = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")
PROCESSED = "processed"
_MAX_ATTEMPTS = 1000

_last_stamps: dict[Path, datetime] = {}
_stamp_lock = threading.Lock()


def _unique_stamp(directory: Path, now: datetime) -> datetime:
    """Strictly increasing stamps per directory in this process, even under a frozen clock."""
    with _stamp_lock:
        last = _last_stamps.get(directory)
        if last is not None and now <= last:
            now = last + timedelta(microseconds=1)
        _last_stamps[directory] = now
        return now


def _file_stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y%m%dT%H%M%S.%fZ")


def _name_part(value: str) -> str:
    """Source and target appear in the file name with '-' as '_' (the body keeps them)."""
    return value.replace("-", "_")


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
        if not SIGNAL_TYPE.fullmatch(signal_type or ""):
            raise InvalidInput(f"signal type {signal_type!r} must be UPPER_SNAKE_CASE")
        validate_id(source, "signal source")
        validate_id(target, "signal target")
        now = self.clock.now()
        body: dict[str, Any] = {
            "source": source,
            "target": target,
            "signal_type": signal_type,
            "timestamp": compact_stamp(now),  # the harness's form; the name has microseconds
            "payload": payload or {},
        }
        data = dump_json(body)
        self._ensure_directory()
        stamp = _unique_stamp(self.directory, now)
        suffix = f"-{_name_part(source)}-{_name_part(target)}-{signal_type}.json"
        for _ in range(_MAX_ATTEMPTS):
            path = self.directory / f"{_file_stamp(stamp)}{suffix}"
            try:
                create_exclusive(path, data)
            except FileExistsError:
                # Another process holds this stamp (a frozen clock, a burst): jump ahead by a
                # random step so writers spread out instead of queueing one microsecond apart.
                step = timedelta(microseconds=random.randint(1, 1000))
                stamp = _unique_stamp(self.directory, stamp + step)
                continue
            return Signal(path, source, target, signal_type, body["timestamp"], body["payload"])
        raise RuneError(f"could not find a free signal file name for {suffix[1:]}")

    def _ensure_directory(self) -> None:
        directory = self.paths.inside(self.directory)
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise RuneError(f"{directory} is not a directory; signals cannot be written") from None

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
