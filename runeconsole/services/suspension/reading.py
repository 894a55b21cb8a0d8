"""Judging a context file: read it without following links or blocking on a FIFO, parse
its frontmatter, and give it a verdict (``ok``, ``stale``, ``exhausted``, ``corrupt`` or
``unreadable``, with the reason). Never raises for what a file holds."""

from __future__ import annotations

import errno
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from runeconsole.adapters.clock import Clock
from runeconsole.core import frontmatter
from runeconsole.core.errors import UnreadableFile
from runeconsole.core.timeutil import parse_iso
from runeconsole.services.suspension.context_file import hash_for, meta_problem, read_regular
from runeconsole.services.suspension.git_view import GitView
from runeconsole.services.suspension.records import (
    CORRUPT,
    EXHAUSTED,
    OK,
    STALE,
    ContextRecord,
)
from runeconsole.services.suspension.settings import SuspensionSettings

HEADER_CACHE_SIZE = 20_000


class ContextReader:
    """Parsed headers are kept by their text, so a rescan parses only what changed."""

    def __init__(self, root: Path, clock: Clock, settings: SuspensionSettings) -> None:
        self.root = root
        self.clock = clock
        self.settings = settings
        self._headers: dict[str, dict[str, Any]] = {}

    def key_for(self, path: Path) -> str:
        """The path relative to the root (string arithmetic: this runs per file per scan)."""
        text, root = str(path), str(self.root)
        return text[len(root) + 1 :] if text.startswith(root + os.sep) else text

    def read(self, path: Path, view: GitView | None = None) -> ContextRecord:
        try:
            data = read_regular(path)
        except OSError as exc:
            if isinstance(exc, FileNotFoundError):
                reason = "file is missing"
            elif exc.errno == errno.ELOOP:  # O_NOFOLLOW met a symlink
                reason = "a symbolic link (not followed), not a file"
            else:
                reason = exc.strerror or str(exc)
            return ContextRecord(self.key_for(path), path, reason=reason)
        except UnreadableFile as exc:
            return ContextRecord(self.key_for(path), path, reason=exc.reason)
        return self.parse(path, data, view)

    def parse(self, path: Path, data: bytes, view: GitView | None = None) -> ContextRecord:
        """Judge a context file's bytes (no file access beyond ``view``'s git state)."""
        record = ContextRecord(self.key_for(path), path)
        try:
            parts = frontmatter.split(data.decode("utf-8"))
            meta = self._load_header(parts.header)
        except UnicodeDecodeError:
            record.reason = "not UTF-8 text"
            return record
        except frontmatter.FrontmatterError as exc:
            record.reason = exc.reason
            return record
        record.header, record.body = parts.header, parts.body
        problem = meta_problem(meta)
        if problem:
            record.reason = problem
            return record
        record.meta = meta
        moment = meta.get("timestamp")
        moment = moment if isinstance(moment, datetime) else parse_iso(moment)
        if isinstance(moment, datetime):
            record.written_at = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
            record.age_seconds = record.age_at(self.clock.now())
        record.verdict = self._verdict(record, parts, view)
        return record

    def _load_header(self, header: str) -> dict[str, Any]:
        """Parsed headers by their text: a rescan parses only what changed (read-only use)."""
        meta = self._headers.get(header)
        if meta is None:
            meta = frontmatter.load_mapping(header)
            if len(self._headers) >= HEADER_CACHE_SIZE:
                self._headers.clear()
            self._headers[header] = meta
        return meta

    def _verdict(
        self, record: ContextRecord, parts: frontmatter.Split, view: GitView | None
    ) -> str:
        if self.settings.integrity_check:
            stored = record.meta.get("content_sha256")
            record.expected_sha = stored if isinstance(stored, str) else None
            record.actual_sha = hash_for(parts)
            if record.expected_sha != record.actual_sha:
                return CORRUPT
        if record.resume_count >= self.settings.max_resume_count:
            record.reason = (
                f"max resume_count ({self.settings.max_resume_count}) reached: permanently failed"
            )
            return EXHAUSTED
        if view is not None:
            record.diverged = view.diverged(record.files("files_modified"))
            if record.diverged:
                record.stashed = view.held(record.task_id, record.diverged)
                return STALE
        return OK
