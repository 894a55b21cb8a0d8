"""Inter-process locks for read-modify-write of shared files."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from runeconsole.core.errors import RuneError

DEFAULT_TIMEOUT = 10.0


@contextmanager
def locked(lock_path: Path, timeout: float = DEFAULT_TIMEOUT, what: str = "") -> Iterator[None]:
    """Hold an exclusive lock on ``lock_path`` (created if needed) for the block."""
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
