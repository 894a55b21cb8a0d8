"""One search over every conversation: an SQLite FTS5 index of the project's transcripts
(``.claude/state/conversations.sqlite``, see ``index_schema``), fed as they grow.

- ``feed(path)`` indexes what was appended to a transcript (and to its subagents' files)
  since the last time: the offset read to is kept per file, so only the new bytes are
  read. A file replaced (another inode), cut shorter, or whose bytes just before that
  offset changed is read again from its start (its old rows dropped first).
- ``feed_agent(key)``: the agent's transcript (its identity names it), fed. The console
  calls it when an agent's hook file or identity changes (a Stop, a PostToolUse).
- ``rescan()``: every transcript of the project (``locate.sessions_of``) whose size or
  mtime changed since it was read, fed: what hooks missed (sessions from before the hooks,
  copies from other machines). A transcript that is gone stays searchable; it is marked
  gone, and retention drops its rows after its policy's days (``drop_gone``).
- ``search(query, agent=, role=, since=, tool=, speaker=, limit=)``: hits newest first.

Every write is one ``BEGIN IMMEDIATE`` transaction that reads a file's stored offset,
reads the file on from there and stores the new offset: two processes feeding at once
(the console and the CLI) never index the same bytes twice. They are slow enough (a cold
rescan of a big project: many seconds) that a console calls them in a worker; searches
use a connection of their own and are never held up by a write (WAL).

A database that is not ours, or that SQLite finds corrupt, is never trusted: it is
removed and made afresh, with a message in ``messages`` (and in the report), and the
transcripts read again.
"""

from __future__ import annotations

import contextlib
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.services.conversations import index_schema as schema
from runeconsole.services.conversations.index_feed import (
    Counts,
    FileState,
    Parsed,
    apply,
    drop_file_rows,
    file_state,
    parse,
    transaction,
)
from runeconsole.services.conversations.locate import sessions_of
from runeconsole.services.conversations.owners import (
    Owner,
    Owners,
    identity_of,
    read_owners,
    transcript_of,
)
from runeconsole.services.conversations.query import (
    ELLIPSIS,
    MARK_CLOSE,
    MARK_OPEN,
    Hit,
    epoch_ms,
    from_epoch_ms,
    fts_expression,
)
from runeconsole.services.conversations.reading import is_subagent_file, subagent_paths
from runeconsole.services.conversations.turns import SPEAKERS
from runeconsole.services.project import Project

T = TypeVar("T")
PIPELINE_DEPTH = 8  # files read ahead of the one written
BATCH_BYTES = 16 * 1024 * 1024  # a rescan commits after about this much read
MAX_LIMIT = 1000
SNIPPET_TOKENS = 24
TIDY_SECONDS = 1.0  # of merging FTS5's segments after a rescan
MAX_SPANS = 64  # an agent's sessions searched one span at a time, up to this many
OWNERS_TTL = 5.0  # seconds the identities' map of transcripts is reused by ``feed``


