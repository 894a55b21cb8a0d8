"""Feeding the conversation index one transcript at a time: where its last read stopped
(``FileState``, a row of ``files``), the new whole lines read into turns (``parse``, no
database needed: a rescan parses the next file while the last one is written), and the
turns written as rows with the file's new state (``apply``, inside the caller's
transaction, which checked first that the state parsed from is still the stored one).

A file is read on from its stored offset when it is the same file: the same inode, and
the bytes just before the offset unchanged (a file cut shorter, replaced, or rewritten in
place fails this). Otherwise its rows are dropped and it is read from its start.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from runeconsole.services.conversations import index_schema as schema
from runeconsole.services.conversations.owners import Owner, session_of
from runeconsole.services.conversations.query import clean_text, epoch_ms
from runeconsole.services.conversations.reading import ConversationReader
from runeconsole.services.conversations.turns import TOOL, UNREADABLE, Turn

BODY_LIMIT = 100_000  # characters of one turn indexed (a prompt, a text, a call and result)
PART_LIMIT = 20_000  # characters of one value of a tool's input indexed
TAIL = 64  # bytes before the offset read to, kept: is it still the same file?
MASK = (1 << schema.SEQUENCE_BITS) - 1


@dataclass(frozen=True)
class FileState:
    """A transcript's row: how far it was read, and of which file."""

    file_id: int
    dev: int
    ino: int
    offset: int
    tail: str
    turns: int
    last_ms: int
    agent: str
    role: str


@dataclass
class Parsed:
    """What a read of one transcript found, from ``start`` (0 and ``reindex``: read again
    from the start, its old rows to drop)."""

    path: str
    state: FileState | None  # the row the read went on from
    info: os.stat_result
    start: int
    reindex: bool
    turns: list[Turn]
    read_to: int
    skipped: int
    session_id: str


@dataclass
class Counts:
    read: int = 0
    bytes: int = 0
    turns: int = 0
    skipped: int = 0
    reindexed: int = 0


def file_state(db: sqlite3.Connection, path: str) -> FileState | None:
    row = db.execute(
        "SELECT id, dev, ino, offset, tail, turns, last_ms, agent, role FROM files WHERE path = ?",
        (path,),
    ).fetchone()
    return FileState(*row) if row is not None else None


def parse(path: str, state: FileState | None) -> Parsed | None:
    """The transcript's new whole lines as turns, going on from ``state``; ``None`` when
    it is not a file (gone, a directory)."""

    try:
        info = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    start, reindex = 0, False
    if state is not None:
        same = (state.dev, state.ino) == (info.st_dev, info.st_ino)
        if same and _tail(path, state.offset) == state.tail:
            start = state.offset
        else:
            reindex = True
    if state is not None and not reindex and start >= info.st_size:
        return Parsed(path, state, info, start, False, [], start, 0, "")
    reader = ConversationReader(Path(path), start=start, subagents=False)
    turns = reader.read()
    return Parsed(
        path, state, info, start, reindex, turns, reader.read_to, reader.skipped, reader.session_id
    )


def apply(db: sqlite3.Connection, parsed: Parsed, owner: Owner | None, counts: Counts) -> None:
    """The parsed turns written and the file's row moved on (in the caller's transaction,
    ``parsed.state`` being the stored row)."""
    path, state, info = parsed.path, parsed.state, parsed.info
    if state is None:
        cursor = db.execute(
            "INSERT INTO files (path, session_id, depth) VALUES (?, ?, ?)",
            (path, session_of(path), 1 if _is_subagent(path) else 0),
        )
        file_id, count, last_ms = int(cursor.lastrowid or 0), 0, 0
    else:
        file_id, count, last_ms = state.file_id, state.turns, state.last_ms
        if parsed.reindex:
            counts.reindexed += 1
            drop_file_rows(db, file_id)
            count, last_ms = 0, 0
    if state is not None and not parsed.reindex and parsed.read_to == parsed.start:
        db.execute(
            "UPDATE files SET size = ?, mtime_ns = ?, gone_at = NULL WHERE id = ?",
            (info.st_size, info.st_mtime_ns, file_id),
        )
        return
    counts.read += 1
    counts.bytes += max(0, parsed.read_to - parsed.start)
    counts.skipped += parsed.skipped
    fallback = last_ms or info.st_mtime_ns // 1_000_000
    added, last_ms = insert_turns(db, file_id, count, fallback, parsed.turns)
    counts.turns += added
    db.execute(
        "UPDATE files SET session_id = ?, agent = ?, role = ?, dev = ?, ino = ?, size = ?, "
        "mtime_ns = ?, offset = ?, tail = ?, turns = turns + ?, skipped = skipped + ?, "
        "last_ms = ?, gone_at = NULL WHERE id = ?",
        (
            parsed.session_id or session_of(path),
            owner.key if owner else "",
            owner.role if owner else "",
            info.st_dev,
            info.st_ino,
            info.st_size,
            info.st_mtime_ns,
            parsed.read_to,
            _tail(path, parsed.read_to),
            added,
            parsed.skipped,
            last_ms,
            file_id,
        ),
    )


