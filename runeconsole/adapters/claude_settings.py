"""Claude Code's settings files, where hooks are configured.

| scope | file |
| --- | --- |
| ``local`` | ``<root>/.claude/settings.local.json`` (personal, not committed) |
| ``project`` | ``<root>/.claude/settings.json`` (shared with the project) |
| ``user`` | ``${CLAUDE_CONFIG_DIR:-~/.claude}/settings.json`` (every project) |

A file is read whole and must be one JSON object; anything else is refused with the
reason and left untouched. A change replaces the file atomically (its mode kept) after
the previous file was copied beside it (``settings.local.json.bak-{stamp}``; a backup is
never overwritten).
"""

from __future__ import annotations

import contextlib
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from runeconsole.core.errors import InvalidInput, UnreadableFile
from runeconsole.core.files import atomic_write_bytes, create_exclusive, read_bytes
from runeconsole.core.timeutil import compact_stamp

SCOPES = ("local", "project", "user")  # most specific first: Claude Code's precedence
BACKUPS_LOOKED_AT = 20
FILE_NAMES = {"local": "settings.local.json", "project": "settings.json"}


def config_dir(environ: dict[str, str] | None = None) -> Path:
    environ = dict(os.environ) if environ is None else environ
    given = environ.get("CLAUDE_CONFIG_DIR")
    return Path(given).expanduser() if given else Path.home() / ".claude"


def settings_path(scope: str, root: Path, environ: dict[str, str] | None = None) -> Path:
    if scope not in SCOPES:
        raise InvalidInput(f"scope {scope!r}: use one of {', '.join(SCOPES)}")
    if scope == "user":
        return config_dir(environ) / "settings.json"
    return root / ".claude" / FILE_NAMES[scope]


def less_specific(scope: str, root: Path, environ: dict[str, str] | None = None) -> list[Path]:
    """The settings files under ``scope``'s in Claude Code's precedence, nearest first."""
    return [settings_path(s, root, environ) for s in SCOPES[SCOPES.index(scope) + 1 :]]


def dump(data: dict[str, Any]) -> bytes:
    """The layout Claude Code writes its settings in (two-space indent)."""
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


class SettingsFile:
    """One settings file as read: its bytes (``None`` when missing) and its object."""

    def __init__(self, path: Path, raw: bytes | None, data: dict[str, Any]) -> None:
        self.path, self.raw, self.data = path, raw, data

    @classmethod
    def read(cls, path: Path) -> SettingsFile:
        if not path.exists() and not path.is_symlink():
            return cls(path, None, {})
        try:
            raw = read_bytes(path, limit=4 * 1024 * 1024)
        except UnreadableFile as exc:
            raise InvalidInput(f"{path}: {exc.reason}; nothing was changed") from None
        if not raw.strip():
            return cls(path, raw, {})  # an empty file: Claude Code reads it as no settings
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            why = exc.msg if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
            raise InvalidInput(
                f"{path} is not valid JSON ({why}); fix it by hand, nothing was changed"
            ) from None
        if not isinstance(data, dict):
            raise InvalidInput(
                f"{path} holds a JSON {type(data).__name__}, not an object; nothing was changed"
            )
        return cls(path, raw, data)

    def write(self, data: dict[str, Any], raw: bytes | None = None) -> Path | None:
        """Replace the file with ``data`` (written as ``raw`` when given: bytes known to hold
        it); returns the backup of what it held (if anything)."""
        backup = self._backup()
        mode = 0o644
        with contextlib.suppress(OSError):
            mode = self.path.stat().st_mode & 0o777
        atomic_write_bytes(self.path, dump(data) if raw is None else raw, mode)
        return backup

    def backups(self) -> list[Path]:
        """The backups kept beside the file, newest first."""
        found = self.path.parent.glob(self.path.name + ".bak-*")
        return sorted(found, key=lambda p: (p.name.split(".bak-")[-1], p.name), reverse=True)

    def backup_holding(self, data: dict[str, Any]) -> bytes | None:
        """The bytes of the newest backup that holds exactly ``data``: the file as it was
        before an install that is now undone, to be put back byte for byte."""
        for backup in self.backups()[:BACKUPS_LOOKED_AT]:
            try:
                raw = read_bytes(backup, limit=4 * 1024 * 1024)
                if (json.loads(raw.decode("utf-8")) if raw.strip() else {}) == data:
                    return raw
            except (UnreadableFile, UnicodeDecodeError, ValueError, RecursionError):
                continue
        return None

    def _backup(self) -> Path | None:
        if self.raw is None:
            return None
        stamp = compact_stamp(datetime.now(UTC))
        for attempt in range(100):
            suffix = f".bak-{stamp}" + (f"-{attempt}" if attempt else "")
            backup = self.path.with_name(self.path.name + suffix)
            try:
                create_exclusive(backup, self.raw, 0o600)
            except FileExistsError:
                continue
            return backup
        raise InvalidInput(f"could not find a free backup name beside {self.path}")
