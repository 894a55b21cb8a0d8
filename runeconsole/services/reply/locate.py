"""Where an agent's screen is: the one place that decides how it is read (``peek``) and
where a message is typed (``say``).

- A Claude Code session started inside tmux: the pane its hook recorded at SessionStart
  (``claude.tmux`` in the identity: pane id, socket, the session's process).
- An agent started by ``spawn``: the first pane of its tmux session (``tmux_session``
  on the server it was spawned on), whose first process is the agent (``pid``).
- Neither, or gone: the last screen kept when it stopped (the supervisor keeps one),
  else no screen, and why.

- A Claude Code background session (no pane: Claude Code's daemon holds its terminal):
  ``claude logs ID``, replayed into the screen it shows (``services.claude.background``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from runeconsole.adapters.tmux import PaneLook, Tmux
from runeconsole.core.errors import RuneError
from runeconsole.services.claude.background.sessions import Background
from runeconsole.services.claude.hooks import terminal
from runeconsole.services.claude.session import session_view
from runeconsole.services.claude.session.session_view import is_background
from runeconsole.services.project import Project
from runeconsole.services.registry import AgentRecord
from runeconsole.services.reply.ownership import foreign
from runeconsole.services.supervision.screens import last_screen
from runeconsole.services.supervision.sessions import AgentSessions

SAVED = "last screen kept when it stopped"
NO_PANE_NOTE = (
    "no pane known: it was not started by `runeconsole spawn`, and its Claude Code "
    "session did not start inside tmux (its hooks saw no $TMUX_PANE)"
)


@dataclass(frozen=True)
class PanePlace:
    """The agent's pane: the server, the target tmux takes, the session's process."""

    tmux: Tmux
    target: str  # "%3" (a recorded pane) or "=rune-key:" (a spawned session's first pane)
    label: str
    pid: int | None
    pid_start: int | None = None

    def look(self, lines: int = 0) -> PaneLook | None:
        return self.tmux.look(self.target, lines)


def find_pane(record: AgentRecord, sessions: AgentSessions) -> PanePlace | None:
    """The agent's pane as recorded (``None``: none is known)."""
    recorded = terminal.recorded(record.fields)
    if recorded is not None:
        return PanePlace(
            Tmux(socket_path=recorded.socket),
            recorded.pane,
            f"pane {recorded.pane} on {recorded.socket}",
            recorded.pid,
            recorded.pid_start,
        )
    session = record.get("tmux_session")
    if not session:
        return None
    pid = record.get("pid")
    return PanePlace(
        sessions.tmux_for(record),
        f"={session}:",
        f"tmux session {session}",
        pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
    )


@dataclass(frozen=True)
class Screen:
    text: str
    source: str | None  # where it was read (None: there is no screen)
    note: str | None = None  # why there is none, or what to know about it


def _squeezed(screen: str, lines: int) -> str:
    """The last ``lines`` lines, runs of blank lines squeezed to one (Claude Code draws
    its input box at the bottom of a mostly empty screen)."""
    text = re.sub(r"\n{3,}", "\n\n", screen.rstrip())
    return "\n".join(text.splitlines()[-lines:])


def read_screen(record: AgentRecord, sessions: AgentSessions, lines: int) -> Screen:
    """The agent's screen: its own pane while it is there, else the last screen kept."""
    if background_id(record) is not None:
        return _background_screen(record, sessions, lines)
    note = None
    try:
        place = find_pane(record, sessions)
    except RuneError as exc:
        place, note = None, exc.message
    if place is not None:
        try:
            look = place.look(lines)
        except RuneError as exc:
            look, note = None, exc.message
        if look is None:
            note = note or f"its {place.label} is gone"
        elif (why := foreign(look, place.pid, place.pid_start, record.key)) is not None:
            note = why
        else:
            dead = "its pane's program has exited" if look.dead else None
            return Screen(_squeezed(look.screen, lines), place.label, dead)
    else:
        note = note or NO_PANE_NOTE
    try:
        kept = last_screen(sessions.paths, str(record.get("agent_id") or record.key))
    except RuneError:  # an agent id no file may be named after
        kept = ""
    if kept.strip():
        return Screen(_squeezed(kept, lines), SAVED, note)
    return Screen("", None, note)


def background_id(record: AgentRecord) -> str | None:
    """The short id of a Claude Code background session with no pane of its own."""
    if record.error or record.get("tmux_session") or terminal.recorded(record.fields):
        return None
    return session_view.background_id(record.fields) if is_background(record.fields) else None


def _background_screen(record: AgentRecord, sessions: AgentSessions, lines: int) -> Screen:
    background = Background(Project(sessions.root), registry=sessions.registry)
    short = background_id(record)
    try:
        return Screen(_squeezed(background.peek_text(record.key), lines), f"claude logs {short}")
    except RuneError as exc:
        return Screen("", None, exc.message)