# -- rows ---------------------------------------------------------------------------------


Row = tuple[int, int, int, str, str, str, str, str]


def insert_turns(
    db: sqlite3.Connection, file_id: int, count: int, fallback_ms: int, turns: list[Turn]
) -> tuple[int, int]:
    """The turns as rows (a turn returned twice in one read, its later form: a call and
    its result); how many were added and the newest moment."""
    latest: dict[tuple[int, str, str], Turn] = {}
    for turn in turns:
        if turn.kind != UNREADABLE:
            latest[(turn.offset, turn.kind, turn.tool_use_id)] = turn
    if not latest:
        return 0, fallback_ms
    calls_tools: dict[str, str] = {}
    rows: list[Row] = []
    bodies: list[str] = []
    last_ms = fallback_ms
    for turn in latest.values():
        at_ms = epoch_ms(turn.at) if turn.at is not None else last_ms
        last_ms = max(last_ms, at_ms)
        tool = turn.tool
        if turn.kind == TOOL and not tool and turn.tool_use_id:
            tool = calls_tools.get(turn.tool_use_id) or _call_tool(db, file_id, turn.tool_use_id)
        if tool and turn.tool_use_id:
            calls_tools[turn.tool_use_id] = tool
        count += 1
        turn_id = (max(0, at_ms) << schema.SEQUENCE_BITS) | ((file_id * 4099 + count) & MASK)
        rows.append(
            (
                turn_id,
                file_id,
                turn.offset,
                turn.speaker,
                turn.kind,
                tool,
                turn.uuid,
                turn.tool_use_id,
            )
        )
        bodies.append(_body(turn, tool))
    rows = _unique_ids(db, rows)
    db.executemany("INSERT INTO turns VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
    db.executemany(
        "INSERT INTO turns_fts (rowid, body) VALUES (?, ?)",
        zip((row[0] for row in rows), bodies, strict=True),
    )
    return len(rows), last_ms


def _unique_ids(db: sqlite3.Connection, rows: list[Row]) -> list[Row]:
    """The rows, each with an id no other turn has (two turns of one millisecond whose
    sequence numbers met are rare: looked up only when ids in the batch meet, or the
    batch's range already holds rows)."""
    ids = [row[0] for row in rows]
    low, high = min(ids), max(ids)
    taken = {
        int(found[0])
        for found in db.execute("SELECT id FROM turns WHERE id BETWEEN ? AND ?", (low, high))
    }
    if not taken and len(set(ids)) == len(ids):
        return rows
    fixed: list[Row] = []
    for row in rows:
        wanted = row[0]
        while wanted in taken:
            wanted += 1
        taken.add(wanted)
        fixed.append((wanted, *row[1:]))
    return fixed


def _call_tool(db: sqlite3.Connection, file_id: int, call: str) -> str:
    row = db.execute(
        "SELECT tool FROM turns WHERE file = ? AND call = ? AND tool != '' LIMIT 1",
        (file_id, call),
    ).fetchone()
    return str(row[0]) if row else ""


def _body(turn: Turn, tool: str) -> str:
    """What is searched in a turn: its text; for a tool call also its input's values and
    its result."""
    if turn.kind != TOOL:
        return clean_text(turn.text[:BODY_LIMIT])
    parts = [tool, turn.subject] if tool else [turn.subject]
    if turn.tool_input:
        parts.extend(_values(turn.tool_input, turn.subject))
    parts.append(turn.result)
    return clean_text("\n".join(p for p in parts if p)[:BODY_LIMIT])


def _values(value: object, skip: str) -> Iterator[str]:
    if isinstance(value, str):
        if value and value != skip:
            yield value[:PART_LIMIT]
    elif isinstance(value, dict):
        for inner in value.values():
            yield from _values(inner, skip)
    elif isinstance(value, list):
        for inner in value[:100]:
            yield from _values(inner, skip)


def drop_file_rows(db: sqlite3.Connection, file_id: int) -> None:
    db.execute(
        "DELETE FROM turns_fts WHERE rowid IN (SELECT id FROM turns WHERE file = ?)", (file_id,)
    )
    db.execute("DELETE FROM turns WHERE file = ?", (file_id,))
    db.execute(
        "UPDATE files SET offset = 0, tail = '', turns = 0, skipped = 0, last_ms = 0 WHERE id = ?",
        (file_id,),
    )


def _tail(path: str, offset: int) -> str:
    """The bytes just before ``offset`` (hex): a later feed checks they are the same."""
    if offset <= 0:
        return ""
    try:
        with open(path, "rb") as stream:
            stream.seek(max(0, offset - TAIL))
            return stream.read(min(TAIL, offset)).hex()
    except OSError:
        return ""


def _is_subagent(path: str) -> bool:
    return os.path.basename(os.path.dirname(path)) == "subagents"


@contextlib.contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE``: the write lock taken before anything is read."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
