"""The same operating-system locks as ``core.locks``, taken without importing filelock.

``core.locks`` holds its locks through filelock, which takes ``flock`` on the lock file
and leaves the file in place; these functions take ``flock`` on the same files, so a
lock held here excludes a holder there and the other way round. They exist for Claude
Code's hook (``runeconsole claude hook``), a process started for every event of every
agent, where importing filelock (and the logging and asyncio it brings) would cost more
than the work itself.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

from runeconsole.core.errors import RuneError, refused

_BUSY = (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK)
_NAP = 0.005


def _open(lock_path: str) -> int:
    os.makedirs(os.path.dirname(lock_path), exist_ok=True)
    return os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)


@contextmanager
def flocked(lock_path: str, timeout: float = 10.0, what: str = "") -> Iterator[None]:
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
