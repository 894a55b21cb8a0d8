"""The real Claude Code binary, driven in tmux on a private socket against the local
Messages-API stand-in (``tests/support/claude_api.py``), with its HOME and config dir in a temp
dir: never the user's ``~/.claude``, never the user's tmux server.

The binary is the pinned version (``.ci/claude-code-version``) that ``.ci/run`` installs
with npm into ``.ci/claude-code/``, or ``$RUNECONSOLE_CLAUDE_BIN``; without it the tests
that need it skip and say why.

``python -m tests.support.claude_binary capture`` writes the binary's screens into
``tests/panes/`` (its AskUserQuestion dialog, a permission prompt, busy, idle).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from functools import cache
from pathlib import Path

from runeconsole.adapters import git
from runeconsole.adapters.tmux import Tmux
from tests.support.claude_api import MessagesApi, Turn, text_turn, tool_turn
from tests.support.paths import PANES, REPO

VERSION = (REPO / ".ci" / "claude-code-version").read_text().strip()
INSTALLED = REPO / ".ci" / "claude-code" / "node_modules" / ".bin" / "claude"
API_KEY = "sk-ant-api03-" + "r" * 70 + "runeconsole-tests"
# A subscription's session (``env=SUBSCRIPTION``): Claude Code then reads the plan's rate
# limits from the answers' headers; the stand-in accepts any token.
SUBSCRIPTION: dict[str, str | None] = {
    "CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-oat01-" + "s" * 80,
    "ANTHROPIC_API_KEY": None,
}
WIDTH, HEIGHT = 120, 40

ASK_INPUT = {
    "questions": [
        {
            "question": "Which hash should the auth module use?",
            "header": "Hash",
            "multiSelect": False,
            "options": [
                {"label": "bcrypt", "description": "already in deps"},
                {"label": "argon2", "description": "stronger"},
            ],
        },
        {
            "question": "Which checks should run?",
            "header": "Checks",
            "multiSelect": True,
            "options": [
                {"label": "lint", "description": "ruff"},
                {"label": "unit", "description": "pytest"},
                {"label": "e2e", "description": "slow"},
            ],
        },
    ]
}
BASH_INPUT = {"command": "touch made-by-bash", "description": "Make a file"}


@cache
def binary() -> tuple[Path | None, str]:
    """The pinned binary, or ``None`` and why it cannot be used."""
    given = os.environ.get("RUNECONSOLE_CLAUDE_BIN")
    path = Path(given) if given else INSTALLED
    if not path.exists():
        return None, (
            f"the real Claude Code {VERSION} is not installed ({path} is missing; .ci/run "
            "installs it: npm install --prefix .ci/claude-code "
            f"@anthropic-ai/claude-code@{VERSION})"
        )
    if shutil.which("tmux") is None:
        return None, "tmux is not installed"
    try:
        out = subprocess.run(
            [str(path), "--version"], capture_output=True, text=True, timeout=60, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{path} does not run: {exc}"
    if not out.startswith(VERSION):
        return None, f"{path} is Claude Code {out.strip()!r}, not the pinned {VERSION}"
    return path, ""


class ClaudeSession:
    """One interactive ``claude`` in a tmux pane of its own server, in a project ``root``
    (a git repository), against a stand-in API that plays ``script``."""

    def __init__(
        self,
        root: Path,
        home: Path,
        script: list[Turn],
        *args: str,
        env: dict[str, str | None] | None = None,
    ) -> None:
        """``env``: more of the session's environment (``None`` takes a variable out)."""
        path, why = binary()
        assert path is not None, why
        self.root, self.home, self.args = root, home, args
        self.extra_env = env or {}
        self.api = MessagesApi(script)
        self.socket = f"rc-claude-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.binary = path

    @property
    def config_dir(self) -> Path:
        return self.home / ".claude"

    def _trust(self) -> None:
        """Onboarding done, the project trusted and the API key approved: no prompt."""
        state = {
            "hasCompletedOnboarding": True,
            "projects": {str(self.root): {"hasTrustDialogAccepted": True}},
            "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
        }
        self.config_dir.mkdir(parents=True, exist_ok=True)
        for place in (self.home / ".claude.json", self.config_dir / ".claude.json"):
            place.write_text(json.dumps(state))

    def environment(self) -> dict[str, str]:
        env = self._environment() | self.extra_env
        return {name: value for name, value in env.items() if value is not None}

    def _environment(self) -> dict[str, str | None]:
        return {
            "HOME": str(self.home),
            "CLAUDE_CONFIG_DIR": str(self.config_dir),
            "ANTHROPIC_BASE_URL": self.api.url,
            "ANTHROPIC_API_KEY": API_KEY,
            "DISABLE_TELEMETRY": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "TERM": "xterm-256color",
            # the hook it runs imports this checkout (the installed command keeps -P)
            "PYTHONPATH": str(REPO),
        }

    def __enter__(self) -> ClaudeSession:
        self._trust()
        self.api.__enter__()
        env = [f"-e{name}={value}" for name, value in self.environment().items()]
        subprocess.run(
            [*self.tmux(), "-f", "/dev/null", "new-session", "-d", "-s", "claude",
             "-x", str(WIDTH), "-y", str(HEIGHT), "-c", str(self.root), *env,
             str(self.binary), *self.args],
            check=True,
            timeout=20,
            env={k: v for k, v in os.environ.items() if k != "TMUX"},
        )  # fmt: skip
        return self

    def __exit__(self, *_: object) -> None:
        Tmux(self.socket).kill_server()  # its socket file too
        self.api.__exit__()

    def tmux(self) -> list[str]:
        return ["tmux", "-L", self.socket]

    def screen(self) -> str:
        return subprocess.run(
            [*self.tmux(), "capture-pane", "-p", "-t", "claude"],
            capture_output=True,
            text=True,
            timeout=20,
        ).stdout

    def keys(self, *keys: str) -> None:
        for key in keys:
            subprocess.run([*self.tmux(), "send-keys", "-t", "claude", key], timeout=20)
            time.sleep(0.15)

    def type(self, text: str) -> None:
        subprocess.run([*self.tmux(), "send-keys", "-t", "claude", "-l", text], timeout=20)
        time.sleep(0.3)
        self.keys("Enter")

    def wait_screen(self, pattern: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        screen = self.screen()
        while not re.search(pattern, screen) and time.monotonic() < deadline:
            time.sleep(0.1)
            screen = self.screen()
        assert re.search(pattern, screen), f"no {pattern!r} on screen after {timeout}s:\n{screen}"
        return screen

    def ready(self) -> str:
        """Until the input box is drawn (the session has started)."""
        return self.wait_screen(r"for shortcuts|mode on", timeout=60)


def new_project(base: Path) -> tuple[Path, Path]:
    root = base / "project"
    git.init_repo(root)
    home = base / "home"
    home.mkdir()
    return root, home


def capture(out: Path) -> None:
    """Screens of the real binary for the pane-pattern tests (no hooks installed)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="rc-capture-") as name:
        root, home = new_project(Path(name))
        slow = Turn(tool="Bash", tool_input=BASH_INPUT, delay=6.0)
        script = [tool_turn("AskUserQuestion", ASK_INPUT), slow, text_turn("Made it.")]
        with ClaudeSession(root, home, script, "--permission-mode", "default") as session:
            session.ready()
            session.type("Ask me about the auth module.")
            dialog = session.wait_screen("Enter to select")
            (out / "claude_question_dialog.txt").write_text(dialog)
            session.keys("Escape")
            session.wait_screen("Declined to answer")
            session.type("Make the file.")
            time.sleep(2)
            (out / "claude_busy.txt").write_text(session.wait_screen("esc to interrupt"))
            prompt = session.wait_screen("Do you want to proceed", timeout=30)
            (out / "claude_permission_prompt.txt").write_text(prompt)
            session.keys("Enter")  # Yes: the command runs, the turn ends
            (out / "claude_idle.txt").write_text(session.wait_screen("Made it"))


if __name__ == "__main__":
    if sys.argv[1:] == ["capture"]:
        capture(PANES)
    else:
        raise SystemExit("usage: python -m tests.support.claude_binary capture")
