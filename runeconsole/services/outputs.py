"""Sub-agent output gates: reuse valid files, relaunch the rest, gate the stage.

An output file is valid when it is non-empty and its exact last line is the sentinel
``<!-- AGENT_COMPLETE -->`` (nothing after it but that line's newline). An invalid
critical output fails the stage (``PERSISTENCE_GATE=HARD_FAIL``); invalid optional
ones are omitted with a warning (``PERSISTENCE_GATE=SOFT_CONTINUE``). The session
directory is given, or read from ``live.dir`` in ``.cwf/cwf-state.yaml``.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runeconsole.core import frontmatter
from runeconsole.core.errors import InvalidInput, RuneError, UnreadableFile
from runeconsole.core.files import read_bytes

SENTINEL = "<!-- AGENT_COMPLETE -->"
LIVE_STATE = Path(".cwf") / "cwf-state.yaml"
HARD_FAIL, SOFT_CONTINUE, PASS = "HARD_FAIL", "SOFT_CONTINUE", "PASS"
OUTPUT_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}$")
TAIL_BYTES = 4096


@dataclass(frozen=True)
class OutputCheck:
    name: str
    critical: bool
    problem: str | None  # None when valid

    @property
    def valid(self) -> bool:
        return self.problem is None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "critical": self.critical, "valid": self.valid,
                "problem": self.problem}  # fmt: skip


@dataclass
class GateResult:
    session_dir: Path
    checks: list[OutputCheck] = field(default_factory=list)

    @property
    def relaunch(self) -> list[str]:
        return [c.name for c in self.checks if not c.valid]

    @property
    def gate(self) -> str:
        if any(c.critical and not c.valid for c in self.checks):
            return HARD_FAIL
        return SOFT_CONTINUE if self.relaunch else PASS

    @property
    def exit_code(self) -> int:
        return 1 if self.gate == HARD_FAIL else 0

    def lines(self) -> list[str]:
        """The stage's output: each invalid file, the relaunch list, the gate (see
        docs/protocols.md#suspended-tasks-arc-checkpoints-and-output-gates)."""
        out = []
        for check in self.checks:
            if not check.valid:
                tier = "critical" if check.critical else "optional"
                out.append(f"INVALID ({tier}): {self.session_dir / check.name}: {check.problem}")
        if self.relaunch:
            out.append(f"RELAUNCH: {' '.join(self.relaunch)}")
        if self.gate == SOFT_CONTINUE:
            omitted = ", ".join(c.name for c in self.checks if not c.valid)
            out.append(
                f"WARNING: optional outputs omitted: {omitted} — "
                "the sections that depend on them are skipped"
            )
        out.append(f"PERSISTENCE_GATE={self.gate}")
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "session_dir": str(self.session_dir),
            "outputs": [c.to_json() for c in self.checks],
            "relaunch": self.relaunch,
            "gate": self.gate,
            "exit_code": self.exit_code,
        }


def validate_name(name: str) -> str:
    if not OUTPUT_NAME.fullmatch(name) or ".." in name:
        raise InvalidInput(
            f"output name {name!r} must be a plain file name (letters, digits, '.', '_', '-')"
        )
    return name


def check_file(path: Path) -> str | None:
    """Why ``path`` is not a complete output, or ``None``.

    The output gate (docs/protocols.md#suspended-tasks-arc-checkpoints-and-output-gates): the
    file is non-empty and ends with "the exact line
    ``<!-- AGENT_COMPLETE -->`` as the last line". So the sentinel must stand alone on
    the final line, followed by nothing but that line's own ending (``\\n`` or
    ``\\r\\n``, or none): trailing blank lines or spaces mean it is not the last line.
    """
    try:
        info = path.stat()
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"
    if stat.S_ISDIR(info.st_mode):
        return "is a directory, not a file"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file"
    if info.st_size == 0:
        return "empty"
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, info.st_size - TAIL_BYTES))
            tail = handle.read()
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"
    text = tail.decode("utf-8", errors="replace")
    if not text.strip():
        return "empty (whitespace only)"
    last = text.removesuffix("\n").removesuffix("\r")
    if last.endswith(SENTINEL) and last[: -len(SENTINEL)][-1:] in ("", "\n"):
        return None
    if text.rstrip().splitlines()[-1].strip() == SENTINEL:
        return (
            f"{SENTINEL} is not the exact last line (blank lines or spaces around it); "
            "the gate wants that exact line as the last line"
        )
    return f"last line is not {SENTINEL} (incomplete)"


def session_dir_from_live_state(root: Path) -> Path:
    """``live.dir`` from ``.cwf/cwf-state.yaml`` (relative to the root when not absolute)."""
    path = root / LIVE_STATE
    try:
        data = frontmatter.load_mapping(read_bytes(path, 1024 * 1024).decode("utf-8"))
    except UnreadableFile as exc:
        raise RuneError(f"no session dir given and {path} is unreadable: {exc.reason}") from None
    except (UnicodeDecodeError, frontmatter.FrontmatterError) as exc:
        raise RuneError(f"{path}: {exc}") from None
    live = data.get("live")
    value = live.get("dir") if isinstance(live, dict) else None
    if not isinstance(value, str) or not value:
        raise RuneError(f"{path}: live.dir is not set; pass SESSION_DIR")
    return Path(os.path.normpath(root / value))


def verify(session_dir: Path, critical: list[str], optional: list[str]) -> GateResult:
    names = [*critical, *optional]
    for name in names:
        validate_name(name)
    if not names:
        raise InvalidInput("name at least one output with --critical or --optional")
    if not session_dir.is_dir():
        raise RuneError(f"session dir {session_dir} does not exist")
    critical_set = set(critical)
    result = GateResult(session_dir)
    for name in dict.fromkeys(names):
        result.checks.append(
            OutputCheck(name, name in critical_set, check_file(session_dir / name))
        )
    return result
