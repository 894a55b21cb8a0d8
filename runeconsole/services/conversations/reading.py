"""Following a Claude Code transcript into turns, whole or as it grows.

``read_conversation(path)`` reads a session's file (from a byte offset, up to its last
whole line: a line still being written is left for the next read) into a
``Conversation``; ``ConversationReader(path).read()`` follows one session, returning only
the turns appended since its last call (only the new bytes are read, new subagent files
too).

Following: a turn returned by one ``read()`` may come again, changed, in a later one (a
tool call whose result was read since): the one with the same ``Turn.key`` replaces it;
a subagent's new turns name their call in ``parent_tool_use_id`` (``merge`` applies a
batch to a list). A result whose call was read before ``start`` is a TOOL turn of its
own (no ``tool``, ``note`` "result only"). A file rewritten under the reader (shorter,
another inode, or its last bytes read changed) is read again from the start: an
UNREADABLE turn says so and ``restarted`` is set for that read.

The records themselves become turns in ``records`` (what is shown, and bad input).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from runeconsole.services.conversations.locate import OperatorPrompts
from runeconsole.services.conversations.records import SUBAGENT_TOOLS, Records, as_text
from runeconsole.services.conversations.turns import TOOL, Conversation, Turn

READ_LIMIT = 512 * 1024 * 1024  # bytes read at once; a line longer than this is skipped
TAIL = 64  # bytes before the read position checked again: is it still the same file?


# -- one file --------------------------------------------------------------------------


class _File:
    """Reading one JSONL file on from where the last read stopped (its records decoded by
    ``Records``)."""

    def __init__(self, path: str, *, start: int = 0, **decoding: Any) -> None:
        self.path = path
        self.read_to = max(0, start)
        self.records = Records(path, **decoding)
        self.error: str | None = None
        self.restarted = False
        self._ident: tuple[int, int] | None = None
        self._tail = b""
        self._gone_told = False
        self._skipping = False  # in a line longer than a read, not yet at its end

    @property
    def own_session(self) -> str:
        return self.records.own_session

    @property
    def skipped(self) -> int:
        return self.records.skipped

    def read(self) -> list[Turn]:
        """The turns of the whole lines appended since the last read."""
        self.restarted = False
        out: list[Turn] = []
        where: dict[tuple[str, int, int], int] = {}
        while True:
            data, base = self._new_bytes()
            if data is None:
                return out + self._gone() if self.error else out
            if self.restarted and not out:
                out.append(
                    self.records.note(0, "The file was rewritten: read again from the start")
                )
            full = len(data) >= READ_LIMIT
            self._take(data, base, out, where)
            if not full:
                return out

    def _take(
        self, data: bytes, base: int, out: list[Turn], where: dict[tuple[str, int, int], int]
    ) -> None:
        """The turns of ``data``'s whole lines (read from ``base``) into ``out``."""
        if self._skipping:  # inside a line longer than a read: on to its end
            found = data.find(b"\n")
            if found < 0:
                self.read_to, self._tail = base + len(data), data[-TAIL:]
                return
            data, base, self._skipping = data[found + 1 :], base + found + 1, False
        end = data.rfind(b"\n")
        if end < 0:
            if len(data) >= READ_LIMIT:
                out.append(
                    self.records.bad(base, f"A line of more than {READ_LIMIT:,} bytes: skipped")
                )
                self._skipping = True
                self.read_to, self._tail = base + len(data), data[-TAIL:]
            return
        if base == 0:
            self.records.begin_file(data[:end])
        for turn in self.records.lines(data, end, base):
            if turn.key in where:  # a call of this read, now with its result
                out[where[turn.key]] = turn
            else:
                where[turn.key] = len(out)
                out.append(turn)
        self.read_to = base + end + 1
        self._tail = data[max(0, end + 1 - TAIL) : end + 1]

    def _gone(self) -> list[Turn]:
        if self._gone_told or self._ident is None:
            return []
        self._gone_told = True
        self.records.skipped += 1
        return [self.records.note(self.read_to, f"The file cannot be read any more: {self.error}")]

    def _new_bytes(self) -> tuple[bytes | None, int]:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as error:
            self.error = error.strerror or str(error)
            return None, self.read_to
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                self.error = "not a regular file"
                return None, self.read_to
            ident = (info.st_dev, info.st_ino)
            self.error = None
            replaced = self._ident is not None and ident != self._ident
            shorter = info.st_size < self.read_to  # than what was read: rewritten
            if self._gone_told or replaced or shorter:
                self._restart()
            self._ident = ident
            self._gone_told = False
            check = len(self._tail) if self.read_to >= len(self._tail) else 0
            base = self.read_to - check
            data = _read_from(fd, base, min(info.st_size - base, READ_LIMIT + check))
            if check:
                if data[:check] != self._tail:
                    self._restart()
                    base = 0
                    data = _read_from(fd, 0, min(info.st_size, READ_LIMIT))
                else:
                    data = data[check:]
                    base += check
            return data, base
        except OSError as error:
            self.error = error.strerror or str(error)
            return None, self.read_to
        finally:
            os.close(fd)

    def _restart(self) -> None:
        self.forget()
        self.restarted = True

    def forget(self) -> None:
        """Read from the start next time (quietly)."""
        self.records.forget()
        self._skipping = False
        self.read_to = 0
        self._tail = b""


def _read_from(fd: int, offset: int, size: int) -> bytes:
    os.lseek(fd, offset, os.SEEK_SET)
    chunks: list[bytes] = []
    while size > 0:
        chunk = os.read(fd, min(size, 1 << 30))
        if not chunk:
            break
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


# -- a session and its subagents ---------------------------------------------------------


def subagent_dir(path: Path) -> Path:
    """Where a session's subagents' files are: ``<session>/subagents/`` beside it."""
    return path.parent / path.stem / "subagents"


def is_subagent_file(path: Path) -> bool:
    return path.parent.name == "subagents" and path.name.startswith("agent-")


def subagent_paths(path: Path) -> list[Path]:
    """A session's subagents' transcripts (none when it has none or they cannot be listed)."""
    try:
        found = [
            p
            for p in subagent_dir(path).iterdir()
            if p.suffix == ".jsonl" and p.name.startswith("agent-")
        ]
    except OSError:
        return []
    return sorted(found)


def subagent_call(path: Path) -> str:
    """The Task/Agent call that started the subagent whose transcript is ``path`` (its
    ``.meta.json``'s ``toolUseId``; "" when unknown)."""
    meta = path.with_name(path.name[: -len(".jsonl")] + ".meta.json")
    try:
        with open(meta, "rb") as stream:
            data = json.loads(stream.read(1 << 20))
    except (OSError, ValueError, RecursionError):
        return ""
    return as_text(data.get("toolUseId")) if isinstance(data, dict) else ""


def _agent_id(path: Path) -> str:
    return path.stem[len("agent-") :] if path.stem.startswith("agent-") else path.stem


