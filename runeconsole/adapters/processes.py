"""Child processes: run one with a deadline and streamed output; find and stop leftovers.

A command gets its own process group so a timeout (or crash recovery) can stop
everything it started, not just the top process.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from runeconsole.core.errors import RuneError

TAIL_LINES = 40


@dataclass(frozen=True)
class StreamResult:
    returncode: int | None  # None when it was stopped at the deadline
    timed_out: bool
    tail: list[str]
    seconds: float


def kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _inside(path: Path, directory: Path) -> bool:
    return path == directory or directory in path.parents


def stop_processes_in(directory: Path) -> list[int]:
    """Kill (with their process groups) processes whose working directory is in ``directory``.

    What a processor killed with -9 leaves behind: its git or test children keep
    running in the worktree it owned. Reads ``/proc``; elsewhere finds nothing.
    """
    own_group = os.getpgrp()
    stopped: list[int] = []
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return stopped
    for pid in pids:
        try:
            cwd = Path(os.readlink(f"/proc/{pid}/cwd").removesuffix(" (deleted)"))
            group = os.getpgid(pid)
        except OSError:
            continue
        if pid == os.getpid() or not _inside(cwd, directory):
            continue
        if group != own_group:
            kill_group(group)
        else:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        stopped.append(pid)
    return stopped


def run_streaming(
    args: list[str],
    cwd: Path,
    timeout: float,
    on_line: Callable[[str], None] | None = None,
    env: dict[str, str] | None = None,
) -> StreamResult:
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            args,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=env,
        )
    except OSError as exc:
        raise RuneError(f"cannot run {args[0]!r}: {exc.strerror or exc}") from None
    tail: deque[str] = deque(maxlen=TAIL_LINES)
    pending = b""
    deadline = started + timeout
    timed_out = False
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            if not selector.select(timeout=min(remaining, 0.5)):
                continue
            chunk = os.read(process.stdout.fileno(), 65536)
            if not chunk:
                break
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for raw in lines:
                _emit(raw, tail, on_line)
    if pending:
        _emit(pending, tail, on_line)
    if timed_out:
        kill_group(process.pid)
    process.stdout.close()
    returncode = process.wait()
    kill_group(process.pid)  # anything it left running in its group
    seconds = time.monotonic() - started
    return StreamResult(None if timed_out else returncode, timed_out, list(tail), seconds)


def _emit(raw: bytes, tail: deque[str], on_line: Callable[[str], None] | None) -> None:
    line = raw.decode("utf-8", "replace").rstrip("\r")
    tail.append(line)
    if on_line is not None:
        on_line(line)
