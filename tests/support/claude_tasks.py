"""Several real Claude Code sessions started by ``runeconsole new`` (each in its own worktree,
on the console's tmux server) against one Messages API stand-in that answers each session
from a script of its own.

A main-loop request says where its session works: Claude Code 2.1.328 puts an environment
block in the conversation (``"Primary working directory: /…/.claude/worktrees/NAME"``, in a
message of role ``system``), and the git status it attaches names the branch. ``RoutedApi``
routes by that directory, so the scripts are keyed by the worktrees' paths, which are known
before ``new`` makes them (``{root}/.claude/worktrees/{name}-{n}``).

The sessions' Claude Code home is a temp dir, as in ``claude_binary``: onboarding done, the
API key approved, and the project's root trusted. Claude Code 2.1.328 takes a trusted
directory's trust for every directory below it, so the new worktrees under
``.claude/worktrees/`` open without the "Accessing workspace" dialog (whose default answer
is "No, exit"); without that trust each session stops at the dialog.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from tests.support.claude_api import MessagesApi, Turn, text_turn
from tests.support.claude_binary import API_KEY
from tests.support.cli import cli_env

_WORKING_DIRECTORY = re.compile(r"Primary working directory: (\S+)")
DONE = "Nothing more to do."


def texts(body: dict[str, Any]) -> list[str]:
    """Every text of a request: its system prompt's blocks and its messages' text blocks."""
    found: list[str] = []

    def collect(content: object) -> None:
        if isinstance(content, str):
            found.append(content)
        elif isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and isinstance(block.get("text"), str):
                    found.append(block["text"])

    collect(body.get("system"))
    for message in body.get("messages") or []:
        if isinstance(message, dict):
            collect(message.get("content"))
    return found


def working_directory(body: dict[str, Any]) -> str | None:
    """The session's directory as its request names it."""
    for text in texts(body):
        match = _WORKING_DIRECTORY.search(text)
        if match:
            return match.group(1)
    return None


def user_prompt(body: dict[str, Any]) -> str:
    """The first user message's own text: its last text block (the blocks before it are the
    reminders Claude Code attaches: git status, attribution)."""
    for message in body.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            blocks = [b.get("text", "") for b in content or [] if isinstance(b, dict)]
            return blocks[-1] if blocks else ""
    return ""


class RoutedApi(MessagesApi):
    """The stand-in for several sessions: each main-loop request takes the next turn of the
    script of the directory it names (``scripts`` by directory). With ``hold_first``, each
    session's first answer waits until ``release()``: its agent stays busy until then.

    ``requests`` keeps every main-loop request, ``by_directory`` each session's; a request
    naming no scripted directory is kept in ``unrouted`` and told there is nothing to do."""

    def __init__(
        self, scripts: dict[str, list[Turn]], *, hold_first: bool = False, hold_limit: float = 120
    ) -> None:
        super().__init__([])
        self.scripts = {place: list(turns) for place, turns in scripts.items()}
        self.by_directory: dict[str, list[dict[str, Any]]] = {place: [] for place in scripts}
        self.unrouted: list[dict[str, Any]] = []
        self.gate = threading.Event()
        self.hold_limit = hold_limit
        if not hold_first:
            self.gate.set()

    def release(self) -> None:
        self.gate.set()

    def next_turn(self, body: dict[str, Any]) -> Turn:
        place = working_directory(body)
        with self.lock:
            self.requests.append(body)
            if place in self.scripts:
                self.by_directory[place].append(body)
                first = len(self.by_directory[place]) == 1
                script = self.scripts[place]
                turn = script.pop(0) if script else text_turn(DONE)
            else:
                self.unrouted.append(body)
                first, turn = False, text_turn(DONE)
            self.turn_served.notify_all()
        if first:
            self.gate.wait(self.hold_limit)  # the handler's thread, not the lock
        return turn

    def wait_for_each(self, count: int, timeout: float) -> dict[str, list[dict[str, Any]]]:
        """Until every scripted session sent at least ``count`` main-loop requests."""
        with self.lock:

            def arrived() -> bool:
                return all(len(found) >= count for found in self.by_directory.values())

            done = self.turn_served.wait_for(arrived, timeout)
            seen = {place: len(found) for place, found in self.by_directory.items()}
            assert done, (
                f"main-loop requests by directory after {timeout}s: {seen}, not {count} each "
                f"({len(self.unrouted)} unrouted)"
            )
            return {place: list(found) for place, found in self.by_directory.items()}

    def left(self) -> dict[str, int]:
        """Turns not yet served, by directory."""
        with self.lock:
            return {place: len(turns) for place, turns in self.scripts.items()}


def prepare_home(home: Path, root: Path, allow: list[str]) -> Path:
    """Claude Code's home for the sessions: onboarding done, the key approved, ``root``
    trusted (its worktrees with it), and ``allow`` as the user's permission rules. Returns
    the config dir."""
    config = home / ".claude"
    config.mkdir(parents=True, exist_ok=True)
    state = {
        "hasCompletedOnboarding": True,
        "projects": {str(root): {"hasTrustDialogAccepted": True}},
        "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
    }
    for place in (home / ".claude.json", config / ".claude.json"):
        place.write_text(json.dumps(state))
    (config / "settings.json").write_text(json.dumps({"permissions": {"allow": allow}}))
    return config


def session_environment(home: Path, api_url: str, claude: Path, socket: str) -> dict[str, str]:
    """What ``runeconsole`` needs as a process to start the real Claude Code: the tmux server
    it starts on ``socket`` passes this environment to every session (HOME and the config
    dir in the temp home, the stand-in's URL and key, this checkout importable by the
    hooks, the real binary as the claude program)."""
    env = cli_env() | {
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "ANTHROPIC_BASE_URL": api_url,
        "ANTHROPIC_API_KEY": API_KEY,
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "TERM": "xterm-256color",
        "RUNECONSOLE_CLAUDE": str(claude),
        "RUNECONSOLE_TMUX_SOCKET": socket,
    }
    env.pop("TMUX", None)  # never the caller's tmux server
    env.pop("TMUX_PANE", None)
    return env


def runeconsole(
    root: Path, env: dict[str, str], *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``runeconsole ARGS --root ROOT`` as a process."""
    return subprocess.run(
        [sys.executable, "-m", "runeconsole", *args, "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )
