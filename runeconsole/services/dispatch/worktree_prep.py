"""What a fresh worktree gets before its agent starts: the project's untracked files a
checkout lacks (``runeconsole.worktrees.copy``), Claude Code's hooks in the scope the project
installed them in, and the setup command run in it (its output kept).

Files placed here are recorded with their digest, so a removal later can tell them from
the agent's own work: the same bytes are ours to delete, anything else is kept.
"""

from __future__ import annotations

import hashlib
import shutil
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runeconsole.adapters.claude_settings import SettingsFile
from runeconsole.adapters.processes import run_streaming
from runeconsole.core.errors import RuneError, WriteFailed
from runeconsole.services.claude.install.install import installed, plan_install

LOCAL_SETTINGS = ".claude/settings.local.json"
OUTPUT_LINES = 5000
PROJECT_SETTINGS = ".claude/settings.json"


def digest(path: Path) -> str | None:
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return None


def copy_files(root: Path, worktree: Path, globs: tuple[str, ...]) -> dict[str, str]:
    """Each regular file under ``root`` a glob names and the worktree lacks, copied (mode
    kept); symbolic links and anything leading out of the root are skipped. Returns the
    placed files (relative path: digest)."""
    placed: dict[str, str] = {}
    real_root = root.resolve()
    # Never from a worktree: Claude Code's, nor the other attempts' (wherever ``dir`` puts them).
    worktrees = [Path(".claude/worktrees")]
    if worktree.parent != root and worktree.parent.is_relative_to(root):
        worktrees.append(worktree.parent.relative_to(root))
    for pattern in globs:
        for source in sorted(root.glob(pattern)):
            relative = source.relative_to(root)
            if relative.parts[:1] == (".git",) or source.is_symlink() or not source.is_file():
                continue
            if not source.resolve().is_relative_to(real_root):
                continue
            if any(relative.is_relative_to(directory) for directory in worktrees):
                continue
            target = worktree / relative
            if target.exists() or target.is_symlink():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                shutil.copy2(source, target, follow_symlinks=False)
            except OSError as exc:
                raise WriteFailed(target, exc) from None
            found = digest(target)
            if found:
                placed[str(relative)] = found
    return placed


def _ours(path: Path) -> dict[str, list[str]]:
    try:
        return installed(SettingsFile.read(path).data)
    except RuneError:
        return {}


def install_hooks(root: Path, worktree: Path) -> dict[str, str]:
    """Our hooks active in the worktree when the project has them (either scope): nothing
    to do where the worktree's committed settings already hold them; else the project's
    local settings file copied (it is untracked, so a checkout lacks it), or, for hooks in
    an uncommitted project file, a local file holding them with the command it runs. The
    local file is never committed (``info/exclude``), so the worktree stays clean."""
    placed: dict[str, str] = {}
    local, project = root / LOCAL_SETTINGS, root / PROJECT_SETTINGS
    ours_local, ours_project = _ours(local), _ours(project)
    if not (ours_local or ours_project):
        return placed
    if _ours(worktree / PROJECT_SETTINGS) or _ours(worktree / LOCAL_SETTINGS):
        return placed
    target = worktree / LOCAL_SETTINGS
    target.parent.mkdir(parents=True, exist_ok=True)
    if ours_local and not target.exists():
        try:
            shutil.copyfile(local, target)
        except OSError as exc:
            raise WriteFailed(target, exc) from None
    else:
        commands = ours_local or ours_project
        command = next(iter(next(iter(commands.values()))), None)
        existed = target.exists()
        plan_install(target, command).apply()
        if existed:
            return placed
    if found := digest(target):
        placed[LOCAL_SETTINGS] = found
    return placed


@dataclass(frozen=True)
class CommandRun:
    """A setup command's or a test command's run in a worktree."""

    command: list[str]
    exit_code: int | None  # None: it did not finish (timed out, or could not start)
    seconds: float
    output: bytes
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def describe(self) -> str:
        # The program by its name (an interpreter's full path crowds a toast out).
        shown = " ".join([Path(self.command[0]).name, *self.command[1:]])
        if self.error:
            return f"`{shown}` {self.error}"
        if self.ok:
            return f"`{shown}` passed in {self.seconds:.1f}s"
        return f"`{shown}` failed with exit {self.exit_code} after {self.seconds:.1f}s"

    def to_json(self, output: Path) -> dict[str, Any]:
        return {
            "command": self.command,
            "exit": self.exit_code,
            "ok": self.ok,
            "seconds": round(self.seconds, 2),
            "output": str(output),
            "message": self.describe(),
        }


def run_in(command: list[str], worktree: Path, timeout: float, setting: str) -> CommandRun:
    """``command`` in the worktree, stdout and stderr together, under ``timeout`` (its
    process group killed then; ``setting`` names where the limit is set); never a shell.
    The merge queue's runner (``run_streaming``): what the process started does not outlive
    it, and a child holding its output open does not hold the run."""
    lines: deque[str] = deque(maxlen=OUTPUT_LINES)  # the tail is what is kept
    try:
        result = run_streaming(command, worktree, timeout, lines.append)
    except RuneError as exc:
        return CommandRun(command, None, 0.0, b"", exc.message)
    output = "".join(f"{line}\n" for line in lines)
    if result.timed_out:
        return CommandRun(
            command,
            None,
            result.seconds,
            output.encode(),
            f"timed out after {timeout:g}s ({setting}); killed",
        )
    return CommandRun(command, result.returncode, result.seconds, output.encode())