class ConversationReader:
    """Follows one session: each ``read()`` returns the turns appended since the last one
    (its own file's and its subagents'), reading only the new bytes."""

    def __init__(
        self,
        path: Path,
        *,
        start: int = 0,
        operator: OperatorPrompts | None = None,
        subagents: bool = True,
        starts: Mapping[str, int] | None = None,
    ) -> None:
        self.path = Path(path)
        self.operator = operator
        self._starts = dict(starts or {})
        self._main = self._file_for(self.path, self._starts.get(str(self.path), start))
        self._follow_subagents = subagents and not is_subagent_file(self.path)
        self._subagents: dict[str, _File] = {}
        self._calls: dict[str, int] = {}  # Task/Agent call -> its depth
        self.restarted = False

    def _file_for(self, path: Path, start: int) -> _File:
        if is_subagent_file(path):
            session = path.parent.parent.name
            return _File(
                str(path),
                start=start,
                own_session=session,
                operator=self.operator,
                depth=1,
                agent_id=_agent_id(path),
                parent=subagent_call(path),
            )
        return _File(str(path), start=start, own_session=path.stem, operator=self.operator)

    @property
    def session_id(self) -> str:
        return self._main.own_session

    @property
    def read_to(self) -> int:
        return self._main.read_to

    @property
    def skipped(self) -> int:
        return self._main.skipped + sum(f.skipped for f in self._subagents.values())

    @property
    def error(self) -> str | None:
        return self._main.error

    def positions(self) -> dict[str, int]:
        """Where each file was read to (``starts=`` of a later reader goes on from there)."""
        found = {f.path: f.read_to for f in self._subagents.values()}
        found[self._main.path] = self._main.read_to
        return found

    def read(self) -> list[Turn]:
        main = self._main.read()
        self.restarted = self._main.restarted
        if self.restarted:  # what was read of the subagents hung under the calls read before
            self._calls.clear()
            for sub in self._subagents.values():
                sub.forget()
        self._note_calls(main, 0)
        if not self._follow_subagents:
            return main
        groups: dict[str, list[Turn]] = {}
        for path in subagent_paths(self.path):
            file = self._subagents.get(str(path))
            if file is None:
                file = self._file_for(path, self._starts.get(str(path), 0))
                self._subagents[str(path)] = file
            records = file.records
            if not records.parent:
                records.parent = subagent_call(path)
            records.depth = self._calls.get(records.parent, 0) + 1
            turns = file.read()
            self._note_calls(turns, records.depth)
            if turns:
                groups.setdefault(records.parent, []).extend(turns)
        return _nested(main, groups)

    def _note_calls(self, turns: Iterable[Turn], depth: int) -> None:
        for turn in turns:
            if turn.kind == TOOL and turn.tool in SUBAGENT_TOOLS and turn.tool_use_id:
                self._calls[turn.tool_use_id] = depth


def _nested(turns: list[Turn], groups: dict[str, list[Turn]]) -> list[Turn]:
    """``turns`` with each group of subagents' turns right after the call that started it
    (groups whose call is not among them last, in order)."""
    if not groups:
        return turns
    out: list[Turn] = []
    placed: set[str] = set()

    def emit(batch: list[Turn]) -> None:
        for turn in batch:
            out.append(turn)
            call = turn.tool_use_id
            if turn.kind == TOOL and call and call in groups and call not in placed and turn.tool:
                placed.add(call)
                emit(groups[call])

    emit(turns)
    for call, batch in groups.items():
        if call not in placed:
            placed.add(call)
            emit(batch)
    return out


def read_conversation(
    path: Path, *, start: int = 0, operator: OperatorPrompts | None = None
) -> Conversation:
    """The turns of the transcript at ``path`` from byte ``start`` to its last whole line,
    its subagents' nested under the calls that started them."""
    reader = ConversationReader(Path(path), start=start, operator=operator)
    turns = reader.read()
    conversation = Conversation(
        session_id=reader.session_id,
        path=str(path),
        turns=turns,
        read_to=reader.read_to,
        skipped=reader.skipped,
        error=reader.error,
    )
    return conversation


def merge(turns: list[Turn], batch: Iterable[Turn]) -> list[Turn]:
    """``turns`` with a later ``read()``'s batch applied: a turn with a known ``key``
    replaces it, a subagent's turn goes after the last turn of its call's, anything else
    at the end."""
    out = list(turns)
    where = {turn.key: i for i, turn in enumerate(out)}
    for turn in batch:
        if turn.key in where:
            out[where[turn.key]] = turn
            continue
        at = len(out)
        if turn.parent_tool_use_id:
            last = next(
                (
                    i
                    for i in range(len(out) - 1, -1, -1)
                    if out[i].parent_tool_use_id == turn.parent_tool_use_id
                    or (out[i].tool_use_id == turn.parent_tool_use_id and out[i].tool)
                ),
                None,
            )
            if last is not None:
                at = last + 1
        out.insert(at, turn)
        if at != len(out) - 1:
            where = {t.key: i for i, t in enumerate(out)}
        else:
            where[turn.key] = at
    return out
