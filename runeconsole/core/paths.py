"""Where each kind of state lives under a project root (the on-disk layout)."""

from __future__ import annotations

import os
from pathlib import Path

from runeconsole.core.errors import RuneError
from runeconsole.core.validate import Outside, contained


def claude_config_dir() -> Path:
    """``${CLAUDE_CONFIG_DIR:-~/.claude}``: Claude Code's own directory (task files, the
    user's talisman), as the Rune plugin finds it."""
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".claude"


class ProjectPaths:
    # A plain class, not a dataclass: Claude Code's hook (runeconsole claude hook) builds
    # paths on every event, and importing dataclasses costs it several milliseconds.
    __slots__ = ("root",)

    def __init__(self, root: Path) -> None:
        self.root = root

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ProjectPaths) and other.root == self.root

    def __hash__(self) -> int:
        return hash(self.root)

    def __repr__(self) -> str:
        return f"ProjectPaths(root={self.root!r})"

    @property
    def claude(self) -> Path:
        return self.root / ".claude"

    @property
    def state(self) -> Path:
        return self.claude / "state"

    @property
    def identities(self) -> Path:
        return self.state / "identities"

    @property
    def identity_history(self) -> Path:
        """Replaced identities, kept so predecessor chains stay readable."""
        return self.identities / "history"

    @property
    def hook_files(self) -> Path:
        return self.state / "hooks"

    @property
    def hook_history(self) -> Path:
        """Replaced hooks, kept so a fresh spawn never loses resumption instructions."""
        return self.hook_files / "history"

    @property
    def merge_queue(self) -> Path:
        return self.state / "merge-queue.json"

    @property
    def reviews(self) -> Path:
        """Reviews of agents' changes: ``reviews/{agent}/{seq}-{stamp}.json``."""
        return self.state / "reviews"

    @property
    def locks(self) -> Path:
        return self.state / ".locks"

    @property
    def signals(self) -> Path:
        return self.claude / "attractor" / "signals"

    @property
    def arc(self) -> Path:
        return self.claude / "arc"

    @property
    def question_signals(self) -> Path:
        return self.root / "tmp" / ".rune-signals"

    @property
    def work(self) -> Path:
        return self.root / "tmp" / "work"

    def lock_for(self, name: str) -> Path:
        return self.inside(self.locks / f"{name}.lock")

    def inside(self, path: Path) -> Path:
        """``path``, once it is known not to lead out of the root (through a symbolic link
        on the way): checked before anything is written in our own state directories.
        Not a usage error (exit 1): the project's layout, not the command, is wrong."""
        try:
            contained(self.root, path)
        except Outside as exc:
            raise RuneError(
                f"{path} leads outside the project root {exc.root} (to {exc.real}); "
                "refusing to write there: replace the symbolic link with a directory"
            ) from None
        return path

    @property
    def claude_bridge(self) -> Path:
        """What the Claude Code hook keeps for itself: its log, a settings cache."""
        return self.state / "claude"

    @property
    def claude_questions(self) -> Path:
        """Claude Code's AskUserQuestion calls, relayed as worker questions (one dir)."""
        return self.question_signals / "claude-code"

    @property
    def cost(self) -> Path:
        """Each agent's spending ledger (``agents/{key}.json``) and the fleet's by day."""
        return self.state / "cost"

    @property
    def supervisor(self) -> Path:
        """The supervisor's own state: latest pane observations, wisdom prompts."""
        return self.state / "supervisor"
