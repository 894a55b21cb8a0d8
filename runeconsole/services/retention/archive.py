"""The monthly archive: old records of each kind, compacted, still readable by the CLI.

``.claude/state/archive/{kind}/{YYYY-MM}.jsonl.gz``: one JSON object a line, gzip. Records
are added a batch at a time as one more gzip member at the end of the month's file; the
file is replaced whole (the old bytes copied, the member appended, fsynced, renamed), so a
reader sees it before or after a batch, never half of one, and a full disk leaves the old
file as it was. Nothing is decompressed to add a batch.

Moving records out of the live directories takes two steps that cannot be one: the batch
is archived, then the originals are removed. Before the batch goes in, ``move`` writes a
journal (``archive/.{kind}.journal.json``: by month file, its size before and the ids
going into it) and removes it once the originals are gone. A prune killed in between
finishes next time (``recover``): the originals of every month file whose size moved
are removed, the others stay live, and nothing is archived twice. Readers drop a record
seen twice all the same (``unique``).
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import zlib
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from runeconsole.core.crash_points import pause_point
from runeconsole.core.errors import RuneError, UnreadableFile
from runeconsole.core.files import atomic_write_bytes, atomic_write_json, read_bytes
from runeconsole.core.files import read_json_object as read_object
from runeconsole.core.paths import ProjectPaths

SUFFIX = ".jsonl.gz"
MAX_ARCHIVE = 4 * 1024 * 1024 * 1024  # one month of one kind, compressed
LEVEL = 6


def month_of(moment: datetime) -> str:
    return f"{moment.year:04d}-{moment.month:02d}"


def _months_before(month: str, count: int) -> str:
    """The month ``count`` months before ``month`` (``YYYY-MM``)."""
    year, number = int(month[:4]), int(month[5:7])
    total = year * 12 + (number - 1) - count
    return f"{total // 12:04d}-{total % 12 + 1:02d}"


def _valid_month(name: str) -> bool:
    return len(name) == 7 and name[4] == "-" and name[:4].isdigit() and name[5:].isdigit()


class Archive:
    def __init__(self, paths: ProjectPaths) -> None:
        self.paths = paths
        self.errors: list[str] = []  # what could not be read, said once per file

    @property
    def directory(self) -> Path:
        return self.paths.state / "archive"

    def kind_dir(self, kind: str) -> Path:
        return self.directory / kind

    def month_path(self, kind: str, month: str) -> Path:
        return self.kind_dir(kind) / f"{month}{SUFFIX}"

    def journal_path(self, kind: str) -> Path:
        return self.directory / f".{kind}.journal.json"

    # -- reading ---------------------------------------------------------------------------

    def months(self, kind: str) -> list[str]:
        try:
            names = os.listdir(self.kind_dir(kind))
        except OSError:
            return []
        months = [n[: -len(SUFFIX)] for n in names if n.endswith(SUFFIX)]
        return sorted(m for m in months if _valid_month(m))

    def records(self, kind: str) -> Iterator[dict[str, Any]]:
        """Every record of ``kind``, oldest month first. A file that cannot be read is
        said in ``errors`` (with how far it could be read) and never raised."""
        for month in self.months(kind):
            yield from self._read_month(self.month_path(kind, month))

    def _read_month(self, path: Path) -> Iterator[dict[str, Any]]:
        count = 0
        try:
            with open(path, "rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as lines:
                for line in lines:
                    try:
                        record = json.loads(line)
                    except ValueError:
                        record = None
                    if isinstance(record, dict):
                        count += 1
                        yield record
        except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
            self.errors.append(f"{path}: unreadable after {count} records: {exc}")

    # -- writing ---------------------------------------------------------------------------

    def add(self, kind: str, records: Iterable[tuple[str, dict[str, Any]]]) -> dict[str, int]:
        """Each ``(month, record)`` appended to its month's file; returns each file's size
        once its batch is in."""
        by_month: dict[str, list[bytes]] = {}
        for month, record in records:
            line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
            by_month.setdefault(month, []).append(line.encode("utf-8") + b"\n")
        sizes = {}
        for month, lines in sorted(by_month.items()):
            path = self.paths.inside(self.month_path(kind, month))
            member = gzip.compress(b"".join(lines), compresslevel=LEVEL, mtime=0)
            old = self._bytes(path)
            atomic_write_bytes(path, old + member, 0o600)
            sizes[os.fspath(path)] = len(old) + len(member)
        return sizes

    @staticmethod
    def _bytes(path: Path) -> bytes:
        try:
            return read_bytes(path, limit=MAX_ARCHIVE, follow_symlinks=False)
        except UnreadableFile:
            if os.path.lexists(path):
                raise RuneError(
                    f"{path}: the archive cannot be read to add to it; move it aside"
                ) from None
            return b""

    def move(
        self,
        kind: str,
        records: list[tuple[str, str, dict[str, Any]]],
        remove: Callable[[list[str]], None],
    ) -> int:
        """Archive ``(id, month, record)`` each, then ``remove`` the originals (by id)."""
        if not records:
            return 0
        by_month: dict[str, dict[str, Any]] = {}
        for record_id, month, _ in records:
            path = os.fspath(self.month_path(kind, month))
            entry = by_month.setdefault(path, {"before": _size(path), "ids": []})
            entry["ids"].append(record_id)
        journal = self.paths.inside(self.journal_path(kind))
        atomic_write_json(journal, {"kind": kind, "months": by_month}, 0o600)
        self.add(kind, ((month, record) for _, month, record in records))
        pause_point("retention-archived")  # a kill here: recover() finishes the removal
        remove([record_id for record_id, _, _ in records])
        journal.unlink()
        return len(records)

    def recover(self, kind: str, remove: Callable[[list[str]], None]) -> int:
        """A move that stopped half-way: the originals of each batch that went into its
        month's file are removed (the file's size changed since the journal); returns
        how many."""
        journal = self.journal_path(kind)
        try:
            body = read_object(journal)
        except UnreadableFile:
            if os.path.lexists(journal):
                journal.unlink()  # half-written before any batch: nothing was archived
            return 0
        months = found if isinstance(found := body.get("months"), dict) else {}
        went_in: list[str] = []
        for path, entry in months.items():
            if not isinstance(entry, dict) or _size(path) == entry.get("before"):
                continue  # this month's batch never went in: its originals stay
            went_in += [i for i in entry.get("ids") or [] if isinstance(i, str)]
        if went_in:
            remove(went_in)
        journal.unlink()
        return len(went_in)

    def old_months(self, kind: str, keep_months: int, now: datetime) -> list[str]:
        """Months older than ``keep_months`` months (0: every month is kept)."""
        if keep_months <= 0:
            return []
        oldest = _months_before(month_of(now), keep_months)
        return [month for month in self.months(kind) if month < oldest]

    def drop_month(self, kind: str, month: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.month_path(kind, month).unlink()


def _size(path: str) -> int:
    try:
        return os.lstat(path).st_size
    except OSError:
        return -1


def unique(live_ids: set[str], records: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Archived records not also live (a move cut short) and each id once."""
    seen = set(live_ids)
    for record in records:
        record_id = record.get("id")
        if not isinstance(record_id, str) or record_id in seen:
            continue
        seen.add(record_id)
        yield record
