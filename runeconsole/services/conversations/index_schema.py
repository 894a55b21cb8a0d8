"""The conversation index's database: ``.claude/state/conversations.sqlite``, opened in WAL
mode with a busy timeout (the console and a CLI write it at once), and never trusted when
it is not ours: garbage bytes, another schema, an older version of ours, or any
``sqlite3.DatabaseError`` while it is opened is a database rebuilt empty, with a message
saying so (the transcripts are the truth; a rescan fills it again).

Tables:

- ``files``: one row a transcript (a session's, or a subagent's beside it): whose it is
  (session, agent, role), how far it was read (``offset``, and a fingerprint of the bytes
  just before it), the inode and size and mtime seen then (a file replaced or cut shorter
  is read again from its start), the lines skipped, when it was found gone.
- ``turns``: one row a turn indexed: its file, where its record starts (``offset``), who
  spoke, what kind, which tool (and the call's id), its uuid. Its id is its moment:
  ``at_ms << 20`` plus a number that tells turns of one millisecond apart, so
  ``ORDER BY rowid DESC`` is newest first and ``--since`` is a rowid range, both
  answered by FTS5 itself.
- ``turns_fts``: FTS5 over each turn's text (rowid = ``turns.id``).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from pathlib import Path

from runeconsole.core.errors import RuneError

SCHEMA_VERSION = "1"
DB_NAME = "conversations.sqlite"
BUSY_TIMEOUT_MS = 30_000
LOCKED_RETRY_SECONDS = 0.02  # between tries to open an index found locked as it was set up
SEQUENCE_BITS = 20  # a turn's id: at_ms << SEQUENCE_BITS | a sequence number

SCHEMA = """
CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    session_id TEXT NOT NULL DEFAULT '',
    depth INTEGER NOT NULL DEFAULT 0,
    agent TEXT NOT NULL DEFAULT '',
    role TEXT NOT NULL DEFAULT '',
    dev INTEGER NOT NULL DEFAULT 0,
    ino INTEGER NOT NULL DEFAULT 0,
    size INTEGER NOT NULL DEFAULT 0,
    mtime_ns INTEGER NOT NULL DEFAULT 0,
    offset INTEGER NOT NULL DEFAULT 0,
    tail TEXT NOT NULL DEFAULT '',
    turns INTEGER NOT NULL DEFAULT 0,
    skipped INTEGER NOT NULL DEFAULT 0,
    last_ms INTEGER NOT NULL DEFAULT 0,
    gone_at REAL
);
CREATE INDEX files_session ON files (session_id);
CREATE INDEX files_agent ON files (agent);
CREATE TABLE turns (
    id INTEGER PRIMARY KEY,
    file INTEGER NOT NULL,
    offset INTEGER NOT NULL,
    speaker TEXT NOT NULL,
    kind TEXT NOT NULL,
    tool TEXT NOT NULL,
    uuid TEXT NOT NULL,
    call TEXT NOT NULL
);
CREATE INDEX turns_file ON turns (file, call);
CREATE VIRTUAL TABLE turns_fts USING fts5(body, tokenize = 'unicode61 remove_diacritics 2');
"""
TABLES = {"meta", "files", "turns", "turns_fts"}


class Corrupt(Exception):
    """The database is not one this version can trust (why in the message)."""


def connect(path: Path) -> sqlite3.Connection:
    """A connection to the database at ``path`` (created when absent), checked: raises
    ``Corrupt`` when what is there is not our schema, or not a database at all, and
    ``RuneError`` when it cannot be opened (a read-only root, a directory in its place).

    Two processes opening a new index at once can find it locked where SQLite does not
    wait (one turning it to WAL while the other makes its tables): the opening is tried
    again, for as long as a busy write is waited for."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            return _connect(path)
        except _Locked as exc:
            if time.monotonic() >= deadline:
                raise RuneError(f"{path}: cannot open the conversation index: {exc}") from None
            time.sleep(LOCKED_RETRY_SECONDS)


class _Locked(Exception):
    """The database was locked as it was set up: try again."""


def _connect(path: Path) -> sqlite3.Connection:
    fresh = not path.exists() or path.stat().st_size == 0
    try:
        db = sqlite3.connect(
            os.fspath(path),
            timeout=BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
            check_same_thread=False,  # each connection is used under its owner's lock
        )
    except sqlite3.Error as exc:
        raise RuneError(f"{path}: cannot open the conversation index: {exc}") from None
    try:
        db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        mode = db.execute("PRAGMA journal_mode = WAL").fetchone()
        if not mode or str(mode[0]).lower() != "wal":
            raise Corrupt(f"journal mode {mode and mode[0]!r}, not WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute("PRAGMA cache_size = -32000")  # 32 MB
        if fresh or not _tables(db):
            _create(db)
        _check(db)
    except Corrupt:
        db.close()
        raise
    except sqlite3.Error as exc:
        db.close()
        if is_corruption(exc):
            raise Corrupt(f"{type(exc).__name__}: {exc}") from None
        if "locked" in str(exc).lower():
            raise _Locked(str(exc)) from None
        raise RuneError(f"{path}: cannot open the conversation index: {exc}") from None
    return db


def is_corruption(exc: sqlite3.Error) -> bool:
    """Whether the error says the database is not what it should be (rebuild it), rather
    than that it cannot be reached now (locked, read-only, no space: say so)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    if isinstance(exc, sqlite3.OperationalError):
        text = str(exc).lower()
        return any(word in text for word in ("no such table", "no such column", "malformed"))
    return not isinstance(exc, sqlite3.IntegrityError)


def _tables(db: sqlite3.Connection) -> set[str]:
    rows = db.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
    return {str(row[0]) for row in rows}


def _create(db: sqlite3.Connection) -> None:
    db.execute("BEGIN IMMEDIATE")
    try:
        if not _tables(db):  # another process may have made it meanwhile
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
            # No merging of FTS5 segments while a feed commits (an append stays quick);
            # ConversationIndex.tidy merges them after a rescan, and at 64 segments on one
            # level FTS5 merges them itself.
            db.execute("INSERT INTO turns_fts (turns_fts, rank) VALUES ('automerge', 0)")
            db.execute("INSERT INTO turns_fts (turns_fts, rank) VALUES ('crisismerge', 64)")
        db.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")
        raise


def _check(db: sqlite3.Connection) -> None:
    tables = _tables(db)
    if not tables >= TABLES:
        raise Corrupt(f"not the conversation index (tables: {', '.join(sorted(tables)) or 'none'})")
    row = db.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
    if row is None or row[0] != SCHEMA_VERSION:
        raise Corrupt(f"schema {row and row[0]!r}, this version reads {SCHEMA_VERSION!r}")
    # Touch every table once: a page of garbage in any of them says so now.
    for table in ("files", "turns", "turns_fts"):
        db.execute(f"SELECT rowid FROM {table} ORDER BY rowid DESC LIMIT 1").fetchall()


def remove(path: Path) -> None:
    """The database and its WAL and shared-memory files gone (a rebuild starts afresh)."""
    for name in (path.name, path.name + "-wal", path.name + "-shm", path.name + "-journal"):
        with contextlib.suppress(FileNotFoundError):
            (path.parent / name).unlink()
