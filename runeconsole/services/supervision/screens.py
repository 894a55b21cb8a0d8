"""Agents' screens: read live from tmux, or kept on disk once the pane has gone."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

from runeconsole.adapters.tmux import PANE_HEIGHT, PaneInfo, Tmux
from runeconsole.core.errors import RuneError
from runeconsole.core.files import atomic_write_bytes
from runeconsole.core.paths import ProjectPaths
from runeconsole.core.validate import validate_name
from runeconsole.services.registry import AgentRecord
from runeconsole.services.supervision.sessions import AgentSessions


def capture_screen(tmux: Tmux, pane_id: str) -> str:
    """Screen plus one screenful of history, blank runs squeezed (a dead pane's notice
    scrolls its last output off the visible screen)."""
    return re.sub(r"\n{3,}", "\n\n", tmux.capture(pane_id, lines=PANE_HEIGHT))


def screen_path(paths: ProjectPaths, agent_id: str) -> Path:
    return paths.supervisor / "screens" / f"{validate_name(agent_id, 'agent id')}.txt"


def keep_screen(sessions: AgentSessions, record: AgentRecord, pane: PaneInfo) -> None:
    """Save the last screen of an agent about to disappear, for its post-mortem."""
    with contextlib.suppress(RuneError, OSError):
        screen = capture_screen(sessions.tmux_for(record), pane.pane_id)
        path = screen_path(sessions.paths, str(record.get("agent_id")))
        atomic_write_bytes(sessions.paths.inside(path), screen.encode())


def last_screen(paths: ProjectPaths, agent_id: str) -> str:
    """What a stopped agent's pane showed last ("" if nothing was kept)."""
    try:
        return screen_path(paths, agent_id).read_text(encoding="utf-8")
    except OSError:
        return ""


def pane_tail(sessions: AgentSessions, key: str, lines: int) -> str:
    """The agent's screen now, or the last screen saved when it stopped."""
    record = sessions.registry.get(key)
    pane = sessions.pane_of(record)
    if pane is not None:
        screen = capture_screen(sessions.tmux_for(record), pane.pane_id)
    else:
        screen = last_screen(sessions.paths, str(record.get("agent_id")))
    return "\n".join(screen.rstrip("\n").splitlines()[-lines:])
