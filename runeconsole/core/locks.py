"""Inter-process locks for read-modify-write of shared files, and for the jobs only one
process may do at a time (the monitor, the merge-queue processor).

The locks are the operating system's, ``flock`` on a lock file left in place: a process
that dies, however it dies, releases them, so a killed holder never blocks anyone.
``flocked`` takes one on a lock file's path, ``locked`` the same on a ``Path`` kept
inside a root; ``held_elsewhere`` asks whether someone holds one, ``remove_lock`` takes
away a lock file nobody will need again. ``owned`` is a lock that says who holds it,
taken through filelock (which takes the same ``flock`` on the same file, so each kind
excludes the other): filelock is imported only when an owned lock is taken. Claude
Code's hook (``runeconsole claude hook``), a process started for every event of every
agent, takes the others, and importing filelock (and the logging and asyncio it brings)
would cost it more than its work (``tests/services/claude/test_claude_hook_safety.py``).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from runeconsole.core.errors import RuneError, UnreadableFile, refused
from runeconsole.core.files import atomic_write_json, read_json_object
from runeconsole.core.validate import contained

TYPE_CHECKING = False  # typing itself is not imported: Claude Code's hook takes these locks
if TYPE_CHECKING:
    from typing import Any

DEFAULT_TIMEOUT = 10.0
_BUSY = (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK)
_NAP = 0.005


def _open(lock_path: str) -> int:
    os.makedirs(os.path.dirname(lock_path), exist_ok=True)
    return os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)


@contextmanager
def flocked(lock_path: str, timeout: float = DEFAULT_TIMEOUT, what: str = "") -> Iterator[None]:
    """Hold an exclusive lock on ``lock_path`` (created if needed) for the block, waiting
    up to ``timeout`` seconds for another holder to let go."""
    try:
        fd = _open(lock_path)
    except OSError as exc:  # a read-only file system, a full disk: WriteFailed says so
        raise refused(lock_path, exc) from None
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in _BUSY:
                    raise refused(lock_path, exc) from None
            if time.monotonic() >= deadline:
                raise RuneError(
                    f"could not lock {what or lock_path} within {timeout:g}s: another process "
                    f"holds {lock_path}; retry, or check for a stuck process"
                )
            time.sleep(_NAP)
        yield
    finally:
        os.close(fd)  # closing the descriptor lets the lock go


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
    with flocked(os.fspath(lock_path), timeout, what=what):
        yield


def held_elsewhere(lock_path: str) -> bool:
    """Whether another process holds ``lock_path`` exclusively (it is never created here).

    The probe asks for a *shared* lock, which any number of probes get at once: asking
    for an exclusive one would make two probes at the same moment each take the other
    for a holder.
    """
    try:
        fd = os.open(lock_path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as exc:
        return exc.errno in _BUSY
    finally:
        os.close(fd)
    return False


def remove_lock(lock_path: str, timeout: float = 5.0) -> bool:
    """Delete a lock file nobody will need again (its subject is gone), holding it while
    it goes: a holder that opened it before finds, once it has the lock, that what it
    guarded is gone. An absent file is left absent (it is not created to be removed)."""
    if not os.path.lexists(lock_path):
        return False
    with flocked(lock_path, timeout, what=os.path.basename(lock_path)):
        try:
            os.unlink(lock_path)
        except FileNotFoundError:
            return False
    return True


# -- a lock that says who holds it ----------------------------------------------------------


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
