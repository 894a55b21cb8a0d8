"""Whose pane it is: the pane's process tree must hold the agent's session process.

A pane id outlives nothing: when the agent's tmux server restarts, or its pane closes and
another opens, the same id (``%3``) can name someone else's shell. So before typing (and
before showing a screen as the agent's) the session's process is walked up to the pane's
first process: it is the pane's process or one of its descendants, and it is still the
process that was recorded (same start time), or the pane is not the agent's.
"""

from __future__ import annotations

import os

from runeconsole.adapters.tmux import PaneLook
from runeconsole.core.pids import ancestors, command_of, pid_alive, process_start


def _program(pid: int) -> str:
    name, argv = command_of(pid)
    return os.path.basename(argv[0]) if argv else name or "?"


def foreign(look: PaneLook, pid: int | None, pid_start: int | None, key: str) -> str | None:
    """Why the pane ``look`` shows is not ``key``'s session (``None``: it is).

    ``pid`` is the session's process (``pid_start`` its start time, where recorded)."""
    where = f"pane {look.pane_id}"
    if pid is None:
        return f"{key}'s session process is not recorded: {where} cannot be checked as its own"
    if look.pid is None:
        return f"tmux did not say which process runs {where}"
    started = process_start(pid)
    if not pid_alive(pid) or (pid_start is not None and started != pid_start):
        return f"{key}'s session process {pid} has exited"
    if pid != look.pid and look.pid not in ancestors(pid):
        return (
            f"{where} runs {_program(look.pid)} (pid {look.pid}), whose process tree does not "
            f"hold {key}'s session (pid {pid}): it is someone else's pane"
        )
    return None
