"""What ``say`` and ``peek`` report, and the refusal ``say`` raises instead of typing."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from runeconsole.core.errors import RuneError

# Why ``say`` refused (``Refused.reason``): one word a script can test.
NO_PANE = "no_pane"
ENDED = "ended"
WAITING = "waiting"
NOT_ITS_PANE = "not_its_pane"


class Refused(RuneError):
    """``say`` typed nothing: the message says why and what to do first."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class SayResult:
    """A message pasted into the agent's pane and submitted."""

    agent: str
    pane: str  # where it went: "pane %3 on /tmp/tmux-1000/default" or "tmux session rune-…"
    chars: int
    lines: int
    sent_at: str  # ISO-8601 UTC

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class LastMessage:
    """The agent's last assistant message: its text, when it was said, and where it was
    read (``transcript`` or ``hook``, the Stop event's ``last_assistant_message``)."""

    text: str
    at: str | None
    source: str


@dataclass(frozen=True)
class PeekResult:
    """The agent's screen now (or the last one kept) and its last assistant message."""

    agent: str
    status: str | None
    activity: str | None
    waiting_for: str | None
    screen: str
    screen_from: str | None  # "pane %3 on …", "last screen kept", … (None: no screen)
    screen_note: str | None  # why there is no screen, or what to know about it
    last_message: LastMessage | None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        message = self.last_message
        data["last_message"] = message.text if message else None
        data["last_message_at"] = message.at if message else None
        data["last_message_from"] = message.source if message else None
        return data
