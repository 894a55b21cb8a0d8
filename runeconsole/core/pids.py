"""What a process id says about a process on this machine: whether it runs, which one it
is (its start time), and how it ended while it waits to be reaped.

The one place that asks: the identity files, temp-file owners, checkpoint owners, the
merge-queue processor and tmux panes all name processes by pid. ``/proc`` (Linux) adds
what signal 0 cannot tell: a zombie has exited, and a pid reused by a later process has
another start time. Where there is no ``/proc``, signal 0 alone decides.
"""

from __future__ import annotations

import os
from pathlib import Path


def _stat_fields(pid: int) -> list[str] | None:
    """``/proc/PID/stat`` after the command name (field 3 on), or ``None`` if unreadable.
    The name is in parentheses and may hold spaces or ``)``: split after the last one."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rpartition(")")[2].split()


def pid_alive(pid: int | None) -> bool:
    """Whether ``pid`` names a running process (a zombie has exited: not running)."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False  # 0 and negative pids would name process groups to ``kill``
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists; it is someone else's
    except (OSError, OverflowError):
        return False
    fields = _stat_fields(pid)
    return fields is None or fields[:1] not in (["Z"], ["X"])


def process_start(pid: int) -> int | None:
    """When ``pid`` started (clock ticks after boot); ``None`` if it is gone, a zombie,
    or there is no ``/proc``.

    A pid with its start time names one process: a later process that reuses the id
    has another start time.
    """
    fields = _stat_fields(pid)
    try:
        return None if fields is None or fields[0] in ("Z", "X") else int(fields[19])
    except (IndexError, ValueError):
        return None


def zombie_exit(pid: int | None) -> tuple[int | None, int | None]:
    """(status, signal) of an exited process its parent has not reaped yet (``None``s
    when it is not such a zombie): tmux 3.3 now and then misses a pane's exit and then
    never records the status, though the zombie still holds it."""
    fields = _stat_fields(pid) if pid else None
    if fields is None or len(fields) < 50 or fields[0] != "Z" or not fields[49].isdigit():
        return None, None
    code = int(fields[49])
    return (None, code & 0x7F) if code & 0x7F else ((code >> 8) & 0xFF, None)


def parent_of(pid: int) -> int | None:
    """The parent of ``pid`` (``None`` if it is gone or there is no ``/proc``)."""
    fields = _stat_fields(pid)
    try:
        return None if fields is None else int(fields[1])
    except (IndexError, ValueError):
        return None


def command_of(pid: int) -> tuple[str, list[str]]:
    """(name, argv) of ``pid``: the kernel's short name (a program may set its own, as
    Claude Code does) and the command line; empty when unreadable."""
    try:
        name = Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        name = ""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        argv = []
    return name, [arg.decode("utf-8", "replace") for arg in argv if arg]


def ancestors(pid: int, limit: int = 64) -> list[int]:
    """``pid``'s parent, its parent, … up to (not including) pid 1; a loop or an
    unreadable process ends the walk."""
    found: list[int] = []
    current = parent_of(pid)
    while current is not None and current > 1 and current not in found and len(found) < limit:
        found.append(current)
        current = parent_of(current)
    return found
