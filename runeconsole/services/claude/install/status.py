"""``runeconsole claude status``: which settings scopes have our hooks, and whether a
console is open to answer (what the hook's log last said, too)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runeconsole.adapters.claude_settings import SCOPES, SettingsFile, settings_path
from runeconsole.core.errors import InvalidInput
from runeconsole.core.paths import ProjectPaths
from runeconsole.services.claude.bridge import presence
from runeconsole.services.claude.hooks.hook import LOG_NAME
from runeconsole.services.claude.install import install as hooks_file
from runeconsole.services.claude.install import statusline_install


@dataclass(frozen=True)
class ScopeStatus:
    """Our hook entries in one scope's settings file (``error``: the file is unreadable)."""

    scope: str
    path: Path
    events: tuple[str, ...] = ()
    complete: bool = False
    current: bool = False
    commands: tuple[str, ...] = ()
    error: str | None = None
    status_line: str | None = None

    @classmethod
    def read(cls, scope: str, path: Path) -> ScopeStatus:
        try:
            data = SettingsFile.read(path).data
        except InvalidInput as exc:
            return cls(scope, path, error=exc.message)
        found = hooks_file.installed(data)
        wanted = {event for event, _, _ in hooks_file.HOOK_EVENTS}
        command = hooks_file.hook_command()
        return cls(
            scope,
            path,
            events=tuple(sorted(found)),
            complete=wanted <= set(found),
            current=bool(found) and all(c == command for cs in found.values() for c in cs),
            commands=tuple(sorted({c for cs in found.values() for c in cs})),
            status_line=statusline_install.describe(data),
        )

    def describe(self) -> str:
        if self.error is not None:
            return f"unreadable: {self.error}"
        total = len(hooks_file.HOOK_EVENTS)
        text = f"installed ({len(self.events)} of {total} events)" if self.events else ""
        if self.events and not self.current:
            text += f"; another command: {', '.join(self.commands)} (run install again)"
        text = text or "not installed"
        if self.status_line:
            text += f"; status line: {self.status_line}"
        return text

    def to_json(self) -> dict[str, Any]:
        row: dict[str, Any] = {
            "scope": self.scope,
            "path": str(self.path),
            "events": list(self.events),
            "current": self.current,
        }
        if self.error is not None:
            row["error"] = self.error
        else:
            row.update(
                complete=self.complete,
                commands=list(self.commands),
                status_line=self.status_line,
            )
        return row


@dataclass(frozen=True)
class BridgeStatus:
    root: Path
    command: str
    scopes: tuple[ScopeStatus, ...]
    console_open: bool
    console_pid: int | None
    log: Path
    log_lines: tuple[str, ...]

    @classmethod
    def read(cls, root: Path) -> BridgeStatus:
        paths = ProjectPaths(root)
        log = paths.claude_bridge / LOG_NAME
        return cls(
            root=root,
            command=hooks_file.hook_command(),
            scopes=tuple(ScopeStatus.read(s, settings_path(s, root)) for s in SCOPES),
            console_open=presence.console_open(paths),
            console_pid=presence.console_pid(paths),
            log=log,
            log_lines=tuple(_log_lines(log)),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "root": str(self.root),
            "command": self.command,
            "scopes": [scope.to_json() for scope in self.scopes],
            "console_open": self.console_open,
            "console_pid": self.console_pid,
            "log": str(self.log),
            "log_lines": len(self.log_lines),
            "last_log_line": self.log_lines[-1] if self.log_lines else None,
        }


def _log_lines(path: Path) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return [line.rstrip("\n") for line in handle]
    except OSError:
        return []
