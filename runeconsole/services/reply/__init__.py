"""Peek at any agent and reply to it without attaching: ``runeconsole peek`` and ``say``.

``Replies(project).say(agent, text)`` pastes ``text`` into the agent's tmux pane as one
bracketed paste (so its newlines are part of the message, not Enters) and submits it;
``peek(agent, lines)`` returns the agent's screen and its last assistant message. ``say``
refuses, saying why, rather than type where it should not: no pane is known, the agent
has ended, it waits on a permission or a question, or the pane's process tree does not
hold the agent's session.

One job a module: ``locate`` (where the agent's screen is: the one place peek and say
ask), ``ownership`` (the pane's process tree), ``readiness`` (ended, waiting),
``last_message`` (the transcript and the Stop hook), ``text`` (what may be pasted),
``results`` (what is reported, and ``Refused``).
"""

from __future__ import annotations

from runeconsole.core.errors import InvalidInput
from runeconsole.core.timeutil import iso_z
from runeconsole.core.validate import validate_name
from runeconsole.services.claude.session.view import agent_view
from runeconsole.services.conversations.locate import record_sent
from runeconsole.services.pane_patterns import read_pane
from runeconsole.services.project import Project
from runeconsole.services.reply import readiness
from runeconsole.services.reply.last_message import last_message
from runeconsole.services.reply.locate import NO_PANE_NOTE, find_pane, read_screen
from runeconsole.services.reply.ownership import foreign
from runeconsole.services.reply.results import (
    ENDED,
    NO_PANE,
    NOT_ITS_PANE,
    WAITING,
    LastMessage,
    PeekResult,
    Refused,
    SayResult,
)
from runeconsole.services.reply.text import clean
from runeconsole.services.supervision.service import Supervisor

__all__ = [
    "ENDED",
    "NOT_ITS_PANE",
    "NO_PANE",
    "WAITING",
    "LastMessage",
    "PeekResult",
    "Refused",
    "Replies",
    "SayResult",
]

DEFAULT_LINES = 40
MAX_LINES = 2000


class Replies:
    """Say and peek on one project's agents (through its supervisor's tmux servers)."""

    def __init__(self, project: Project, *, supervisor: Supervisor | None = None) -> None:
        self.project = project
        self._supervisor = supervisor

    @property
    def supervisor(self) -> Supervisor:
        if self._supervisor is None:
            self._supervisor = Supervisor(self.project)
        return self._supervisor

    def say(self, agent_key: str, text: str) -> SayResult:
        """Paste ``text`` into the agent's pane as one bracketed paste and submit it
        (``Refused`` with the reason when it must not; nothing is typed then)."""
        message = clean(text)
        key = validate_name(agent_key, "agent key")
        sessions = self.supervisor.sessions
        record = sessions.registry.get(key)
        view = agent_view(record.fields, None)
        if (over := readiness.ended(record)) is not None:
            raise Refused(ENDED, f"{over}: nothing to say to")
        place = find_pane(record, sessions)
        if place is None:
            raise Refused(NO_PANE, f"{key}: {NO_PANE_NOTE}; attach to it instead")
        look = place.look()
        if look is None or look.dead:
            gone = "is gone" if look is None else "has exited"
            raise Refused(ENDED, f"{key}'s {place.label} {gone}: nothing to say to")
        if (why := foreign(look, place.pid, place.pid_start, key)) is not None:
            raise Refused(NOT_ITS_PANE, f"{why}; nothing typed")
        if (waits := readiness.waits_on(record, view, read_pane(look.screen))) is not None:
            raise Refused(WAITING, waits)
        place.tmux.paste(look.pane_id, message)
        # Its conversation then shows this prompt as the operator's (``conversations``).
        record_sent(self.project, key, message)
        return SayResult(
            key,
            place.label,
            len(message),
            message.count("\n") + 1,
            iso_z(self.project.clock.now()),
        )

    def peek(self, agent_key: str, lines: int = DEFAULT_LINES) -> PeekResult:
        """The agent's screen (its last ``lines`` lines) and its last assistant message."""
        if not 1 <= lines <= MAX_LINES:
            raise InvalidInput(f"--lines {lines}: from 1 to {MAX_LINES}")
        key = validate_name(agent_key, "agent key")
        sessions = self.supervisor.sessions
        record = sessions.registry.get(key)
        view = agent_view(record.fields, None)
        screen = read_screen(record, sessions, lines)
        return PeekResult(
            key,
            record.status,
            view.activity,
            view.waiting_for,
            screen.text,
            screen.source,
            screen.note,
            last_message(record.fields),
        )
