"""Where the conversation screen's turns come from (every call blocking: a worker's).

``tail()`` is the end of the transcript (its last ``TAIL_BYTES``, read in milliseconds
whatever its size) shown first; ``whole()`` every turn so far, replacing it; ``more()``
what was appended since (a turn seen before may come again, changed: a tool call whose
result came). ``LocalTranscript`` reads a file of this machine (an agent's, as
``locate.transcript_for`` finds it, or a search hit's); ``RemoteTranscript`` asks a fleet
source's host (``runeconsole conversation KEY --json`` over its SSH channel).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from runeconsole.core.errors import RuneError
from runeconsole.core.timeutil import parse_iso
from runeconsole.services.conversations.locate import OperatorPrompts, transcript_for
from runeconsole.services.conversations.reading import (
    ConversationReader,
    is_subagent_file,
    read_conversation,
)
from runeconsole.services.conversations.turns import Turn
from runeconsole.services.project import Project

TAIL_BYTES = 192 * 1024  # what is read first of a big transcript
FOLLOW_SECONDS = 1.0  # between two reads of what was appended (a host: REMOTE_FOLLOW)
REMOTE_FOLLOW = 5.0


@dataclass
class Read:
    """Turns as read, with what the screen says of them."""

    turns: list[Turn]
    session_id: str = ""
    path: str = ""
    skipped: int = 0
    error: str | None = None
    partial: bool = False  # the tail only: the whole comes next
    notes: list[str] = field(default_factory=list)


class Transcript(Protocol):
    key: str  # the agent (its row's key), "" for a session of no known agent
    where: str  # the source, in the fleet console ("" here)
    follow_every: float

    def tail(self) -> Read | None:
        """The transcript's end, quickly (``None``: small enough to read whole at once)."""
        ...

    def whole(self) -> Read: ...

    def more(self) -> list[Turn]: ...


def last_turns(transcript: Transcript) -> list[Turn]:
    """A conversation's last turns: its end, read in milliseconds whatever its size (a
    transcript small enough is read whole)."""
    return (transcript.tail() or transcript.whole()).turns


def session_file(path: str | Path) -> Path:
    """The session's own transcript of a file found (a subagent's file is
    ``<session>/subagents/agent-<id>.jsonl`` beside ``<session>.jsonl``)."""
    found = Path(path)
    if is_subagent_file(found):
        return found.parent.parent.with_suffix(".jsonl")
    return found


def line_start(path: Path, offset: int) -> int:
    """The start of the first whole line at or after ``offset``."""
    if offset <= 0:
        return 0
    with open(path, "rb") as handle:
        handle.seek(offset - 1)
        while chunk := handle.read(64 * 1024):
            newline = chunk.find(b"\n")
            if newline >= 0:
                return handle.tell() - len(chunk) + newline + 1
        return handle.tell()


class LocalTranscript:
    """A transcript of this machine: agent ``key``'s (its recorded or newest session, or
    ``session``), or the file at ``path``."""

    follow_every = FOLLOW_SECONDS

    def __init__(
        self,
        project: Project,
        key: str,
        *,
        path: str | Path | None = None,
        session: str | None = None,
        where: str = "",
    ) -> None:
        self.project, self.key, self.where = project, key, where
        self.session = session
        self.path: Path | None = session_file(path) if path is not None else None
        self.operator: OperatorPrompts | None = None
        self.reader: ConversationReader | None = None

    def _located(self) -> Path:
        if self.path is None:
            self.path = transcript_for(self.project, self.key, self.session)
        if self.operator is None:
            self.operator = OperatorPrompts.of(self.project, self.key) if self.key else None
        return self.path

    def tail(self) -> Read | None:
        path = self._located()
        try:
            size = os.stat(path).st_size
        except OSError as exc:
            raise RuneError(f"{path}: {exc.strerror or exc}") from None
        if size <= TAIL_BYTES * 2:
            return None
        start = line_start(path, size - TAIL_BYTES)
        read = read_conversation(path, start=start, operator=self.operator)
        return Read(read.turns, read.session_id, str(path), read.skipped, read.error, True)

    def whole(self) -> Read:
        path = self._located()
        self.reader = ConversationReader(path, operator=self.operator)
        turns = self.reader.read()
        reader = self.reader
        return Read(turns, reader.session_id, str(path), reader.skipped, reader.error)

    def more(self) -> list[Turn]:
        return self.reader.read() if self.reader is not None else []


def turn_of(item: dict[str, Any]) -> Turn:
    """A turn as ``runeconsole conversation --json`` prints it."""
    names = Turn.__dataclass_fields__
    fields = {name: value for name, value in item.items() if name in names}
    at = item.get("at")
    fields["at"] = parse_iso(at) if isinstance(at, str) else None
    return Turn(**fields)


class Remote(Protocol):
    def call(self, *args: str, accept: tuple[int, ...] = (0,), timeout: float | None = None) -> Any:
        """``runeconsole ARGS`` on the source's host: its JSON output."""
        ...


class RemoteTranscript:
    """An agent's conversation on a host: read whole each time (over its SSH channel);
    ``more`` gives the turns past those seen and those that changed."""

    follow_every = REMOTE_FOLLOW

    def __init__(self, actions: Remote, key: str, own: str, where: str, session: str = "") -> None:
        self.actions, self.key, self.own, self.where = actions, key, own, where
        self.session = session
        self.seen: dict[tuple[str, int, int], Turn] = {}

    def tail(self) -> Read | None:
        return None

    def _read(self) -> list[Turn]:
        argv = ["conversation", self.own, "--json"]
        if self.session:
            argv.append(f"--session={self.session}")
        found = self.actions.call(*argv)
        if not isinstance(found, list):
            raise RuneError(f"{self.where}: conversation did not return a list of turns")
        return [turn_of(item) for item in found if isinstance(item, dict)]

    def whole(self) -> Read:
        turns = self._read()
        self.seen = {turn.key: turn for turn in turns}
        session = turns[0].session_id if turns else self.session
        return Read(turns, session, f"{self.where}: {turns[0].path if turns else '?'}")

    def more(self) -> list[Turn]:
        changed = [turn for turn in self._read() if self.seen.get(turn.key) != turn]
        self.seen.update((turn.key, turn) for turn in changed)
        return changed
