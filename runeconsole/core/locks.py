"""Inter-process locks for read-modify-write of shared files."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from runeconsole.core.errors import RuneError
from runeconsole.core.validate import contained

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
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(lock_path), timeout=timeout)
    try:
        lock.acquire()
    except Timeout:
        raise RuneError(
            f"could not lock {what or lock_path} within {timeout:g}s: another process holds "
            f"{lock_path}; retry, or check for a stuck process"
        ) from None
    try:
        yield
    finally:
        lock.release()
