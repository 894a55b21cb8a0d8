"""The real Claude Code's background sessions (``claude --bg``) in a sandbox.

What they need here, found by running them: a HOME and config dir of their own (where
Claude Code keeps its daemon's state, ``jobs/`` and ``daemon.status.json``), onboarding
done and the API key approved (as for an interactive session), and the Messages-API
stand-in in the environment of the first ``claude --bg``: that call starts Claude Code's
daemon ("Starting background service…"), which keeps the environment it started with
and gives it to every session it runs (a later ``--bg``'s own environment is not used).
Nothing needs a terminal. The daemon is transient: it exits a while after its last
session, and at the end of a test it and everything under it are stopped here, so no
process outlives the test.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.claude_api import Turn
from tests.support.claude_binary import ClaudeSession
from tests.support.cli import cli_env
from tests.support.polling import wait_until


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(entry))
    return found


def _tree(pid: int) -> list[int]:
    every, todo = [], [pid]
    while todo:
        current = todo.pop()
        every.append(current)
        todo.extend(_children(current))
    return every


@dataclass
class Sandbox:
    root: Path
    session: ClaudeSession  # its API stand-in, HOME and config dir (no tmux pane)

    @property
    def environ(self) -> dict[str, str]:
        """The environment runeconsole and claude run with: the stand-in, the sandbox's
        HOME, this checkout importable and the pinned binary as ``claude`` on PATH."""
        env = {k: v for k, v in cli_env().items() if k not in ("TMUX", "TMUX_PANE")}
        env.update(self.session.environment())
        env["PYTHONPATH"] = cli_env()["PYTHONPATH"]
        env["PATH"] = f"{self.session.binary.parent}{os.pathsep}{env.get('PATH', '')}"
        return env

    def claude(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.session.binary), *args],
            cwd=self.root,
            env=self.environ,
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            check=check,
        )

    def runeconsole(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "runeconsole", "--root", str(self.root), *args],
            cwd=self.root,
            env=self.environ | env,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            check=False,
        )

    def sessions(self) -> list[dict[str, Any]]:
        return json.loads(self.claude("agents", "--json", "--all").stdout)

    def daemon_pid(self) -> int | None:
        status = self.session.config_dir / "daemon.status.json"
        with contextlib.suppress(OSError, ValueError):
            pid = json.loads(status.read_text()).get("supervisorPid")
            return pid if isinstance(pid, int) else None
        return None

    def daemon_dir(self) -> str | None:
        """Where the daemon keeps its sockets (``/tmp/cc-daemon-UID/HASH``), as it logged."""
        log = self.session.config_dir / "daemon.log"
        with contextlib.suppress(OSError):
            found = re.search(r"control socket bound at (\S+)/control\.sock", log.read_text())
            return found.group(1) if found else None
        return None

    def stop_everything(self) -> None:
        """Every session stopped, then the daemon asked to end, then anything left of it
        killed: its process tree, and any process started with its socket directory (a
        spare terminal host it detached). Only this sandbox's: they name its directory."""
        with contextlib.suppress(Exception):
            for entry in self.sessions():
                if entry.get("pid") and entry.get("id"):
                    self.claude("stop", entry["id"], check=False)
        pid, where = self.daemon_pid(), self.daemon_dir()
        members = _tree(pid) if pid is not None else []
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            with contextlib.suppress(AssertionError):
                wait_until(lambda: not _alive(pid), 5, every=0.1)
        for member in {*members, *(_started_in(where) if where else [])}:
            with contextlib.suppress(ProcessLookupError):
                os.kill(member, signal.SIGKILL)
        wait_until(lambda: not any(_alive(p) for p in members), 10)


def _started_in(directory: str) -> list[int]:
    """Processes whose command line names ``directory``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError), open(f"/proc/{entry}/cmdline", "rb") as handle:
            if directory.encode() in handle.read():
                found.append(int(entry))
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


@contextlib.contextmanager
def sandbox(root: Path, home: Path, script: list[Turn]) -> Iterator[Sandbox]:
    session = ClaudeSession(root, home, script)
    session._trust()
    session.api.__enter__()
    made = Sandbox(root, session)
    try:
        yield made
    finally:
        made.stop_everything()
        session.api.__exit__()


def wait_for_session(box: Sandbox, short: str, timeout: float = 60) -> dict[str, Any]:
    def found() -> dict[str, Any] | None:
        return next((s for s in box.sessions() if s.get("id") == short), None)

    return wait_until(found, timeout, every=0.5, what=f"background session {short}")
