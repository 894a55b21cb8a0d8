"""Claude Code's own command line, for its background sessions: ``claude --bg``,
``claude agents --json``, ``claude logs``, ``claude stop`` (and the argument list of
``claude attach``). Each is an argument list run without a shell, under a timeout, with
no terminal on stdin; a failure is a ``RuneError`` with what Claude Code said.

The program is ``$RUNECONSOLE_CLAUDE``, else ``runeconsole.background.command`` in the
talisman, else ``claude`` on ``PATH``; it is resolved to an absolute path, so a command
handed to another process (a tmux window) runs the same program.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from runeconsole.core.errors import RuneError

COMMAND_ENV = "RUNECONSOLE_CLAUDE"
DEFAULT_COMMAND = "claude"
TIMEOUT = 60.0
SHORT_ID = re.compile(r"[0-9a-f]{8}")
_BACKGROUNDED = re.compile(r"backgrounded\s*·\s*([0-9a-f]{8})")
MAX_OUTPUT = 8 * 1024 * 1024


class ClaudeCli:
    def __init__(
        self,
        command: str | None = None,
        *,
        environ: Mapping[str, str] | None = None,
        timeout: float = TIMEOUT,
    ) -> None:
        self.environ = dict(os.environ if environ is None else environ)
        self.given = self.environ.get(COMMAND_ENV) or command or DEFAULT_COMMAND
        self.timeout = timeout

    @property
    def program(self) -> str:
        """The absolute path of the program (``RuneError`` saying how to install it)."""
        found = shutil.which(self.given, path=self.environ.get("PATH"))
        if found is None:
            raise RuneError(
                f"Claude Code ({self.given!r}) is not installed or not on PATH: background "
                f"sessions need it (set ${COMMAND_ENV} or runeconsole.background.command)"
            )
        return os.path.abspath(found)

    @property
    def installed(self) -> bool:
        return shutil.which(self.given, path=self.environ.get("PATH")) is not None

    def run(self, *args: str, cwd: Path | None = None) -> str:
        """``claude ARGS`` and its stdout (``RuneError`` with its message when it fails)."""
        argv = [self.program, *args]
        try:
            result = subprocess.run(
                argv,
                cwd=cwd,
                env=self.environ,
                capture_output=True,
                stdin=subprocess.DEVNULL,
                timeout=self.timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise RuneError(f"claude {' '.join(args)} took longer than {self.timeout:g}s") from None
        except OSError as exc:
            raise RuneError(f"claude {' '.join(args)} could not start: {exc}") from None
        out = result.stdout[:MAX_OUTPUT].decode("utf-8", "replace")
        if result.returncode != 0:
            said = result.stderr.decode("utf-8", "replace").strip() or out.strip()
            raise RuneError(f"claude {args[0]} failed: {said or f'exit {result.returncode}'}")
        return out

    def sessions(self, cwd: Path | None = None) -> list[dict[str, Any]]:
        """``claude agents --json --all``: every session it knows, stopped ones included."""
        out = self.run("agents", "--json", "--all", cwd=cwd)
        try:
            found = json.loads(out)
        except ValueError:
            raise RuneError(f"claude agents --json printed no JSON: {out[:200]!r}") from None
        if not isinstance(found, list):
            raise RuneError("claude agents --json printed no list")
        return [entry for entry in found if isinstance(entry, dict)]

    def start(self, arguments: Sequence[str], *, cwd: Path, name: str | None = None) -> str:
        """``claude --bg [--name NAME] ARGUMENTS`` in ``cwd``; the session's short id."""
        named = ["--name", name] if name else []
        out = self.run("--bg", *named, *arguments, cwd=cwd)
        found = _BACKGROUNDED.search(out)
        if found is None:
            raise RuneError(f"claude --bg did not say which session it started: {out[:200]!r}")
        return found.group(1)

    def logs(self, short_id: str) -> str:
        return self.run("logs", _checked(short_id))

    def stop(self, short_id: str) -> str:
        return self.run("stop", _checked(short_id)).strip()

    def attach_argv(self, short_id: str) -> list[str]:
        return [self.program, "attach", _checked(short_id)]


def _checked(short_id: str) -> str:
    """Only a short id goes on a command line (a name could be read as an option)."""
    if not SHORT_ID.fullmatch(short_id):
        raise RuneError(f"{short_id!r} is not a background session's short id (8 hex digits)")
    return short_id
