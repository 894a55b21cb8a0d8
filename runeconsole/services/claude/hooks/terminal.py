"""Where a Claude Code session's terminal is: the tmux pane it was started in.

Claude Code runs its hooks with the session's environment, so a session started inside
tmux hands every hook ``$TMUX_PANE`` (``%3``) and ``$TMUX`` (``socket,server-pid,session``).
At SessionStart the hook records them in the identity's ``claude`` object as

    "tmux": {"pane": "%3", "socket": "/tmp/tmux-1000/default", "pid": 4242, "pid_start": 1234}

where ``pid`` is the Claude Code process (the nearest one above the hook) and
``pid_start`` its start time, so a later process given the same pid is not taken for
it. ``runeconsole say`` types into that pane only while the pane's process tree still
holds that process. A session outside tmux (a background one) has no pane: nothing is
recorded, and one recorded earlier is dropped at its next start.

This module is the format's one home: the hook writes with ``describe`` and the reply
service reads with ``recorded``. It stays cheap (the hook imports it on every event).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from runeconsole.adapters.claude_process import nearest_claude_code
from runeconsole.core.pids import process_start

TYPE_CHECKING = False  # typing itself is not imported: the hook starts faster
if TYPE_CHECKING:
    from typing import Any

FIELD = "tmux"
PANE_ENV, TMUX_ENV = "TMUX_PANE", "TMUX"
_MAX_SOCKET = 4096


def _pane_id(value: object) -> str | None:
    if isinstance(value, str) and len(value) > 1 and value[0] == "%" and value[1:].isdigit():
        return value
    return None


def _socket(value: object) -> str | None:
    if isinstance(value, str) and 1 < len(value) <= _MAX_SOCKET and value.startswith("/"):
        return value if "\0" not in value and "\n" not in value else None
    return None


def from_environ(environ: Mapping[str, str]) -> tuple[str, str] | None:
    """``(pane, socket)`` from the hook's environment; ``None`` outside tmux."""
    pane = _pane_id(environ.get(PANE_ENV))
    socket = _socket((environ.get(TMUX_ENV) or "").rsplit(",", 2)[0])
    return (pane, socket) if pane and socket else None


def describe(pane: str, socket: str, below: int | None = None) -> dict[str, Any]:
    """The record for ``pane`` on ``socket``: with the Claude Code process above ``below``
    (the hook's parent by default) and its start time, where one is found."""
    pid = nearest_claude_code(os.getppid() if below is None else below)
    start = process_start(pid) if pid is not None else None
    return {"pane": pane, "socket": socket, "pid": pid, "pid_start": start}


class RecordedPane:
    """A pane as the hook recorded it (every field checked; a bad one reads as missing)."""

    __slots__ = ("pane", "pid", "pid_start", "socket")

    def __init__(self, pane: str, socket: str, pid: int | None, pid_start: int | None) -> None:
        self.pane, self.socket, self.pid, self.pid_start = pane, socket, pid, pid_start


def _whole(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def recorded(fields: Mapping[str, Any]) -> RecordedPane | None:
    """The pane the identity's ``claude.tmux`` names, if it names one properly."""
    claude = fields.get("claude")
    found = claude.get(FIELD) if isinstance(claude, dict) else None
    if not isinstance(found, dict):
        return None
    pane, socket = _pane_id(found.get("pane")), _socket(found.get("socket"))
    if pane is None or socket is None:
        return None
    start = found.get("pid_start")
    started = start if isinstance(start, int) and not isinstance(start, bool) else None
    return RecordedPane(pane, socket, _whole(found.get("pid")), started)
