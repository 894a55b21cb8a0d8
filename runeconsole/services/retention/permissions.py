"""Permission requests: decided ones leave the live directory for the archive, with their
decision, their lock file and any wait marker left behind; an open request never does.

A request's age is in its id (``perm-{UTC time}-{pid}``), and a decided one is known by
its ``.decision`` beside it, so the directory is listed once and only the requests that
leave are read. Requests whose hook is gone are first recorded as decided by nobody (as
the console's rescan does), so a stale "open" request does not stay live for ever.
"""

from __future__ import annotations

import contextlib
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from runeconsole.core.files import read_bytes
from runeconsole.core.locks import remove_lock
from runeconsole.core.timeutil import iso_z
from runeconsole.services.claude.permissions import files
from runeconsole.services.claude.permissions.service import PermissionRequest, Permissions
from runeconsole.services.retention.archive import Archive, month_of, unique
from runeconsole.services.retention.pruner import Job, Pruner, Record
from runeconsole.services.retention.report import KindReport

KIND = "permissions"
RAW_LIMIT = 64 * 1024  # an unreadable request's bytes kept in the archive, at most


def asked_at(request_id: str) -> datetime | None:
    """The moment in a request's id (``perm-20260301T120000123456-4242``)."""
    stamp = request_id[len(files.PREFIX) :].partition("-")[0]
    if len(stamp) != 21 or stamp[8] != "T" or not (stamp[:8] + stamp[9:]).isdigit():
        return None
    try:  # by hand: strptime costs more than the rest of a prune's look at a request
        return datetime(
            int(stamp[:4]), int(stamp[4:6]), int(stamp[6:8]), int(stamp[9:11]),
            int(stamp[11:13]), int(stamp[13:15]), int(stamp[15:]), tzinfo=UTC,
        )  # fmt: skip
    except ValueError:
        return None


class PermissionPruner(Pruner[str]):
    kind = KIND

    def __init__(self, job: Job) -> None:
        super().__init__(job)
        self.permissions = Permissions(job.project)
        self.paths = job.project.paths
        self.directory = self.permissions.directory
        self.directory_name = os.fspath(self.paths.inside(self.directory))
        self.waits_name = os.fspath(self.paths.inside(files.waits_dir(self.paths)))
        self.locks_name = os.fspath(self.paths.inside(self.paths.locks))
        self.markers: dict[str, list[str]] = {}
        self._find_markers()

    def closed(self, report: KindReport) -> list[tuple[datetime, str]]:
        try:
            names = set(os.listdir(self.directory))
        except OSError:
            return []
        closed: list[tuple[datetime, str]] = []
        for name in names:
            request_id = name[: -len(files.REQUEST)]
            if not name.endswith(files.REQUEST) or not files.valid_id(request_id):
                continue
            when = asked_at(request_id) or self._mtime(self.directory / name)
            if request_id + files.DECISION in names or self._closed(request_id):
                closed.append((when, request_id))
            else:
                report.pending += 1
        return closed

    def _find_markers(self) -> None:
        """The wait markers (``{agent}.{request id}``) by request, listed once."""
        try:
            names = os.listdir(files.waits_dir(self.paths))
        except OSError:
            return
        for name in names:
            request_id = name.rpartition(".")[2]
            self.markers.setdefault(request_id, []).append(name)

    def prepare(self, report: KindReport) -> None:
        try:
            self.permissions.expire_orphans([r for r in self.permissions.shown() if r.open])
        except Exception as exc:  # a busy lock: the next prune tries again
            report.notes.append(f"requests of stopped hooks not closed: {exc}")

    def _closed(self, request_id: str) -> bool:
        """An undecided request nobody waits for (no console was open: Claude Code asked),
        or one that cannot be read: not open, so it may leave."""
        return not PermissionRequest.read(files.request_path(self.paths, request_id)).open

    @staticmethod
    def _mtime(path: Path) -> datetime:
        try:
            return datetime.fromtimestamp(path.lstat().st_mtime, UTC)
        except OSError:
            return datetime.now(UTC)

    def record(self, request_id: str) -> Record:
        path = files.request_path(self.paths, request_id)
        request = PermissionRequest.read(path)
        when = asked_at(request_id) or request.asked or self._mtime(path)
        record: dict[str, Any] = {
            "id": request_id,
            "at": iso_z(when),
            "request": request.fields,
            "decision": request.decision,
        }
        if request.error or request.decision_error:
            record["error"] = request.error or request.decision_error
            with contextlib.suppress(Exception):
                raw = read_bytes(path, limit=RAW_LIMIT + 1, follow_symlinks=False)[:RAW_LIMIT]
                record["raw"] = raw.decode("utf-8", "replace")
        return request_id, month_of(when), record

    def remove(self, request_ids: list[str]) -> None:
        for request_id in request_ids:
            if files.valid_id(request_id):
                self._remove(request_id)

    def _remove(self, request_id: str) -> None:
        """The request's files gone (each may be gone already: a prune finished late).
        Paths as strings, from directories checked once: this runs 100,000 times."""
        base = os.path.join(self.directory_name, request_id)
        for gone in (base + files.REQUEST, base + files.DECISION):  # the request first
            with contextlib.suppress(FileNotFoundError):
                os.unlink(gone)
        for marker in self.markers.get(request_id, []):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(self.waits_name, marker))
        remove_lock(os.path.join(self.locks_name, f"{files.lock_name(request_id)}.lock"))


def from_record(record: dict[str, Any], where: Path) -> PermissionRequest:
    """An archived request as the CLI lists it (``where``: its archive file)."""
    request = PermissionRequest(where)
    request.id = str(record.get("id"))
    request.fields = found if isinstance(found := record.get("request"), dict) else {}
    decision = record.get("decision")
    request.decision = decision if isinstance(decision, dict) else None
    error = record.get("error")
    if isinstance(error, str):
        request.error = error
    return request


def archived(archive: Archive, live_ids: set[str]) -> list[PermissionRequest]:
    """Every archived request not also live, oldest first."""
    files = {month: archive.month_path(KIND, month) for month in archive.months(KIND)}
    found = [
        from_record(record, files.get(str(record.get("at"))[:7], archive.kind_dir(KIND)))
        for record in unique(live_ids, archive.records(KIND))
    ]
    return sorted(found, key=PermissionRequest.sort_key)
