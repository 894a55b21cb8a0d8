"""Shared by the Claude Code bridge tests: a project with the hooks installed by the real
``runeconsole claude install``, the hook-runner double, payloads from the fixtures, and
a transcript to write usage into."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runeconsole.core.paths import ProjectPaths
from runeconsole.services.claude.bridge.presence import ConsolePresence
from tests.support.cli import cli_env
from tests.support.hook_runner import HookResult, HookRunner
from tests.support.paths import FIXTURES
from tests.support.polling import wait_until

PAYLOADS = FIXTURES / "claude_hooks"
STATUS_LINES = FIXTURES / "claude_statusline"  # what Claude Code gives its status line
SESSION = "3decb0de-c9c6-4425-a24d-c537a5702e52"
KEY = "claude-project-3decb0de"  # the project dir is named "project" by the fixture


def payload(
    name: str, project: Path, transcript: Path, session: str = SESSION, where: Path = PAYLOADS
) -> dict[str, Any]:
    text = (where / f"{name}.json").read_text(encoding="utf-8")
    for mark, value in (
        ("$SESSION", session),
        ("$TRANSCRIPT", str(transcript)),
        ("$CWD", str(project)),
        ("$PROMPT", "5f0c2a8e-prompt"),
    ):
        text = text.replace(mark, json.dumps(value)[1:-1])  # inside a JSON string
    return json.loads(text)


def install(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``runeconsole claude install`` as a real process (its command names this interpreter)."""
    return subprocess.run(
        [sys.executable, "-m", "runeconsole", "claude", "install", "--root", str(project), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=cli_env(),
        check=False,
    )


def assistant_line(message_id: str, **usage: int) -> str:
    counts = {
        "input_tokens": usage.get("input", 0),
        "output_tokens": usage.get("output", 0),
        "cache_read_input_tokens": usage.get("cache_read", 0),
        "cache_creation_input_tokens": usage.get("cache_creation", 0),
    }
    body = {"type": "assistant", "message": {"id": message_id, "usage": counts}}
    return json.dumps(body) + "\n"


def recorders(project: Path) -> list[int]:
    """Status line processes still recording for ``project`` (a chained line records in a
    process of its own, after the user's line has been printed)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            argv = Path(f"/proc/{name}/cmdline").read_bytes()
            environ = Path(f"/proc/{name}/environ").read_bytes()
        except OSError:
            continue
        if b"claude\0statusline" in argv and (
            f"CLAUDE_PROJECT_DIR={project}".encode() in environ.split(b"\0")
        ):
            found.append(int(name))
    return found


async def in_thread(function: Callable[[], object]) -> object:
    """A blocking call (a hook run, a tmux wait) without stopping the console under test."""
    return await asyncio.get_running_loop().run_in_executor(None, function)


@dataclass
class Bridge:
    project: Path
    runner: HookRunner
    transcript: Path
    session: str = SESSION
    console: ConsolePresence | None = None
    threads: list[threading.Thread] = field(default_factory=list)

    @property
    def paths(self) -> ProjectPaths:
        return ProjectPaths(self.project)

    def payload(self, name: str, **changes: Any) -> dict[str, Any]:
        return {**payload(name, self.project, self.transcript, self.session), **changes}

    def send(self, name: str, **changes: Any) -> HookResult:
        """One event through the double and the installed command (exactly one hook runs)."""
        results = self.runner.send(self.payload(name, **changes))
        assert len(results) == 1, results
        return results[0]

    def send_later(self, name: str, **changes: Any) -> dict[str, HookResult]:
        """The event in a thread (a hook that waits); the result lands in the dict."""
        done: dict[str, HookResult] = {}
        thread = threading.Thread(target=lambda: done.update(result=self.send(name, **changes)))
        thread.start()
        self.threads.append(thread)
        return done

    def status_input(self, name: str, **changes: Any) -> dict[str, Any]:
        found = payload(name, self.project, self.transcript, self.session, STATUS_LINES)
        return {**found, **changes}

    def status_line(
        self, data: bytes | dict[str, Any], **environ: str
    ) -> subprocess.CompletedProcess[bytes]:
        """The installed ``statusLine`` command run as Claude Code runs it: through a shell,
        the JSON on stdin, in the project with ``$CLAUDE_PROJECT_DIR`` set."""
        settings = json.loads((self.project / ".claude" / "settings.local.json").read_text())
        raw = data if isinstance(data, bytes) else json.dumps(data).encode()
        result = subprocess.run(
            ["/bin/sh", "-c", settings["statusLine"]["command"]],
            input=raw,
            capture_output=True,
            timeout=60,
            cwd=self.project,
            env=self.runner.environ | {"CLAUDE_PROJECT_DIR": str(self.project)} | environ,
            check=False,
        )
        wait_until(lambda: not recorders(self.project), 30)  # a chained line records aside
        return result

    def write_usage(self, message_id: str, **usage: int) -> None:
        with open(self.transcript, "a", encoding="utf-8") as handle:
            handle.write(assistant_line(message_id, **usage))

    def open_console(self) -> None:
        """Hold the console lock in this process, as an open console does."""
        self.console = ConsolePresence(self.paths)
        assert self.console.try_hold(pid_note="test")

    def close_console(self) -> None:
        if self.console is not None:
            self.console.release()

    def identity(self, key: str = KEY) -> dict[str, Any]:
        return json.loads((self.paths.identities / f"{key}.json").read_text())


@contextlib.contextmanager
def bridge(project: Path, environ: dict[str, str] | None = None) -> Iterator[Bridge]:
    result = install(project)
    assert result.returncode == 0, result.stderr
    env = cli_env() | (environ or {})
    transcript = project.parent / "transcript.jsonl"
    transcript.touch()
    made = Bridge(project, HookRunner(project, env), transcript)
    try:
        yield made
    finally:
        made.close_console()
        for thread in made.threads:
            thread.join(timeout=30)
