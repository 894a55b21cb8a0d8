"""Artifact hashes: the hex SHA-256 a completed phase recorded for its artifact, and the
file's hash now (regular files only: a FIFO or device would block or never end)."""

from __future__ import annotations

import hashlib
import stat
from pathlib import Path
from typing import Any

MISSING, DIRECTORY, NOT_A_FILE = "file missing", "a directory", "not a regular file"


def bare_hash(value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    return value.strip().lower().removeprefix("sha256:")


def file_sha256(path: Path) -> tuple[str | None, str]:
    """The hex SHA-256 of a regular file, or ``None`` and what is there instead (a FIFO
    or device would block or never end, so only regular files are read)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None, MISSING
    if stat.S_ISDIR(mode):
        return None, DIRECTORY
    if not stat.S_ISREG(mode):
        return None, NOT_A_FILE
    try:
        return _hash_file(path), ""
    except OSError:
        return None, MISSING


def _hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1024 * 1024), b""):
            digest.update(block)
    return digest.hexdigest()