@dataclass
class RescanReport:
    """What a rescan (or a feed) did."""

    files: int = 0  # transcripts looked at
    read: int = 0  # of which new or changed, read
    turns: int = 0  # turns indexed
    bytes: int = 0  # bytes read
    skipped: int = 0  # lines that could not be read (each skipped, counted)
    reindexed: int = 0  # files replaced or cut shorter: read again from their start
    gone: int = 0  # transcripts no longer there (still searchable)
    seconds: float = 0.0
    messages: list[str] = field(default_factory=list)

    def add(self, other: RescanReport) -> None:
        for name in ("files", "read", "turns", "bytes", "skipped", "reindexed", "gone"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.messages.extend(other.messages)

    def summary(self) -> str:
        text = (
            f"{self.files:,} transcripts, {self.read:,} read ({self.bytes / 1e6:,.1f} MB), "
            f"{self.turns:,} turns indexed in {self.seconds:.1f} s"
        )
        extra = [
            f"{self.reindexed:,} read again from the start" if self.reindexed else "",
            f"{self.skipped:,} unreadable lines skipped" if self.skipped else "",
            f"{self.gone:,} gone (still searchable)" if self.gone else "",
        ]
        return "; ".join([text, *[e for e in extra if e]])

    def to_json(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "read": self.read,
            "turns": self.turns,
            "bytes": self.bytes,
            "skipped": self.skipped,
            "reindexed": self.reindexed,
            "gone": self.gone,
            "seconds": round(self.seconds, 3),
            "messages": self.messages,
            "summary": self.summary(),
        }


@dataclass(frozen=True)
class IndexStats:
    files: int
    gone: int
    turns: int
    rescanned_at: str | None
    path: str

    def to_json(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "gone": self.gone,
            "turns": self.turns,
            "rescanned_at": self.rescanned_at,
            "path": self.path,
        }


class ConversationIndex:
    def __init__(self, project: Project, *, path: Path | None = None) -> None:
        self.project = project
        self.path = path or project.paths.state / schema.DB_NAME
        self.messages: list[str] = []  # what was rebuilt, and why (each report has its own)
        self._lock = threading.RLock()  # the writing connection
        self._read_lock = threading.Lock()
        self._writer: sqlite3.Connection | None = None
        self._reader: sqlite3.Connection | None = None
        self._ident: tuple[int, int] | None = None
        self._owners: Owners | None = None
        self._owners_at = 0.0

    # -- the database ---------------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        directory = self.project.paths.inside(self.path.parent)
        directory.mkdir(parents=True, exist_ok=True)
        try:
            db = schema.connect(self.path)
        except schema.Corrupt as exc:
            self._rebuilt(str(exc))
            db = schema.connect(self.path)
        info = os.stat(self.path)
        self._ident = (info.st_dev, info.st_ino)
        return db

    def _rebuilt(self, why: str) -> None:
        self._disconnect()  # a lock of ours may be held here already
        schema.remove(self.path)
        message = (
            f"{self.path}: not a usable conversation index ({why}): rebuilt empty; "
            "the transcripts are read again"
        )
        self.messages.append(message)

    def _replaced(self) -> bool:
        """The file was removed or replaced under us (another process rebuilt it)."""
        try:
            info = os.stat(self.path)
        except OSError:
            return True
        return (info.st_dev, info.st_ino) != self._ident

    def _write_db(self) -> sqlite3.Connection:
        if self._writer is not None and self._replaced():
            self._disconnect()
        if self._writer is None:
            self._writer = self._open()
        return self._writer

    def _read_db(self) -> sqlite3.Connection:
        if self._reader is not None and self._replaced():
            self._disconnect()
        if self._reader is None:
            with self._lock:
                self._write_db()  # made and checked (rebuilt if need be) once
                self._reader = schema.connect(self.path)
        return self._reader

    def close(self) -> None:
        """Its connections closed once no thread of this process uses them: a connection
        closed under another thread's statement crashes the process. (The locks in the
        order the readers take them: the reading one, then the writing one.)"""
        with self._read_lock, self._lock:
            self._disconnect()

    def _disconnect(self) -> None:
        for db in (self._writer, self._reader):
            if db is not None:
                with contextlib.suppress(sqlite3.Error):
                    db.close()
        self._writer = self._reader = None

    def _guarded(self, action: Callable[[], T]) -> T:
        """``action``, once more on a database made afresh if SQLite finds it corrupt."""
        try:
            return action()
        except sqlite3.Error as exc:
            if not schema.is_corruption(exc):
                raise _refused(self.path, exc) from None
            self._rebuilt(f"{type(exc).__name__}: {exc}")
        try:
            return action()
        except sqlite3.Error as exc:
            raise _refused(self.path, exc) from None

    # -- feeding --------------------------------------------------------------------------

    def feed(self, path: Path | str) -> int:
        """What was appended to the transcript at ``path`` (and its subagents' files)
        since the last feed, indexed; the number of turns indexed."""
        return self.feed_report([Path(path)]).turns

    def feed_report(self, paths: Iterable[Path], *, owner: Owner | None = None) -> RescanReport:
        started = time.monotonic()
        files = [f for p in paths for f in _with_subagents(Path(p))]
        told = len(self.messages)
        with self._lock:
            report = self._guarded(lambda: self._feed_all(files, owner))
        report.messages = self.messages[told:]
        report.files = len(files)
        report.seconds = time.monotonic() - started
        return report

    def feed_agent(self, key: str) -> int:
        """The agent's transcript (the one its identity names) fed; 0 when it has none."""
        fields = identity_of(self.project.paths, key)
        transcript = transcript_of(fields) if fields else None
        if fields is None or transcript is None:
            return 0
        role = fields.get("role")
        owner = Owner(key, role if isinstance(role, str) else "")
        return self.feed_report([Path(transcript)], owner=owner).turns

    def rescan(self, paths: Iterable[Path] | None = None) -> RescanReport:
        """Every transcript of the project (or ``paths``) whose size or mtime changed
        since it was read, fed; those gone marked so (they stay searchable)."""
        started = time.monotonic()
        if paths is None:
            paths = sessions_of(self.project)
        files = list(dict.fromkeys(f for p in paths for f in _with_subagents(Path(p))))
        self._owners = read_owners(self.project.paths)
        self._owners_at = time.monotonic()
        told = len(self.messages)
        with self._lock:
            report = self._guarded(lambda: self._rescan(files))
        report.messages = self.messages[told:]
        report.seconds = time.monotonic() - started
        return report

    def built(self) -> RescanReport | None:
        """A rescan when this index was never filled by one (a root searched the first
        time); ``None`` when it was (the console and the hooks keep it fed since)."""
        if self.rescanned_at() is not None:
            return None
        return self.rescan()

    def rescanned_at(self) -> str | None:
        """When a rescan last went over every transcript (``None``: never)."""

        def run() -> str | None:
            with self._read_lock:
                row = (
                    self._read_db()
                    .execute("SELECT value FROM meta WHERE name = 'rescanned_at'")
                    .fetchone()
                )
            return str(row[0]) if row else None

        return self._guarded(run)

    def rebuild(self) -> RescanReport:
        """Everything dropped and every transcript read again."""
        with self._lock:
            self._guarded(self._drop_all)
        return self.rescan()

    def _drop_all(self) -> None:
        db = self._write_db()
        with transaction(db):
            for table in ("files", "turns", "turns_fts"):
                db.execute(f"DELETE FROM {table}")
            db.execute("DELETE FROM meta WHERE name != 'schema'")

    def _rescan(self, files: list[str]) -> RescanReport:
        db = self._write_db()
        known: dict[str, tuple[int, int, bool]] = {}
        for row in db.execute("SELECT path, size, mtime_ns, gone_at FROM files"):
            known[str(row[0])] = (int(row[1]), int(row[2]), row[3] is not None)
        report = RescanReport()
        changed = []
        for path in files:
            report.files += 1
            try:
                info = os.stat(path)
            except OSError:
                continue  # marked gone below
            seen = known.get(path)
            if seen is None or seen[:2] != (info.st_size, info.st_mtime_ns) or seen[2]:
                changed.append(path)
        counts = Counts()
        self._feed_pipelined(db, changed, counts)
        report.add(_as_report(counts))
        report.gone += self._mark_gone(db, known)
        with transaction(db):
            db.execute(
                "INSERT OR REPLACE INTO meta VALUES ('rescanned_at', ?)",
                (self.project.clock.now().isoformat(),),
            )
        self._tidy(db, TIDY_SECONDS)
        return report

    def tidy(self, seconds: float = TIDY_SECONDS) -> bool:
        """FTS5's segments merged for at most ``seconds`` (a feed leaves that work: it
        keeps appends quick; a rescan does some, an idle console may ask for more); True
        when nothing is left to merge."""
        with self._lock:
            return self._guarded(lambda: self._tidy(self._write_db(), seconds))

    def _tidy(self, db: sqlite3.Connection, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            before = db.total_changes
            with transaction(db):
                db.execute("INSERT INTO turns_fts (turns_fts, rank) VALUES ('merge', ?)", (500,))
            if db.total_changes - before < 2:  # FTS5's sign that nothing was left to merge
                return True
        return False

    def _feed_pipelined(self, db: sqlite3.Connection, paths: list[str], counts: Counts) -> None:
        """The files read in a thread of their own while the last ones are written here
        (SQLite lets go of the interpreter while it writes: two cores work), committed
        about every BATCH_BYTES. A file fed by another process meanwhile is read again
        under the write lock from where that one left it."""
        states = {}
        for row in db.execute(
            "SELECT path, id, dev, ino, offset, tail, turns, last_ms, agent, role FROM files"
        ):
            states[str(row[0])] = FileState(*row[1:])
        ready: queue.Queue[Parsed | str | None] = queue.Queue(maxsize=PIPELINE_DEPTH)
        stop = threading.Event()
        failed: list[BaseException] = []

        def read_all() -> None:
            try:
                for path in paths:
                    if stop.is_set():
                        return
                    parsed = parse(path, states.get(path))
                    ready.put(parsed if parsed is not None else path)
            except BaseException as exc:  # raised where the rescan was asked for
                failed.append(exc)
            finally:
                ready.put(None)

        reader = threading.Thread(target=read_all, name="conversation-index-read", daemon=True)
        reader.start()
        try:
            while True:
                size = 0
                with transaction(db):
                    while size < BATCH_BYTES:
                        item = ready.get()
                        if item is None:
                            if failed:
                                raise failed[0]
                            return
                        size += self._apply_one(db, item, counts)
        finally:
            stop.set()
            while reader.is_alive():  # let a reader blocked on a full queue finish
                with contextlib.suppress(queue.Empty):
                    ready.get(timeout=0.05)
            reader.join()

    def _apply_one(self, db: sqlite3.Connection, item: Parsed | str, counts: Counts) -> int:
        path = item if isinstance(item, str) else item.path
        stored = file_state(db, path)
        parsed = item if isinstance(item, Parsed) and item.state == stored else None
        if parsed is None:
            parsed = parse(path, stored)
        if parsed is None:
            self._gone_now(db, path)
            return 0
        apply(db, parsed, self._owner(stored, None, path), counts)
        return parsed.read_to - parsed.start

    def _mark_gone(self, db: sqlite3.Connection, known: dict[str, tuple[int, int, bool]]) -> int:
        gone = [path for path, (_, _, was_gone) in known.items() if not was_gone]
        gone = [path for path in gone if not os.path.exists(path)]
        if gone:
            now = self.project.clock.now().timestamp()
            with transaction(db):
                db.executemany(
                    "UPDATE files SET gone_at = ? WHERE path = ? AND gone_at IS NULL",
                    [(now, path) for path in gone],
                )
        return len(gone)

    def _gone_now(self, db: sqlite3.Connection, path: str) -> None:
        db.execute(
            "UPDATE files SET gone_at = ? WHERE path = ? AND gone_at IS NULL",
            (self.project.clock.now().timestamp(), path),
        )

    def _feed_all(self, files: list[str], owner: Owner | None) -> RescanReport:
        db = self._write_db()
        counts = Counts()
        with transaction(db):
            for path in files:
                stored = file_state(db, path)
                parsed = parse(path, stored)
                if parsed is None:
                    self._gone_now(db, path)
                else:
                    apply(db, parsed, self._owner(stored, owner, path), counts)
        return _as_report(counts)

    def _owner(self, stored: FileState | None, given: Owner | None, path: str) -> Owner | None:
        if given is not None:
            return given
        if stored is not None and stored.agent:
            return Owner(stored.agent, stored.role)
        return self._owner_of(path)

    def _owner_of(self, path: str) -> Owner | None:
        if self._owners is None or time.monotonic() - self._owners_at > OWNERS_TTL:
            self._owners = read_owners(self.project.paths)
            self._owners_at = time.monotonic()
        return self._owners.of(path)

    # -- searching ------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        agent: str | None = None,
        role: str | None = None,
        since: datetime | None = None,
        tool: str | None = None,
        speaker: str | None = None,
        limit: int = 20,
    ) -> list[Hit]:
        """The turns that hold the query's words, newest first (see ``query`` for the
        language); each filter narrows them."""
        expression = fts_expression(query)
        if speaker is not None and speaker not in SPEAKERS:
            raise InvalidInput(f"speaker {speaker!r}: one of {', '.join(SPEAKERS)}")
        if not 1 <= limit <= MAX_LIMIT:
            raise InvalidInput(f"limit {limit}: from 1 to {MAX_LIMIT}")
        where = ["turns_fts MATCH ?"]
        args: list[Any] = [MARK_OPEN, MARK_CLOSE, ELLIPSIS, SNIPPET_TOKENS, expression]
        if since is not None:
            where.append("turns_fts.rowid >= ?")
            args.append(max(0, epoch_ms(since)) << schema.SEQUENCE_BITS)
        for column, value in (("f.agent", agent), ("f.role", role), ("t.speaker", speaker)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        if tool is not None:
            where.append("t.tool = ? COLLATE NOCASE")
            args.append(tool)
        sql = (
            "SELECT turns_fts.rowid, t.offset, t.speaker, t.kind, t.tool, t.uuid, f.path, "
            "f.session_id, f.agent, f.role, f.depth, "
            "snippet(turns_fts, 0, ?, ?, ?, ?) "
            "FROM turns_fts JOIN turns t ON t.id = turns_fts.rowid JOIN files f ON f.id = t.file "
            f"WHERE {' AND '.join(where)} "
        )
        order = "ORDER BY turns_fts.rowid DESC LIMIT ?"

        def run() -> list[Any]:
            with self._read_lock:
                db = self._read_db()
                spans = _spans_of(db, agent) if agent is not None else None
                if spans is None:
                    return db.execute(sql + order, [*args, limit]).fetchall()
                # One agent's turns lie in a few spans of ids (its sessions' times): each
                # searched newest first, so a common word is not walked over every agent.
                found: list[Any] = []
                for low, high in spans:
                    ranged = sql + "AND turns_fts.rowid BETWEEN ? AND ? " + order
                    more = [*args, low, high, limit - len(found)]
                    found += db.execute(ranged, more).fetchall()
                    if len(found) >= limit:
                        break
                return found

        rows = self._guarded(run)
        return [
            Hit(
                key=row[8],
                role=row[9],
                session_id=row[7],
                path=row[6],
                offset=row[1],
                uuid=row[5],
                at=from_epoch_ms(row[0] >> schema.SEQUENCE_BITS),
                speaker=row[2],
                kind=row[3],
                tool=row[4],
                snippet=row[11],
                depth=row[10],
            )
            for row in rows
        ]

    def stats(self) -> IndexStats:
        def run() -> IndexStats:
            with self._read_lock:
                db = self._read_db()
                files, gone = db.execute("SELECT count(*), count(gone_at) FROM files").fetchone()
                turns = db.execute("SELECT count(*) FROM turns").fetchone()[0]
                row = db.execute("SELECT value FROM meta WHERE name = 'rescanned_at'").fetchone()
            return IndexStats(files, gone, turns, row[0] if row else None, str(self.path))

        return self._guarded(run)

    # -- retention ------------------------------------------------------------------------

    def check_gone(self) -> int:
        """Every indexed transcript no longer there marked gone (with the moment); how many
        were found gone now. Their rows stay searchable until ``drop_gone``."""

        def run() -> int:
            db = self._write_db()
            known = {
                str(row[0]): (0, 0, row[1] is not None)
                for row in db.execute("SELECT path, gone_at FROM files")
            }
            return self._mark_gone(db, known)

        with self._lock:
            return self._guarded(run)

    def gone_sessions(self) -> list[tuple[str, datetime]]:
        """The transcripts found gone, with when (``drop_gone`` drops their rows)."""

        def run() -> list[tuple[str, datetime]]:
            with self._read_lock:
                rows = (
                    self._read_db()
                    .execute("SELECT path, gone_at FROM files WHERE gone_at IS NOT NULL")
                    .fetchall()
                )
            return [(str(path), datetime.fromtimestamp(at, UTC)) for path, at in rows]

        return self._guarded(run)

    def drop_gone(self, paths: Iterable[str]) -> int:
        """The rows of these gone transcripts dropped (those back since are kept); how many
        transcripts' rows went."""
        wanted = list(paths)

        def run() -> int:
            db = self._write_db()
            dropped = 0
            with transaction(db):
                for path in wanted:
                    row = db.execute(
                        "SELECT id FROM files WHERE path = ? AND gone_at IS NOT NULL", (path,)
                    ).fetchone()
                    if row is None or os.path.exists(path):
                        continue
                    drop_file_rows(db, row[0])
                    db.execute("DELETE FROM files WHERE id = ?", (row[0],))
                    dropped += 1
            return dropped

        with self._lock:
            return self._guarded(run)


def _with_subagents(path: Path) -> list[str]:
    """The transcript and, for a session's own, its subagents' files."""

    if is_subagent_file(path):
        return [str(path)]
    return [str(path), *(str(p) for p in subagent_paths(path))]


def _refused(path: Path, exc: sqlite3.Error) -> RuneError:
    text = str(exc)
    if "locked" in text or "busy" in text:
        return RuneError(f"{path}: the conversation index is busy ({text}): try again")
    if "readonly" in text or "read-only" in text:
        return RuneError(f"{path}: the conversation index cannot be written ({text})")
    return RuneError(f"{path}: the conversation index failed: {text}")


def _spans_of(db: sqlite3.Connection, agent: str) -> list[tuple[int, int]] | None:
    """The spans of turn ids the agent's files hold, merged, newest first; ``None`` when
    they are too many to search one by one (then the one query filters)."""
    rows = db.execute(
        "SELECT min(t.id), max(t.id) FROM files f JOIN turns t ON t.file = f.id "
        "WHERE f.agent = ? GROUP BY f.id",
        (agent,),
    ).fetchall()
    spans: list[tuple[int, int]] = []
    for low, high in sorted(rows):
        if spans and low <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], high))
        else:
            spans.append((low, high))
    return None if len(spans) > MAX_SPANS else spans[::-1]


def _as_report(counts: Counts) -> RescanReport:
    return RescanReport(
        read=counts.read,
        bytes=counts.bytes,
        turns=counts.turns,
        skipped=counts.skipped,
        reindexed=counts.reindexed,
    )
