"""The project's one error type.

Every failure a person can act on is a ``RuneError`` whose message says what went
wrong and what to do; the CLI prints it and exits with ``exit_code``, the console
shows it. Subclasses only refine the exit code or carry the offending path.
"""

from __future__ import annotations

import errno
from pathlib import Path


class RuneError(Exception):
    exit_code = 1

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if exit_code is not None:
            self.exit_code = exit_code

    def __str__(self) -> str:
        return self.message


class InvalidInput(RuneError):
    """Input refused before anything was written (a usage error: exit 2)."""

    exit_code = 2


class UnreadableFile(RuneError):
    """A file that exists (or should) but cannot be used; ``reason`` is for display."""

    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(f"{path}: unreadable: {reason}")
        self.path = Path(path)
        self.reason = reason


# Why the machine refused a write, said so a person knows what to do.
REFUSALS = {
    errno.ENOSPC: "the disk is full (no space left on device): free some space and try again",
    errno.EDQUOT: "the disk quota is used up: free some space and try again",
    errno.EROFS: "the file system is read-only",
}


class WriteFailed(RuneError, OSError):
    """A file could not be written because the machine refused: a full disk, a quota, a
    read-only file system. Nothing of the write was left behind (the temp file is gone;
    the file, if any, is as it was). Still an ``OSError`` with its ``errno``, for callers
    that handle those."""

    def __init__(self, path: Path | str, error: OSError) -> None:
        reason = REFUSALS.get(error.errno or 0, error.strerror or str(error))
        RuneError.__init__(self, f"{path} was not written: {reason}")
        self.errno, self.strerror, self.filename = error.errno, error.strerror, str(path)
        self.path = Path(path)


def refused(path: Path | str, error: OSError) -> OSError:
    """``error`` as a ``WriteFailed`` when the machine refused the write (full, read-only);
    any other error as it is."""
    if isinstance(error, WriteFailed) or error.errno not in REFUSALS:
        return error
    return WriteFailed(path, error)
