"""Validation done before any path is built from outside input."""

from __future__ import annotations

import os
import re
from pathlib import Path

from runeconsole.core.errors import InvalidInput

ID_PATTERN = re.compile(r"^[a-zA-Z0-9_-]+$")
MAX_ID_LENGTH = 128
# Names the harness writes (identity and hook keys, node and entry ids) may hold '.'.
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_.-]+$")


def validate_id(value: object, what: str = "id") -> str:
    """Return ``value`` if it is a safe path component, else raise ``InvalidInput``."""
    if not isinstance(value, str) or not value:
        raise InvalidInput(f"{what} must not be empty")
    if len(value) > MAX_ID_LENGTH:
        raise InvalidInput(f"{what} is longer than {MAX_ID_LENGTH} characters")
    if not ID_PATTERN.fullmatch(value):
        raise InvalidInput(
            f"{what} {value!r} is not allowed: use only letters, digits, '_' and '-'"
        )
    return value


def validate_name(value: object, what: str = "name") -> str:
    """``value`` if it can name a file another tool wrote, else ``InvalidInput`` with why.

    Like ``validate_id`` but a '.' is allowed (the harness takes node ids as given:
    ``orchestrator-impl.v2``), as long as the name cannot lead anywhere else: no path
    separator, no '..', no leading '.' (``.`` itself, hidden and temp files).
    """
    if not isinstance(value, str) or not value:
        raise InvalidInput(f"{what} must not be empty")
    if len(value) > MAX_ID_LENGTH:
        raise InvalidInput(f"{what} is longer than {MAX_ID_LENGTH} characters")
    if "/" in value or "\\" in value:
        raise InvalidInput(f"{what} {value!r} is not allowed: it contains a path separator")
    if ".." in value:
        raise InvalidInput(f"{what} {value!r} is not allowed: it contains '..'")
    if value.startswith("."):
        raise InvalidInput(f"{what} {value!r} is not allowed: it starts with '.'")
    if not NAME_PATTERN.fullmatch(value):
        raise InvalidInput(
            f"{what} {value!r} is not allowed: use only letters, digits, '_', '-' and '.'"
        )
    return value


def name_or_none(value: object) -> str | None:
    """``value`` if ``validate_name`` accepts it, else ``None`` (for names read from files)."""
    try:
        return validate_name(value)
    except InvalidInput:
        return None


def real_path(path: Path | str) -> Path:
    """``path`` with every symbolic link resolved (``pwd -P``): how paths are compared."""
    return Path(os.path.realpath(os.path.expanduser(os.fspath(path))))


def same_path(a: Path | str, b: Path | str) -> bool:
    """Whether two paths name the same place once links are resolved (a name no path can
    have, with a NUL byte, is the same as nothing)."""
    try:
        return real_path(a) == real_path(b)
    except ValueError:
        return False


class Outside(InvalidInput):
    """A path that leads out of the directory it must stay in (``real`` is where to)."""

    def __init__(self, message: str, root: Path, real: Path) -> None:
        super().__init__(message)
        self.root, self.real = root, real


def contained(root: Path, path: Path | str, what: str = "the project root") -> Path:
    """Resolve ``path`` (relative to ``root`` if not absolute) and refuse escapes.

    The one check that a path stays inside a directory (the project root, the Claude
    config dir): both sides are resolved, symlinks included, so a symlinked directory on
    the way cannot carry a write out of ``root``. Check the real path before every write.
    A name the system cannot take (a NUL byte) is refused too.
    """
    root_real = Path(os.path.realpath(root))
    candidate = Path(path)
    if not candidate.is_absolute():
        candidate = root_real / candidate
    try:
        real = Path(os.path.realpath(candidate))
    except ValueError:
        raise InvalidInput(f"{str(path)!r} is not a usable path") from None
    if real != root_real and root_real not in real.parents:
        via = "" if os.path.normpath(candidate) == str(real) else f" (it resolves to {real})"
        raise Outside(f"{path} is outside {what} {root_real}{via}", root_real, real)
    return real


def id_subdirectories(directory: Path) -> list[Path]:
    """Subdirectories named like safe ids, sorted; anything else there is not ours to read."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return []
    return sorted(Path(e.path) for e in entries if ID_PATTERN.fullmatch(e.name) and e.is_dir())
