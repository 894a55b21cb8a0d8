"""Changing a node's status in a DOT the way the harness's CLI does, so the file stays
the harness's own: the node's ``[...]`` block is found in the text and its ``status``
and ``fillcolor`` values replaced (quoted), ``style="filled"`` added when missing;
nothing else in the file moves. The CLI's logs are appended in its own line format
(``<dot>.transitions.jsonl``, ``<dot>.ops.jsonl``).

Unlike the CLI, the write is atomic (a temp file renamed over the DOT, under the DOT's
``.lock``, read after the lock is taken): a runner reading meanwhile sees the old
file or the new one, never the half-written one that made the harness's runner take
an empty pipeline for a finished one.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import datetime
from pathlib import Path
from typing import Any

from runeconsole.core.errors import RuneError, UnreadableFile, refused
from runeconsole.core.files import atomic_write_bytes, read_bytes
from runeconsole.core.locks import flocked

LOCK_WAIT = 5.0  # the CLI holds the lock for one write: longer means something is stuck
# The harness's transitions (``VALID_TRANSITIONS``) and colours (``STATUS_COLORS``).
LEGAL = {
    "pending": {"active"},
    "active": {"impl_complete", "validated", "failed"},
    "impl_complete": {"validated", "failed", "active"},
    "failed": {"active", "pending"},
    "validated": {"accepted"},
    "accepted": set(),
}
COLOURS = {
    "pending": "lightyellow",
    "active": "lightblue",
    "impl_complete": "lightsalmon",
    "validated": "lightgreen",
    "accepted": "palegreen",
    "failed": "lightcoral",
}


def node_block(text: str, node_id: str) -> tuple[int, int]:
    """Where ``node_id [ ... ]`` is (not an edge's ``-> node_id [``), to its ``]``."""
    for match in re.finditer(r"(?<![\w\"-])" + re.escape(node_id) + r"\s*\[", text):
        if text[: match.start()].rstrip().endswith(("->", "--")):
            continue
        at, depth = match.end() - 1, 0
        while at < len(text):
            char = text[at]
            if char == '"':
                at += 1
                while at < len(text) and text[at] != '"':
                    at += 2 if text[at] == "\\" else 1
            elif char == "[":
                depth += 1
            elif char == "]":
                depth -= 1
                if depth == 0:
                    end = at + 1
                    return match.start(), end + 1 if text[end : end + 1] == ";" else end
            at += 1
    raise RuneError(f"node {node_id!r} has no [ ... ] block in the DOT")


def set_attr(text: str, node_id: str, name: str, value: str) -> str:
    start, end = node_block(text, node_id)
    block = text[start:end]
    for pattern in (
        rf'\b{re.escape(name)}\s*=\s*"(?:[^"\\]|\\.)*"',
        rf"\b{re.escape(name)}\s*=\s*[^\s\]\",;]+",
    ):
        found = re.search(pattern, block)
        if found is not None:
            block = f'{block[: found.start()]}{name}="{value}"{block[found.end() :]}'
            return text[:start] + block + text[end:]
    close = block.rfind("]")
    block = f'{block[:close]}\n        {name}="{value}"\n    {block[close:]}'
    return text[:start] + block + text[end:]


def set_status(text: str, node_id: str, status: str) -> str:
    """The node's status and its colour, as ``cli.py transition`` writes them."""
    text = set_attr(text, node_id, "status", status)
    text = set_attr(text, node_id, "fillcolor", COLOURS[status])
    start, end = node_block(text, node_id)
    if not re.search(r"\bstyle\s*=", text[start:end]):
        text = set_attr(text, node_id, "style", "filled")
    return text


def log_line(path: Path, entry: dict[str, Any]) -> None:
    """One line appended to a harness log, in its format (``json.dumps`` + newline), in
    a single write."""
    data = (json.dumps(entry) + "\n").encode("utf-8")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise refused(path, exc) from None
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


@contextmanager
def dot_locked(dot: Path) -> Iterator[None]:
    """The harness CLI's lock on ``<dot>.lock``; the file is removed after, as it does."""
    lock = f"{dot}.lock"
    existed = os.path.lexists(lock)
    with flocked(lock, LOCK_WAIT, what=f"{dot.name} (the harness CLI's lock)"):
        yield
        if not existed:
            with suppress(OSError):
                os.unlink(lock)


Logs = list[tuple[Path, dict[str, Any]]]


def edit_dot(dot: Path, change: Callable[[str], tuple[str, Logs]]) -> str:
    """Under the DOT's lock: read it, apply ``change`` (the new text, and the log lines
    to append), write it atomically, append the lines; the old text is returned."""
    with dot_locked(dot):
        try:
            text = read_bytes(dot).decode("utf-8")
        except UnicodeDecodeError:
            raise UnreadableFile(dot, "not UTF-8 text") from None
        updated, logs = change(text)
        atomic_write_bytes(dot, updated.encode("utf-8"))
        for path, entry in logs:
            log_line(path, entry)
        return text


def transition_entry(file: str, node_id: str, old: str, new: str, now: datetime) -> dict[str, Any]:
    """The CLI's ``.transitions.jsonl`` line for one move."""
    stamp = now.isoformat()
    return {
        "timestamp": stamp,
        "file": file,
        "command": "transition",
        "node_id": node_id,
        "new_status": new,
        "log": f"[{stamp}] {node_id}: {old} -> {new}",
    }
