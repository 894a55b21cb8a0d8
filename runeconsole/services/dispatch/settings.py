"""``runeconsole.worktrees`` in talisman.yml: where new worktrees go, what they get, and
when they are removed."""

from __future__ import annotations

import re
from dataclasses import dataclass

from runeconsole.core.config import Talisman
from runeconsole.services.merge_queue.model import command_args

DEFAULT_DIR = ".claude/worktrees"
DEFAULT_SETUP_TIMEOUT = 600.0
_SAFE_DIR = re.compile(r"^[A-Za-z0-9_.][A-Za-z0-9_./-]*$")


@dataclass(frozen=True)
class WorktreeSettings:
    directory: str = DEFAULT_DIR  # relative to the root; a worktree is {directory}/{name}
    copy: tuple[str, ...] = ()  # globs of untracked files a fresh checkout lacks
    setup_command: list[str] | None = None
    setup_timeout: float = DEFAULT_SETUP_TIMEOUT
    remove_after_land: bool = True

    @classmethod
    def from_talisman(cls, talisman: Talisman) -> WorktreeSettings:
        section = talisman.section("runeconsole", "worktrees")
        directory = section.text("dir", DEFAULT_DIR) or DEFAULT_DIR
        if not _SAFE_DIR.fullmatch(directory) or ".." in directory.split("/"):
            talisman.report(
                f"{section.where('dir')}: runeconsole.worktrees.dir is {directory!r}; "
                "allowed: a relative path inside the project, without '..'"
            )
            directory = DEFAULT_DIR
        raw_copy = section.get("copy", [])
        if isinstance(raw_copy, str):
            raw_copy = [raw_copy]
        if not (isinstance(raw_copy, list) and all(isinstance(g, str) for g in raw_copy)):
            talisman.report(
                f"{section.where('copy')}: runeconsole.worktrees.copy is {raw_copy!r}; "
                "allowed: a list of globs ('.env', 'config/*.local.yml')"
            )
            raw_copy = []
        bad = [g for g in raw_copy if g.startswith("/") or ".." in g.split("/")]
        if bad:
            talisman.report(
                f"{section.where('copy')}: runeconsole.worktrees.copy names {bad[0]!r}; "
                "allowed: globs relative to the project, without '..'"
            )
            raw_copy = [g for g in raw_copy if g not in bad]
        raw = section.get("setup_command", None)
        setup = command_args(raw) if raw is not None else None
        if raw is not None and setup is None:
            talisman.report(
                f"{section.where('setup_command')}: runeconsole.worktrees.setup_command is "
                f"{raw!r}; allowed: a command line (quotes balanced) or a list of strings"
            )
        settings = cls(
            directory=directory.rstrip("/"),
            copy=tuple(raw_copy),
            setup_command=setup,
            setup_timeout=section.number(
                "setup_timeout_seconds", DEFAULT_SETUP_TIMEOUT, minimum=1, maximum=86400
            ),
            remove_after_land=section.boolean("remove_after_land", True),
        )
        section.warn_unread()
        return settings
