"""The context file's format: YAML frontmatter and a body, written as the Rune plugin lays
it out, and sealed with ``content_sha256`` (the SHA-256 of the file with that field set
to ``""``), so files from either writer verify in both.

Pure text, except ``read_regular``, the one careful read of a file from disk.
"""

from __future__ import annotations

import hashlib
import os
import re
import reprlib
import stat
from pathlib import Path
from typing import Any

from runeconsole.core import frontmatter
from runeconsole.core.errors import RuneError, UnreadableFile

SCHEMA_COMMENT = "# Context preservation schema v1"
BODY_HEADING = "### Last Working State"
LAST_ACTION_MAX = 200
MAX_CONTEXT_BYTES = 1024 * 1024
HASH_FIELD = re.compile(r'content_sha256: ".+"')
HASH_PLACEHOLDER = 'content_sha256: ""'
# A top-level resume_count line, whatever its spacing, quoting or trailing comment.
RESUME_FIELD = re.compile(
    r"""^(?:resume_count|"resume_count"|'resume_count')[ \t]*:[^\r\n]*(\r?\n)?""", re.M
)


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def hash_for(parts: frontmatter.Split) -> str:
    """SHA-256 of the file with the first ``content_sha256: "…"`` in the header emptied."""
    header = HASH_FIELD.sub(HASH_PLACEHOLDER, parts.header, count=1)
    return sha256_hex(parts.text[: parts.start] + header + parts.text[parts.end :])


def seal(text: str) -> str:
    """Set ``content_sha256`` to the hash of ``text`` with the field emptied."""
    parts = frontmatter.split(text)
    header = parts.header
    if HASH_FIELD.search(header):
        header = HASH_FIELD.sub(HASH_PLACEHOLDER, header, count=1)
    elif HASH_PLACEHOLDER not in header:
        header += HASH_PLACEHOLDER + "\n"
    placeholder = parts.text[: parts.start] + header + parts.text[parts.end :]
    digest = sha256_hex(placeholder)
    header = header.replace(HASH_PLACEHOLDER, f'content_sha256: "{digest}"', 1)
    return parts.text[: parts.start] + header + parts.text[parts.end :]


def yaml_value(value: str) -> str:
    """A quoted scalar that also cannot fool Rune's line-oriented readers.

    Rune finds the header end with ``indexOf('---')`` and the fields with
    ``/resume_count: \\d+/`` and ``/content_sha256: ".+"/`` over the whole file, so
    those sequences are escaped inside values (YAML reads them back unchanged).
    """
    text = frontmatter.quote(value).replace("---", "-\\x2d-")
    return re.sub(r"(resume_count|content_sha256):", r"\1\\x3a", text)


def meta_problem(meta: dict[str, Any]) -> str | None:
    """Why the fields cannot be used, or ``None``."""
    status = meta.get("status")
    if status is not None and status != "suspended":
        return f"status is {reprlib.repr(status)}, not 'suspended'"
    count = meta.get("resume_count", 0)
    if count is not None and (not isinstance(count, int) or isinstance(count, bool) or count < 0):
        return f"resume_count {reprlib.repr(count)} is not a whole number"
    for name in ("files_modified", "files_pending"):
        value = meta.get(name)
        if value is not None and not isinstance(value, list):
            return f"{name} must be a list"
        if isinstance(value, list) and not all(isinstance(v, str | int | float) for v in value):
            return f"{name} must list file paths"
    task = meta.get("task_id")
    if task is not None and (isinstance(task, bool) or not isinstance(task, str | int)):
        return f"task_id {reprlib.repr(task)} is not an id"
    return None


def read_regular(path: Path) -> bytes:
    """A context file's bytes; a FIFO or device is refused without blocking on it, and
    a symlink is not followed. Plain ``os.read`` calls: this runs for every file listed."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a FIFO (named pipe)" if stat.S_ISFIFO(info.st_mode) else "a socket or device"
            raise UnreadableFile(path, f"{kind}, not a file")
        if info.st_size > MAX_CONTEXT_BYTES:
            raise UnreadableFile(path, f"larger than {MAX_CONTEXT_BYTES} bytes")
        chunks, size = [], 0
        while size <= MAX_CONTEXT_BYTES:  # a file may grow while it is read
            chunk = os.read(fd, max(info.st_size, 4096) + 1)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > MAX_CONTEXT_BYTES:
        raise UnreadableFile(path, f"larger than {MAX_CONTEXT_BYTES} bytes")
    return b"".join(chunks)


def render(
    *,
    task_id: str,
    worker: str,
    timestamp: str,
    reason: str,
    files_modified: list[str],
    files_pending: list[str],
    last_action: str,
    resume_count: int,
    body: str,
    team: str | None = None,
) -> str:
    """The file as the Rune plugin lays it out, with ``content_sha256: ""`` to be sealed (and
    ``team`` when known: readers ignore fields they do not know)."""

    def listing(name: str, items: list[str]) -> str:
        if not items:
            return f"{name}: []\n"
        return f"{name}:\n" + "".join(f"  - {yaml_value(item)}\n" for item in items)

    task = task_id if task_id.isdigit() and str(int(task_id)) == task_id else yaml_value(task_id)
    return (
        "---\n"
        f"{SCHEMA_COMMENT}\n"
        f"task_id: {task}\n"
        f"worker: {yaml_value(worker)}\n"
        f"{'' if team is None else f'team: {yaml_value(team)}' + chr(10)}"
        "status: suspended\n"
        f"timestamp: {timestamp}\n"
        f"timeout_reason: {reason}\n"
        f"{listing('files_modified', files_modified)}"
        f"{listing('files_pending', files_pending)}"
        f"last_action: {yaml_value(last_action)}\n"
        f"resume_count: {resume_count}\n"
        f"{HASH_PLACEHOLDER}\n"
        "---\n\n"
        f"{BODY_HEADING}\n\n"
        f"{body.rstrip()}\n"
    )


def with_resume_count(text: str, count: int) -> str:
    """``text`` with ``resume_count`` set to ``count`` and a fresh hash.

    Every top-level ``resume_count`` line counts, however spaced or quoted: the first
    becomes ``resume_count: N`` (the form Rune's ``/resume_count: \\d+/`` finds) and
    any others go, because js-yaml refuses a header with a duplicate key.
    """
    parts = frontmatter.split(text)
    found: list[str] = []

    def first_only(match: re.Match[str]) -> str:
        found.append(match.group())
        return f"resume_count: {count}{match.group(1) or ''}" if len(found) == 1 else ""

    header = RESUME_FIELD.sub(first_only, parts.header)
    if not found:
        header += f"resume_count: {count}\n"
    try:
        written = frontmatter.load_mapping(header).get("resume_count")
    except frontmatter.FrontmatterError as exc:
        written = exc
    if written != count or isinstance(written, bool):
        raise RuneError(
            f"cannot set resume_count to {count} in this header without changing other "
            f"fields (found {reprlib.repr(written)} after the rewrite); fix the file by hand"
        )
    return seal(parts.text[: parts.start] + header + parts.text[parts.end :])
