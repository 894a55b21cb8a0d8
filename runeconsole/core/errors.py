"""The project's one error type.

Every failure a person can act on is a ``RuneError`` whose message says what went
wrong and what to do; the CLI prints it and exits with ``exit_code``, the console
shows it. Subclasses only refine the exit code or carry the offending path.
"""

from __future__ import annotations

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
