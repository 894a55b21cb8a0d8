"""One signal file written (``.claude/attractor/signals/``, the harness signal protocol):
its name ``{timestamp}-{source}-{target}-{TYPE}.json`` and its body.

The harness's one-second timestamp lets two equal signals overwrite each other; we
stamp to the microsecond, never reuse a stamp within a process, and create files with
an exclusive link, so no signal is ever replaced or lost. ``Signals.send`` writes
through here, and so does Claude Code's hook (an agent registered, ended, its hook file
checkpointed): this module imports nothing the hook does not already hold.
"""

from __future__ import annotations

import os
import re
from _thread import allocate_lock  # threading.Lock itself, without importing threading
from datetime import UTC, datetime, timedelta

from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.core.files import create_exclusive, dump_json
from runeconsole.core.paths import ProjectPaths
from runeconsole.core.timeutil import compact_stamp
from runeconsole.core.validate import validate_id

TYPE_CHECKING = False  # typing itself is not imported: the hook starts faster
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

SIGNAL_TYPE = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")
_MAX_ATTEMPTS = 1000

_last_stamps: dict[str, datetime] = {}
_stamp_lock = allocate_lock()


def _unique_stamp(directory: Path, now: datetime) -> datetime:
    """Strictly increasing stamps per directory in this process, even under a frozen clock."""
    key = os.fspath(directory)
    with _stamp_lock:
        last = _last_stamps.get(key)
        if last is not None and now <= last:
            now = last + timedelta(microseconds=1)
        _last_stamps[key] = now
        return now


def _file_stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y%m%dT%H%M%S.%fZ")


def _name_part(value: str) -> str:
    """Source and target appear in the file name with '-' as '_' (the body keeps them)."""
    return value.replace("-", "_")


def _directory(paths: ProjectPaths) -> Path:
    directory = paths.inside(paths.signals)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise RuneError(f"{directory} is not a directory; signals cannot be written") from None
    return directory


def write(
    paths: ProjectPaths,
    now: datetime,
    signal_type: str,
    source: str,
    target: str,
    payload: dict[str, Any] | None = None,
) -> tuple[Path, dict[str, Any]]:
    """The signal written at ``now``: where, and its body."""
    if not SIGNAL_TYPE.fullmatch(signal_type or ""):
        raise InvalidInput(f"signal type {signal_type!r} must be UPPER_SNAKE_CASE")
    validate_id(source, "signal source")
    validate_id(target, "signal target")
    body: dict[str, Any] = {
        "source": source,
        "target": target,
        "signal_type": signal_type,
        "timestamp": compact_stamp(now),  # the harness's form; the name has microseconds
        "payload": payload or {},
    }
    data = dump_json(body)
    directory = _directory(paths)
    stamp = _unique_stamp(directory, now)
    suffix = f"-{_name_part(source)}-{_name_part(target)}-{signal_type}.json"
    for _ in range(_MAX_ATTEMPTS):
        path = directory / f"{_file_stamp(stamp)}{suffix}"
        try:
            create_exclusive(path, data)
        except FileExistsError:
            # Another process holds this stamp (a frozen clock, a burst): jump ahead by a
            # random step so writers spread out instead of queueing one microsecond apart.
            step = timedelta(microseconds=1 + int.from_bytes(os.urandom(2), "big") % 1000)
            stamp = _unique_stamp(directory, stamp + step)
            continue
        return path, body
    raise RuneError(f"could not find a free signal file name for {suffix[1:]}")
