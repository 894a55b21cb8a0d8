"""The harness's pipeline runners running on this machine, found by their command lines:
``pipeline_runner.py --dot-file X.dot`` and ``cobuilder pipeline run X.dot`` (the engine
runner), each with the DOT it runs, resolved against the process's working directory.

Reads ``/proc`` only (cmdline and cwd of each process); elsewhere it finds none and
says so (``available``)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

PIPELINE_RUNNER, ENGINE = "pipeline_runner", "engine"


@dataclass(frozen=True)
class RunnerProcess:
    pid: int
    kind: str  # PIPELINE_RUNNER or ENGINE
    dot: Path


def available() -> bool:
    return os.path.isdir("/proc/self")


def _kind(argv: list[str]) -> str | None:
    words = [Path(arg).name for arg in argv[:6]]
    if any(word in ("pipeline_runner.py", "pipeline_runner") for word in words):
        return PIPELINE_RUNNER
    if any(arg.endswith("cobuilder.engine.pipeline_runner") for arg in argv[:4]):
        return PIPELINE_RUNNER
    joined = " ".join(argv[:8])
    if "cobuilder" in joined and "pipeline" in argv and "run" in argv:
        return ENGINE
    return None


def _dot_of(argv: list[str], cwd: Path) -> Path | None:
    for index, arg in enumerate(argv):
        value = arg
        if arg.startswith("--dot-file="):
            value = arg.split("=", 1)[1]
        elif arg == "--dot-file" and index + 1 < len(argv):
            value = argv[index + 1]
        if value.endswith(".dot"):
            path = Path(value)
            return path if path.is_absolute() else cwd / path
    return None


def runners() -> list[RunnerProcess]:
    """Every runner process found now (none where there is no ``/proc``)."""
    found: list[RunnerProcess] = []
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return found
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                raw = handle.read(16384)
        except OSError:
            continue
        if b"pipeline" not in raw:  # most processes: one bytes search, no decoding
            continue
        argv = [arg.decode("utf-8", "replace") for arg in raw.split(b"\0") if arg]
        kind = _kind(argv)
        if kind is None:
            continue
        try:
            cwd = Path(os.readlink(f"/proc/{pid}/cwd"))
        except OSError:
            cwd = Path("/")
        dot = _dot_of(argv, cwd)
        if dot is not None:
            found.append(RunnerProcess(pid, kind, Path(os.path.normpath(dot))))
    return found
