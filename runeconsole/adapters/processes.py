"""Child processes: run one with a deadline and streamed output; find and stop leftovers.

A command gets its own process group so a timeout (or crash recovery) can stop
everything it started, not just the top process.
"""

from __future__ import annotations

import contextlib
import os
import select
import selectors
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from runeconsole.core.errors import RuneError

TAIL_LINES = 40
EXIT_POLL = 0.05  # seconds between exit checks where there is no pidfd
DRAIN_SECONDS = 1.0  # at most this long reading output after the exit or the kill
CANCEL_POLL = 0.1  # seconds between looks at a cancel event
KILL_WAIT = 10.0  # for the killed process to be reaped


@dataclass(frozen=True)
class StreamResult:
    returncode: int | None  # None when it was stopped at the deadline
    timed_out: bool
    tail: list[str]
    seconds: float
    cancelled: bool = False  # stopped because the caller asked (``cancel``)


def kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


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
        if pid == os.getpid() or not cwd.is_relative_to(directory):
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
    cancel: threading.Event | None = None,
) -> StreamResult:
    """Run ``args`` in a new process group, streaming its output, until it exits or times out
    (or ``cancel`` is set: then it is stopped and the result says ``cancelled``).

    The result is decided by the process itself, not by its output: a command that
    closes its output keeps being timed, and one that exits while a background child
    holds the output open is done. Either way its process group is killed before
    returning, so nothing it started outlives the run.
    """
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
    assert process.stdout is not None
    output = _Output(process.stdout.fileno(), on_line)
    deadline = started + timeout
    with _exit_watch(process.pid) as exit_fd, selectors.DefaultSelector() as selector:
        selector.register(output.fd, selectors.EVENT_READ)
        if exit_fd is not None:
            selector.register(exit_fd, selectors.EVENT_READ)
        while not _exited(process.pid):
            remaining = deadline - time.monotonic()
            if remaining <= 0 or (cancel is not None and cancel.is_set()):
                break
            # With a pidfd the exit wakes the select; without one it is polled for.
            poll = remaining if exit_fd is not None else min(remaining, EXIT_POLL)
            if cancel is not None:
                poll = min(poll, CANCEL_POLL)
            for key, _ in selector.select(timeout=poll):
                if key.fd == output.fd and not output.read():
                    selector.unregister(output.fd)  # closed; the process may still run
        timed_out = not _exited(process.pid)
        if not timed_out:
            output.drain(DRAIN_SECONDS)  # what it wrote before exiting
        # Kill the group while the leader is an unreaped zombie: its id cannot be reused.
        kill_group(process.pid)
        output.drain(DRAIN_SECONDS)
    output.flush()
    process.stdout.close()
    try:
        returncode = process.wait(timeout=KILL_WAIT)
    except subprocess.TimeoutExpired:  # unkillable (uninterruptible sleep): report the timeout
        returncode, timed_out = None, True
    seconds = time.monotonic() - started
    if timed_out and cancel is not None and cancel.is_set():
        return StreamResult(None, False, output.tail_lines(), seconds, cancelled=True)
    return StreamResult(None if timed_out else returncode, timed_out, output.tail_lines(), seconds)


def _exited(pid: int) -> bool:
    """Whether the child has exited, without reaping it (``WNOWAIT``)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


@contextlib.contextmanager
def _exit_watch(pid: int) -> Iterator[int | None]:
    """A pidfd that becomes readable when ``pid`` exits (Linux 5.3+), else ``None``."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        yield None
        return
    try:
        yield fd
    finally:
        os.close(fd)


class _Output:
    """Splits a pipe's bytes into lines, keeping a tail and passing each line on."""

    def __init__(self, fd: int, on_line: Callable[[str], None] | None) -> None:
        self.fd = fd
        self.on_line = on_line
        self.tail: deque[str] = deque(maxlen=TAIL_LINES)
        self.pending = b""
        self.closed = False

    def read(self) -> bool:
        """Read what is there; False once the pipe is closed (every writer gone)."""
        chunk = os.read(self.fd, 65536)
        if not chunk:
            self.closed = True
            return False
        *lines, self.pending = (self.pending + chunk).split(b"\n")
        for raw in lines:
            self._emit(raw)
        return True

    def drain(self, seconds: float) -> None:
        """Read until the pipe closes or stays quiet, for at most ``seconds``."""
        stop = time.monotonic() + seconds
        quiet = 0.05
        while not self.closed and time.monotonic() < stop:
            ready, _, _ = select.select([self.fd], [], [], quiet)
            if not ready or not self.read():
                return

    def flush(self) -> None:
        if self.pending:
            self._emit(self.pending)
            self.pending = b""

    def tail_lines(self) -> list[str]:
        return list(self.tail)

    def _emit(self, raw: bytes) -> None:
        line = raw.decode("utf-8", "replace").rstrip("\r")
        self.tail.append(line)
        if self.on_line is not None:
            self.on_line(line)
