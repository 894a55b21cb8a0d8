"""Who may resume a checkpoint: its session nonce must be well formed, it must belong to
this Claude config dir, and its owner (the Claude Code session's pid) must be gone or
be this session; then this session claims it.

The plugin records ``config_dir`` resolved (``pwd -P``), so config dirs are compared with
every symbolic link resolved, and a claim records the resolved path too."""

from __future__ import annotations

import re
import reprlib
from pathlib import Path
from typing import Any

from runeconsole.core.errors import RuneError
from runeconsole.core.pids import pid_alive
from runeconsole.core.validate import real_path, same_path
from runeconsole.services.checkpoints.plan import Claim

SESSION_NONCE = re.compile(r"^[0-9a-f]{12}$")
MAX_PID = 2**22


class OwnedByLiveSession(RuneError):
    """Another arc session, still running, owns the checkpoint."""

    def __init__(self, pid: int) -> None:
        super().__init__(f"Checkpoint owned by live PID {pid} — another arc session is active")
        self.pid = pid


def parse_pid(value: Any) -> int | None:
    """``owner_pid`` as written (number or string); ``None`` unless a plausible pid."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, int) and 0 < value < MAX_PID:
        return value
    return None


def check_nonce(cp: dict[str, Any]) -> None:
    nonce = cp.get("session_nonce")
    if not isinstance(nonce, str) or not SESSION_NONCE.fullmatch(nonce):
        raise RuneError("Invalid session_nonce in checkpoint — possible tampering")


def claim(cp: dict[str, Any], config_dir: Path, session_pid: int) -> Claim:
    """Refuse another config dir or a live owner; claim the checkpoint for this session
    (in ``cp``: the returned notes are reported only if the resume goes on)."""
    notes = Claim()
    chome = str(real_path(config_dir))
    recorded = cp.get("config_dir")
    if recorded and not (isinstance(recorded, str) and same_path(recorded, chome)):
        raise RuneError(
            f"Checkpoint belongs to different config dir ({recorded} ≠ {chome}) — aborting resume"
        )
    owner = cp.get("owner_pid")
    if owner is not None and owner != "":
        pid = parse_pid(owner)
        if pid is None:
            notes.warnings.append(f"owner_pid {reprlib.repr(owner)} is not a process id; claiming")
        elif pid != session_pid and pid_alive(pid):
            raise OwnedByLiveSession(pid)
    if parse_pid(owner) != session_pid or recorded != chome:
        notes.changes.append(f"claim ownership: owner_pid {owner} -> {session_pid}")
    cp["owner_pid"] = session_pid
    cp["config_dir"] = chome
    return notes
