"""Inter-process locks for read-modify-write of shared files, and for the jobs only one
process may do at a time (the monitor, the merge-queue processor).

The locks are the operating system's (``flock``: taken by ``core.flock`` for ``locked``,
through filelock for ``owned``): a process that dies, however it dies, releases them, so
a killed holder never blocks anyone.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from runeconsole.core.errors import RuneError, UnreadableFile, refused
from runeconsole.core.files import atomic_write_json, read_json_object
from runeconsole.core.flock import flocked
from runeconsole.core.validate import contained

TYPE_CHECKING = False  # typing itself is not imported: Claude Code's hook takes these locks
if TYPE_CHECKING:
    from typing import Any

DEFAULT_TIMEOUT = 10.0


@contextmanager
def locked(
    lock_path: Path, timeout: float = DEFAULT_TIMEOUT, what: str = "", within: Path | None = None
) -> Iterator[None]:
    """Hold an exclusive lock on ``lock_path`` (created if needed) for the block.

    With ``within``, the lock file must resolve under it: a lock is a write too, and a
    symlinked state dir must not carry it out of the project root.
    """
    if within is not None:
        contained(within, lock_path)
    # The same flock filelock takes, without importing it (and the logging, platform and
    # regular expressions it brings): a registry change at a session's start or end is
    # made by Claude Code's hook, a process of its own.
    with flocked(os.fspath(lock_path), timeout, what=what):
        yield


class LockBusy(RuneError):
    """Another process holds an owned lock; ``holder`` is its pid, if it recorded one."""

    def __init__(self, message: str, holder: int | None) -> None:
        super().__init__(message)
        self.holder = holder


def _owner(owner_file: Path) -> dict[str, Any]:
    try:
        return read_json_object(owner_file)
    except UnreadableFile:
        return {}


@contextmanager
def owned(lock_path: Path, owner_file: Path, what: str, **info: Any) -> Iterator[dict[str, Any]]:
    """Hold ``lock_path`` without waiting, this process's pid (and ``info``) written to
    ``owner_file`` for whoever finds it taken (``LockBusy`` names the holder's pid).

    Yields what a holder that died left in ``owner_file`` (empty after a clean release).
    """
    from filelock import FileLock, Timeout

    lock = FileLock(str(lock_path), timeout=0)
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        lock.acquire()
    except Timeout:
        pid = _owner(owner_file).get("pid")
        holder = pid if isinstance(pid, int) else None
        who = f"pid {holder}" if holder is not None else "another process"
        raise LockBusy(f"{what} is held by {who}", holder) from None
    except OSError as exc:  # (Timeout is one too: it comes first)
        raise refused(lock_path, exc) from None
    try:
        leftover = _owner(owner_file)
        atomic_write_json(owner_file, {"pid": os.getpid(), **info})
        yield leftover
    finally:
        with contextlib.suppress(FileNotFoundError):
            owner_file.unlink()
        lock.release()
