"""Token usage, and the last thing said, from a Claude Code transcript (``transcript_path``:
one JSON object a line).

Each assistant line carries ``message.usage`` (``input_tokens``, ``output_tokens``,
``cache_creation_input_tokens``, ``cache_read_input_tokens``); the context in use is
input + cache creation + cache read of the latest assistant message. A transcript grows
by tens of kilobytes a turn, so it is read on from where the last read stopped (its byte
offset), a bounded amount at a time, and only lines naming an assistant are decoded. One
message written over several lines (a block a line) repeats its id: only the change of
its usage counts again. Sub-agent (sidechain) messages count towards the session's tokens
but not towards the context, which is the main conversation's.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterable, Iterator

TYPE_CHECKING = False  # typing itself is not imported: the hook starts faster
if TYPE_CHECKING:
    from typing import TypeGuard, TypeVar

    T = TypeVar("T")

READ_LIMIT = 4 * 1024 * 1024  # per call; the rest is read by the next one
FIELDS = (
    ("input", "input_tokens"),
    ("output", "output_tokens"),
    ("cache_read", "cache_read_input_tokens"),
    ("cache_creation", "cache_creation_input_tokens"),
)
_MARK = b'"assistant"'


def zero() -> dict[str, int]:
    return {name: 0 for name, _ in FIELDS}


class Usage:
    """Where a read stopped and what it found; ``tokens`` are the session's sums."""

    __slots__ = ("context_tokens", "message_id", "message_usage", "offset", "tokens")

    def __init__(
        self,
        offset: int = 0,
        tokens: dict[str, int] | None = None,
        message_id: str | None = None,
        message_usage: dict[str, int] | None = None,
        context_tokens: int | None = None,
    ) -> None:
        self.offset = offset
        self.tokens = tokens if tokens is not None else zero()
        self.message_id = message_id  # the last assistant message counted, and its usage
        self.message_usage = message_usage if message_usage is not None else zero()
        self.context_tokens = context_tokens

    def to_json(self) -> dict[str, object]:
        return {
            "offset": self.offset,
            "message_id": self.message_id,
            "message_usage": self.message_usage,
            "context_tokens": self.context_tokens,
        }

    @classmethod
    def from_json(cls, data: object, tokens: object) -> Usage:
        """A saved position (``to_json``) and the sums saved beside it; anything malformed
        starts again from the beginning."""
        if not isinstance(data, dict):
            return cls()
        offset = data.get("offset")
        message_id = data.get("message_id")
        context = data.get("context_tokens")
        return cls(
            offset if _count(offset) else 0,
            _counts(tokens),
            message_id if isinstance(message_id, str) else None,
            _counts(data.get("message_usage")),
            context if _count(context) else None,
        )


def _count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _counts(value: object) -> dict[str, int]:
    found = value if isinstance(value, dict) else {}
    return {name: found[name] if _count(found.get(name)) else 0 for name, _ in FIELDS}


def assistant_entry(line: bytes) -> dict[str, object] | None:
    """The line's object when it is an assistant message (``None``: anything else)."""
    try:
        entry = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(entry, dict) or entry.get("type") != "assistant":
        return None
    return entry


def _parsed(lines: Iterable[bytes], parse: Callable[[bytes], T | None]) -> Iterator[T]:
    """What ``parse`` finds in the lines that name an assistant (only those are decoded)."""
    for line in lines:
        if _MARK in line and (found := parse(line)) is not None:
            yield found


def _usage_of(line: bytes) -> tuple[str | None, dict[str, int], bool] | None:
    entry = assistant_entry(line)
    if entry is None:
        return None
    message = entry.get("message")
    usage = message.get("usage") if isinstance(message, dict) else None
    if not isinstance(message, dict) or not isinstance(usage, dict):
        return None
    found = {name: usage[key] if _count(usage.get(key)) else 0 for name, key in FIELDS}
    message_id = message.get("id")
    sidechain = entry.get("isSidechain") is True
    return (message_id if isinstance(message_id, str) else None), found, sidechain


def read_on(path: str, usage: Usage, limit: int = READ_LIMIT) -> Usage:
    """``usage`` brought up to date with what was appended to ``path`` since its offset.

    A transcript shorter than the offset was replaced: it is read from the start and the
    sums start again. A path that is not a regular file changes nothing."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return usage
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return usage
        if info.st_size < usage.offset:
            usage = Usage()
        if info.st_size == usage.offset:
            return usage
        os.lseek(fd, usage.offset, os.SEEK_SET)
        data = os.read(fd, min(limit, info.st_size - usage.offset))
    except OSError:
        return usage
    finally:
        os.close(fd)
    end = data.rfind(b"\n")
    if end < 0:
        return usage  # no whole line yet
    tokens = dict(usage.tokens)
    last_id, last_usage, context = usage.message_id, dict(usage.message_usage), usage.context_tokens
    for message_id, counts, sidechain in _parsed(data[:end].split(b"\n"), _usage_of):
        before = last_usage if message_id is not None and message_id == last_id else zero()
        for name, _ in FIELDS:
            tokens[name] += max(0, counts[name] - before[name])
        last_id, last_usage = message_id, counts
        if not sidechain:
            context = counts["input"] + counts["cache_read"] + counts["cache_creation"]
    return Usage(usage.offset + end + 1, tokens, last_id, last_usage, context)


# -- the last assistant message ------------------------------------------------------------

TAIL_BYTES = 512 * 1024  # how much of the end the last message is looked for in


def _tail(path: str, size: int) -> bytes:
    """The last ``size`` bytes of a regular file, from its first whole line (b"": none)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return b""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return b""
        start = max(0, info.st_size - size)
        os.lseek(fd, start, os.SEEK_SET)
        data = os.read(fd, info.st_size - start)
    except OSError:
        return b""
    finally:
        os.close(fd)
    return data if start == 0 else data[data.find(b"\n") + 1 :]


def _said(line: bytes) -> tuple[str | None, str, str | None] | None:
    """(message id, its text, timestamp) of a main-conversation assistant line with text."""
    entry = assistant_entry(line)
    if entry is None or entry.get("isSidechain") is True:
        return None
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        texts = [content]
    elif isinstance(content, list):
        texts = [
            block["text"]
            for block in content
            if isinstance(block, dict) and block.get("type") == "text"
            if isinstance(block.get("text"), str)
        ]
    else:
        return None
    text = "\n".join(t for t in texts if t.strip())
    if not text:
        return None
    message_id = message.get("id") if isinstance(message, dict) else None
    stamp = entry.get("timestamp")
    return (
        message_id if isinstance(message_id, str) else None,
        text,
        stamp if isinstance(stamp, str) else None,
    )


def last_said(path: str, size: int = TAIL_BYTES) -> tuple[str, str | None] | None:
    """The last main-conversation assistant message with text in the transcript, and when
    it was written: the end of the file read backwards (one message is written a block a
    line, each line repeating its id; a tool call alone says nothing)."""
    parts: list[str] = []
    found_id: str | None = None
    at: str | None = None
    for message_id, text, stamp in _parsed(reversed(_tail(path, size).split(b"\n")), _said):
        if parts and (message_id is None or message_id != found_id):
            break  # an earlier message: the last one is whole
        parts.insert(0, text)
        found_id, at = message_id, at or stamp
        if message_id is None:
            break
    return ("\n".join(parts), at) if parts else None
